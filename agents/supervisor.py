"""SupervisorAgent: the big-picture verdict after each stage."""

from __future__ import annotations

from typing import Literal

from agents.common import AgentModel, StageId
from agents.results_analyzer import Claim

AGENT = "supervisor"

Verdict = Literal[
    "ok_continue",
    "change_priority",
    "replan_needed",
    "backtrack_to_stage",
    "ask_user",
    "all_complete",
    "should_stop",
]


class SupervisorOutput(AgentModel):
    stage_id: StageId
    verdict: Verdict
    """What happens next; after stage 0 it is always ask_user (the material gate)."""
    feedback: str
    """Reasoning and recommendations."""
    backtrack_target: StageId | None = None
    """Stage to go back to, with verdict backtrack_to_stage."""
    priority: list[StageId] = []
    """With change_priority: the stages to run next, first first. Code accepts only
    stages not yet run whose dependencies are met; the others keep the plan's order."""
    classification: Literal["SUCCESS", "PARTIAL", "FAILURE"] | None = None
    """The stage's outcome as your feedback describes it: it must be the code's
    (`current_stage_summary.status`: completed_success, completed_partial,
    completed_failed); the report strikes feedback that says otherwise."""
    claims: list[Claim] = []
    """Every comparison number the feedback cites, as the ResultsAnalyzer's claims
    (figure, curve, quantity, value as written, unit, relation): code checks each against
    the same computed quantity; a number without a claim is printed as unchecked."""


def context(
    plan_summary: dict,
    current_stage_summary: dict,
    analysis: dict,
    progress: list,
    *,
    figure_comparisons: list[dict],
    revision_counts: dict,
    backtrack_suggestions: list[dict],
    user_interactions: list[dict],
) -> dict:
    """Summaries only: no paper text, raw code or raw data (the least context that serves).

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
        # PhysicsSanity's, the ResultsAnalyzer's and the CodeReviewer's, each with its source
        "backtrack_suggestions": backtrack_suggestions,
        "user_interactions": user_interactions,
    }
