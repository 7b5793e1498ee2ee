"""Context-window management (docs/agents.md, "Context window").

Before each call the prompt's size is estimated. If it does not fit, the
low-risk recovery is applied and logged: keep only the last part of accumulated
feedback. Leaving out part of the paper (its Results, its other sections) is
never done silently: the user answers a gate (or the config's
`provider.context_policy` says so), and what was left out is recorded in the
call's provenance and said in the report.
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
SECTION_KEEP_CHARS = 1500
OVERFLOW_OPTIONS = {
    "methods_only": "give this agent only the paper's title, Abstract and Methods: the Results "
    "and every other section are left out (recorded in provenance, said in the report)",
    "shorten_sections": "keep the Abstract and Methods whole and the first "
    f"{SECTION_KEEP_CHARS} characters of every other section (said in the report)",
    "larger_model": "use a model with a larger context window for this agent: "
    "`reprolab answer PAPER GATE larger_model --model NAME --window TOKENS`",
    "stop": "stop this paper here and write a PARTIAL report",
}
METHODS_WORDS = ("abstract", "method", "experimental", "simulation detail")


class ContextOverflowError(GateError):
    def __init__(self, message: str, *, estimate: int, limit: int, applied: list[str]):
        super().__init__(message)
        self.estimate = estimate
        self.limit = limit
        self.applied = applied


def estimate_tokens(texts: list[str], n_images: int) -> int:
    return int(sum(len(t) for t in texts) / CHARS_PER_TOKEN) + TOKENS_PER_IMAGE * n_images


def paper_sections(text: str) -> list[tuple[str | None, str]]:
    """(heading title or None for what precedes the first heading, the section's text)."""
    parts: list[tuple[str | None, list[str]]] = [(None, [])]
    for line in text.splitlines():
        heading = re.match(r"^#+\s*(.+)", line)
        if heading:
            parts.append((heading.group(1).strip(), []))
        parts[-1][1].append(line)
    return [(title, "\n".join(lines)) for title, lines in parts if lines]


def is_methods(title: str | None) -> bool:
    return title is not None and any(w in title.lower() for w in METHODS_WORDS)


def methods_only(text: str) -> str:
    """The paper's title line, Abstract and Methods-like sections; the whole text when
    it has no such heading (nothing is cut blindly)."""
    sections = paper_sections(text)
    if not any(is_methods(title) for title, _ in sections):
        return text
    keep = [body for title, body in sections if is_methods(title)]
    first = sections[0][1].splitlines()[0]
    if first.startswith("# ") and not is_methods(sections[0][0]):
        keep.insert(0, first)
    return "\n".join(keep).strip()


def left_out_note(name: str, text: str, kept: str, titles: list[str]) -> str:
    return (
        f"{name}: paper_text sections left out or shortened: {', '.join(titles) or 'none'} "
        f"({len(text) - len(kept)} of {len(text)} characters)"
    )


def methods_only_recovery(context: dict) -> tuple[dict, str | None]:
    text = context.get("paper_text")
    if not isinstance(text, str):
        return context, None
    short = methods_only(text)
    if len(short) >= len(text):
        return context, None  # no Methods heading: nothing to keep instead
    sections = paper_sections(text)
    dropped = [t for i, (t, body) in enumerate(sections) if not is_methods(t) and body not in short]
    dropped = [t or "(text before the first heading)" for t in dropped]
    return {**context, "paper_text": short}, left_out_note("methods_only", text, short, dropped)


def shorten_sections(context: dict) -> tuple[dict, str | None]:
    text = context.get("paper_text")
    if not isinstance(text, str):
        return context, None
    parts, shortened = [], []
    for title, body in paper_sections(text):
        if title is None or is_methods(title) or len(body) <= SECTION_KEEP_CHARS:
            parts.append(body)
        else:
            cut = len(body) - SECTION_KEEP_CHARS
            parts.append(
                f"{body[:SECTION_KEEP_CHARS]}\n[section shortened: {cut} characters left out]"
            )
            shortened.append(title)
    if not shortened:
        return context, None
    short = "\n".join(parts)
    return {**context, "paper_text": short}, left_out_note(
        "shorten_sections", text, short, shortened
    )


def truncate_feedback(context: dict) -> tuple[dict, bool]:
    changed = False
    context = dict(context)
    for key in FEEDBACK_FIELDS:
        value = context.get(key)
        if isinstance(value, str) and len(value) > FEEDBACK_KEEP_CHARS:
            context[key] = "[earlier feedback truncated]\n" + value[-FEEDBACK_KEEP_CHARS:]
            changed = True
    return context, changed


AUTOMATIC = ("truncate_feedback", truncate_feedback)
"""The one recovery applied without asking: older feedback, never the paper."""
ASKED: dict[str, Callable[[dict], tuple[dict, str | None]]] = {
    "methods_only": methods_only_recovery,
    "shorten_sections": shorten_sections,
}
"""Recoveries that leave part of the paper out: only on the user's answer or the policy."""


def fit_context(
    context: dict, measure: Callable[[dict], int], limit: int, call_id: str, chosen: str = ""
) -> tuple[dict, list[str], int, list[str]]:
    """(context, recoveries applied, estimated tokens, what was left out), or raise for
    a user decision. `chosen` is the user's answer or the configured policy (a key of
    ASKED); it is applied only when the prompt does not fit without it."""
    applied: list[str] = []
    left_out: list[str] = []
    estimate = measure(context)
    if estimate > limit:
        context, changed = AUTOMATIC[1](context)
        if changed:
            applied.append(AUTOMATIC[0])
            left_out.append("truncate_feedback: earlier feedback cut to its last part")
            estimate = measure(context)
    if estimate > limit and chosen in ASKED:
        context, note = ASKED[chosen](context)
        if note:
            applied.append(chosen)
            left_out.append(note)
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
    return context, applied, estimate, left_out
