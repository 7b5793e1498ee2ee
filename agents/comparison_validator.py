"""ComparisonValidatorAgent: is the ResultsAnalyzer's account of the comparison right?

Code recomputes every number first and hands over the mismatches it found; the
agent judges the narrative (documentation of discrepancies, consistency of the
story with the classification) and cannot approve over a numeric mismatch.
"""

from __future__ import annotations

from typing import Literal

from agents.common import AgentModel, StageId

AGENT = "comparison_validator"


class ComparisonValidatorOutput(AgentModel):
    stage_id: StageId
    """The stage whose analysis was validated."""
    verdict: Literal["approve", "needs_revision"]
    """needs_revision sends the analysis back to the ResultsAnalyzer with `feedback`."""
    issues: list[str] = []
    """Each inaccuracy found: wrong numbers, missing figures, undocumented discrepancies."""
    feedback: str = ""
    """What the analyzer must change."""


def context(
    figure_comparisons: list[dict],
    analysis: dict,
    target_figures: list[dict],
    recomputed_mismatches: list[str],
) -> dict:
    """The analyzer's output and the code's numbers; no paper text, code or design."""
    return {
        "figure_comparisons": figure_comparisons,
        "analysis_summary": analysis.get("summary", ""),
        "per_figure": analysis.get("per_figure", []),
        "discrepancies": analysis.get("discrepancies", []),
        "target_figures": target_figures,
        "recomputed_mismatches": recomputed_mismatches,
    }
