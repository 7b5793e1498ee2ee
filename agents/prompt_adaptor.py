"""PromptAdaptorAgent: paper-specific additions to the other agents' prompts."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from agents.common import AgentModel

AGENT = "prompt_adaptor"


class DomainAnalysis(AgentModel):
    domain: str
    """The paper's field, e.g. `thin-film optics`."""
    materials: list[str]
    """Materials named in the paper."""
    techniques: list[str]
    """Simulation techniques the reproduction needs."""


class PromptModification(AgentModel):
    target_agent: str
    """Agent whose prompt changes (never `global_rules`)."""
    kind: Literal["append", "modify", "disable"]
    """append adds guidance; modify replaces `find`; disable marks `find` as not applicable."""
    find: str = ""
    """Exact text in the target prompt that modify/disable act on."""
    content: str = ""
    """Text appended, or the replacement for modify."""
    confidence: Annotated[float, Field(ge=0, le=1)]
    """How sure the adaptor is; code applies append > 0.6, modify > 0.8, disable > 0.9."""
    reasoning: str
    """Why the paper needs this change."""


class PromptAdaptorOutput(AgentModel):
    domain_analysis: DomainAnalysis
    """What the paper is about, as far as prompts are concerned."""
    modifications: list[PromptModification] = []
    """Proposed prompt changes; code decides which are applied."""


def context(paper_id: str, abstract_and_methods: str) -> dict:
    return {"paper_id": paper_id, "paper_text_summary": abstract_and_methods}
