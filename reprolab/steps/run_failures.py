"""Runs that failed for reasons code cannot fix: the cluster's or the resources'.

A job cancelled from outside (scancel, a kill), preempted or on a failed node
(failure action `resubmit`) is resubmitted with the same script, up to
`simulation.max_resubmits` times per stage; then the user is asked. A run that
hit its time limit or ran out of memory, or one Slurm refused or could never
start (action `ask_user`), opens a gate at once: approve reruns it (with twice
the time or memory for a timeout or out-of-memory), reject accepts the failed run
as it is (the checks and the verdict judge it). Never silent: while the gate
waits, the step stops with a line naming the stage, the job, the reason and how
to go on, and Snakemake exits non-zero."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from reprolab.artifacts import load_result
from reprolab.events import log_event
from reprolab.gates import consent, protocol

DEFAULT_MAX_RESUBMITS = 2


@dataclass
class RerunState:
    """What this stage's reruns have used so far (within one pass of the step)."""

    resubmits: int = 0
    time_factor: float = 1.0
    memory_factor: float = 1.0
    asked: int = 0


def max_resubmits(run) -> int:
    return int(run.config.get("simulation", {}).get("max_resubmits", DEFAULT_MAX_RESUBMITS))


def rerun_needed(run, stage_id: str, record: dict, state: RerunState) -> str | None:
    """Why the same script must run again ('resubmit' or 'rerun'); None to go on
    with the record as it is. May stop the step at a gate (GateError)."""
    failure = record.get("failure") or {}
    action = failure.get("action")
    if action == "resubmit" and state.resubmits < max_resubmits(run):
        state.resubmits += 1
        if "reused_from" not in record:  # said when it happened, not again on resume
            say_resubmitted(run, stage_id, record, state)
        return "resubmit"
    if action not in ("resubmit", "ask_user"):
        return None
    state.asked += 1
    if not run_failure_gate(run, stage_id, record, state):
        return None
    if failure["kind"] == "timeout":
        state.time_factor *= 2
    elif failure["kind"] == "out_of_memory":
        state.memory_factor *= 2
    return "rerun"


def say_resubmitted(run, stage_id: str, record: dict, state: RerunState) -> None:
    """One console line and one event per resubmission: the job, why, which of how many."""
    failure, job_id = record["failure"], record.get("job_id")
    where = "Slurm job" if record.get("executor") == "slurm" else "job"
    text = (
        f"{stage_id}: {where} {job_id} {failure['kind']} ({failure['summary']}); "
        f"resubmitted automatically ({state.resubmits} of {max_resubmits(run)})"
    )
    print(f"[reprolab] {text}", file=sys.__stderr__, flush=True)
    log_event(run.out_dir, "simulation", text, job_id=job_id)


def proposal(failure: dict, state: RerunState) -> str:
    if failure["kind"] == "timeout":
        return f"rerun with twice the time ({state.time_factor * 2:g}x the plan's budget)"
    if failure["kind"] == "out_of_memory":
        return f"rerun with twice the memory ({state.memory_factor * 2:g}x)"
    return "rerun the same script (after fixing the cause, e.g. the config's simulation.slurm)"


def run_failure_gate(run, stage_id: str, record: dict, state: RerunState) -> bool:
    """Ask what to do with a failed run; True to rerun it, False to accept it."""
    failure, job_id = record["failure"], record.get("job_id")
    gate_id = f"{stage_id}.run_failure.{state.asked}"
    about = {k: failure.get(k) for k in ("kind", "summary", "action")}
    sha = protocol.content_sha256({"failure": about, "job_id": job_id})
    rerun = proposal(failure, state)
    checkpoint = protocol.Checkpoint(
        gate_id=gate_id,
        kind=protocol.GateKind.RUN_FAILURE,
        paper_id=run.paper_id,
        stage_id=stage_id,
        sha256=sha,
        question=(
            f"The simulation of {stage_id} (job {job_id}) failed: {failure['kind']}: "
            f"{failure['summary']}. approve: {rerun}; reject: accept the failed run "
            "as it is (the checks and the verdict judge it; the stage fails)."
        ),
        headline=f"{'Slurm ' if record.get('executor') == 'slurm' else ''}job {job_id} "
        f"{failure['kind']}",
        options=["rerun", "accept"],
        actions=["approve", "reject"],
        payload={"failure": failure, "job_id": job_id, "resubmits": state.resubmits},
        answer_file=str(protocol.gate_decision_path(run.out_dir, gate_id)),
        answer_example={"action": "approve", "sha256": sha},
    )
    decision = protocol.resolve_gate(run.out_dir, checkpoint, run.gate_wait_s)
    consent.log_interaction(
        run.out_dir,
        checkpoint.question,
        decision,
        rerun if decision.action == "approve" else "failed run accepted",
        kind=protocol.GateKind.RUN_FAILURE,
    )
    return decision.action == "approve"


def failed_run_reason(result_path) -> str | None:
    """Why the stage's last run failed, as the verdict and the report say it: the
    failure kind, the job and Slurm's (or the runner's) own words; None if it ran."""
    path = Path(result_path)
    record = load_result(path) if path.is_file() else None
    failure = record.failure if record else None
    if not failure:
        return None
    return f"run failed: {failure['kind']} (job {record.job_id}): {failure['summary']}"
