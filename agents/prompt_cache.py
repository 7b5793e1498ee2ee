"""Whether a prompt prefix is long enough to cache, and what an image counts.

The API caches the prefix up to a breakpoint only when it holds at least the model's
minimum; a breakpoint below it is never marked (it would cache nothing). Sizes are
estimated low (4 characters a token), so a prefix that might fall short is left
unmarked rather than marked in vain. Which prefixes are worth caching, and for how
long, is `agents.cache_lifetime`'s to say.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

CACHE_MIN_TOKENS = {
    "claude-opus-4-6": 4096,
    "claude-opus-4-5": 4096,
    "claude-haiku-4-5": 4096,
    "claude-sonnet-4-5": 1024,
    "claude-opus-4-1": 1024,
    "claude-opus-4": 1024,
    "claude-sonnet-4": 1024,
    "claude-3-7-sonnet": 1024,
    "claude-3-5-haiku": 2048,
    "claude-3-haiku": 2048,
}
"""The smallest prefix each model caches (the Anthropic prompt-caching documentation)."""
UNKNOWN_MODEL_MIN = max(CACHE_MIN_TOKENS.values())
"""A model not listed is held to the largest minimum: a breakpoint is marked only
where every listed model would cache it."""
CHARS_PER_TOKEN = 4.0
MAX_IMAGE_EDGE = 1568
"""The API scales a larger image down to this long edge before counting its tokens."""


def min_tokens(model: str) -> int:
    """The model's caching minimum; a dated name (claude-opus-4-5-20251101) matches."""
    matches = [name for name in CACHE_MIN_TOKENS if model == name or model.startswith(name + "-")]
    return CACHE_MIN_TOKENS[max(matches, key=len)] if matches else UNKNOWN_MODEL_MIN


def text_tokens(value) -> int:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    return int(len(text) / CHARS_PER_TOKEN)


def image_size(data: bytes) -> tuple[int, int] | None:
    """(width, height) of a PNG or JPEG, read from its header; None otherwise."""
    if data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) >= 24:
        return struct.unpack(">II", data[16:24])
    if data[:2] == b"\xff\xd8":
        i = 2
        while i + 9 < len(data):
            if data[i] != 0xFF:
                return None
            marker, length = data[i + 1], struct.unpack(">H", data[i + 2 : i + 4])[0]
            if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
                height, width = struct.unpack(">HH", data[i + 5 : i + 9])
                return width, height
            i += 2 + length
    return None


def image_tokens(data: bytes) -> int:
    """Tokens the API counts for an image: width x height / 750 after scaling its long
    edge down to 1568 pixels; 1600 (the bound of a full-size image) if unreadable."""
    size = image_size(data)
    if size is None:
        return 1600
    width, height = size
    scale = min(1.0, MAX_IMAGE_EDGE / max(width, height, 1))
    return int(width * scale * height * scale / 750)


def marks(model: str, sizes: list[int]) -> list[bool]:
    """Which of the candidate breakpoints to mark: `sizes` are the tokens of each
    segment of the prompt in order, a breakpoint closing each; a breakpoint is
    marked where the prefix it closes reaches the model's minimum (four at most)."""
    need, total, out = min_tokens(model), 0, []
    for size in sizes:
        total += size
        out.append(total >= need and sum(out) < 4)
    return out


def image_file_tokens(path: str | Path) -> int:
    return image_tokens(Path(path).read_bytes())
