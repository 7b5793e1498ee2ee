"""Whether a stage may run, decided in code from the files (never stored twice).

A stage runs when its dependencies completed with success or partial, the
validation hierarchy allows its type (material validation, then single
structures, then arrays, then sweeps, then complex physics, each required only
where the plan has such stages), and it fits the paper's total runtime budget.
A stage that may not run is *blocked*: every step of it writes a small blocked
artifact naming the reason instead of failing, so its dependents are blocked in
turn and the report is still written (a partial report that says what did not
run and why).

The supervisor's vocabulary acts here too: `should_stop` / `all_complete` end the
paper (`supervisor_end.json`: every later stage is blocked, the report says who
stopped it and why, the run ends as an accepted failure does: exit 0 with a
report), and `change_priority` reorders what may run next, among the stages whose
dependencies are met (`priority.json`, read by the stage rules' Snakemake priority).
"""

from __future__ import annotations

from pathlib import Path

from agents.common import StageType
from agents.planner import PlannerOutput, PlanStage
from reprolab.artifacts import load_result, load_verdict
from reprolab.fileio import atomic_write_json, read_json

PAPER_END_FILE = "supervisor_end.json"
PRIORITY_FILE = "priority.json"

OK_STATUSES = ("completed_success", "completed_partial")
# The validation hierarchy: which lower levels a stage type waits for (when the plan has them).
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


def hierarchy_stages(plan: PlannerOutput | list[PlanStage], stage: PlanStage) -> list[str]:
    """Stages whose verdicts this stage's type waits for (its DAG edges besides deps):
    the lower levels it uses, i.e. every material validation (its materials) and the
    lower-level stages among its dependencies, direct or not (a validated geometry). A
    stage that shares nothing with a failed one is judged on its own."""
    stages = plan.stages if isinstance(plan, PlannerOutput) else list(plan)
    by_id = {s.stage_id: s for s in stages}
    used, todo = set(), list(stage.dependencies)
    while todo:
        sid = todo.pop()
        if sid not in used and sid in by_id:
            used.add(sid)
            todo += by_id[sid].dependencies
    lower = set(HIERARCHY[stage.stage_type])
    return [
        s.stage_id
        for s in stages
        if s.stage_type in lower
        and s is not stage
        and (s.stage_type == StageType.MATERIAL_VALIDATION or s.stage_id in used)
    ]


# A dependency that failed only because its figure did not match the paper's data
# (checks and run validation passed: the simulation itself stands) blocks nothing: the
# paper's data may be what is wrong, and each figure is judged on its own.
FAILED_BY_COMPARISON = "comparison"


def _blocks(v: dict) -> bool:
    if v["status"] in OK_STATUSES:
        return False
    return not (v["status"] == "completed_failed" and v.get("failed_by") == FAILED_BY_COMPARISON)


def blocked_reason(
    stage: PlanStage,
    dep_verdicts: list[dict],
    hierarchy_verdicts: list[dict],
    spent_s: float,
    total_budget_s: float | None,
    ended: dict | None = None,
) -> str | None:
    if ended:
        return (
            f"the supervisor of {ended['stage_id']} ended the paper ({ended['verdict']}); "
            "no later stage runs (its reasons: the report's Conclusions)"
        )
    for v in dep_verdicts:
        if _blocks(v):
            return f"dependency {v['stage_id']} ended {v['status']} ({v.get('reason', '')})"
    for v in hierarchy_verdicts:
        if _blocks(v):
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
        total += load_result(path).runtime_seconds or 0.0
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


def ancestors(plan: PlannerOutput, stage_id: str) -> list[str]:
    """The stage and every stage it depends on, directly or not, in plan order."""
    by_id = {s.stage_id: s for s in plan.stages}
    seen, todo = set(), [stage_id]
    while todo:
        sid = todo.pop()
        if sid not in seen:
            seen.add(sid)
            todo += by_id[sid].dependencies
    return [s.stage_id for s in plan.stages if s.stage_id in seen]


def end_paper(out_dir: Path, stage_id: str, verdict: str, feedback: str) -> dict:
    """Record the supervisor's end of the paper (its feedback kept, checked in the report)."""
    path = Path(out_dir) / PAPER_END_FILE
    record = {
        "stage_id": stage_id,
        "verdict": verdict,
        "feedback": feedback,
        "paper_id": Path(out_dir).name,
        "file": str(path),
    }
    atomic_write_json(path, record)
    return record


def clear_paper_end(out_dir: Path, stage_id: str) -> None:
    """A stage judged again takes back its earlier end of the paper."""
    path = Path(out_dir) / PAPER_END_FILE
    if path.is_file() and read_json(path).get("stage_id") == stage_id:
        path.unlink()


def ended_before(out_dir: Path, plan: PlannerOutput, stage: PlanStage) -> dict | None:
    """The supervisor's end of the paper when it applies to this stage: a stage after the
    stopping one in plan order (the stopping stage and those it depends on may be redone)."""
    path = Path(out_dir) / PAPER_END_FILE
    if not path.is_file():
        return None
    end = read_json(path)
    order = [s.stage_id for s in plan.stages]
    if end.get("stage_id") not in order or stage.stage_id in ancestors(plan, end["stage_id"]):
        return None
    return end if order.index(stage.stage_id) > order.index(end["stage_id"]) else None


def priority_problem(
    plan: PlannerOutput, stage: PlanStage, status: str, wanted: str, verdicts: dict
) -> str | None:
    """Why `wanted` may not be put first (None: it may): it must be a stage of the plan
    not yet run whose dependencies and validation-hierarchy stages completed."""
    by_id = {s.stage_id: s for s in plan.stages}
    if wanted not in by_id:
        return f"{wanted}: not a stage of the plan (valid: {sorted(by_id)})"
    if wanted == stage.stage_id or wanted in verdicts:
        return f"{wanted}: already run"
    target = by_id[wanted]
    done = {**{k: v["status"] for k, v in verdicts.items()}, stage.stage_id: status}
    for dep in [*target.dependencies, *hierarchy_stages(plan, target)]:
        if done.get(dep) not in OK_STATUSES:
            return f"{wanted}: its dependency {dep} has not completed ({done.get(dep, 'not run')})"
    return None


def change_priority(
    out_dir: Path, plan: PlannerOutput, stage: PlanStage, status: str, requested: list[str]
) -> dict:
    """Accept the supervisor's new order where code finds it valid, record it for the stage
    rules' Snakemake priority, and say what was refused and why."""
    verdicts = {
        p.parent.name: load_verdict(p).to_json()
        for p in Path(out_dir).glob("stages/*/verdict.json")
        if p.parent.name != stage.stage_id
    }
    accepted, refused = [], []
    for wanted in dict.fromkeys(requested):
        problem = priority_problem(plan, stage, status, wanted, verdicts)
        (refused if problem else accepted).append(problem or wanted)
    record = {"from": stage.stage_id, "order": accepted, "refused": refused}
    if accepted:
        atomic_write_json(Path(out_dir) / PRIORITY_FILE, record)
    return record


def priority_of(out_dir: Path, stage_id: str) -> int:
    """The Snakemake priority of a stage's jobs: the supervisor's first choice highest,
    0 for every stage it did not name (the plan's order)."""
    path = Path(out_dir) / PRIORITY_FILE
    if not path.is_file():
        return 0
    order = read_json(path).get("order") or []
    return len(order) - order.index(stage_id) if stage_id in order else 0
