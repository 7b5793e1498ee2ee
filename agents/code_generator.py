"""CodeGeneratorAgent: writes the Python+Meep script for an approved design."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, StringConstraints

from agents.common import AgentModel, StageId

AGENT = "code_generator"

OutputName = Annotated[
    str, StringConstraints(pattern=r"^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$", max_length=160)
]
"""A file name in the run folder: letters, digits, '_', '-' and single dots between
them (no path separator, no '..', no leading or trailing dot, so no hidden file)."""


class GeneratedCode(AgentModel):
    stage_id: StageId
    code: Annotated[str, Field(min_length=20)]
    """The complete script; it writes only into its working directory."""
    expected_outputs: list[OutputName] = Field(min_length=1)
    """File names the script writes, each a plain name in its working directory (no
    path separator, no '..', no leading dot)."""
    estimated_runtime_minutes: Annotated[float, Field(gt=0)]
    notes: str = ""
    """Anything a reviewer should know."""


def context(design: dict, materials: list, reviewer_feedback: str | None) -> dict:
    ctx = {"design": design, "validated_materials": materials}
    if reviewer_feedback:
        ctx["reviewer_feedback"] = reviewer_feedback
    return ctx
