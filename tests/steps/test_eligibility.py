"""Stage eligibility decided in code: dependencies, the validation hierarchy, budgets."""

from agents.common import StageType
from agents.planner import PlanStage
from reprolab.steps import eligibility


def stage(stage_type: StageType, budget_min: float = 10) -> PlanStage:
    return PlanStage.model_construct(
        stage_id="stage2_x", stage_type=stage_type, runtime_budget_minutes=budget_min
    )


def verdict(stage_id: str, status: str) -> dict:
    return {"stage_id": stage_id, "status": status, "reason": "r"}


def test_dependencies_then_hierarchy_then_budget():
    s = stage(StageType.ARRAY_SYSTEM)
    ok = [verdict("stage1_a", "completed_partial")]
    assert eligibility.blocked_reason(s, ok, ok, 0, None) is None
    failed = [verdict("stage1_a", "completed_failed")]
    assert "dependency stage1_a ended completed_failed" in eligibility.blocked_reason(
        s, failed, [], 0, None
    )
    assert "validation hierarchy: ARRAY_SYSTEM waits for stage1_a" in (
        eligibility.blocked_reason(s, ok, failed, 0, None)
    )
    # 10 min budget: fits 3600 s with 3000 s spent, not with 3001 s.
    assert eligibility.blocked_reason(s, ok, ok, 3000, 3600) is None
    assert "total runtime budget" in eligibility.blocked_reason(s, ok, ok, 3001, 3600)
    material = stage(StageType.MATERIAL_VALIDATION)
    assert eligibility.blocked_reason(material, [], [], 10**6, 1) is None  # mandatory


def test_a_failure_on_the_comparison_alone_blocks_nothing():
    """A dependency whose run and checks stand but whose figure did not match the paper
    (the paper's data may be wrong) lets its dependents run; any other failure blocks."""
    s = stage(StageType.PARAMETER_SWEEP)
    by_data = [{**verdict("stage1_a", "completed_failed"), "failed_by": "comparison"}]
    assert eligibility.blocked_reason(s, by_data, by_data, 0, None) is None
    by_checks = [verdict("stage1_a", "completed_failed")]
    assert "dependency stage1_a ended completed_failed" in eligibility.blocked_reason(
        s, by_checks, [], 0, None
    )


def test_the_hierarchy_waits_only_for_what_a_stage_uses():
    """A sweep waits for the materials and for the lower stages it depends on, not for
    an unrelated single structure."""

    def ps(sid, st, deps=()):
        return PlanStage.model_construct(stage_id=sid, stage_type=st, dependencies=list(deps))

    stages = [
        ps("stage0_m", StageType.MATERIAL_VALIDATION),
        ps("stage1_slab", StageType.SINGLE_STRUCTURE, ["stage0_m"]),
        ps("stage2_rod", StageType.SINGLE_STRUCTURE, ["stage0_m"]),
        ps("stage3_sweep", StageType.PARAMETER_SWEEP, ["stage1_slab"]),
    ]
    assert eligibility.hierarchy_stages(stages, stages[3]) == ["stage0_m", "stage1_slab"]
    assert eligibility.hierarchy_stages(stages, stages[2]) == ["stage0_m"]


def test_hierarchy_levels_follow_the_seed():
    h = eligibility.HIERARCHY
    assert h[StageType.SINGLE_STRUCTURE] == (StageType.MATERIAL_VALIDATION,)
    assert StageType.SINGLE_STRUCTURE in h[StageType.ARRAY_SYSTEM]
    assert StageType.ARRAY_SYSTEM in h[StageType.PARAMETER_SWEEP]
    assert StageType.PARAMETER_SWEEP in h[StageType.COMPLEX_PHYSICS]


def test_backtrack_decision_matrix_of_the_seed():
    from reprolab.steps.backtrack import backtrack_decision

    def sug(severity, confidence):
        return {"target_stage": "stage1_a", "reason": "r", "severity": severity,
                "confidence": confidence}  # fmt: skip

    assert backtrack_decision(sug("critical", "high"), 0, 2) == "accept"
    assert backtrack_decision(sug("significant", "high"), 1, 2) == "accept"
    assert backtrack_decision(sug("critical", "low"), 0, 2) == "ask_user"
    assert backtrack_decision(sug("significant", "low"), 0, 2) == "ask_user"
    assert backtrack_decision(sug("minor", "high"), 0, 2) == "reject"
    assert backtrack_decision(sug("critical", "high"), 2, 2) == "ask_user"  # limit reached
    assert backtrack_decision(None, 0, 2) == "accept"  # supervisor's own call
