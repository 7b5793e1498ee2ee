"""Providers that call a model API: Anthropic (the product's default) and any
OpenAI-compatible endpoint (vLLM, llama.cpp, Ollama, ... for sites that may not
send unpublished papers to an outside API).

Both return structured output through a forced tool call whose input schema is
the agent's pydantic model. Invalid output is sent back with the validation
error up to `MAX_FEEDBACK_RETRIES` times; after that a user decides (an
ask_user gate carrying the raw output). Rate limits, overload, 5xx, timeouts
and dropped connections back off `BACKOFF_SECONDS`; other API errors stop at
once with the SDK's message.
"""

from __future__ import annotations

import base64
import functools
import json
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anthropic
import openai
from pydantic import BaseModel, ValidationError

from agents import prompt_cache
from agents.presets import DEFAULT_MODEL
from agents.providers import (
    AgentRequest,
    Completion,
    InvalidOutputError,
    ModelRefusedError,
    ProviderError,
    Spent,
    Usage,
)
from reprolab.errors import InputFileError
from reprolab.fileio import describe_validation_error

log = logging.getLogger(__name__)

BACKOFF_SECONDS = (1, 2, 4, 8, 16)
"""Waits before each retry of a transient API error (five retries)."""
MAX_FEEDBACK_RETRIES = 3
"""Times invalid output is sent back with the validation error before asking the user."""
MAX_RETRY_AFTER_SECONDS = 60
DEFAULT_OUTPUT_CAP = 64000
"""A cut-off answer is asked again with twice max_output_tokens, up to this many."""
CALL_HEADER = "X-ReproLab-Call"
"""Names the call (paper/stage/agent/attempt) for proxies, logs and the test server."""


def tool_name(agent: str) -> str:
    return f"submit_{agent}"


def without_titles(schema):
    """A JSON schema without pydantic's `title`s (each repeats its property's name)."""
    if isinstance(schema, dict):
        return {
            k: without_titles(v)
            for k, v in schema.items()
            if not (k == "title" and isinstance(v, str))
        }
    if isinstance(schema, list):
        return [without_titles(v) for v in schema]
    return schema


@functools.cache
def tool_schema(output_model: type[BaseModel]) -> dict:
    return without_titles(output_model.model_json_schema())


def own_tool(agent: str, output_model: type[BaseModel] | None = None) -> list[dict]:
    """The agent's submit tool, the only one its request carries: no other agent's
    tool is ever read by this agent, and every tool is paid for in every request."""
    from agents.registry import OUTPUT_MODELS

    model = output_model or OUTPUT_MODELS[agent]
    return [
        {
            "name": tool_name(agent),
            "description": f"Submit the {agent} output.",
            "input_schema": tool_schema(model),
        }
    ]


@dataclass
class Reply:
    """One API response, reduced to what the feedback loop needs."""

    arguments: Any
    """The tool call's input (a dict), or None when the model did not call the tool."""
    raw: Any
    """What the model sent, for the ask_user gate when it stays invalid."""
    usage: Usage
    model: str
    tool_call_id: str | None
    assistant_message: Any
    """The reply as a message to append when feedback is sent."""
    parse_error: str | None = None
    """Why the tool call's arguments could not be read, if they could not."""
    stop: str = "ok"
    """ok, truncated (hit max_tokens), refused, or empty (no content at all)."""
    stop_detail: str = ""
    """The API's own words: stop_reason / finish_reason and any refusal text."""


def validation_problems(output_model: type[BaseModel], reply: Reply, agent: str) -> list[str]:
    if reply.parse_error:
        return [reply.parse_error]
    if reply.stop == "empty":
        return [
            f"the reply was empty ({reply.stop_detail}); answer by calling `{tool_name(agent)}`"
        ]
    if reply.arguments is None:
        return [f"answer by calling the tool `{tool_name(agent)}`; no tool call was made"]
    try:
        output_model.model_validate(reply.arguments)
    except ValidationError as exc:
        return [line.strip() for line in describe_validation_error(exc).splitlines()]
    return []


IMAGE_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)


def image_media_type(data: bytes) -> str | None:
    """The image's media type read from its first bytes (never from its file name)."""
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return next((media for magic, media in IMAGE_MAGIC if data.startswith(magic)), None)


def image_payload(path: str) -> tuple[str, str]:
    data = Path(path).read_bytes()
    media = image_media_type(data)
    if media is None:
        raise InputFileError(
            path,
            "is not a PNG, JPEG, GIF or WebP image by its content (whatever its name "
            "says); it is not sent to the model. Replace it with the figure as an image",
        )
    return media, base64.standard_b64encode(data).decode("ascii")


def retry_after_seconds(exc: Exception) -> float:
    response = getattr(exc, "response", None)
    try:
        value = float(response.headers.get("retry-after", 0)) if response is not None else 0.0
    except (TypeError, ValueError):
        value = 0.0
    return min(max(value, 0.0), MAX_RETRY_AFTER_SECONDS)


class ApiProvider:
    """The retry and feedback loops shared by the API providers."""

    name = "api"
    retryable: tuple[type[Exception], ...] = ()
    sleep: Callable[[float], None] = staticmethod(time.sleep)

    def __init__(self, model: str, max_output_tokens: int, max_output_tokens_cap: int = 0):
        self.model = model
        self.max_output_tokens = max_output_tokens
        self.max_output_tokens_cap = max(max_output_tokens, max_output_tokens_cap)
        """A cut-off answer is asked again with twice the limit, up to this cap."""

    # Provider-specific parts.
    def first_messages(self, request: AgentRequest) -> list:
        raise NotImplementedError

    def send(self, request: AgentRequest, messages: list, output_model, limit: int) -> Reply:
        raise NotImplementedError

    def feedback_messages(self, reply: Reply, problems: list[str]) -> list:
        raise NotImplementedError

    # Shared loops.
    def complete(
        self,
        request: AgentRequest,
        output_model: type[BaseModel],
        before_round: Callable[[Usage, str], None] | None = None,
    ) -> Completion:
        """The validated output. `before_round(spent_usage, model)` runs before every
        round after the first (the budget check). Whatever ends the call, the
        exception carries what was already paid (`exc.spent`)."""
        state = {"usage": Usage(), "requests": 0, "model": request.model or self.model}
        try:
            return self._rounds(request, output_model, before_round, state)
        except Exception as exc:
            exc.spent = Spent(state["usage"], state["requests"], state["model"])
            raise

    def first_limit(self, request: AgentRequest) -> int:
        """max_tokens of the first round: the configured limit, or twice the limit an
        earlier asking was cut off at (within the cap), so that a raised cap is never
        spent re-asking at the limits that already cut the answer off."""
        if request.cut_off_at >= self.max_output_tokens:
            return min(2 * request.cut_off_at, self.max_output_tokens_cap)
        return self.max_output_tokens

    def _rounds(self, request, output_model, before_round, state) -> Completion:
        messages = self.first_messages(request)
        limit, feedback_rounds = self.first_limit(request), 0
        while True:
            if state["requests"] and before_round is not None:
                before_round(state["usage"], state["model"])
            reply = self.send_with_backoff(request, messages, output_model, limit, state)
            state["usage"] += reply.usage
            state["model"] = reply.model
            if reply.stop == "refused":
                raise ModelRefusedError(
                    f"{self.name} API: the model refused to answer {request.call_id} "
                    f"({reply.stop_detail}); nothing usable came back"
                )
            if reply.stop == "truncated":
                if limit >= self.max_output_tokens_cap:
                    raise self.invalid(
                        request,
                        reply,
                        state,
                        [
                            f"the answer was cut off at max_tokens={limit} (the cap, "
                            "provider.max_output_tokens_cap): raise the cap in the config "
                            "and run again, and the call is asked again with room to finish"
                        ],
                        cut_off_at=limit,
                    )
                limit = min(2 * limit, self.max_output_tokens_cap)
                log.warning("%s: answer cut off; again with max_tokens=%d", request.call_id, limit)
                continue  # the same request with room to finish: a cut-off answer is never used
            problems = validation_problems(output_model, reply, request.agent)
            if not problems:
                output = output_model.model_validate(reply.arguments)
                return Completion(output, state["usage"], reply.model, state["requests"])
            log.warning(
                "%s: invalid output (round %d): %s",
                request.call_id,
                feedback_rounds + 1,
                "; ".join(problems),
            )
            if feedback_rounds == MAX_FEEDBACK_RETRIES:
                raise self.invalid(request, reply, state, problems)
            feedback_rounds += 1
            messages = messages + self.feedback_messages(reply, problems)

    def invalid(self, request, reply: Reply, state: dict, problems: list[str], cut_off_at=None):
        return InvalidOutputError(
            f"{request.call_id}: the model's output was still invalid after "
            f"{MAX_FEEDBACK_RETRIES} rounds of feedback: {'; '.join(problems)}"
            if not problems[0].startswith("the answer was cut off")
            else f"{request.call_id}: {problems[0]}",
            raw=reply.raw,
            problems=problems,
            usage=state["usage"],
            model=reply.model,
            requests=state["requests"],
            cut_off_at=cut_off_at,
        )

    def malformed(self, request: AgentRequest, what: str) -> ProviderError:
        return ProviderError(
            f"{self.name} API: the answer to {request.call_id} is not a model response "
            f"({what}); check provider.base_url points at the API itself"
        )

    def send_with_backoff(self, request, messages: list, output_model, limit: int, state: dict):
        """One round's reply; every HTTP request it made is counted in `state`."""
        for tries, delay in enumerate((*BACKOFF_SECONDS, None), start=1):
            state["requests"] += 1
            try:
                return self.send(request, messages, output_model, limit)
            except self.retryable as exc:
                if delay is None:
                    raise ProviderError(
                        f"{self.name} API: {request.call_id} failed {tries} times "
                        f"(last: {type(exc).__name__}: {exc}); try again later"
                    ) from None
                wait = max(delay, retry_after_seconds(exc))
                log.warning("%s: %s, retrying in %.0f s", request.call_id, type(exc).__name__, wait)
                self.sleep(wait)
            except json.JSONDecodeError as exc:
                raise self.malformed(request, f"the body is not JSON: {exc}") from None
            except (anthropic.APIError, openai.APIError) as exc:
                raise ProviderError(
                    f"{self.name} API refused {request.call_id}: {type(exc).__name__}: {exc}"
                ) from None
        raise AssertionError("unreachable")


def api_key(provider_config: dict, default_env: str, required: bool) -> str:
    env = provider_config.get("api_key_env", default_env)
    key = os.environ.get(env, "")
    if not key and required:
        raise ProviderError(
            f"config provider.kind '{provider_config.get('kind')}' needs an API key in the "
            f"environment variable {env} (set it, or set provider.api_key_env)"
        )
    return key


def anthropic_usage(u) -> Usage:
    """The response's usage, its cache writes split by lifetime (5 minutes, an hour)."""
    written = getattr(u, "cache_creation_input_tokens", 0) or 0
    hour = getattr(getattr(u, "cache_creation", None), "ephemeral_1h_input_tokens", 0) or 0
    return Usage(
        input_tokens=u.input_tokens or 0,
        output_tokens=u.output_tokens or 0,
        cache_read_input_tokens=getattr(u, "cache_read_input_tokens", 0) or 0,
        cache_creation_input_tokens=written - hour,
        cache_creation_1h_input_tokens=hour,
    )


class AnthropicProvider(ApiProvider):
    name = "anthropic"
    retryable = (
        anthropic.RateLimitError,
        anthropic.InternalServerError,  # 5xx, including 529 overloaded
        anthropic.APIConnectionError,  # including timeouts
    )

    def __init__(self, client: anthropic.Anthropic, model: str, max_output_tokens: int, cap=0):
        super().__init__(model, max_output_tokens, cap)
        self.client = client

    @classmethod
    def from_config(cls, cfg: dict) -> AnthropicProvider:
        client = anthropic.Anthropic(
            api_key=api_key(cfg, "ANTHROPIC_API_KEY", required=True),
            base_url=cfg.get("base_url") or None,  # None: ANTHROPIC_BASE_URL or the API
            timeout=float(cfg.get("timeout_s", 600)),
            max_retries=0,  # backoff is ours, so it is logged and the same for every provider
        )
        return cls(
            client,
            cfg.get("model", DEFAULT_MODEL),
            cfg.get("max_output_tokens", 16000),
            cfg.get("max_output_tokens_cap", DEFAULT_OUTPUT_CAP),
        )

    def tools_text(self, agent: str) -> str:
        """The tool the request carries, as text (the context window counts it)."""
        return json.dumps(own_tool(agent))

    def cache_control(self, request: AgentRequest) -> dict | None:
        """The breakpoint closing the agent's stable prefix (tool, global rules, its
        instructions, the paper): written with the lifetime the pipeline chose for the
        next read (`request.cache_ttl`), and only where the prefix reaches the model's
        caching minimum (below it the API caches nothing)."""
        if not request.cache_ttl:
            return None
        stable = (own_tool(request.agent), request.system, request.instructions)
        size = sum(prompt_cache.text_tokens(p) for p in (*stable, request.cache_prefix))
        if not prompt_cache.marks(request.model or self.model, [size])[0]:
            return None
        mark = {"type": "ephemeral"}
        return mark | {"ttl": "1h"} if request.cache_ttl == "1h" else mark

    def first_messages(self, request: AgentRequest) -> list:
        """The agent's instructions and the paper first (the same in each of its calls
        in a paper), then this call's images and data."""
        stable = [text for text in (request.instructions, request.cache_prefix) if text]
        content: list[dict] = [{"type": "text", "text": text} for text in stable]
        mark = self.cache_control(request)
        if mark and content:
            content[-1] = {**content[-1], "cache_control": mark}
        for path in request.images:
            media, data = image_payload(path)
            content.append(
                {"type": "image", "source": {"type": "base64", "media_type": media, "data": data}}
            )
        content.append({"type": "text", "text": request.user})
        return [{"role": "user", "content": content}]

    def system_mark(self, request: AgentRequest) -> dict:
        """The breakpoint goes on the system block when no instructions or paper follow it."""
        if request.instructions or request.cache_prefix:
            return {}
        mark = self.cache_control(request)
        return {"cache_control": mark} if mark else {}

    def send(self, request: AgentRequest, messages: list, output_model, limit: int) -> Reply:
        name = tool_name(request.agent)
        response = self.client.messages.create(
            model=request.model or self.model,
            max_tokens=limit,
            system=[{"type": "text", "text": request.system} | self.system_mark(request)],
            messages=messages,
            tools=own_tool(request.agent, output_model),
            tool_choice={"type": "tool", "name": name},
            extra_headers={CALL_HEADER: request.call_id},
        )
        if not isinstance(response, anthropic.types.Message) or None in (
            response.content,
            response.usage,
        ):
            raise self.malformed(request, f"got {str(response)[:80]!r}")
        blocks = []
        call = None
        for block in response.content:
            if block.type == "tool_use":
                blocks.append(
                    {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}
                )
                if block.name == name and call is None:
                    call = block
            elif block.type == "text" and block.text:
                blocks.append({"type": "text", "text": block.text})
        u = response.usage
        stop = {"max_tokens": "truncated", "refusal": "refused"}.get(response.stop_reason, "ok")
        if stop == "ok" and not blocks:
            stop = "empty"
        return Reply(
            arguments=call.input if call is not None else None,
            raw=call.input if call is not None else blocks,
            usage=anthropic_usage(u),
            model=response.model,
            tool_call_id=call.id if call is not None else None,
            assistant_message={"role": "assistant", "content": blocks} if blocks else None,
            stop=stop,
            stop_detail=f"stop_reason {response.stop_reason}"
            + "".join(f": {b['text'][:200]}" for b in blocks if b["type"] == "text"),
        )

    def feedback_messages(self, reply: Reply, problems: list[str]) -> list:
        text = "The output does not validate; fix these and call the tool again:\n" + "\n".join(
            f"- {p}" for p in problems
        )
        if reply.tool_call_id is None:
            # An empty reply is not echoed back (the API refuses an empty assistant turn).
            echo = [reply.assistant_message] if reply.assistant_message else []
            return [*echo, {"role": "user", "content": text}]
        result = {
            "type": "tool_result",
            "tool_use_id": reply.tool_call_id,
            "is_error": True,
            "content": text,
        }
        return [reply.assistant_message, {"role": "user", "content": [result]}]


class OpenAICompatibleProvider(ApiProvider):
    name = "openai_compatible"
    retryable = (openai.RateLimitError, openai.InternalServerError, openai.APIConnectionError)

    def __init__(self, client: openai.OpenAI, model: str, max_output_tokens: int, cap=0):
        super().__init__(model, max_output_tokens, cap)
        self.client = client

    @classmethod
    def from_config(cls, cfg: dict) -> OpenAICompatibleProvider:
        if not cfg.get("base_url") or not cfg.get("model"):
            raise ProviderError(
                "config provider: kind 'openai_compatible' needs base_url (e.g. "
                "http://gpu-node:8000/v1) and model (the name the server serves)"
            )
        client = openai.OpenAI(
            # Local servers usually need no key; the SDK needs a non-empty string.
            api_key=api_key(cfg, "OPENAI_API_KEY", required=False) or "not-needed",
            base_url=cfg["base_url"],
            timeout=float(cfg.get("timeout_s", 600)),
            max_retries=0,
        )
        return cls(
            client,
            cfg["model"],
            cfg.get("max_output_tokens", 16000),
            cfg.get("max_output_tokens_cap", DEFAULT_OUTPUT_CAP),
        )

    def first_messages(self, request: AgentRequest) -> list:
        content: list[dict] = []
        if request.cache_prefix:
            content.append({"type": "text", "text": request.cache_prefix})
        for path in request.images:
            media, data = image_payload(path)
            content.append(
                {"type": "image_url", "image_url": {"url": f"data:{media};base64,{data}"}}
            )
        if request.instructions:
            content.append({"type": "text", "text": request.instructions})
        content.append({"type": "text", "text": request.user})
        return [
            {"role": "system", "content": request.system},
            {"role": "user", "content": content},
        ]

    def send(self, request: AgentRequest, messages: list, output_model, limit: int) -> Reply:
        name = tool_name(request.agent)
        response = self.client.chat.completions.create(
            model=request.model or self.model,
            max_tokens=limit,
            messages=messages,
            tools=[
                {
                    "type": "function",
                    "function": {
                        "name": name,
                        "description": f"Submit the {request.agent} output.",
                        "parameters": tool_schema(output_model),
                    },
                }
            ],
            tool_choice={"type": "function", "function": {"name": name}},
            extra_headers={CALL_HEADER: request.call_id},
        )
        if not isinstance(response, openai.types.chat.ChatCompletion) or not response.choices:
            raise self.malformed(request, f"got {str(response)[:80]!r}")
        choice = response.choices[0]
        message = choice.message
        calls = [c for c in (message.tool_calls or []) if c.function.name == name]
        arguments, raw, parse_error = None, message.content, None
        if calls:
            raw = calls[0].function.arguments
            try:
                arguments = json.loads(raw)
            except json.JSONDecodeError as exc:
                parse_error = f"the tool call's arguments are not valid JSON: {exc}"
        u = response.usage
        cached = getattr(getattr(u, "prompt_tokens_details", None), "cached_tokens", 0) or 0
        assistant = {"role": "assistant", "content": message.content}
        if calls:
            assistant["tool_calls"] = [
                {
                    "id": calls[0].id,
                    "type": "function",
                    "function": {"name": name, "arguments": calls[0].function.arguments},
                }
            ]
        refusal = getattr(message, "refusal", None)
        stop = {"length": "truncated", "content_filter": "refused"}.get(choice.finish_reason, "ok")
        if refusal:
            stop = "refused"
        elif stop == "ok" and not calls and not message.content:
            stop = "empty"
        return Reply(
            stop=stop,
            stop_detail=f"finish_reason {choice.finish_reason}"
            + (
                f": {str(refusal or message.content or '')[:200]}"
                if refusal or message.content
                else ""
            ),
            arguments=arguments,
            raw=raw,
            usage=Usage(
                input_tokens=(u.prompt_tokens or 0) - cached if u else 0,
                output_tokens=(u.completion_tokens or 0) if u else 0,
                cache_read_input_tokens=cached,
            ),
            model=response.model or request.model or self.model,
            tool_call_id=calls[0].id if calls else None,
            assistant_message=assistant if calls or message.content else None,
            parse_error=parse_error,
        )

    def feedback_messages(self, reply: Reply, problems: list[str]) -> list:
        text = "The output does not validate; fix these and call the tool again:\n" + "\n".join(
            f"- {p}" for p in problems
        )
        if reply.tool_call_id is None:
            echo = [reply.assistant_message] if reply.assistant_message else []
            return [*echo, {"role": "user", "content": text}]
        return [
            reply.assistant_message,
            {"role": "tool", "tool_call_id": reply.tool_call_id, "content": text},
        ]
