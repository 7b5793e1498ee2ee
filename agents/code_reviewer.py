"""CodeReviewerAgent: reviews generated code before it runs."""

from __future__ import annotations

from agents.common import ReviewOutput

AGENT = "code_reviewer"


class CodeReviewerOutput(ReviewOutput):
    """Verdict on the code."""


def context(design: dict, code: str, materials: list) -> dict:
    return {"design": design, "code": code, "validated_materials": materials}
