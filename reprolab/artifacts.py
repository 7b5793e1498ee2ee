"""Typed readers and writers of the files one pipeline step hands to the next.

One model, one reader (`load_*`) and one writer (`write_*`) per artifact:

  plan.json                     load_plan -> PlannerOutput         write_plan
  stages/*/design.json          load_design -> DesignArtifact      write_design
  stages/*/code.json, code.*    load_code -> CodeArtifact          write_code
  stages/*/result.json          load_result -> RunResult           write_result
  stages/*/checks.json          load_checks -> Checks              write_checks
  stages/*/comparison.json      load_comparison -> Comparison      write_comparison
  stages/*/run_validation.json  load_validation -> RunValidation   write_validation
  stages/*/analysis.json        load_analysis -> AnalysisArtifact  write_analysis
  stages/*/verdict.json         load_verdict -> Verdict            write_verdict
  stages/*/*_review.rN.json     load_review -> ReviewArtifact      write_review
  (any author's attempt rN)     load_agent_artifact                write_agent_artifact

An agent's artifact is an envelope: `{"output": <the agent's output model>,
"provenance": {...}}` plus what the step adds (a design's materials, a review's
code problems, an analysis's checks). `AgentArtifact[Model]` is that envelope;
`output_json()` gives its output back as the file holds it, the one form an
agent's context, a content hash or the physics code takes.
The artifacts code writes (result, checks, comparison, validation, verdict) have
their top-level fields typed; what they hold per check or per figure stays the
JSON the physics code reads and writes.

Every model keeps fields it does not name (`extra="allow"`), and a writer writes
exactly the fields that were read or set (`exclude_unset`): a file read and
written again keeps its JSON shape. A file that does not match its model is an
`InputFileError` naming the file and the field. A stage that may not run writes
a blocked artifact (`{"stage_id", "blocked": {"reason"}}`) through every step:
the readers of result, checks and comparison return it as such (`.blocked`);
the readers of agent artifacts and of the run validation refuse it, so a step
checks `blocked_in` first (reprolab.steps.eligibility).

No reader, writer or hand-off names a field of an agent's output: a renamed design
field changes its model and the code that uses it for what it means, nothing else.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from pydantic import BaseModel, ConfigDict

from agents.code_generator import GeneratedCode
from agents.common import ReviewOutput
from agents.execution_validator import ExecutionValidatorOutput
from agents.physics_sanity import PhysicsSanityOutput
from agents.planner import PlannerOutput, PlanStage
from agents.prompt_adaptor import PromptModification
from agents.results_analyzer import AnalysisOutput
from agents.simulation_designer import SimulationDesign
from reprolab.errors import InputFileError, StageBlockedError
from reprolab.fileio import atomic_write_json, read_json, read_model, validate_as

if TYPE_CHECKING:
    from agents.supervisor import SupervisorOutput

Out = TypeVar("Out", bound=BaseModel)
A = TypeVar("A", bound="Artifact")


class Artifact(BaseModel):
    """Base of every artifact model: unknown fields kept, written back as read."""

    model_config = ConfigDict(extra="allow")

    def to_json(self) -> dict[str, Any]:
        """The artifact as its file holds it (the fields read or set, and no others)."""
        return self.model_dump(exclude_unset=True)


class AgentArtifact(Artifact, Generic[Out]):
    """What an agent call returns and a step keeps: the output and its provenance."""

    output: Out
    provenance: dict[str, Any] = {}
    user_decision: dict[str, Any] | None = None
    """Set when a person accepted this attempt at a revision-limit gate."""
    user_answers: list[dict[str, Any]] = []
    """The user's answers to the agent's questions (clarification gates)."""

    def output_json(self) -> dict[str, Any]:
        """The output as the file holds it: what an agent's context or a content hash
        takes (the one place an output model becomes a dict again)."""
        return self.model_dump(exclude_unset=True)["output"]


class PlanArtifact(AgentArtifact[PlannerOutput]):
    """plan.json."""


class DesignArtifact(AgentArtifact[SimulationDesign]):
    """design.json: the design and the materials it was designed with."""

    materials: list[dict[str, Any]] = []


class CodeArtifact(AgentArtifact[GeneratedCode]):
    """code.json, code.fixN.json and the code attempts code.rN.json."""


class ReviewArtifact(AgentArtifact[Out], Generic[Out]):
    """A reviewer's answer on one attempt (`ReviewArtifact[CodeReviewerOutput]`, ...),
    with the problems code found in it."""

    code_problems: list[str] = []


class AnalysisArtifact(AgentArtifact[AnalysisOutput]):
    """analysis.json: the narrative, its check against the recomputed numbers, its audit."""

    comparison_check: dict[str, Any] | None = None
    prose_audit: dict[str, Any] | None = None


class Blocked(BaseModel):
    """Why a stage did not run."""

    model_config = ConfigDict(extra="allow")
    reason: str


class RunResult(Artifact):
    """result.json: the record of the stage's simulation (or its blocked record)."""

    stage_id: str | None = None
    blocked: Blocked | None = None
    job_id: str | int | None = None
    exit_code: int | None = None
    runtime_seconds: int | float | None = None
    failure: dict[str, Any] | None = None
    """kind, summary, action, log_tail (reprolab.jobs.failures) when the run failed."""
    code_artifact: str | None = None
    """The code that ran (a regenerated one after a repair)."""
    script: str | None = None
    script_sha256: str | None = None
    execution_failures: int = 0
    physics_failures: int = 0
    physics_stuck: bool = False
    quick_check: list[Any] = []
    scale_env: dict[str, str] | None = None
    """A convergence rerun's scaled setting (reprolab.steps.convergence)."""

    def code_that_ran(self, code_json: str | os.PathLike) -> Path:
        """The code artifact of the final run (a regenerated one after a repair)."""
        return Path(self.code_artifact or code_json)


class Checks(Artifact):
    """checks.json: the run-time checks and the static lint of one run."""

    stage_id: str | None = None
    blocked: Blocked | None = None
    verdict: str
    """pass, warn or fail (blocked for a blocked stage)."""
    checks: list[dict[str, Any]] = []
    code_artifact: str | None = None
    diagnosis: str | None = None


class Comparison(Artifact):
    """comparison.json: every reproduced curve against the paper's data, per figure."""

    stage_id: str
    blocked: Blocked | None = None
    checks_verdict: str | None = None
    figures: list[dict[str, Any]] = []
    thresholds: list[dict[str, Any]] = []


class RunValidation(Artifact):
    """run_validation.json: the checks' verdict made stricter by the two run validators."""

    stage_id: str
    verdict: str
    checks_verdict: str
    recoverable: bool = False
    fix_hint: str = ""
    backtrack_suggestion: dict[str, Any] | None = None
    execution: AgentArtifact[ExecutionValidatorOutput]
    physics: AgentArtifact[PhysicsSanityOutput]


class Verdict(Artifact):
    """verdict.json: the stage's status decided in code and what the supervisor said."""

    stage_id: str
    status: str
    reason: str = ""
    supervisor_verdict: str | None = None
    supervisor: dict[str, Any] | None = None
    """The supervisor's artifact as its call returned it; `said()` reads it typed (a step
    that only orders stages by their verdicts does not import the supervisor's model)."""
    supervisor_check: dict[str, Any] | None = None
    backtrack_suggestions: list[dict[str, Any]] = []
    user_note: str | None = None
    paper_end: dict[str, Any] | None = None
    priority: dict[str, Any] | None = None
    failed_by: str | None = None
    """`comparison` when a failed stage failed only on its figures (its run and checks
    stand): such a failure blocks no other stage (reprolab.steps.eligibility)."""

    def said(self) -> AgentArtifact[SupervisorOutput] | None:
        """The supervisor's artifact (None for a blocked stage, which asked none)."""
        from agents.supervisor import SupervisorOutput

        if self.supervisor is None:
            return None
        where = f"the verdict of {self.stage_id} (field 'supervisor')"
        return validate_as(AgentArtifact[SupervisorOutput], self.supervisor, where)


def _load(path: str | os.PathLike, model: type[A]) -> A:
    return validate_as(model, read_json(path), path)


def _load_agent(path: str | os.PathLike, model: type[A]) -> A:
    data = read_json(path)
    if isinstance(data, dict) and data.get("blocked") and "output" not in data:
        raise InputFileError(
            path,
            f"is a blocked artifact ({data['blocked'].get('reason', '')}), not a "
            f"{model.__name__}: check eligibility.blocked_in first",
        )
    return validate_as(model, data, path)


def _write(path: str | os.PathLike, artifact: Artifact) -> Path:
    # Python mode, written by json: a NaN stays NaN, as the steps always wrote it.
    return atomic_write_json(path, artifact.to_json())


def load_agent_artifact(path: str | os.PathLike, model: type[A]) -> A:
    """Any agent's artifact (an attempt of the author ⇄ reviewer loop) as `model`."""
    return _load_agent(path, model)


def write_agent_artifact(path: str | os.PathLike, artifact: AgentArtifact) -> Path:
    return _write(path, artifact)


def as_agent_artifact(model: type[A], raw: dict) -> A:
    """An agent call's envelope (agents.runner.call_agent) as its artifact model."""
    return validate_as(model, raw, f"the {model.__name__} an agent call returned")


# plan.json -------------------------------------------------------------------


def load_plan(path: str | os.PathLike) -> PlannerOutput:
    return _load_agent(path, PlanArtifact).output


def write_plan(path: str | os.PathLike, artifact: PlanArtifact) -> Path:
    return _write(path, artifact)


def plan_stage(plan: PlannerOutput, stage_id: str) -> PlanStage:
    for stage in plan.stages:
        if stage.stage_id == stage_id:
            return stage
    valid = ", ".join(s.stage_id for s in plan.stages)
    raise StageBlockedError(f"stage '{stage_id}' is not in the plan (valid: {valid})")


def plan_stage_ids(path: str | os.PathLike) -> list[str]:
    """The plan's stages in order; [] while there is no plan yet."""
    return [s.stage_id for s in load_plan(path).stages] if Path(path).is_file() else []


# the agents' artifacts -------------------------------------------------------


def load_design(path: str | os.PathLike) -> DesignArtifact:
    return _load_agent(path, DesignArtifact)


def write_design(path: str | os.PathLike, artifact: DesignArtifact) -> Path:
    return _write(path, artifact)


def load_code(path: str | os.PathLike) -> CodeArtifact:
    return _load_agent(path, CodeArtifact)


def write_code(path: str | os.PathLike, artifact: CodeArtifact) -> Path:
    return _write(path, artifact)


def load_review(path: str | os.PathLike, output: type[Out] = ReviewOutput) -> ReviewArtifact[Out]:
    """A review of one attempt; `output`: the reviewer's output model."""
    return _load_agent(path, ReviewArtifact[output])


def write_review(path: str | os.PathLike, artifact: ReviewArtifact) -> Path:
    return _write(path, artifact)


def load_analysis(path: str | os.PathLike) -> AnalysisArtifact:
    return _load_agent(path, AnalysisArtifact)


def write_analysis(path: str | os.PathLike, artifact: AnalysisArtifact) -> Path:
    return _write(path, artifact)


def load_recorded_code(path: str | os.PathLike) -> GeneratedCode:
    """The code of a code generator's recorded answer (a replay recording's YAML)."""
    return read_model(path, GeneratedCode, key="output")


# the artifacts code writes ---------------------------------------------------


def load_result(path: str | os.PathLike) -> RunResult:
    return _load(path, RunResult)


def write_result(path: str | os.PathLike, result: RunResult) -> Path:
    return _write(path, result)


def load_checks(path: str | os.PathLike) -> Checks:
    return _load(path, Checks)


def write_checks(path: str | os.PathLike, checks: Checks) -> Path:
    return _write(path, checks)


def load_comparison(path: str | os.PathLike) -> Comparison:
    return _load(path, Comparison)


def write_comparison(path: str | os.PathLike, comparison: Comparison) -> Path:
    return _write(path, comparison)


def load_validation(path: str | os.PathLike) -> RunValidation:
    return _load_agent(path, RunValidation)


def write_validation(path: str | os.PathLike, validation: RunValidation) -> Path:
    return _write(path, validation)


def load_verdict(path: str | os.PathLike) -> Verdict:
    return _load(path, Verdict)


def write_verdict(path: str | os.PathLike, verdict: Verdict) -> Path:
    return _write(path, verdict)


# other files the steps share -------------------------------------------------


def read_jsonl(path: Path) -> list[dict]:
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def load_adaptations(path: str | os.PathLike) -> list[PromptModification]:
    return [PromptModification.model_validate(m) for m in read_json(path)["applied"]]


def plan_rerun_note(paper_id: str, plan_path: Path) -> str | None:
    """What a dry run says when a paper's plan is to be redone: the stages after it
    are decided once it has run, so it names those that may rerun (None when there
    is no plan yet, as on a first run)."""
    if not plan_path.is_file():
        return None
    try:
        stages = plan_stage_ids(plan_path)
    except InputFileError:
        stages = []
    return (
        f"[reprolab] dry run: the plan of paper '{paper_id}' is redone first (an input "
        "of it changed); what follows it is decided once it has run. A stage whose plan "
        "entry or prompt adaptations come out changed reruns from its design, with its "
        "simulations and the stages that depend on it; the others are kept. Stages now: "
        f"{', '.join(stages) or '(unreadable plan)'}."
    )
