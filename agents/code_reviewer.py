"""CodeReviewerAgent: reviews generated code before it runs."""

from __future__ import annotations

from agents.common import ReviewOutput
from agents.physics_sanity import BacktrackSuggestion

AGENT = "code_reviewer"


class CodeReviewerOutput(ReviewOutput):
    """Verdict on the code."""

    backtrack_suggestion: BacktrackSuggestion | None = None
    """Only when the design rests on a wrong assumption from an earlier stage (never for
    a bug this stage's code can fix); the supervisor decides after the stage ran,
    through the same decision matrix as PhysicsSanity's suggestions."""


def context(design: dict, code: str, materials: list) -> dict:
    return {"design": design, "code": code, "validated_materials": materials}
