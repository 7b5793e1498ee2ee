"""ResultsAnalyzerAgent: explains the comparison numbers that code computed."""

from __future__ import annotations

from typing import Literal

from agents.common import AgentModel, StageId

AGENT = "results_analyzer"


class FigureNarrative(AgentModel):
    figure_id: str
    narrative: str
    """What matches and what does not, citing the computed numbers."""


class Discrepancy(AgentModel):
    figure_id: str
    quantity: str
    """What differs, e.g. `stop-band edge`."""
    description: str
    likely_cause: str
    severity: Literal["minor", "significant", "critical"]


class AnalysisOutput(AgentModel):
    stage_id: StageId
    summary: str
    """One paragraph on the stage's reproduction."""
    per_figure: list[FigureNarrative] = []
    discrepancies: list[Discrepancy] = []


def context(plan_stage: dict, comparison: dict, checks: dict, figures: list[dict]) -> dict:
    return {
        "current_stage": plan_stage,
        "comparison": comparison,
        "checks": checks,
        "target_figures": figures,
    }
