"""The job budget gate: a stage whose sized job (reprolab.jobs.job_size) would cost more
core-hours than `simulation.stage_budget_core_hours` is not submitted until the user
chooses: go on as estimated, or a cheaper design (coarser resolution, a symmetry, a
smaller cell), which blocks the stage with that choice as the reason to redesign it.
The question carries the estimate's numbers; the answer is logged as consent."""

from __future__ import annotations

from pathlib import Path

from reprolab.events import log_event
from reprolab.gates import consent, protocol
from reprolab.jobs import sizing, stage_run

DEFAULT_BUDGET_CORE_HOURS = 1000.0


def budget_core_hours(config: dict) -> float:
    value = (config.get("simulation") or {}).get("stage_budget_core_hours")
    budget = DEFAULT_BUDGET_CORE_HOURS if value is None else float(value)
    if budget <= 0:
        raise ValueError(
            f"simulation.stage_budget_core_hours is {budget:g}; valid: a number above 0"
        )
    return budget


def job_budget_gate(run, design, script: Path, budget_minutes: float) -> str | None:
    """None: the stage may be submitted (within budget, or the user said go on); else
    why it is blocked (the trade-off the user chose). Without an answer the branch stops
    (GateError) with the question and the command that answers it. A job over its
    partition's limits fails first (job_size.JobTooLarge): no answer could submit it."""
    sim_cfg = dict(run.config.get("simulation") or {})
    job = stage_run.size_and_check(design, script, budget_minutes, sim_cfg)[0]
    wall_s = job.core_seconds / job.ranks
    if job.source == "design" and job.bounded and not design.sweep and wall_s > budget_minutes * 60:
        return (
            f"the job sized from its design ({wall_s:.0f} s on {job.ranks} rank(s)) does not "
            f"fit the stage's budget ({budget_minutes * 60:.0f} s)"
        )
    budget_s = budget_core_hours(run.config) * 3600
    if job.stage_core_seconds <= budget_s:
        return None
    size = sizing.Size(
        design.dimensions, 0, 0, False, job.memory_mb, job.stage_core_seconds, job.ranks
    )
    asked = sizing.budget_question(design.stage_id, size, budget_s)
    gate_id = f"{design.stage_id}.job_budget"
    about = {"estimate": job.to_json(), "budget_core_s": budget_s}
    sha = protocol.content_sha256(about)
    hours = job.stage_core_seconds / 3600
    checkpoint = protocol.Checkpoint(
        gate_id=gate_id,
        kind=protocol.GateKind.JOB_BUDGET,
        paper_id=run.paper_id,
        stage_id=design.stage_id,
        sha256=sha,
        question=(
            f"{design.stage_id} is estimated at {hours:.3g} core-hours "
            f"({job.points} job(s) of {job.core_seconds:.3g} core-s, {job.memory_mb:.0f} MB, "
            f"{job.ranks} rank(s); sized from the {job.source}), over "
            f"simulation.stage_budget_core_hours = {budget_s / 3600:g}. It is not submitted "
            "until you choose: go_on submits it as estimated; the others block the stage "
            "so that its design is redone cheaper."
        ),
        headline=f"{hours:.3g} core-hours over a budget of {budget_s / 3600:g}",
        options=[f"{k}: {v}" for k, v in asked["options"].items()],
        choices=list(asked["options"]),
        actions=["approve"],
        payload=about,
        answer_file=str(protocol.gate_decision_path(run.out_dir, gate_id)),
        answer_example={"action": "approve", "option": "go_on", "sha256": sha},
    )
    decision = protocol.resolve_gate(run.out_dir, checkpoint, run.gate_wait_s)
    choice = decision.option or "go_on"
    outcome = (
        "submitted as estimated"
        if choice == "go_on"
        else f"not submitted: the design is to be redone ({asked['options'][choice]})"
    )
    consent.log_interaction(
        run.out_dir, checkpoint.question, decision, outcome, kind=protocol.GateKind.JOB_BUDGET
    )
    log_event(run.out_dir, "gate", f"{design.stage_id}: job budget: {choice}: {outcome}")
    if choice == "go_on":
        return None
    return (
        f"over its job budget ({hours:.3g} of {budget_s / 3600:g} core-hours); the user "
        f"chose {choice}: {asked['options'][choice]}. Redo the design: "
        f"`reprolab invalidate {run.paper_id} {design.stage_id} --reason '{choice}'`"
    )
