"""SupervisorAgent: the big-picture verdict after each stage."""

from __future__ import annotations

from typing import Literal

from agents.common import AgentModel, StageId

AGENT = "supervisor"

Verdict = Literal["ok_continue", "replan_needed", "backtrack_to_stage", "ask_user", "all_complete"]


class SupervisorOutput(AgentModel):
    stage_id: StageId
    verdict: Verdict
    """What happens next; after stage 0 it is always ask_user (the material gate)."""
    feedback: str
    """Reasoning and recommendations."""
    backtrack_target: StageId | None = None
    """Stage to go back to, with verdict backtrack_to_stage."""


def context(
    plan_summary: dict,
    current_stage_summary: dict,
    analysis: dict,
    progress: list,
    *,
    figure_comparisons: list[dict],
    revision_counts: dict,
    backtrack_suggestion: dict | None,
    user_interactions: list[dict],
) -> dict:
    """Summaries only: no paper text, raw code or raw data (the seed's least context).

    Progress holds the plan's earlier stages only: a later stage's verdict (left from
    an earlier run) is not an input of this stage, and would change its prompt."""
    order = list(plan_summary.get("stages") or [])
    current = current_stage_summary.get("stage_id")
    if current in order:
        earlier = set(order[: order.index(current)])
        progress = [p for p in progress if not isinstance(p, dict) or p.get("stage_id") in earlier]
    return {
        "plan_summary": plan_summary,
        "progress": progress,
        "current_stage_summary": current_stage_summary,
        "figure_comparisons": figure_comparisons,
        "analysis": analysis,
        "systematic_discrepancies": analysis.get("discrepancies", []),
        "revision_counts": revision_counts,
        "backtrack_suggestion": backtrack_suggestion,
        "user_interactions": user_interactions,
    }
