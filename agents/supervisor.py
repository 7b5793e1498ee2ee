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


def context(plan_summary: dict, stage_status: dict, analysis: dict, progress: list) -> dict:
    return {
        "plan": plan_summary,
        "stage": stage_status,
        "analysis": analysis,
        "progress": progress,
    }
