"""Calls one agent: builds its prompt, fits it to the context window, serves it
from the cache or asks the provider, accounts tokens and cost, records provenance.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import json
import sys
import time
from pathlib import Path

from pydantic import BaseModel

from agents import (
    cache_lifetime,
    context_gate,
    context_window,
    output_gate,
    prompts,
    untrusted,
)
from agents.cache import cache_key
from agents.prompt_adaptor import PromptModification
from agents.providers import (
    AgentRequest,
    Completion,
    InvalidOutputError,
    Usage,
    call_name,
    recording_path,
)
from agents.registry import OUTPUT_MODELS  # the one list of agents (re-exported here)
from agents.session import AgentSession
from reprolab.events import log_event
from reprolab.fileio import (
    atomic_write_text,
    sha256_bytes,
    sha256_file,
    validate_as,
)
from reprolab.gates import protocol


def build_request(
    agent: str,
    session: AgentSession,
    stage_id: str,
    attempt: int,
    context: dict,
    adaptations,
    images,
) -> AgentRequest:
    prefix, user = prompts.render_parts(context)
    rules, instructions = prompts.prompt_parts(agent, list(adaptations), limits=session.limits)
    return AgentRequest(
        agent=agent,
        paper_id=session.paper_id,
        stage_id=stage_id,
        attempt=attempt,
        system=rules,
        instructions=instructions,
        user=user,
        cache_prefix=prefix,
        images=tuple(str(p) for p in images),
        model=session.model_for(agent),
        round=session.round,
        cache_ttl=cache_lifetime.prefix_ttl(agent, stage_id, session.out_dir, session.auto_approved)
        or "",
    )


def save_recording(session: AgentSession, request: AgentRequest, completion: Completion) -> Path:
    """The replay format (docs/replay.md), so a real run becomes a regression fixture."""
    import yaml

    path = recording_path(
        session.record_dir, request.stage_id, request.agent, request.attempt, request.round
    )
    body = {
        "agent": request.agent,
        "stage_id": request.stage_id,
        "attempt": request.attempt,
        **({"round": request.round} if request.round > 1 else {}),
        "model": completion.model,
        "usage": (completion.recorded_usage or completion.usage).__dict__,
        "output": completion.output.model_dump(mode="json"),
    }
    atomic_write_text(path, yaml.safe_dump(body, sort_keys=False, allow_unicode=True, width=100))
    return path


def call_agent(
    agent: str,
    *,
    session: AgentSession,
    stage_id: str,
    attempt: int,
    context: dict,
    adaptations: list[PromptModification] = (),
    images: list[str] = (),
) -> dict:
    """Return the artifact `{"output": ..., "provenance": ...}` for one agent call."""
    output_model = OUTPUT_MODELS[agent]
    call_id = call_name(session.paper_id, stage_id, agent, attempt, session.round)
    context = without_local_paths(context, session.out_dir)
    context_gate.raise_if_stopped(session.out_dir)
    log_suspected_injections(session, call_id, context)

    def request_for(ctx: dict, sess: AgentSession = session) -> AgentRequest:
        return build_request(agent, sess, stage_id, attempt, ctx, adaptations, images)

    found = output_gate.answers(session.out_dir, request_for({}))
    if found.notes:  # the user's answers to this call's invalid-output gates
        context = {**context, "user_feedback": found.notes}
    session, context, recoveries, estimate, left_out = fit_to_window(
        session, call_id, context, request_for
    )
    request_for = functools.partial(request_for, sess=session)
    request = request_for(context)
    started = time.monotonic()
    if found.edited is not None and found.edited_sha == output_gate.prompt_sha256(request):
        completion, source, key = user_edited(session, request, output_model, found), "user", None
    else:
        cut_off_at = output_gate.still_waiting(
            found, request, getattr(session.provider, "max_output_tokens_cap", 0)
        )
        request = dataclasses.replace(request, cut_off_at=cut_off_at)
        key, completion = served_from_cache(session, call_id, request, output_model)
        source = "cache" if completion is not None else live_source(session)
        if completion is None:
            completion = ask_provider(
                session, call_id, request, output_model, key, source, started, found.next_n
            )
        elif session.record_dir is not None:  # a cached answer is a recording too
            save_recording(session, request, completion)
    usage_entry = record_usage(session, call_id, request, completion, source, key, started)
    announce(session, call_id, source, completion, usage_entry)
    return {
        "output": completion.output.model_dump(mode="json"),
        "provenance": provenance(
            session, request, context, completion, source, key, estimate, recoveries, usage_entry
        )
        | {"context_left_out": left_out},
    }


def local_prefixes(out_dir: Path) -> list[tuple[str, str]]:
    """(absolute prefix, what the prompt says instead), longest first: the paper's
    outputs folder, the outputs root and the Python installation."""
    out = Path(out_dir).resolve()
    pairs = {
        f"{out}/": "",
        f"{out.parent}/": "../",
        f"{Path(sys.prefix).resolve()}/": "<python>/",
        f"{Path(sys.base_prefix).resolve()}/": "<python>/",
    }
    return sorted(pairs.items(), key=lambda kv: -len(kv[0]))


def without_local_paths(context, out_dir: Path):
    """The context with local absolute paths made relative to the paper's outputs: a
    prompt is the same wherever the outputs live (and shows no local file system)."""
    prefixes = local_prefixes(out_dir)

    def clean(value):
        if isinstance(value, str):
            for prefix, instead in prefixes:
                value = value.replace(prefix, instead)
            return value
        if isinstance(value, dict):
            return {k: clean(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [clean(v) for v in value]
        return value

    return clean(context)


def announce(session, call_id: str, source: str, completion: Completion, entry: dict) -> None:
    """The agent call as an event (level verbose), printed at verbosity verbose."""
    u = completion.usage
    cost = "unpriced" if entry["cost_usd"] is None else f"${entry['cost_usd']:.4f}"
    line = (
        f"{call_id}: {source}, {completion.model}, {u.input_tokens} in "
        f"(+{u.cache_read_input_tokens} cached) / {u.output_tokens} out tokens, {cost}"
    )
    log_event(session.out_dir, "agent_call", line, level="verbose")
    if session.verbosity == "verbose":
        print(f"[reprolab] agent {line}", file=sys.__stderr__, flush=True)


def user_edited(session, request, output_model, found) -> Completion:
    """The user's corrected output (a gate's edit), validated like an agent's."""
    gate = output_gate.gate_id(request, found.next_n)
    path = protocol.gate_decision_path(session.out_dir, gate)
    output = validate_as(output_model, found.edited, f"{path} field 'revised_data'")
    log_event(session.out_dir, "gate_answer", f"{request.call_id}: the user's edit is the output")
    return Completion(output, Usage(), model="user")


def log_suspected_injections(session: AgentSession, call_id: str, context: dict) -> None:
    """Log instruction-like text found in the context; it goes on unchanged, as data."""
    for finding in untrusted.find_injections(context):
        log_event(
            session.out_dir,
            "injection_suspected",
            f"{call_id}: instruction-like text in {finding['field']} ({finding['pattern']}); "
            "passed on unchanged inside a data block",
            **finding,
        )


def fit_to_window(session: AgentSession, call_id: str, context: dict, request_for):
    """(session, context, recoveries, token estimate, what was left out) that fit the
    input limit. Leaving part of the paper out, a larger-window model or a stop are
    the user's answer to this call's overflow gate (or the configured policy); while
    unanswered the gate waits, and nothing is sent."""
    probe = request_for({})
    sha = context_gate.context_sha256(context)
    choices = context_gate.answered(session.out_dir, probe, sha)
    if choices.stop is not None:
        context_gate.stop_paper(session.out_dir, probe, choices)
    session = context_gate.with_larger_model(session, probe.agent, choices.model)
    policy = "" if session.context_policy == "ask" else session.context_policy

    # The tools sent with every request count against the window too.
    tools = getattr(session.provider, "tools_text", lambda agent: "")(probe.agent)

    def measure(ctx: dict) -> int:
        req = request_for(ctx, session)
        texts = [tools, req.system, req.cache_prefix, req.instructions, req.user]
        return context_window.estimate_tokens(texts, len(req.images))

    try:
        context, recoveries, estimate, left_out = context_window.fit_context(
            context, measure, session.input_limit, call_id, choices.recovery or policy
        )
    except context_window.ContextOverflowError as exc:
        tried = [choices.recovery] * bool(choices.recovery) + ["larger_model"] * bool(choices.model)
        checkpoint = context_gate.open_for(session.out_dir, probe, choices.next_n, exc, sha, tried)
        log_event(session.out_dir, "gate", f"opened: {checkpoint.gate_id} ({call_id})")
        raise context_window.ContextOverflowError(
            protocol.waiting_message(checkpoint),
            estimate=exc.estimate,
            limit=exc.limit,
            applied=exc.applied,
        ) from None
    why = (
        f"the user's answer to {', '.join(choices.gates)}"
        if choices.gates
        else f"config provider.context_policy {policy}"
    )
    left_out = [n if n.startswith("truncate_feedback") else f"{n}; by {why}" for n in left_out]
    if choices.model:
        left_out.append(
            f"model {choices.model['model']} ({choices.model['context_window_tokens']}"
            f" tokens) for this agent; by {why}"
        )
    for note in left_out:
        log_event(session.out_dir, "context_recovery", f"{call_id}: {note} (~{estimate} tokens)")
    return session, context, recoveries, estimate, left_out


def live_source(session: AgentSession) -> str:
    """Where an answer not served from the cache comes from: "replay" or "api"."""
    return "replay" if session.provider.name == "replay" else "api"


def served_from_cache(
    session: AgentSession, call_id: str, request: AgentRequest, output_model: type[BaseModel]
) -> tuple[str | None, Completion | None]:
    """(cache key, the cached completion or None); the key is None without a cache."""
    if session.cache is None:
        return None, None
    key = cache_key(
        session.provider.name,
        request.model,
        request,
        output_model,
        getattr(session.provider, "max_output_tokens", session.max_output_tokens),
    )
    hit = session.cache.get(key)
    if hit is None:
        return key, None
    log_event(session.out_dir, "agent_cache_hit", f"{call_id}: served from cache", key=key)
    return key, Completion(
        output_model.model_validate(hit["output"]),
        Usage(),
        model=hit["model"],
        recorded_usage=Usage.from_mapping(hit.get("usage"), f"cache entry {key}"),
    )


def ask_provider(
    session: AgentSession,
    call_id: str,
    request: AgentRequest,
    output_model: type[BaseModel],
    key: str | None,
    source: str,
    started: float,
    gate_n: int = 1,
) -> Completion:
    """Ask the provider within the budget (checked before every round); cache the answer
    and record it for replay. Whatever ends the call, what it paid is in the ledger."""
    session.ledger.check_budget(call_id)

    def before_round(spent: Usage, model: str) -> None:
        session.ledger.check_budget(call_id, pending=spent, model=model)

    try:
        if source == "replay":  # nothing is paid between a replay's rounds
            completion = session.provider.complete(request, output_model)
        else:
            completion = session.provider.complete(request, output_model, before_round)
    except Exception as exc:
        record_spent(session, call_id, request, exc, started)
        if isinstance(exc, InvalidOutputError):
            checkpoint = output_gate.open_for(
                session.out_dir, request, gate_n, exc, session.paper_id
            )
            log_event(session.out_dir, "gate", f"opened: {checkpoint.gate_id} ({call_id})")
            exc.args = (f"{exc}\n{protocol.waiting_message(checkpoint)}",)
        raise
    if key is not None:
        session.cache.put(
            key,
            {
                "call_id": call_id,
                "model": completion.model,
                "output": completion.output.model_dump(mode="json"),
                "usage": completion.usage.__dict__,
            },
        )
    if session.record_dir is not None and source == "api":
        save_recording(session, request, completion)
    return completion


def record_spent(session, call_id: str, request: AgentRequest, exc: Exception, started) -> None:
    """Account the rounds a call paid before it ended without an answer."""
    spent = getattr(exc, "spent", None)
    if spent is None or not spent.requests:
        return
    session.ledger.record(
        call_id=call_id,
        agent=request.agent,
        stage_id=request.stage_id,
        attempt=request.attempt,
        provider=session.provider.name,
        model=spent.model,
        source="api_invalid" if isinstance(exc, InvalidOutputError) else "api_failed",
        usage=spent.usage,
        requests=spent.requests,
        seconds=time.monotonic() - started,
    )


def record_usage(
    session: AgentSession,
    call_id: str,
    request: AgentRequest,
    completion: Completion,
    source: str,
    key: str | None,
    started: float,
) -> dict:
    """The ledger's entry (tokens, cost) for a completed call."""
    return session.ledger.record(
        call_id=call_id,
        agent=request.agent,
        stage_id=request.stage_id,
        attempt=request.attempt,
        provider=session.provider.name,
        model=completion.model,
        source=source,
        usage=completion.usage,
        requests=completion.requests,
        seconds=time.monotonic() - started,
        cache_key=key,
    )


def provenance(
    session: AgentSession,
    request: AgentRequest,
    context: dict,
    completion: Completion,
    source: str,
    key: str | None,
    estimate: int,
    recoveries: list[str],
    usage_entry: dict,
) -> dict:
    """Where an agent's output came from: model, source, prompt and input hashes, cost."""
    return {
        "agent": request.agent,
        "provider": session.provider.name,
        "model": completion.model,
        "source": source,
        "stage_id": request.stage_id,
        "attempt": request.attempt,
        "round": session.round,
        "prompt_sha256": sha256_bytes(request.prompt_text.encode()),
        "context_sha256": sha256_bytes(json.dumps(context, sort_keys=True).encode()),
        "images": {Path(p).name: sha256_file(p) for p in request.images},
        "estimated_prompt_tokens": estimate,
        "context_recoveries": recoveries,
        "usage": completion.usage.__dict__,
        "cost_usd": usage_entry["cost_usd"],
        "cache_key": key,
        "created_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
    }
