"""One paper's agent settings: provider, per-agent models, cache, ledger, limits.

The session is built from the run's config by `reprolab.settings.agent_session`
(where the config and its loop limits are read); this module holds what it is made
of: the session, the provider chosen from the config, the backtracks so far."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from agents.cache import AgentCache
from agents.ledger import Ledger
from agents.providers import Provider, ReplayProvider
from reprolab.errors import ReproLabError

DEFAULT_CONTEXT_WINDOW = 200_000


@dataclass(frozen=True)
class AgentSession:
    paper_id: str
    out_dir: Path
    """The paper's results folder: events, metrics and gate requests go here."""
    provider: Provider
    ledger: Ledger
    cache: AgentCache | None = None
    """None for the replay provider: recordings are already free and deterministic."""
    models: dict[str, str] = field(default_factory=dict)
    """Per-agent model overrides; others use the provider's default."""
    context_window: int = DEFAULT_CONTEXT_WINDOW
    max_output_tokens: int = 16000
    record_dir: Path | None = None
    """Where real outputs are saved in the replay format (provider.record)."""
    round: int = 1
    """1 + the supervisor backtracks of this paper so far (see AgentRequest.round)."""
    context_policy: str = "ask"
    """provider.context_policy: ask (a gate), methods_only or shorten_sections."""
    verbosity: str = "normal"
    """Console verbosity (config `verbosity`): verbose prints every agent call."""
    auto_approved: frozenset[str] = frozenset()
    """Gate kinds config approves without a person (gates.auto_approve): a read behind
    one is expected soon enough to be worth caching for."""
    limits: Mapping[str, float] = field(default_factory=dict)
    """The run's loop limits (`reprolab.settings.Limits` as a mapping, e.g.
    max_backtracks): the prompts state them."""

    def model_for(self, agent: str) -> str:
        return self.models.get(agent, self.provider.model)

    @property
    def input_limit(self) -> int:
        """Tokens the prompt may use: the window minus the room kept for the answer."""
        return self.context_window - self.max_output_tokens


def backtrack_count(out_dir: Path) -> int:
    """Supervisor backtracks so far: lines of backtracks.jsonl (written by the verdict
    step when it invalidates an earlier stage)."""
    path = out_dir / "backtracks.jsonl"
    if not path.is_file():
        return 0
    return sum(1 for line in path.read_text(encoding="utf-8").splitlines() if line.strip())


def make_provider(provider_config: dict, recordings_dir: str | Path) -> Provider:
    kind = provider_config.get("kind", "replay")
    if kind == "replay":
        return ReplayProvider(recordings_dir)
    from agents import llm_providers  # the SDKs load only where a real provider is used

    if kind == "anthropic":
        return llm_providers.AnthropicProvider.from_config(provider_config)
    if kind == "openai_compatible":
        return llm_providers.OpenAICompatibleProvider.from_config(provider_config)
    raise ReproLabError(
        f"config provider.kind: '{kind}' is not a provider "
        "(valid: replay, anthropic, openai_compatible)"
    )
