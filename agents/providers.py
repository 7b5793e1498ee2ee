"""Where agent outputs come from.

`ReplayProvider` returns recorded outputs stored as files (one per agent call);
it is how the demo and the tests run without a key, and how a real run becomes a
regression fixture. A missing or invalid recording is an error, never a fallback.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel

from reprolab.errors import ReproLabError
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


class RecordingError(ReproLabError):
    """A replay recording is missing or does not validate."""


class Provider(Protocol):
    name: str
    model: str

    def complete(self, request: AgentRequest, output_model: type[BaseModel]) -> BaseModel: ...


def recording_path(root: Path, stage_id: str, agent: str, attempt: int) -> Path:
    return Path(root) / stage_id / f"{agent}.a{attempt}.yaml"


class ReplayProvider:
    name = "replay"

    def __init__(self, recordings_dir: str | Path, model: str = "replay"):
        self.root = Path(recordings_dir)
        self.model = model

    def complete(self, request: AgentRequest, output_model: type[BaseModel]) -> BaseModel:
        path = recording_path(self.root, request.stage_id, request.agent, request.attempt)
        what = (
            f"agent '{request.agent}', stage '{request.stage_id}', attempt {request.attempt}"
            f" of paper '{request.paper_id}'"
        )
        if not path.is_file():
            raise RecordingError(
                f"no replay recording for {what}: expected {path}. Record it with a real "
                "provider, or write it by hand in the replay format (see docs/replay.md)."
            )
        data: Any = read_yaml(path)
        if not isinstance(data, dict) or "output" not in data:
            raise RecordingError(f"recording {path} for {what} has no top-level 'output' field")
        for key, want in (("agent", request.agent), ("stage_id", request.stage_id)):
            if data.get(key) != want:
                raise RecordingError(
                    f"recording {path} says {key}={data.get(key)!r}, but it is read for {what}"
                )
        try:
            return validate_as(output_model, data["output"], path)
        except ReproLabError as exc:
            raise RecordingError(f"invalid recording for {what}: {exc}") from None


def make_provider(provider_config: dict, recordings_dir: str | Path) -> Provider:
    kind = provider_config.get("kind", "replay")
    if kind == "replay":
        return ReplayProvider(recordings_dir)
    raise ReproLabError(
        f"config provider.kind: '{kind}' is not available yet (valid: replay). "
        "The Anthropic and OpenAI-compatible providers are tracked in issue #3."
    )
