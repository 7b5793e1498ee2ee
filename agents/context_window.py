"""Context-window management (the seed's "Context Window Management").

Before each call the prompt's size is estimated. If it does not fit, the
low-risk recoveries are applied in the seed's order and logged: keep only the
last part of accumulated feedback, then give the paper's Methods (and Abstract)
instead of the whole text. If it still does not fit, a user decides: the call
becomes an ask_user gate listing the options.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from reprolab.errors import GateError

CHARS_PER_TOKEN = 3.5
"""Conservative for English and JSON (fewer chars per token means a larger estimate)."""
TOKENS_PER_IMAGE = 1600
"""Anthropic's bound for an image of about 1.15 megapixels."""
FEEDBACK_FIELDS = ("reviewer_feedback", "supervisor_feedback", "feedback")
FEEDBACK_KEEP_CHARS = 2000
OVERFLOW_OPTIONS = {
    "summarize_feedback": "an agent summarizes the accumulated feedback, then the call is retried",
    "methods_only": "keep only the paper's Abstract and Methods (already tried if listed)",
    "skip_stage": "skip this stage and continue with the others",
    "stop": "stop this paper and write a partial report",
}


class ContextOverflowError(GateError):
    def __init__(self, message: str, *, estimate: int, limit: int, applied: list[str]):
        super().__init__(message)
        self.estimate = estimate
        self.limit = limit
        self.applied = applied


def estimate_tokens(texts: list[str], n_images: int) -> int:
    return int(sum(len(t) for t in texts) / CHARS_PER_TOKEN) + TOKENS_PER_IMAGE * n_images


def methods_only(text: str) -> str:
    """The Abstract and the Methods-like sections of a markdown paper."""
    keep, current = [], None
    for line in text.splitlines():
        heading = re.match(r"^#+\s*(.+)", line)
        if heading:
            title = heading.group(1).strip().lower()
            current = any(
                w in title for w in ("abstract", "method", "experimental", "simulation detail")
            )
        if current or (current is None and line.startswith("# ")):
            keep.append(line)
    return "\n".join(keep).strip() or text[:15000]


def truncate_feedback(context: dict) -> tuple[dict, bool]:
    changed = False
    context = dict(context)
    for key in FEEDBACK_FIELDS:
        value = context.get(key)
        if isinstance(value, str) and len(value) > FEEDBACK_KEEP_CHARS:
            context[key] = "[earlier feedback truncated]\n" + value[-FEEDBACK_KEEP_CHARS:]
            changed = True
    return context, changed


def shorten_paper(context: dict) -> tuple[dict, bool]:
    text = context.get("paper_text")
    if not isinstance(text, str):
        return context, False
    short = methods_only(text)
    if len(short) >= len(text):
        return context, False
    return {**context, "paper_text": short}, True


RECOVERIES: list[tuple[str, Callable[[dict], tuple[dict, bool]]]] = [
    ("truncate_feedback", truncate_feedback),
    ("methods_only", shorten_paper),
]


def fit_context(
    context: dict, measure: Callable[[dict], int], limit: int, call_id: str
) -> tuple[dict, list[str], int]:
    """Return (context, recoveries applied, estimated tokens), or raise for a user decision."""
    applied: list[str] = []
    estimate = measure(context)
    for name, recover in RECOVERIES:
        if estimate <= limit:
            break
        context, changed = recover(context)
        if changed:
            applied.append(name)
            estimate = measure(context)
    if estimate > limit:
        raise ContextOverflowError(
            f"{call_id}: the prompt needs about {estimate} tokens, more than the "
            f"{limit} available (after: {', '.join(applied) or 'no automatic recovery applied'})."
            " A user decides how to go on.",
            estimate=estimate,
            limit=limit,
            applied=applied,
        )
    return context, applied, estimate
