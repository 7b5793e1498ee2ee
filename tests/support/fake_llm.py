"""A fake model API on 127.0.0.1 for tests: Anthropic Messages and OpenAI chat
completions, scripted per test, reached through the real SDKs over HTTP.

A responder maps each request to an action: `Reply` (a tool call with usage),
`Status` (an HTTP error), `Sleep` (answer late, to trigger the client's timeout)
or `Text` (no tool call). Every request is kept, so tests count what reached the
server.
"""

from __future__ import annotations

import base64
import hashlib
import json
import struct
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import yaml

ERROR_TYPES = {
    400: "invalid_request_error",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


@dataclass
class Reply:
    arguments: dict | str
    """The tool call's input (a str is sent verbatim: malformed JSON for OpenAI)."""
    usage: dict = field(default_factory=dict)
    stop: str = "tool_use"
    """Anthropic's stop_reason (max_tokens: cut off; refusal); mapped for OpenAI."""


@dataclass
class Raw:
    """A 200 answer with this body verbatim (not JSON, or not the API's shape)."""

    body: str
    content_type: str = "application/json"


@dataclass
class Status:
    code: int
    message: str = "scripted error"


@dataclass
class Sleep:
    seconds: float
    then: object


@dataclass
class Text:
    text: str
    """No tool call; an empty text sends no content block at all (an empty reply)."""
    stop: str = "end_turn"
    usage: dict = field(default_factory=dict)


OPENAI_FINISH = {"tool_use": "tool_calls", "end_turn": "stop", "max_tokens": "length"}
OPENAI_FINISH["refusal"] = "content_filter"


class Script:
    """Answers requests with the given actions, in order."""

    def __init__(self, *actions):
        self.actions = list(actions)

    def __call__(self, request: dict) -> object:
        if not self.actions:
            return Status(500, "fake server: the test scripted no more answers")
        return self.actions.pop(0)


class FromRecordings:
    """Answers each call with its replay recording, named by the X-ReproLab-Call header."""

    def __init__(self, recordings: Path):
        self.root = Path(recordings)

    def __call__(self, request: dict) -> object:
        paper, stage, agent, attempt = request["headers"]["x-reprolab-call"].split("/")
        path = self.root / stage / f"{agent}.{attempt}.yaml"
        if not path.is_file():
            return Status(400, f"fake server: no recording {path}")
        data = yaml.safe_load(path.read_text())
        return Reply(data["output"], data.get("usage", {}))


def anthropic_body(action: Reply | Text, request: dict) -> dict:
    body = request["json"]
    tool = body.get("tool_choice", {}).get("name") or body["tools"][0]["name"]
    usage = {
        "input_tokens": 0,
        "output_tokens": 0,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }
    usage.update(action.usage)
    if isinstance(action, Text):
        content = [{"type": "text", "text": action.text}] if action.text else []
    else:
        content = [
            {
                "type": "tool_use",
                "id": f"toolu_{request['n']}",
                "name": tool,
                "input": action.arguments,
            }
        ]
    return {
        "id": f"msg_{request['n']}",
        "type": "message",
        "role": "assistant",
        "model": body["model"],
        "content": content,
        "stop_reason": action.stop,
        "stop_sequence": None,
        "usage": usage,
    }


def openai_body(action: Reply | Text, request: dict) -> dict:
    body = request["json"]
    tool = body["tool_choice"]["function"]["name"]
    message: dict = {"role": "assistant", "content": None}
    u = action.usage
    cached = u.get("cache_read_input_tokens", 0)
    prompt = u.get("input_tokens", 0) + cached
    usage = {
        "prompt_tokens": prompt,
        "completion_tokens": u.get("output_tokens", 0),
        "total_tokens": prompt + u.get("output_tokens", 0),
        "prompt_tokens_details": {"cached_tokens": cached},
    }
    if isinstance(action, Text):
        message["content"] = action.text or None
        if action.stop == "refusal":
            message["refusal"] = action.text
    else:
        args = action.arguments
        message["tool_calls"] = [
            {
                "id": f"call_{request['n']}",
                "type": "function",
                "function": {
                    "name": tool,
                    "arguments": args if isinstance(args, str) else json.dumps(args),
                },
            }
        ]
    return {
        "id": f"chatcmpl-{request['n']}",
        "object": "chat.completion",
        "created": 0,
        "model": body["model"],
        "choices": [{"index": 0, "finish_reason": OPENAI_FINISH[action.stop], "message": message}],
        "usage": usage,
    }


def png_tokens(block: dict) -> int | None:
    """An image block's tokens as the API counts them (width x height / 750, the long
    edge scaled to at most 1568 px), from the PNG header; None if not a PNG."""
    data = base64.b64decode(block.get("source", {}).get("data", "")[:64])
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        return None
    width, height = struct.unpack(">II", data[16:24])
    scale = min(1.0, 1568 / max(width, height))
    return int(width * scale * height * scale / 750)


LIFETIME_S = {"5m": 300.0, "1h": 3600.0}


class PromptCache:
    """Anthropic prompt caching, simulated: each `cache_control` breakpoint caches the
    prefix up to it (tools, then system, then message blocks) when it holds at least
    `min_tokens` (4 characters a token; a PNG as the API counts an image); a later
    request to the same model with the same prefix reads it while it lives. A prefix
    lives 5 minutes (`"ttl": "1h"`: an hour) from its write or its last read (a read
    renews it for the longer of its lifetime and the reading mark's).

    `min_tokens`: one minimum for every model, or a mapping from model to its minimum
    (4096 tokens for Opus 4.5 and Haiku 4.5, 1024 for Sonnet 4.5). `clock` gives the
    time in seconds; `latency(model, output_tokens)`, when given, is the time a real
    model would have taken to answer, added to the clock after each answer (the fake
    answers at once), so that lifetimes are measured against a real run's pace."""

    def __init__(self, min_tokens: int | dict = 4096, clock=time.monotonic, latency=None):
        self.min_tokens = min_tokens
        self.clock = clock
        self.latency = latency
        self.waited = 0.0
        """Seconds of model latency added to the clock so far."""
        self.entries: dict[str, tuple[float, float]] = {}
        """Each cached prefix's (expiry time, lifetime)."""

    def now(self) -> float:
        return self.clock() + self.waited

    def minimum(self, model: str) -> int:
        if isinstance(self.min_tokens, int):
            return self.min_tokens
        return next(n for name, n in self.min_tokens.items() if model.startswith(name))

    def usage(self, body: dict, output_tokens: int) -> dict:
        blocks = list(body.get("tools", []))
        system = body.get("system", [])
        blocks += [{"type": "text", "text": system}] if isinstance(system, str) else system
        for message in body.get("messages", []):
            content = message["content"]
            blocks += [{"type": "text", "text": content}] if isinstance(content, str) else content
        digest, tokens, read = hashlib.sha256(body["model"].encode()), 0, 0
        written = dict.fromkeys(LIFETIME_S, 0)
        need, now, boundary = self.minimum(body["model"]), self.now(), 0
        for block in blocks:
            plain = {k: v for k, v in block.items() if k != "cache_control"}
            text = json.dumps(plain, sort_keys=True)
            digest.update(text.encode())
            image = png_tokens(plain) if plain.get("type") == "image" else None
            tokens += len(text) // 4 if image is None else image
            if "cache_control" not in block or tokens < need:
                continue
            key, ttl = digest.hexdigest(), block["cache_control"].get("ttl", "5m")
            expires, life = self.entries.get(key, (-1.0, 0.0))
            if expires >= now:  # alive: everything up to here is read, its lifetime renewed
                read, written = tokens, dict.fromkeys(LIFETIME_S, 0)
                life = max(life, LIFETIME_S[ttl])
            else:
                written[ttl] += tokens - boundary
                life = LIFETIME_S[ttl]
            boundary = tokens
            self.entries[key] = (now + life, life)
        if self.latency is not None:
            self.waited += self.latency(body["model"], output_tokens)
        return {
            "input_tokens": tokens - read - sum(written.values()),
            "output_tokens": output_tokens,
            "cache_read_input_tokens": read,
            "cache_creation_input_tokens": sum(written.values()),
            "cache_creation": {
                "ephemeral_5m_input_tokens": written["5m"],
                "ephemeral_1h_input_tokens": written["1h"],
            },
        }


class FakeLLMServer:
    def __init__(self, responder, prompt_cache: PromptCache | None = None):
        self.responder = responder
        self.prompt_cache = prompt_cache
        self.requests: list[dict] = []
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep pytest output clean
                pass

            def do_POST(self):
                length = int(self.headers.get("content-length", 0))
                with server.lock:
                    request = {
                        "n": len(server.requests) + 1,
                        "path": self.path,
                        "headers": {k.lower(): v for k, v in self.headers.items()},
                        "json": json.loads(self.rfile.read(length) or b"{}"),
                    }
                    server.requests.append(request)
                    action = server.responder(request)
                while isinstance(action, Sleep):
                    time.sleep(action.seconds)
                    action = action.then
                if isinstance(action, Status):
                    kind = ERROR_TYPES.get(action.code, "api_error")
                    self.send_json(
                        action.code,
                        {"type": "error", "error": {"type": kind, "message": action.message}},
                    )
                    return
                if isinstance(action, Raw):
                    self.send_raw(200, action.body.encode(), action.content_type)
                    return
                openai = self.path.endswith("/chat/completions")
                if server.prompt_cache is not None and not openai and isinstance(action, Reply):
                    with server.lock:
                        usage = server.prompt_cache.usage(
                            request["json"], action.usage.get("output_tokens", 0)
                        )
                    action = Reply(action.arguments, usage, action.stop)
                self.send_json(200, (openai_body if openai else anthropic_body)(action, request))

            def send_json(self, code: int, payload: dict):
                self.send_raw(code, json.dumps(payload).encode(), "application/json")

            def send_raw(self, code: int, data: bytes, content_type: str):
                try:
                    self.send_response(code)
                    self.send_header("content-type", content_type)
                    self.send_header("content-length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout test)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def __enter__(self) -> FakeLLMServer:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def count(self, path_suffix: str = "") -> int:
        return sum(r["path"].endswith(path_suffix) for r in self.requests)


def session_factory(tmp_path: Path, monkeypatch):
    """`make(kind, server, **provider)`: an AgentSession whose provider talks to `server`
    through the real SDK; backoff waits are kept in `make.sleeps` instead of slept."""
    from reprolab.settings import agent_session

    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key-not-real")
    sleeps: list[float] = []

    def make(kind, server, **provider):
        cfg = {
            "kind": kind,
            "model": "claude-opus-4-5",
            "base_url": server.url + ("/v1" if kind == "openai_compatible" else ""),
            "timeout_s": 1.0,
            **provider,
        }
        config = {"outputs_dir": str(tmp_path / "outputs"), "provider": cfg}
        session = agent_session(config, "p", tmp_path / "outputs" / "p", tmp_path / "rec")
        session.provider.sleep = sleeps.append  # no real waiting in tests
        return session

    make.sleeps = sleeps
    return make
