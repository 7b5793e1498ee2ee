"""PhysicsSanityAgent: are the results physically reasonable (before comparison)?"""

from __future__ import annotations

from typing import Literal

from agents.common import AgentModel, StageId

AGENT = "physics_sanity"


class BacktrackSuggestion(AgentModel):
    target_stage: StageId
    """Earlier stage whose result this one calls into question."""
    reason: str
    """The physical evidence for a fundamental setup error there."""
    severity: Literal["critical", "significant", "minor"]
    """critical: the earlier result is wrong; significant: it likely is; minor: a detail
    this stage can handle itself (never worth a backtrack)."""
    confidence: Literal["high", "low"]
    """How sure the evidence makes you; low confidence asks the user first."""


class PhysicsSanityOutput(AgentModel):
    stage_id: StageId
    """The stage whose results were checked."""
    verdict: Literal["pass", "warning", "fail"]
    """fail: unphysical results; warning: plausible but with a doubt a human should see."""
    conservation: str
    """T + R + A = 1 and A >= 0, citing the computed numbers."""
    value_ranges: str
    """Whether every quantity lies in its physical range, citing the numbers."""
    numerical_quality: str
    """Smoothness, symmetry, boundary artifacts, resolution."""
    issues: list[str] = []
    """Each problem found, one sentence each."""
    backtrack_suggestion: BacktrackSuggestion | None = None
    """Only for evidence of a fundamental error in an earlier stage; the supervisor decides."""


def context(
    plan_stage: dict, paper_domain: str, code: str, data_files: list[dict], checks: list[dict]
) -> dict:
    """Summaries of the output data, the code that made it, the stage's intent;
    no paper text, figures or other stages' data."""
    return {
        "current_stage": plan_stage,
        "paper_domain": paper_domain,
        "simulation_code": code,
        "output_data_files": data_files,
        "deterministic_checks": checks,
    }
