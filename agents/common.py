"""Types shared by several agents' output models."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field


class AgentModel(BaseModel):
    """Base of every agent output: attribute docstrings become the field
    descriptions the model sees in the tool schema; unknown fields are refused
    so a misspelt field is fed back instead of silently dropped."""

    model_config = ConfigDict(use_attribute_docstrings=True, extra="forbid")


StageId = Annotated[str, Field(pattern=r"^stage\d+_[a-z0-9_]+$")]


class StageType(StrEnum):
    MATERIAL_VALIDATION = "MATERIAL_VALIDATION"
    SINGLE_STRUCTURE = "SINGLE_STRUCTURE"
    ARRAY_SYSTEM = "ARRAY_SYSTEM"
    PARAMETER_SWEEP = "PARAMETER_SWEEP"
    COMPLEX_PHYSICS = "COMPLEX_PHYSICS"


class ReviewIssue(AgentModel):
    severity: Literal["blocking", "major", "minor"]
    """How much the issue matters: blocking issues force a revision."""
    description: str
    """What is wrong, specific enough to act on."""


class ReviewOutput(AgentModel):
    """The shape every reviewer (plan, design, code) returns."""

    verdict: Literal["approve", "needs_revision"]
    """approve lets the artifact proceed; needs_revision sends it back with feedback."""
    issues: list[ReviewIssue] = []
    """Problems found; empty when nothing is wrong."""
    feedback: str = ""
    """Narrative feedback passed to the author on revision."""


class Assumption(AgentModel):
    assumption_id: str
    """Short identifier, e.g. `A1`."""
    description: str
    """What is assumed."""
    source: Literal["paper", "inferred", "user"]
    """Where it comes from: stated in the paper, inferred by an agent, or given by the user."""


class Question(AgentModel):
    """A question for the user (clarification, parameter confirmation, trade-off). Code decides
    whether it is worth a gate: high impact, or low confidence in the proposed answer."""

    question_id: str = Field(pattern=r"^Q\d+$")
    """Q1, Q2, ... within this output."""
    kind: Literal["clarification", "parameter_confirmation", "trade_off"]
    """clarification: the paper is ambiguous; parameter_confirmation: a value you inferred;
    trade_off: a choice between costs (accuracy, time, scope)."""
    question: str
    """The question, answerable without reading your other output."""
    options: list[str] = []
    """The alternatives you considered."""
    proposed: str
    """What you will do if nobody answers (it is used, and said in the report)."""
    confidence: Annotated[float, Field(ge=0, le=1)]
    """How sure you are that `proposed` is right."""
    impact: Literal["low", "medium", "high"]
    """How much the reproduction changes if `proposed` is wrong."""
