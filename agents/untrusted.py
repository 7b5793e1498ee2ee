"""Untrusted text (the paper, its metadata, user notes, prompt adaptations): flagged,
never rewritten.

Paper text reaches agents only inside delimited data blocks (see
`prompts.render_context`). Text that reads like an instruction to the model is
reported so a human can look; the science content is passed on unchanged, because
a paper that quotes a prompt is still a paper.

Scanning sees through disguises: text is normalised first (NFKC, so fullwidth and
other compatibility forms become plain letters; zero-width, soft-hyphen, control and
NUL characters removed; Cyrillic and Greek look-alikes folded to Latin; runs of
spaces collapsed). A pattern found several times in a field is one finding with its
count.
"""

from __future__ import annotations

import re
import unicodedata

# Fields whose text comes from outside ReproLab (papers, their metadata, their
# figures' captions, user notes and answers, adaptations derived from the paper).
UNTRUSTED_FIELDS = {
    "paper_text",
    "paper_text_summary",
    "paper_domain",
    "paper_title",
    "paper_figures",
    "target_figures",
    "figures",
    "user_interactions",
    "user_notes",
    "user_answers",
    "user_feedback",
    "note",
    "feedback",
}

# Invisible or formatting characters a pattern could hide behind.
INVISIBLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
    "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\U000e0000-\U000e007f]"
)
CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
# Cyrillic and Greek letters that look like Latin ones (lower case after casefold).
LOOKALIKES = str.maketrans(
    {
        "а": "a", "в": "b", "с": "c", "е": "e", "ё": "e", "һ": "h", "і": "i", "ї": "i",
        "ј": "j", "к": "k", "м": "m", "н": "h", "о": "o", "р": "p", "ԛ": "q", "ѕ": "s",
        "т": "t", "у": "y", "х": "x", "ԝ": "w", "ь": "b", "ӏ": "l", "α": "a", "β": "b",
        "ε": "e", "η": "n", "ι": "i", "κ": "k", "ν": "v", "ο": "o", "ρ": "p", "τ": "t",
        "υ": "u", "χ": "x", "ω": "w", "ɑ": "a", "ɡ": "g", "ı": "i",
    }
)  # fmt: skip


def normalize(text: str) -> str:
    """The text as a reader sees it: compatibility forms, invisibles and look-alikes undone."""
    text = unicodedata.normalize("NFKC", text)
    text = INVISIBLE.sub("", text)
    text = CONTROL.sub("", text)
    text = text.casefold().translate(LOOKALIKES)
    return re.sub(r"[ \t]+", " ", text)


_ORDER = r"\b(instructions?|rules|prompts?|guidance|directions|directives|guidelines|orders)\b"
INJECTION_PATTERNS = {
    "ignore_instructions": (
        r"\b(ignore|disregard|forget|override|overrule|skip|drop|abandon|pay no attention to|"
        r"do not (follow|obey|heed))\b.{0,60}?\b(previous|prior|above|earlier|all|any|your|"
        r"the|original|preceding|system)\b.{0,40}?" + _ORDER
    ),
    "role_override": (
        r"\byou are (now|no longer)\b|\bact as (an?|the)\b.{0,40}?\b(assistant|model|ai)\b|"
        r"\bfrom now on,? you\b|\bpretend (to be|you are)\b"
    ),
    "system_prompt": r"\b(system prompt|developer message|system message|hidden prompt)\b",
    "new_instructions": r"\b(new|updated|real|actual|revised|true) " + _ORDER + r"\s*:",
    "verdict_steering": (
        r"\b(approve|classify|mark|rate|report|accept)\b.{0,40}?\b(as )?(success|approved|"
        r"pass(ed)?|correct|valid|reproduced)\b.{0,40}?\b(regardless|no matter|always|anyway)\b|"
        r"\b(approve|accept|pass)\b.{0,10}?\b(every|all|any|each)\b.{0,30}?\b(code|designs?|"
        r"results?|stages?|plans?|scripts?)\b"
    ),
    "delimiter_escape": r"<\s*/?\s*data\b",
    "secret_exfiltration": r"\b(api[_ ]?key|environment variables?|credentials?|secrets?)\b",
}
_COMPILED = {name: re.compile(p, re.DOTALL) for name, p in INJECTION_PATTERNS.items()}


def _strings(value, path: str):
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(item, f"{path}.{key}")
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            yield from _strings(item, f"{path}[{i}]")


def scan(value, field: str) -> list[dict]:
    """Instruction-like passages in `value` (text, or any JSON-like structure of texts):
    one finding per (field path, pattern), with how often it occurs."""
    findings = []
    for path, text in _strings(value, field):
        seen = normalize(text)
        for name, pattern in _COMPILED.items():
            matches = list(pattern.finditer(seen))
            if not matches:
                continue
            first = matches[0]
            start = max(0, first.start() - 40)
            findings.append(
                {
                    "field": path,
                    "pattern": name,
                    "count": len(matches),
                    "offset": first.start(),
                    "excerpt": seen[start : first.end() + 40].replace("\n", " "),
                }
            )
    return findings


def find_injections(context: dict) -> list[dict]:
    """Instruction-like passages in the untrusted fields of an agent's context."""
    findings = []
    for key in sorted(UNTRUSTED_FIELDS & set(context)):
        findings += scan(context[key], key)
    return findings


def paper_fields(meta, text: str) -> dict:
    """Every field of a paper that reaches a prompt or the report, by name."""
    return {
        "paper_text": text,
        "metadata.title": meta.title,
        "metadata.domain": meta.domain,
        "metadata.authors": list(meta.authors),
        "metadata.figures": [
            {
                "title": f.title,
                "x_label": f.x_label,
                "y_label": f.y_label,
                "curves": [c.label for c in f.curves],
            }
            for f in meta.figures
        ],
    }


def scan_paper(meta, text: str) -> list[dict]:
    """Findings over the whole paper, each (field, pattern) once."""
    findings = []
    for field, value in paper_fields(meta, text).items():
        findings += scan(value, field)
    return findings
