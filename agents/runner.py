"""Calls one agent: builds its prompt, asks the provider, records provenance."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from pydantic import BaseModel

from agents import (
    code_generator,
    code_reviewer,
    design_reviewer,
    plan_reviewer,
    planner,
    prompt_adaptor,
    prompts,
    results_analyzer,
    simulation_designer,
    supervisor,
)
from agents.prompt_adaptor import PromptModification
from agents.providers import AgentRequest, Provider
from reprolab.fileio import sha256_bytes, sha256_file

OUTPUT_MODELS: dict[str, type[BaseModel]] = {
    prompt_adaptor.AGENT: prompt_adaptor.PromptAdaptorOutput,
    planner.AGENT: planner.PlannerOutput,
    plan_reviewer.AGENT: plan_reviewer.PlanReviewerOutput,
    simulation_designer.AGENT: simulation_designer.SimulationDesign,
    design_reviewer.AGENT: design_reviewer.DesignReviewerOutput,
    code_generator.AGENT: code_generator.GeneratedCode,
    code_reviewer.AGENT: code_reviewer.CodeReviewerOutput,
    results_analyzer.AGENT: results_analyzer.AnalysisOutput,
    supervisor.AGENT: supervisor.SupervisorOutput,
}


def call_agent(
    agent: str,
    *,
    paper_id: str,
    stage_id: str,
    attempt: int,
    context: dict,
    provider: Provider,
    adaptations: list[PromptModification] = (),
    images: list[str] = (),
) -> dict:
    """Return the artifact `{"output": ..., "provenance": ...}` for one agent call."""
    output_model = OUTPUT_MODELS[agent]
    request = AgentRequest(
        agent=agent,
        paper_id=paper_id,
        stage_id=stage_id,
        attempt=attempt,
        system=prompts.system_prompt(agent, adaptations),
        user=prompts.render_context(context),
        images=tuple(str(p) for p in images),
    )
    output = provider.complete(request, output_model)
    return {
        "output": output.model_dump(mode="json"),
        "provenance": {
            "agent": agent,
            "provider": provider.name,
            "model": provider.model,
            "stage_id": stage_id,
            "attempt": attempt,
            "prompt_sha256": sha256_bytes((request.system + "\n" + request.user).encode()),
            "context_sha256": sha256_bytes(json.dumps(context, sort_keys=True).encode()),
            "images": {Path(p).name: sha256_file(p) for p in request.images},
            "created_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        },
    }
