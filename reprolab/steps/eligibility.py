"""Whether a stage may run, decided in code from the files (never stored twice).

A stage runs when its dependencies completed with success or partial, the seed's
validation hierarchy allows its type (material validation, then single
structures, then arrays, then sweeps, then complex physics, each required only
where the plan has such stages), and it fits the paper's total runtime budget.
A stage that may not run is *blocked*: every step of it writes a small blocked
artifact naming the reason instead of failing, so its dependents are blocked in
turn and the report is still written (a partial report that says what did not
run and why).
"""

from __future__ import annotations

from pathlib import Path

from agents.common import StageType
from agents.planner import PlannerOutput, PlanStage
from reprolab.fileio import read_json

OK_STATUSES = ("completed_success", "completed_partial")
# Seed's select_stage: which lower levels a stage type waits for (when the plan has them).
HIERARCHY = {
    StageType.MATERIAL_VALIDATION: (),
    StageType.SINGLE_STRUCTURE: (StageType.MATERIAL_VALIDATION,),
    StageType.ARRAY_SYSTEM: (StageType.MATERIAL_VALIDATION, StageType.SINGLE_STRUCTURE),
    StageType.PARAMETER_SWEEP: (
        StageType.MATERIAL_VALIDATION,
        StageType.SINGLE_STRUCTURE,
        StageType.ARRAY_SYSTEM,
    ),
    StageType.COMPLEX_PHYSICS: (
        StageType.MATERIAL_VALIDATION,
        StageType.SINGLE_STRUCTURE,
        StageType.ARRAY_SYSTEM,
        StageType.PARAMETER_SWEEP,
    ),
}


def hierarchy_stages(plan: PlannerOutput, stage: PlanStage) -> list[str]:
    """Stages whose verdicts this stage's type waits for (its DAG edges besides deps)."""
    lower = set(HIERARCHY[stage.stage_type])
    return [s.stage_id for s in plan.stages if s.stage_type in lower and s is not stage]


def blocked_reason(
    stage: PlanStage,
    dep_verdicts: list[dict],
    hierarchy_verdicts: list[dict],
    spent_s: float,
    total_budget_s: float | None,
) -> str | None:
    for v in dep_verdicts:
        if v["status"] not in OK_STATUSES:
            return f"dependency {v['stage_id']} ended {v['status']} ({v.get('reason', '')})"
    for v in hierarchy_verdicts:
        if v["status"] not in OK_STATUSES:
            return (
                f"validation hierarchy: {stage.stage_type} waits for {v['stage_id']}, which "
                f"ended {v['status']}"
            )
    budget_s = stage.runtime_budget_minutes * 60
    # Stage 0 is mandatory (the material checkpoint needs it): never blocked by budget.
    material = stage.stage_type == StageType.MATERIAL_VALIDATION
    if total_budget_s is not None and not material and spent_s + budget_s > total_budget_s:
        return (
            f"total runtime budget: {spent_s:.0f} s of simulation spent, this stage's budget "
            f"is {budget_s:.0f} s, limits.max_total_runtime_hours allows {total_budget_s:.0f} s"
        )
    return None


def spent_seconds(out_dir: Path) -> float:
    """Simulation time the paper has used so far (its stages' result records)."""
    total = 0.0
    for path in Path(out_dir).glob("stages/*/result.json"):
        total += read_json(path).get("runtime_seconds") or 0.0
    return total


def blocked_artifact(stage_id: str, reason: str) -> dict:
    return {"stage_id": stage_id, "blocked": {"reason": reason}}


def blocked_in(*paths) -> dict | None:
    """The blocked record of the first input that is blocked, else None."""
    for path in paths:
        if path and Path(path).is_file():
            data = read_json(path)
            if isinstance(data, dict) and data.get("blocked"):
                return data
    return None
