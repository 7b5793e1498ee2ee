"""Where agent outputs come from, and what every provider returns.

`ReplayProvider` returns recorded outputs stored as files (one per agent call);
it is how the demo and the tests run without a key, and how a real run becomes a
regression fixture. A missing or invalid recording is an error, never a fallback.
The API providers (Anthropic, OpenAI-compatible) live in `agents.llm_providers`;
`agents.session.make_provider` chooses one from the config.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel

from reprolab.errors import GateError, ReproLabError
from reprolab.fileio import read_yaml, validate_as


@dataclass(frozen=True)
class AgentRequest:
    agent: str
    paper_id: str
    stage_id: str
    """`paper` for paper-level agents (adaptor, planner, plan reviewer)."""
    attempt: int
    system: str
    user: str
    images: tuple[str, ...] = field(default=())
    cache_prefix: str = ""
    """Stable part of the user message (the paper's text), sent first and marked
    for prompt caching; empty when the agent sees no paper text."""
    instructions: str = ""
    """The agent's own template (adapted to the paper): sent after what other agents
    share (global rules in `system`, the paper, the images), before its data."""
    model: str = ""
    """The model chosen for this agent (config); empty means the provider's default."""
    round: int = 1
    """1 + the paper's supervisor backtracks so far: a rerun after a backtrack is a new
    call (its own recording and cache entry), not a replay of the one that backtracked."""
    cache_ttl: str = ""
    """How long the API keeps this agent's stable prefix ("5m", "1h"; "" writes
    nothing): chosen from when the pipeline expects its next read
    (`agents.cache_lifetime`)."""
    cut_off_at: int = 0
    """The output-token limit an earlier asking of this call was cut off at (a raised
    provider.max_output_tokens_cap withdrew its gate): the call starts above it."""

    @property
    def prompt_text(self) -> str:
        """Every text the model reads, in order (hashed for gates and provenance)."""
        return "\n".join((self.system, self.cache_prefix, self.instructions, self.user))

    @property
    def call_id(self) -> str:
        """Names the call in logs, headers and recordings: paper/stage/agent/[roundN.]aN."""
        return call_name(self.paper_id, self.stage_id, self.agent, self.attempt, self.round)


def call_name(paper_id: str, stage_id: str, agent: str, attempt: int, round_no: int = 1) -> str:
    prefix = f"round{round_no}." if round_no > 1 else ""
    return f"{paper_id}/{stage_id}/{agent}/{prefix}a{attempt}"


@dataclass
class Usage:
    """Tokens of one agent call (all its HTTP requests together)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0
    """Written to the prompt cache for 5 minutes (1.25x the input price)."""
    cache_creation_1h_input_tokens: int = 0
    """Written to the prompt cache for an hour (2x the input price); the fields are
    disjoint, so their sum is the prompt's length."""

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            *(a + b for a, b in zip(asdict(self).values(), asdict(other).values(), strict=True))
        )

    @classmethod
    def from_mapping(cls, data: dict | None, source: str) -> Usage:
        data = data or {}
        unknown = set(data) - set(cls.__dataclass_fields__)
        if unknown:
            raise ReproLabError(
                f"{source}: unknown usage field(s) {sorted(unknown)} "
                f"(valid: {sorted(cls.__dataclass_fields__)})"
            )
        values = {k: data.get(k) or 0 for k in cls.__dataclass_fields__}
        bad = {k: v for k, v in values.items() if not isinstance(v, int) or v < 0}
        if bad:
            raise ReproLabError(f"{source}: usage must be non-negative integers, got {bad}")
        return cls(**values)


@dataclass
class Completion:
    output: BaseModel
    usage: Usage
    model: str
    requests: int = 0
    """HTTP requests this call made (retries and validation feedback included)."""
    recorded_usage: Usage | None = None
    """For an answer served from the cache: the usage its paid call had (for recordings)."""


@dataclass
class Spent:
    """What a call that did not complete had already paid (its rounds so far)."""

    usage: Usage
    requests: int
    model: str


class RecordingError(ReproLabError):
    """A replay recording is missing or does not validate."""


class ProviderError(ReproLabError):
    """The model API failed in a way retrying did not fix (or cannot fix)."""


class ModelRefusedError(ProviderError):
    """The model declined to answer (stop_reason refusal / a content filter)."""


class InvalidOutputError(GateError):
    """The model's output stayed invalid after the feedback retries: a user decides."""

    def __init__(
        self,
        message: str,
        *,
        raw: Any,
        problems: list[str],
        usage: Usage,
        model: str,
        requests: int,
        cut_off_at: int | None = None,
    ):
        super().__init__(message)
        self.cut_off_at = cut_off_at
        """The output-token limit the answer was cut off at (the cap), if it was cut off."""
        self.requests = requests
        self.raw = raw
        self.problems = problems
        self.usage = usage
        self.model = model


class Provider(Protocol):
    name: str
    model: str
    """Default model; a request's `model` overrides it."""

    def complete(
        self, request: AgentRequest, output_model: type[BaseModel], before_round=None
    ) -> Completion:
        """`before_round(spent_usage, model)` runs before each paid round after the first."""


def recording_path(root: Path, stage_id: str, agent: str, attempt: int, round_no: int = 1) -> Path:
    prefix = f"round{round_no}." if round_no > 1 else ""
    return Path(root) / stage_id / f"{agent}.{prefix}a{attempt}.yaml"


class ReplayProvider:
    name = "replay"

    def __init__(self, recordings_dir: str | Path, model: str = "replay"):
        self.root = Path(recordings_dir)
        self.model = model

    def load(self, request: AgentRequest) -> tuple[Path, dict]:
        path = recording_path(
            self.root, request.stage_id, request.agent, request.attempt, request.round
        )
        what = (
            f"agent '{request.agent}', stage '{request.stage_id}', attempt {request.attempt}"
            + (f" (round {request.round}, after a backtrack)" if request.round > 1 else "")
            + f" of paper '{request.paper_id}'"
        )
        if not path.is_file():
            raise RecordingError(
                f"no replay recording for {what}: expected {path}. A new paper has none: "
                "run it with a live model (provider.kind: anthropic in the config, and "
                "export ANTHROPIC_API_KEY=... in the shell that starts the run; "
                "provider.record: true keeps its answers for replay), or write the "
                "recording by hand in the replay format (see docs/replay.md)."
            )
        data: Any = read_yaml(path)
        if not isinstance(data, dict) or "output" not in data:
            raise RecordingError(f"recording {path} for {what} has no top-level 'output' field")
        for key, want in (("agent", request.agent), ("stage_id", request.stage_id)):
            if data.get(key) != want:
                raise RecordingError(
                    f"recording {path} says {key}={data.get(key)!r}, but it is read for {what}"
                )
        return path, data

    def complete(
        self, request: AgentRequest, output_model: type[BaseModel], before_round=None
    ) -> Completion:
        path, data = self.load(request)
        try:
            output = validate_as(output_model, data["output"], path)
        except ReproLabError as exc:
            raise RecordingError(f"invalid recording for {request.call_id}: {exc}") from None
        # Scripted usage lets the demo and benchmarks account tokens like a real run.
        usage = Usage.from_mapping(data.get("usage"), f"{path} field 'usage'")
        return Completion(output, usage, model=str(data.get("model") or self.model))
