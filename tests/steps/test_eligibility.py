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
