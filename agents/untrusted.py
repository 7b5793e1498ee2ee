"""Untrusted text (the paper, user notes): flagged, never rewritten.

Paper text reaches agents only inside delimited data blocks (see
`prompts.render_context`). Text that reads like an instruction to the model is
reported in the event log so a human can look; the science content is passed on
unchanged, because a paper that quotes a prompt is still a paper.
"""

from __future__ import annotations

import re

# Fields whose text comes from outside ReproLab (papers, their figures' captions,
# user notes and answers).
UNTRUSTED_FIELDS = {
    "paper_text",
    "paper_text_summary",
    "paper_figures",
    "target_figures",
    "user_interactions",
    "user_notes",
    "note",
}

INJECTION_PATTERNS = {
    "ignore_instructions": (
        r"\b(ignore|disregard|forget)\b.{0,40}\b(previous|prior|above|earlier|all)\b"
        r".{0,40}\b(instructions?|rules|prompts?)\b"
    ),
    "role_override": (
        r"\byou are (now|no longer)\b|\bact as (an?|the)\b.{0,40}\b(assistant|model|ai)\b"
    ),
    "system_prompt": r"\b(system prompt|developer message|system message)\b",
    "new_instructions": r"\b(new|updated|real) instructions?\s*:",
    "verdict_steering": (
        r"\b(approve|classify|mark)\b.{0,40}\b(as )?(success|approved|pass(ed)?)\b"
        r".{0,40}\b(regardless|no matter|always)\b"
    ),
    "delimiter_escape": r"</?data\b",
    "secret_exfiltration": r"\b(api[_ ]?key|environment variables?|credentials?)\b",
}
_COMPILED = {
    name: re.compile(p, re.IGNORECASE | re.DOTALL) for name, p in INJECTION_PATTERNS.items()
}


def _strings(value, path: str):
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(item, f"{path}.{key}")
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            yield from _strings(item, f"{path}[{i}]")


def find_injections(context: dict) -> list[dict]:
    """Instruction-like passages in the untrusted fields of an agent's context."""
    findings = []
    for key in sorted(UNTRUSTED_FIELDS & set(context)):
        for path, text in _strings(context[key], key):
            for name, pattern in _COMPILED.items():
                for match in pattern.finditer(text):
                    start = max(0, match.start() - 40)
                    findings.append(
                        {
                            "field": path,
                            "pattern": name,
                            "offset": match.start(),
                            "excerpt": text[start : match.end() + 40].replace("\n", " "),
                        }
                    )
    return findings
