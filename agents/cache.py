"""Never pay twice: agent calls are content-addressed.

The key covers everything that determines the answer: provider, model, the
rendered system prompt and user message, the images' bytes, the output
schema and the output-token limit (a larger limit may give a different answer).
Only complete, validated answers are stored: never one cut off at max_tokens.
A rerun with identical inputs is served from disk and makes no API call.
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel

from agents.providers import AgentRequest
from reprolab.fileio import atomic_write_json, read_json, sha256_bytes, sha256_file


def cache_key(
    provider: str,
    model: str,
    request: AgentRequest,
    output_model: type[BaseModel],
    max_output_tokens: int = 0,
):
    content = {
        "max_output_tokens": max_output_tokens,
        "provider": provider,
        "model": model,
        "system": request.system,
        "cache_prefix": request.cache_prefix,
        "instructions": request.instructions,
        "user": request.user,
        "images": [sha256_file(p) for p in request.images],
        "schema": output_model.model_json_schema(),
        "round": request.round,
    }
    return sha256_bytes(json.dumps(content, sort_keys=True).encode())


class AgentCache:
    """`<root>/<key[:2]>/<key>.json` holding the validated output and its usage."""

    def __init__(self, root: str | Path):
        self.root = Path(root)

    def path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict | None:
        path = self.path(key)
        return read_json(path) if path.is_file() else None

    def put(self, key: str, entry: dict) -> None:
        atomic_write_json(self.path(key), {"key": key, **entry})
