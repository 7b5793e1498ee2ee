"""The verdict step: the stage's status decided in code, then the Supervisor, whose
ask_user is a gate and whose backtrack or replan goes through reprolab.steps.backtrack."""

from __future__ import annotations

from pathlib import Path

from agents import (
    supervisor,
)
from agents.common import StageType
from agents.planner import PlanStage
from agents.runner import call_agent
from agents.supervisor import SupervisorOutput
from reprolab.artifacts import (
    AgentArtifact,
    RunResult,
    RunValidation,
    Verdict,
    as_agent_artifact,
    load_adaptations,
    load_analysis,
    load_checks,
    load_code,
    load_comparison,
    load_plan,
    load_result,
    load_review,
    load_validation,
    load_verdict,
    plan_stage,
    read_jsonl,
    write_verdict,
)
from reprolab.errors import InputFileError
from reprolab.events import log_event
from reprolab.gates import consent, protocol
from reprolab.physics import claims
from reprolab.physics import thresholds as th
from reprolab.settings import PaperRun
from reprolab.steps import backtrack as backtracks
from reprolab.steps import eligibility, run_failures
from reprolab.steps.backtrack import backtrack, replan
from reprolab.steps.convergence import judged_with_convergence

OK_STATUSES = ("completed_success", "completed_partial")


STATUS_BY_CLASS = {
    "SUCCESS": "completed_success",
    "PARTIAL": "completed_partial",
    "FAILURE": "completed_failed",
}


def stage_status(
    stage: PlanStage, checks: dict, comparison: dict, validation: RunValidation | None = None
) -> tuple[str, str]:
    """Decided in code: a hard check failure, a run the validators failed, or a
    FAILURE figure fails the stage."""
    if checks["verdict"] == "fail":
        failed = [c["name"] for c in checks["checks"] if c["status"] == "fail"]
        return "completed_failed", f"checks failed: {', '.join(failed)}"
    if validation is not None and validation.verdict == "fail":
        agents = {"execution": validation.execution, "physics": validation.physics}
        said = [f"{k}: {a.output.verdict}" for k, a in agents.items() if a.output.verdict == "fail"]
        return "completed_failed", f"run validation failed ({', '.join(said)})"
    classes = {f["figure_id"]: f["classification"] for f in comparison["figures"]}
    missing = [f for f in stage.target_figures if f not in classes]
    if missing:
        return "completed_failed", f"target figures not reproduced: {missing}"
    overall = th.worst(list(classes.values())) if classes else "SUCCESS"
    return STATUS_BY_CLASS[overall], ", ".join(f"{k}: {v}" for k, v in classes.items())


def revision_counts(stage_dir: Path) -> dict:
    """Attempts used so far, counted from the attempt files kept on disk."""
    return {
        name: len(list(stage_dir.glob(f"{name}.r*.json")))
        for name in ("design", "code", "analysis")
    }


def run_history(result_path: Path) -> dict:
    """What the supervisor hears about the run's repairs (`physics_stuck`: the physics
    failures reached their limit)."""
    record = load_result(result_path) if result_path.is_file() else RunResult()
    return {
        "execution_failures": record.execution_failures,
        "physics_failures": record.physics_failures,
        "physics_stuck": record.physics_stuck,
    }


def code_review_of(stage_dir: Path) -> dict | None:
    """The CodeReviewer's output on the code that ran (its backtrack suggestion counts)."""
    from agents.code_reviewer import CodeReviewerOutput  # only for a stage that ran code

    try:
        ran = load_result(stage_dir / "result.json").code_artifact
        attempt = load_code(ran).provenance["attempt"] if ran else None
        review = load_review(stage_dir / f"code_review.r{attempt}.json", CodeReviewerOutput)
    except (InputFileError, KeyError):
        return None
    return review.output_json()


def stage_verdict(
    run,
    plan_path,
    checks_path,
    comparison_path,
    analysis_path,
    validation_path,
    adaptations_path,
    out_verdict,
    convergence_path=None,
):
    """Status decided in code, then the supervisor's verdict, acted on in code."""
    plan = load_plan(plan_path)
    blocked = eligibility.blocked_in(checks_path, comparison_path, analysis_path)
    if blocked:
        write_blocked_verdict(run, blocked, out_verdict)
        return
    comparison = load_comparison(comparison_path)
    analysis = load_analysis(analysis_path)
    stage = plan_stage(plan, comparison.stage_id)
    # The convergence rerun's result is judged with the checks (it may excuse a resolution).
    checks, judged, converged = judged_with_convergence(
        load_checks(checks_path).to_json(),
        load_validation(validation_path).to_json(),
        convergence_path,
    )
    validation = RunValidation.model_validate(judged)
    status, reason = stage_status(stage, checks, comparison.to_json(), validation)
    reason = f"{reason}; {converged}" if converged else reason
    ran = run_failures.failed_run_reason(Path(checks_path).with_name("result.json"))
    if ran and status == "completed_failed":
        reason = f"{ran}; {reason}"  # the cause first: the checks only saw its effects
    found = backtracks.suggestions(
        validation.to_json(), analysis.output_json(), code_review_of(Path(out_verdict).parent)
    )
    artifact = ask_supervisor(
        run,
        plan,
        stage,
        {"status": status, "reason": reason, "checks_path": checks_path},
        comparison,
        validation,
        analysis,
        adaptations_path,
        out_verdict,
        found,
    )
    output = artifact.output_json()  # what the audit, the gates and the backtrack read
    said = claims.audit_supervisor(output, comparison.to_json(), status)["sections"][0]
    acted = act_on_supervisor(run, plan, stage, status, reason, output, found, said)
    figs = {f["figure_id"] for f in comparison.to_json()["figures"]}
    compared = figs >= set(stage.target_figures)
    failed = acted["status"] == status == "completed_failed"
    if failed and compared and compared_only(checks, validation, ran):
        acted = {**acted, "failed_by": eligibility.FAILED_BY_COMPARISON}
    record_verdict(run, stage, out_verdict, artifact, said, found, acted)


def compared_only(checks: dict, validation: RunValidation, ran) -> bool:
    """The stage failed only on its figures' comparison: its run, checks and validation
    stand, so the failure may be the paper's data and blocks no other stage."""
    return not ran and checks["verdict"] != "fail" and validation.verdict != "fail"


def record_verdict(run, stage, out_verdict, artifact, said, found, acted) -> None:
    """verdict.json: the code's status, what the supervisor said and how code checked and
    acted on it (its words' check, the agents' suggestions, an end or a new priority)."""
    if said["status"] == "contradicted":
        log_event(
            run.out_dir,
            "supervisor",
            f"{stage.stage_id}: the supervisor's feedback contradicts the code "
            f"({'; '.join(said['details'])}); the report strikes it",
        )
    write_verdict(
        out_verdict,
        Verdict(
            stage_id=stage.stage_id,
            status=acted["status"],
            reason=acted["reason"],
            supervisor_verdict=acted["verdict"],
            supervisor=artifact.to_json(),
            supervisor_check={"status": said["status"], "details": said["details"]},
            backtrack_suggestions=found,
            user_note=acted["user_note"],
            **{k: acted[k] for k in ("paper_end", "priority", "failed_by") if acted.get(k)},
        ),
    )
    log_event(run.out_dir, "verdict", f"{stage.stage_id}: {acted['status']} ({acted['reason']})")


def write_blocked_verdict(run, blocked: dict, out_verdict) -> None:
    """A blocked stage's verdict says why it did not run; no supervisor is asked."""
    reason = blocked["blocked"]["reason"]
    write_verdict(
        out_verdict,
        Verdict(
            stage_id=blocked["stage_id"], status="blocked", reason=reason, supervisor_verdict=None
        ),
    )
    log_event(run.out_dir, "verdict", f"{blocked['stage_id']}: blocked ({reason})")


def ask_supervisor(
    run,
    plan,
    stage,
    decided,
    comparison,
    validation,
    analysis,
    adaptations_path,
    out_verdict,
    found=(),
) -> AgentArtifact[SupervisorOutput]:
    """The Supervisor's call, with what code decided and the stage's history."""
    # Other stages only: a rerun must not see this stage's previous verdict.
    progress = [
        {"stage_id": v.stage_id, "status": v.status}
        for v in map(load_verdict, sorted((run.out_dir / "stages").glob("*/verdict.json")))
        if v.stage_id != stage.stage_id
    ]
    answer = call_agent(
        supervisor.AGENT,
        stage_id=stage.stage_id,
        attempt=1,
        context=supervisor.context(
            {"summary": plan.summary, "stages": [s.stage_id for s in plan.stages]},
            {
                "stage_id": stage.stage_id,
                "status": decided["status"],
                "reason": decided["reason"],
                "run_validation": validation.verdict,
                "analysis_check": analysis.comparison_check,
                **run_history(Path(decided["checks_path"]).parent / "result.json"),
            },
            analysis.output_json(),
            progress,
            figure_comparisons=[
                {"figure_id": f["figure_id"], "classification": f["classification"]}
                for f in comparison.figures
            ],
            revision_counts=revision_counts(Path(out_verdict).parent),
            backtrack_suggestions=list(found),
            user_interactions=read_jsonl(run.out_dir / "user_interactions.jsonl"),
            answers_seen=Path(out_verdict).parent / "supervisor_answers_seen.json",
        ),
        session=run.agents,
        adaptations=load_adaptations(adaptations_path),
    )
    return as_agent_artifact(AgentArtifact[SupervisorOutput], answer)


def act_on_supervisor(
    run, plan, stage, status, reason, output: dict, found=(), said: dict | None = None
) -> dict:
    """{verdict, status, reason, user_note, paper_end, priority} after code has applied
    the rules: two consecutive failures of dependent stages replan, backtracks go through
    the decision matrix, ask_user is a gate, change_priority and the end of the paper are checked in
    code (eligibility), and the material checkpoint is mandatory after stage 0."""
    verdict = output["verdict"]
    acted = {"user_note": None}
    eligibility.clear_paper_end(run.out_dir, stage.stage_id)  # judged again: its own end too
    failed_upstream = failed_dependency(run.out_dir, plan, stage, status)
    if failed_upstream:
        log_event(
            run.out_dir,
            "supervisor",
            f"{stage.stage_id}: second consecutive stage failure (after "
            f"{failed_upstream}, which it depends on); replanning (supervisor said {verdict})",
        )
        verdict = "replan_needed"
    material = stage.stage_type == StageType.MATERIAL_VALIDATION
    if verdict == "replan_needed":
        verdict = replan(run, stage, output.get("feedback") or reason, said)
    if verdict == "backtrack_to_stage":
        verdict = backtrack(run, plan, stage, output, found, said)
    if verdict == "ask_user" and not material:
        decision = supervisor_gate(run, stage, status, reason, output, said)
        verdict, acted["user_note"] = "ok_continue", decision.note
        if decision.action == "reject":
            status, reason = "completed_failed", f"stopped by the user: {decision.note}"
    if verdict == "change_priority" and not material:
        acted["priority"] = eligibility.change_priority(
            run.out_dir, plan, stage, status, output.get("priority") or []
        )
        log_event(run.out_dir, "supervisor", priority_line(stage, acted["priority"]))
    if verdict in ("should_stop", "all_complete") and not material:
        acted["paper_end"] = eligibility.end_paper(
            run.out_dir, stage.stage_id, verdict, output.get("feedback") or ""
        )
        log_event(
            run.out_dir,
            "supervisor",
            f"{stage.stage_id}: the supervisor ended the paper ({verdict}); later stages "
            "are not run and the report says so",
        )
    if material and verdict != "ask_user":
        # The material checkpoint is mandatory whatever the supervisor says.
        log_event(
            run.out_dir,
            "supervisor",
            f"{stage.stage_id}: supervisor said {verdict}; material checkpoint enforced",
        )
        verdict = "ask_user"
    return {**acted, "verdict": verdict, "status": status, "reason": reason}


def priority_line(stage: PlanStage, record: dict) -> str:
    order = ", ".join(record["order"]) or "nothing"
    refused = f"; refused: {'; '.join(record['refused'])}" if record["refused"] else ""
    return (
        f"{stage.stage_id}: change_priority: {order} first{refused} (Snakemake orders the "
        "jobs it has not yet planned by it: later stages of this run, every stage of the next)"
    )


def supervisor_gate(
    run: PaperRun, stage: PlanStage, status: str, reason: str, output: dict, said=None
):
    """The supervisor asks the user: approve goes on, reject stops this stage (failed).
    Feedback the code contradicts is said to be so in the question."""
    done = len(read_jsonl(run.out_dir / "backtracks.jsonl"))
    gate_id = f"{stage.stage_id}.supervisor" + (f".round{done + 1}" if done else "")
    sha = protocol.content_sha256({"status": status, "reason": reason, "supervisor": output})
    checkpoint = protocol.Checkpoint(
        gate_id=gate_id,
        kind=protocol.GateKind.SUPERVISOR_ASK_USER,
        paper_id=run.paper_id,
        stage_id=stage.stage_id,
        sha256=sha,
        question=(
            f"The supervisor of {stage.stage_id} ({status}: {reason}) asks you: "
            f"{output.get('feedback') or 'how to go on?'}{contradicted_note(said)} "
            "approve: go on with the next "
            "stages; reject: stop here (this stage counts as failed; give the reason in "
            "'note')."
        ),
        options=["approve", "reject"],
        actions=["approve", "reject"],
        payload={"status": status, "reason": reason, "supervisor": output},
        answer_file=str(protocol.gate_decision_path(run.out_dir, gate_id)),
        answer_example={"action": "approve", "sha256": sha, "note": ""},
    )
    decision = protocol.resolve_gate(run.out_dir, checkpoint, run.gate_wait_s)
    consent.log_interaction(
        run.out_dir,
        checkpoint.question,
        decision,
        "stage stopped by the user" if decision.action == "reject" else "went on",
        kind=protocol.GateKind.SUPERVISOR_ASK_USER,
    )
    return decision


def contradicted_note(said: dict | None) -> str:
    if not said or said["status"] != "contradicted":
        return ""
    return f" [CONTRADICTED by the code: {'; '.join(said['details'])}]"


def failed_dependency(out_dir: Path, plan, stage: PlanStage, status: str) -> str | None:
    """The stage that failed just before this failed one when this stage depends on it,
    directly or not: two failures in a row replan only along a dependency (two unrelated
    stages failing say nothing about the plan that links them)."""
    if status != "completed_failed":
        return None
    previous = progress_by_time(out_dir, stage.stage_id)
    if not previous or previous[-1].status != status:
        return None
    upstream = set(eligibility.ancestors(plan, stage.stage_id)) - {stage.stage_id}
    return previous[-1].stage_id if previous[-1].stage_id in upstream else None


def progress_by_time(out_dir: Path, stage_id: str) -> list[Verdict]:
    """Other stages' verdicts in the order they were written."""
    paths = [p for p in (out_dir / "stages").glob("*/verdict.json") if p.parent.name != stage_id]
    return [load_verdict(p) for p in sorted(paths, key=lambda p: p.stat().st_mtime_ns)]
