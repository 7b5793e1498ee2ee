"""DesignReviewerAgent: reviews a stage design before code is written."""

from __future__ import annotations

from agents.common import ReviewOutput

AGENT = "design_reviewer"


class DesignReviewerOutput(ReviewOutput):
    """Verdict on the design."""


def context(plan_stage: dict, design: dict, materials: list) -> dict:
    return {"current_stage": plan_stage, "design": design, "materials": materials}
