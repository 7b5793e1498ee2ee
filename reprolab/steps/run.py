"""The simulate step: run the stage's job, and repair it when it fails.

A failed run (crash, timeout, refused script) or one whose deterministic checks
fail has its code regenerated with the error as feedback, within the limits; the
user is asked at the execution limit. Failed runs are kept
under failed_runs/ and read there on resume, never copied back over run/: a job
submitted after them (which a resumed step reattaches to) owns that folder."""

from __future__ import annotations

import json
from pathlib import Path

from agents.simulation_designer import SimulationDesign
from reprolab import run_files
from reprolab.artifacts import (
    DesignArtifact,
    RunResult,
    load_adaptations,
    load_code,
    load_design,
    load_plan,
    load_result,
    plan_stage,
    write_code,
    write_result,
)
from reprolab.errors import GateError
from reprolab.events import log_event
from reprolab.fileio import (
    atomic_write_text,
    sha256_file,
)
from reprolab.gates import consent, protocol
from reprolab.jobs import sandbox, stage_run, submit
from reprolab.steps import debug_limits, job_budget, run_failures
from reprolab.steps.blocking import block, passed_on_block
from reprolab.steps.checks import checks_for
from reprolab.steps.code import code_loop
from reprolab.steps.convergence import deferred_to_convergence


def run_simulation(run, code_json, script, design_path, plan_path, out_result) -> None:
    """Sandbox check, then one job (or a job array for a sweep); see reprolab.jobs.stage_run.

    A failed run (crash, timeout, refused script: failure.action regenerate_code) or a
    run whose deterministic checks fail has its code regenerated and reviewed with the
    error as feedback, then runs again: below `limits.max_execution_failures` /
    `max_physics_failures` per stage. At the execution limit the user is asked; at the
    physics limit the run goes on to the supervisor flagged physics_stuck. Failed runs
    are kept under failed_runs/, regenerated code as code.rN.json and
    simulation.fixN.py; result.json names the code that produced it."""
    if passed_on_block(run, out_result, design_path, code_json):
        return
    design_art = load_design(design_path)
    design = design_art.output
    stage = plan_stage(load_plan(plan_path), design.stage_id)
    refusal = over_budget(design, stage) or job_budget.job_budget_gate(
        run, design, script, stage.runtime_budget_minutes
    )
    if refusal:
        block(run, out_result, design.stage_id, refusal)
        return
    record = run_with_repairs(
        run, design_art, stage, Path(code_json), Path(script), Path(out_result).parent
    )
    write_result(out_result, RunResult.model_validate(record))
    failure = record.get("failure")
    log_event(
        run.out_dir,
        "simulation",
        f"{design.stage_id}: "
        + (failure["summary"] if failure else f"ran in {record['runtime_seconds']} s"),
        job_id=record["job_id"],
    )


def over_budget(design: SimulationDesign, stage) -> str | None:
    """Why the design may not run within the stage's budget (None when it fits)."""
    estimate_s = design.performance_estimate.runtime_seconds
    if estimate_s <= stage.runtime_budget_minutes * 60:
        return None
    return (
        f"the design's runtime estimate ({estimate_s:.0f} s) does not fit the stage's "
        f"budget ({stage.runtime_budget_minutes * 60:.0f} s)"
    )


def run_with_repairs(
    run, design_art: DesignArtifact, stage, code_path, script_path, stage_dir
) -> dict:
    """Run, and while the run needs a repair within the limits, regenerate and rerun.
    The record returned is the last run's, with its repairs and failure counts."""
    design = design_art.output
    counts = {"execution": 0, "physics": 0}
    limits = {
        "execution": run.limits.max_execution_failures,
        "physics": run.limits.max_physics_failures,
    }
    repairs, user_rounds = [], 0
    reruns = run_failures.RerunState()
    while True:
        code = (code_path, script_path)
        record, kept = settle_run(run, design, stage, code, stage_dir, repairs, reruns)
        kind, feedback = repair_needed(run, record, design_art, code_path, stage_dir)
        if kind is None:
            break
        counts[kind] += 1
        if "reused_from" not in record:  # counted when it happened, not again on resume
            count_failure(run, design.stage_id, kind, record, feedback)
            cap_mb = sandbox.job_settings(run.config.get("simulation", {}))["folder_mb"]
            archive_run(stage_dir / "run", kept, record, cap_mb)
        if counts[kind] >= limits[kind]:
            if kind == "physics":
                record["physics_stuck"] = True
                log_event(
                    run.out_dir,
                    "simulation",
                    f"{design.stage_id}: physics checks failed {counts[kind]} times; "
                    "the supervisor decides",
                )
                break
            note = execution_limit_gate(run, design.stage_id, record, counts, user_rounds)
            if note is None:
                break  # the user accepts the failed run: checks and supervisor judge it
            user_rounds += 1
            counts["execution"] = 0  # a user's guidance is a fresh start
            feedback = f"{feedback}\nThe user says: {note}"
        previous = load_code(code_path).provenance.get("attempt", 0)
        code_path, script_path = regenerate_code(
            run, design_art, stage_dir, feedback, len(repairs) + 1, previous + 1
        )
        repairs.append({"failed_run": str(kept), "kind": kind, "feedback": feedback})
    restore_accepted_run(stage_dir, record)
    record.update(
        repairs=repairs,
        execution_failures=counts["execution"],
        physics_failures=counts["physics"],
        resubmits=reruns.resubmits,
    )
    return record


def settle_run(run, design, stage, code, stage_dir, repairs, reruns) -> tuple[dict, Path]:
    """Run the current script until its record is no longer the cluster's or the
    resources' failure: resubmitted automatically (cancelled, preempted, node
    failure), rerun at the user's word (timeout, out of memory, ...), or accepted.
    Returns the record and where a failed run of it is kept."""
    while True:
        kept = failed_run_dir(stage_dir, len(repairs) + 1)
        record = run_once(run, design, stage, code, stage_dir, kept, reruns)
        failure = record.get("failure") or {}
        if failure.get("action") not in ("resubmit", "ask_user"):
            return record, kept
        # Kept first, so that the step resumes after a gate without running it again.
        if "reused_from" not in record:
            cap_mb = sandbox.job_settings(run.config.get("simulation", {}))["folder_mb"]
            archive_run(stage_dir / "run", kept, record, cap_mb)
        why = run_failures.rerun_needed(run, design.stage_id, record, reruns)
        if why is None:
            return record, kept
        repairs.append({"failed_run": str(kept), "kind": why, "feedback": failure["summary"]})


def stage_round(stage_dir: Path) -> int:
    """How often the stage was invalidated (`reprolab invalidate`, a backtrack): each
    invalidation starts a round whose attempts are its own."""
    try:
        records = json.loads((stage_dir / "invalidation.json").read_text(encoding="utf-8"))
        return len(records.get("records") or [])
    except (OSError, ValueError, AttributeError):
        return 0


def failed_run_dir(stage_dir: Path, n: int) -> Path:
    """Where this round's n-th failed run is kept: failed_runs/fN in the first round,
    failed_runs/rR/fN after R invalidations, so no round reads another's attempts."""
    r = stage_round(stage_dir)
    return stage_dir / "failed_runs" / (f"r{r}" if r else "") / f"f{n}"


def run_once(run, design, stage, code, stage_dir, kept, reruns) -> dict:
    """One run of the current script: a kept run of the same script when this step
    resumes after a gate, else a new job (with the time and memory a rerun gate
    granted). The record names the code that ran."""
    code_path, script_path = code
    record = reuse_failed_run(kept, script_path)
    if record is None:
        sim_cfg = dict(run.config.get("simulation", {}))
        sim_cfg["stage_round"] = stage_round(stage_dir)
        sim_cfg["job_name"] = submit.job_name(run.paper_id, design.stage_id, run.out_dir)
        # A job sized from its design gets a granted rerun's time and memory too.
        sim_cfg["rerun_time_factor"] = reruns.time_factor
        sim_cfg["rerun_memory_factor"] = reruns.memory_factor
        job_design, budget, quick = debug_limits.for_quick_check(
            design, stage.runtime_budget_minutes * reruns.time_factor, run.config
        )
        record = stage_run.run_stage(job_design, budget, sim_cfg, script_path, stage_dir)
        if quick:
            record["quick_check"] = quick
    record.update(stage_id=design.stage_id, code_artifact=str(code_path))
    record.update(script=str(script_path), script_sha256=sha256_file(script_path))
    return record


def repair_needed(run, record, design_art, code_path, stage_dir) -> tuple[str | None, str]:
    """("execution" | "physics", feedback) when the code should be regenerated."""
    failure = record.get("failure")
    if failure:
        if failure.get("action") != "regenerate_code":
            return None, ""  # resources, the cluster or the user: code cannot fix it
        return "execution", (
            f"The simulation failed ({failure['kind']}): {failure['summary']}\n"
            f"Last lines of its log:\n{failure.get('log_tail', '')[-1500:]}"
        )
    # A kept run is judged where it lies (never copied over run/, see reuse_failed_run).
    run_dir = Path(record.get("reused_from") or stage_dir / "run")
    checks = checks_for(run, record, design_art, load_code(code_path).output, run_dir)
    failed = [c for c in checks["checks"] if c["status"] == "fail"]
    failed = deferred_to_convergence(run.config, failed)  # its rerun may excuse it
    if not failed:
        return None, ""
    return "physics", "The run finished but failed these physics checks:\n" + "\n".join(
        f"- {c['name']}: {c.get('detail') or ''} (value {c.get('value')}, "
        f"threshold {c.get('threshold')})"
        for c in failed
    )


def count_failure(run, stage_id, kind, record, feedback) -> None:
    """The paper's failure log; its execution lines are the never-reset total."""
    entry = {
        "stage_id": stage_id,
        "kind": kind,
        "failure": (record.get("failure") or {}).get("kind"),
        "job_id": record.get("job_id"),
        "feedback": feedback[:500],
    }
    with open(run.out_dir / "run_failures.jsonl", "a", encoding="utf-8") as fh:
        fh.write(json.dumps(entry) + "\n")
    log_event(run.out_dir, "simulation", f"{stage_id}: {kind} failure; {feedback[:200]}")


def reuse_failed_run(kept: Path, script_path: Path) -> dict | None:
    """A run kept by an earlier pass of this step (before it stopped at a gate, or
    before the driver died) with the same script is not run again: its record is read
    where it lies. run/ is left alone: a job resubmitted after it may be writing
    there, or may have finished there while no driver waited on it."""
    recorded = kept / "result.json"
    if not recorded.is_file():
        return None
    kept_result = load_result(recorded)
    if kept_result.script_sha256 != sha256_file(script_path):
        return None
    return {**kept_result.to_json(), "reused_from": str(kept)}


def restore_accepted_run(stage_dir: Path, record: dict) -> None:
    """The steps after this one read run/: when the run that stands is a kept one (a
    failed run the user accepted on resume), its files go there, but only into an
    empty run/ with no submitted job waiting on it; a run/ that holds files is the
    kept run's own (archived from it just before the gate stopped the step)."""
    kept = record.get("reused_from")
    run_dir = stage_dir / "run"
    if not kept or stage_run.job_pending(stage_dir):
        return
    if run_dir.is_symlink() or run_dir.exists():
        if run_dir.is_symlink() or not run_dir.is_dir() or any(run_dir.iterdir()):
            return
        run_dir.rmdir()  # empty: the copy makes it anew
    run_files.copy_run_tree(Path(kept), run_dir)
    (run_dir / "result.json").unlink(missing_ok=True)


def archive_run(run_dir: Path, kept: Path, record: dict, cap_mb: int = 4096) -> None:
    """Keep a failed run (its files and record) before the next attempt clears run/:
    copied without following a link (a link is kept as a link, never read), at most
    the run folder's cap (`simulation.sandbox.run_folder_mb`) in bytes written."""
    import shutil

    if kept.exists():
        shutil.rmtree(kept)
    kept.parent.mkdir(parents=True, exist_ok=True)
    run_files.copy_run_tree(run_dir, kept, cap_bytes=cap_mb * 1024 * 1024)
    write_result(kept / "result.json", RunResult.model_validate(record))


def regenerate_code(run, design_art, stage_dir: Path, feedback: str, n: int, first: int):
    """Code generator and reviewer again; attempts numbered on from the code that failed
    (the same numbers when this step resumes after a gate, so replays and the cache hit)."""
    artifact = code_loop(
        run,
        design_art,
        stage_dir,
        load_adaptations(run.out_dir / "prompt_adaptations.json"),
        feedback=feedback,
        first_attempt=first,
        gate_name=f"code_fix{n}",
    )
    code_path, script_path = stage_dir / f"code.fix{n}.json", stage_dir / f"simulation.fix{n}.py"
    atomic_write_text(script_path, artifact.output.code)
    write_code(code_path, artifact)
    return code_path, script_path


def execution_limit_gate(run, stage_id, record, counts, user_rounds) -> str | None:
    """Ask the user after `max_execution_failures`: approve accepts the failed run;
    reject with a note regenerates the code with the note (counter reset)."""
    failure = record["failure"]
    gate_id = f"{stage_id}.execution_limit" + (f".{user_rounds + 1}" if user_rounds else "")
    sha = protocol.content_sha256({"failure": failure, "job_id": record.get("job_id")})
    checkpoint = protocol.Checkpoint(
        gate_id=gate_id,
        kind=protocol.GateKind.EXECUTION_LIMIT,
        paper_id=run.paper_id,
        stage_id=stage_id,
        sha256=sha,
        question=(
            f"The simulation of {stage_id} failed {counts['execution']} times; last: "
            f"{failure['summary']}. It may need less memory (lower resolution, smaller "
            "cell), more time, or a different approach. approve: go on with the failed "
            "run (the stage fails); reject: regenerate the code with your 'note' as "
            "guidance."
        ),
        options=["approve", "reject"],
        actions=["approve", "reject"],
        payload={"failure": failure, "job_id": record.get("job_id")},
        answer_file=str(protocol.gate_decision_path(run.out_dir, gate_id)),
        answer_example={"action": "reject", "sha256": sha, "note": "halve the resolution"},
    )
    decision = protocol.resolve_gate(run.out_dir, checkpoint, run.gate_wait_s)
    if decision.action == "reject" and not decision.note.strip():
        raise GateError(f"{checkpoint.answer_file}: a reject needs a 'note' (the guidance)")
    consent.log_interaction(
        run.out_dir,
        checkpoint.question,
        decision,
        "code regenerated with the user's note"
        if decision.action == "reject"
        else "failed run accepted",
        kind=protocol.GateKind.EXECUTION_LIMIT,
    )
    return decision.note if decision.action == "reject" else None
