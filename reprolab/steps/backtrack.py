"""Backtracks and replans, decided in code (a fixed decision matrix and limits;
docs/operation.md, "Decisions the pipeline makes")."""

from __future__ import annotations

import json

from agents.planner import PlannerOutput, PlanStage
from reprolab.artifacts import read_jsonl
from reprolab.errors import StageBlockedError
from reprolab.events import log_event
from reprolab.fileio import (
    atomic_write_json,
    read_json,
)
from reprolab.gates import consent
from reprolab.settings import PaperRun
from reprolab.steps.eligibility import ancestors

SUGGESTERS = ("physics_sanity", "results_analyzer", "code_reviewer")
"""The agents that may suggest a backtrack; the supervisor decides."""
_SEVERITY = {"critical": 2, "significant": 1, "minor": 0}


def suggestions(validation: dict, analysis_output: dict, code_review_output: dict | None) -> list:
    """Every backtrack suggestion of the stage, each with the agent that made it: one
    model (agents.physics_sanity.BacktrackSuggestion) from PhysicsSanity (in the run
    validation), the ResultsAnalyzer and the CodeReviewer of the code that ran."""
    found = [
        ("physics_sanity", validation.get("backtrack_suggestion")),
        ("results_analyzer", (analysis_output or {}).get("backtrack_suggestion")),
        ("code_reviewer", (code_review_output or {}).get("backtrack_suggestion")),
    ]
    return [{"source": source, **s} for source, s in found if s]


def suggestion_for(found: list[dict], target: str | None) -> dict | None:
    """The suggestion the decision matrix weighs for a backtrack to `target`: the
    strongest (severity, then confidence) of those naming that stage; None when no agent
    named it (the supervisor's own call, counted as significant with high confidence)."""
    named = [s for s in found if s.get("target_stage") == target]
    if not named:
        return None
    return max(named, key=lambda s: (_SEVERITY.get(s["severity"], 0), s["confidence"] == "high"))


def backtrack_decision(suggestion: dict | None, done: int, limit: int) -> str:
    """The supervisor's decision matrix: accept, ask_user or reject (handle the
    problem in this stage), the same for a suggestion of PhysicsSanity, the
    ResultsAnalyzer or the CodeReviewer. A backtrack no agent suggested counts as
    significant with high confidence."""
    severity = (suggestion or {}).get("severity", "significant")
    confidence = (suggestion or {}).get("confidence", "high")
    if done >= limit:
        return "ask_user"
    if severity == "minor":
        return "reject"
    return "accept" if confidence == "high" else "ask_user"


def backtrack(
    run: PaperRun,
    plan: PlannerOutput,
    stage: PlanStage,
    output: dict,
    found: list[dict] = (),
    said: dict | None = None,
) -> str:
    """Apply a supervisor's backtrack_to_stage, decided in code: the target must be this
    stage or one it depends on, and the paper may backtrack `limits.max_backtracks`
    times; the decision matrix weighs the agents' suggestion naming that target
    (`suggestion_for`). A valid backtrack invalidates the target (so the next run of the
    same command reruns it and its dependents, nothing else) and stops this branch; an
    invalid one or one over the limit becomes an ask_user verdict."""
    target = output.get("backtrack_target")
    suggestion = suggestion_for(list(found), target)
    valid = ancestors(plan, stage.stage_id)
    done = [b for b in read_jsonl(run.out_dir / "backtracks.jsonl") if b["to"] != "plan"]
    decision = backtrack_decision(suggestion, len(done), run.limits.max_backtracks)
    if decision != "accept" and target in valid:
        log_event(
            run.out_dir,
            "supervisor",
            f"{stage.stage_id}: backtrack to {target}: {decision} (suggestion of "
            f"{(suggestion or {}).get('source')} "
            f"{(suggestion or {}).get('severity')}/{(suggestion or {}).get('confidence')}, "
            f"{len(done)} of {run.limits.max_backtracks} done)",
        )
        return "ok_continue" if decision == "reject" else "ask_user"
    if target not in valid:
        log_event(
            run.out_dir,
            "supervisor",
            f"{stage.stage_id}: backtrack target {target!r} refused (valid: {valid}); asking",
        )
        return "ask_user"
    reason = output.get("feedback") or "(no feedback)"
    entry = {"from": stage.stage_id, "to": target, "reason": reason, "number": len(done) + 1}
    if suggestion is not None:
        entry["suggested_by"] = suggestion["source"]
    entry.update(kept_check(said))
    consent.invalidate_stage(
        run.out_dir, target, reason, source=f"supervisor of {stage.stage_id} (backtrack)"
    )
    with open(run.out_dir / "backtracks.jsonl", "a", encoding="utf-8") as fh:
        fh.write(json.dumps(entry) + "\n")
    redo = [s.stage_id for s in plan.stages if target in ancestors(plan, s.stage_id)]
    raise StageBlockedError(
        f"BACKTRACK {entry['number']}/{run.limits.max_backtracks}: the supervisor of "
        f"{stage.stage_id} sends paper '{run.paper_id}' back to {target}: {reason}\n"
        f"  {target} is invalidated; run the same command again to redo {', '.join(redo)}."
    )


def kept_check(said: dict | None) -> dict:
    """The code's check of the supervisor's words, kept beside them (the report strikes
    a contradicted reason wherever it prints it)."""
    if not said:
        return {}
    return {"supervisor_check": {"status": said["status"], "details": said["details"]}}


def replan(run: PaperRun, stage: PlanStage, reason: str, said: dict | None = None) -> str:
    """Request a new plan (at most `limits.max_replans` per paper; then ask the user):
    replan_request.json is an input of the plan checkpoint, so the next run of the same
    command replans with the reason as feedback and redoes what the new plan needs."""
    path = run.out_dir / "replan_request.json"
    records = read_json(path)["records"] if path.is_file() else []
    if len(records) >= run.limits.max_replans:
        log_event(
            run.out_dir,
            "supervisor",
            f"{stage.stage_id}: replan refused: limits.max_replans={run.limits.max_replans} "
            "reached; asking",
        )
        return "ask_user"
    records.append({"reason": reason, "source": f"supervisor of {stage.stage_id}"})
    atomic_write_json(path, {"records": records})
    with open(run.out_dir / "backtracks.jsonl", "a", encoding="utf-8") as fh:
        entry = {"from": stage.stage_id, "to": "plan", "reason": reason, **kept_check(said)}
        fh.write(json.dumps(entry) + "\n")
    raise StageBlockedError(
        f"REPLAN {len(records)}/{run.limits.max_replans}: the supervisor of {stage.stage_id} "
        f"asks for a new plan of paper '{run.paper_id}': {reason}\n"
        "  Run the same command again: the plan is redone, then every stage it changes."
    )
