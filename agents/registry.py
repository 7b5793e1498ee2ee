"""Every agent, listed once: its name, output model, prompt, when it is called and
what it reviews.

The runner's output models (`agents.runner.OUTPUT_MODELS`), the config schema's
per-agent model names (`provider.models`, checked against this list by
tests/core/test_config_schema.py) and `reprolab check-recordings` all read this list.
Importing it imports no agent: a model is imported when first asked for, so a step
job loads the one or two agents it calls, not all of them.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

PROMPTS_DIR = Path(__file__).resolve().parent.parent / "prompts"


@dataclass(frozen=True)
class AgentSpec:
    name: str
    """The agent's module in `agents` (whose `AGENT` is this name) and its prompt's stem."""
    model: str
    """Its output model: a class of that module."""
    called: Literal["paper", "stage"]
    """Called once per paper (before the stages) or at least once in every stage."""
    description: str
    reviews: str | None = None
    """The author this reviewer judges: a needs_revision asks for the next attempt of both."""

    @property
    def module(self) -> str:
        return f"agents.{self.name}"

    @property
    def prompt(self) -> Path:
        """The prompt template, prompts/<name>.md."""
        return PROMPTS_DIR / f"{self.name}.md"

    def output_model(self) -> type[BaseModel]:
        return getattr(importlib.import_module(self.module), self.model)


AGENTS: dict[str, AgentSpec] = {
    spec.name: spec
    for spec in (
        AgentSpec(
            "prompt_adaptor",
            "PromptAdaptorOutput",
            "paper",
            "paper-specific additions to the other agents' prompts",
        ),
        AgentSpec(
            "planner",
            "PlannerOutput",
            "paper",
            "reads the paper and writes the staged reproduction plan",
        ),
        AgentSpec(
            "plan_reviewer",
            "PlanReviewerOutput",
            "paper",
            "reviews the plan before any stage runs",
            reviews="planner",
        ),
        AgentSpec(
            "simulation_designer",
            "SimulationDesign",
            "stage",
            "designs one stage's simulation (no code)",
        ),
        AgentSpec(
            "design_reviewer",
            "DesignReviewerOutput",
            "stage",
            "reviews a stage design before code is written",
            reviews="simulation_designer",
        ),
        AgentSpec(
            "code_generator",
            "GeneratedCode",
            "stage",
            "writes the Python+Meep script for an approved design",
        ),
        AgentSpec(
            "code_reviewer",
            "CodeReviewerOutput",
            "stage",
            "reviews generated code before it runs",
            reviews="code_generator",
        ),
        AgentSpec(
            "execution_validator",
            "ExecutionValidatorOutput",
            "stage",
            "did the simulation run correctly (technically)?",
        ),
        AgentSpec(
            "physics_sanity",
            "PhysicsSanityOutput",
            "stage",
            "are the results physically reasonable (before comparison)?",
        ),
        AgentSpec(
            "results_analyzer",
            "AnalysisOutput",
            "stage",
            "explains the comparison numbers that code computed",
        ),
        AgentSpec(
            "comparison_validator",
            "ComparisonValidatorOutput",
            "stage",
            "is the analyzer's account of the comparison right?",
            reviews="results_analyzer",
        ),
        AgentSpec(
            "supervisor", "SupervisorOutput", "stage", "the big-picture verdict after each stage"
        ),
    )
}
"""Every agent, in the order a paper's run first calls them."""


class _OutputModels(Mapping[str, type[BaseModel]]):
    """Agent name -> its output model, imported when first asked for."""

    def __getitem__(self, agent: str) -> type[BaseModel]:
        return AGENTS[agent].output_model()  # KeyError for an unknown agent, as a dict

    def __iter__(self) -> Iterator[str]:
        return iter(AGENTS)

    def __len__(self) -> int:
        return len(AGENTS)


OUTPUT_MODELS: Mapping[str, type[BaseModel]] = _OutputModels()


def agents_called(called: Literal["paper", "stage"]) -> tuple[str, ...]:
    return tuple(name for name, spec in AGENTS.items() if spec.called == called)


def review_pairs() -> dict[str, str]:
    """Reviewer -> the author it reviews."""
    return {name: spec.reviews for name, spec in AGENTS.items() if spec.reviews}
