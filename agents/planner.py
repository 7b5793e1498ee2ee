"""PlannerAgent: reads the paper and writes the staged reproduction plan."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from agents.common import AgentModel, Assumption, Question, StageId, StageType

AGENT = "planner"


class PlannedMaterial(AgentModel):
    material_id: str = Field(pattern=r"^[a-z0-9_]+$")
    """Identifier used by designs and code, e.g. `fused_silica`."""
    name: str
    """Human-readable name."""
    model: str
    """How it is modelled: a `meep.materials` name (e.g. `fused_quartz`) or `constant_index`."""
    index: float | None = None
    """Refractive index, for `constant_index` materials only."""
    source: str
    """Where the optical data comes from (database or the paper's statement)."""


class PlanStage(AgentModel):
    stage_id: StageId
    """`stage<N>_<name>`; stage 0 validates materials."""
    stage_type: StageType
    """Place in the validation hierarchy."""
    name: str
    """Short title."""
    description: str
    """What the stage simulates and why."""
    dependencies: list[StageId] = []
    """Stages that must be completed first."""
    target_figures: list[str] = []
    """Figure ids of the paper this stage reproduces."""
    validation_criteria: list[str] = []
    """What must hold for the stage to count as reproduced."""
    runtime_budget_minutes: Annotated[float, Field(gt=0, le=24 * 60)]
    """Wall-time budget for the simulation."""


class Parameter(AgentModel):
    name: str
    value: float | str
    unit: str = ""
    source: str
    """Where in the paper it is stated (section or figure), or `inferred`."""


class PlannerOutput(AgentModel):
    paper_id: str
    title: str
    summary: str
    """The reproduction strategy in a few sentences."""
    stages: list[PlanStage] = Field(min_length=1)
    """Stages in execution order; stage 0 is material validation."""
    planned_materials: list[PlannedMaterial] = Field(min_length=1)
    """Materials to validate in stage 0."""
    assumptions: list[Assumption] = []
    """Initial assumptions with their sources."""
    extracted_parameters: list[Parameter] = []
    """Numbers taken from the paper, with provenance."""
    questions: list[Question] = []
    """What you need the user to decide (ambiguous paper information, an inferred
    parameter to confirm, a trade-off); empty when the paper settles everything."""


def context(paper_id: str, paper_text: str, paper_domain: str, figures: list[dict]) -> dict:
    return {
        "paper_id": paper_id,
        "paper_text": paper_text,
        "paper_domain": paper_domain,
        "paper_figures": figures,
    }
