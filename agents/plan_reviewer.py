"""PlanReviewerAgent: reviews the plan before any stage runs."""

from __future__ import annotations

from agents.common import ReviewOutput

AGENT = "plan_reviewer"


class PlanReviewerOutput(ReviewOutput):
    """Verdict on the plan."""


def context(plan: dict, figures: list[dict]) -> dict:
    return {"plan": plan, "paper_figures": figures}
