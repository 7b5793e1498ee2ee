"""CodeGeneratorAgent: writes the Python+Meep script for an approved design."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from agents.common import AgentModel, StageId

AGENT = "code_generator"


class GeneratedCode(AgentModel):
    stage_id: StageId
    code: Annotated[str, Field(min_length=20)]
    """The complete script; it writes only into its working directory."""
    expected_outputs: list[str] = Field(min_length=1)
    """File names the script writes."""
    estimated_runtime_minutes: Annotated[float, Field(gt=0)]
    notes: str = ""
    """Anything a reviewer should know."""


def context(design: dict, materials: list, reviewer_feedback: str | None) -> dict:
    ctx = {"design": design, "validated_materials": materials}
    if reviewer_feedback:
        ctx["reviewer_feedback"] = reviewer_feedback
    return ctx
