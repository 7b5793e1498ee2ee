"""PlannerAgent: reads the paper and writes the staged reproduction plan."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from agents.common import AgentModel, Assumption, Question, StageId, StageType

AGENT = "planner"


class LorentzOscillator(AgentModel):
    """A dye's or an exciton's resonance as the paper states it: eps(w) = background_eps
    + f w0^2 / (w0^2 - w^2 - i gamma w), with f = `strength`, or with `plasma_energy_ev`
    (hbar wp) the numerator wp^2."""

    background_eps: Annotated[float, Field(gt=0)]
    """The background permittivity eps_b (eps_inf) the paper states."""
    energy_ev: Annotated[float, Field(gt=0)]
    """The resonance energy hbar w0 in eV."""
    gamma_ev: Annotated[float, Field(ge=0)]
    """The damping hbar gamma (full width) in eV."""
    strength: Annotated[float, Field(ge=0)] | None = None
    """The dimensionless oscillator strength f (or give plasma_energy_ev)."""
    plasma_energy_ev: Annotated[float, Field(ge=0)] | None = None
    """hbar wp in eV, when the paper writes wp^2 as the numerator (or give strength)."""


class PlannedMaterial(AgentModel):
    material_id: str = Field(pattern=r"^[a-z0-9_]+$")
    """Identifier used by designs and code, e.g. `fused_silica`."""
    name: str
    """Human-readable name."""
    model: str
    """How it is modelled: a `meep.materials` name (e.g. `fused_quartz`), `constant_index`,
    `library` (tabulated n, k of the materials library, fitted over `band_um`) or
    `lorentz_oscillator` (the paper's own oscillator parameters)."""
    index: float | None = None
    """Refractive index, for `constant_index` materials only."""
    library_id: str | None = None
    """For `library` only: the entry of materials/library.yaml (e.g. `au_johnson`)."""
    band_um: list[float] | None = None
    """For `library` only: [shortest, longest] vacuum wavelength in µm the paper's
    simulations cover; the Drude-Lorentz fit is made over it."""
    oscillator: LorentzOscillator | None = None
    """For `lorentz_oscillator` only: the parameters the paper states."""
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
