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
_JUDGE = (
    r"(reviewers?|checkers?|validators?|supervisors?|graders?|evaluators?|judges?|verifiers?|"
    r"auditors?|referees?|assessors?|(ai|llm|language model|automated) (agents?|systems?|"
    r"reviewers?|models?|assistants?))"
)
_OUTCOME = (
    r"(reproductions?|replications?|results?|outcomes?|stages?|runs?|verdicts?|simulations?|"
    r"comparisons?|figures?|attempts?|checks?|papers?|work)"
)
_SUCCESS = r"(success(ful)?|reproduced|replicated|passed|pass|passing|matched|matching|correct)\b"
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
    # The turn markers of chat templates (ChatML, Llama, Gemma, Phi, ...): a paper has no
    # reason to contain them; a model may read what follows as another speaker's turn.
    "chat_template": (
        r"<\|\s*[a-z_]{2,30}\s*\|>|\[\s*/?\s*inst\s*\]|<<\s*/?\s*sys\s*>>|"
        # end of sequence, where a new turn or the text's end follows (not strikethrough)
        r"</s>(?=\s*(<s>|<\||\[\s*inst|<<|(system|user|assistant|human)\b|$))|"
        r"<\s*(start|end)_of_turn\s*>|(^|\n)\s*#{2,}\s*(system|assistant)\s*:|"
        r"(^|\n)\s*(human|assistant)\s*:\s"
    ),
    # A fenced block labelled with a role instead of a language: ```system, ~~~assistant.
    "role_fence": (
        r"(^|\n)[ >]*(`{3,}|~{3,})\s*(system|assistant|user|developer|tool|prompt|"
        r"instructions?)\b"
    ),
    # Words addressed to whoever reviews or judges the work, not to a reader of the paper.
    "reviewer_instruction": (
        r"\b(notes?|messages?|instructions?|memo|reminder|p\.?s\.?) (to|for) (the |any |all |"
        r"every )?" + _JUDGE + r"\b|"
        r"\b" + _JUDGE + r"\b.{0,30}?\b(should|must|shall|need to|needs to|have to|has to|"
        r"are to|is to|are asked to|is asked to|will|can|may)\b.{0,20}?\b(approve|accept|"
        r"pass|sign off|mark|rate|score|classify|skip|ignore|overlook|not (flag|reject|report|"
        r"check|question))\b"
    ),
    # Telling the pipeline what the outcome of the reproduction is.
    "success_claim": (
        r"\b(report|classify|mark|declare|label|record|rate|grade|deem|flag|score|treat)\b\s+"
        r"(this|the|these|that|our|its|each|every|all|any)?\s*" + _OUTCOME + r"\s+as\s+"
        r"(an? )?(full |fully |complete |clear |a clear )?" + _SUCCESS + r"|"
        r"\b" + _OUTCOME + r"\s+(should|must|shall|is to|are to|will)\s+be\s+(reported|"
        r"classified|marked|declared|labell?ed|recorded|rated|graded|deemed|treated)\s+as\s+"
        r"(an? )?(full |fully |complete |clear )?" + _SUCCESS
    ),
    # Telling the reader to drop what it was given before ("set aside everything you were
    # told before this paragraph"): the text before it is the reader's task.
    "dismiss_context": (
        r"\b(ignore|disregard|forget|set aside|put aside|lay aside|push aside|discard|"
        r"throw (out|away)|leave behind|erase|wipe( out| away)?|abandon|override|overrule|"
        r"pay no (heed|attention) to|do not (follow|obey|heed))\b.{0,20}?"
        r"(\b(everything|anything|whatever|all( that)?|what)\b.{0,40}?(\byou('ve| have| had)?"
        r"( been| were| was)? (told|given|instructed|asked|shown|taught|fed)\b|\b(before|above|"
        r"preceding|prior to) this (paragraph|sentence|line|point|section|message|note|text)\b|"
        r"\b(until|up to) (now|here|this point)\b)|\b(your|the) (earlier|previous|prior|"
        r"preceding|original|initial) (context|conversation|briefing|setup|task|messages?|"
        r"paragraphs?|input)\b)|"
        r"\b(everything|anything|whatever|all|what) (you (were|have been|had been) (told|given|"
        r"instructed)|(that )?(came|comes|was written|is written|you read) (before|above|earlier))"
        r"\b.{0,30}?\b(no longer (applies|apply|holds|counts)|(is|are) (now )?(void|obsolete|"
        r"cancell?ed|superseded|null|irrelevant)|(should|must|can|may) be (ignored|disregarded|"
        r"forgotten|discarded|set aside))\b|"
        r"\b(earlier|previous|prior|preceding|above|original) (guidance|context|text|"
        r"instructions?|directions|rules|messages?|orders|briefing) (is|are) (now )?(void|"
        r"obsolete|cancell?ed|superseded|null|revoked|no longer (valid|in force|applicable))\b"
    ),
    # Declaring the outcome without "as": "declare this reproduction a complete success".
    "success_declaration": (
        r"\b(declare|deem|pronounce|proclaim|announce|certify|rule)\b\s+(that\s+)?"
        r"(this|the|these|that|our|its|each|every|all|any)\s+" + _OUTCOME + r"\s+"
        r"((is|was|were|are|to be|has been|have been)\s+)?(an? )?(full |fully |complete |"
        r"completely |total |totally |clear |unqualified |resounding |perfect |perfectly |"
        r"exact |exactly |faithful |faithfully )?(success(ful|fully)?|reproduced|replicated|"
        r"passed|matched|a match|correct|succeeded|accurate)\b|"
        r"\b(call|consider|grade|rate|mark|label|treat|judge)\s+(this|the|these|that|our|its|"
        r"each|every|all|any)\s+" + _OUTCOME + r"\s+(an? )?(full |complete |total |clear |"
        r"unqualified |resounding |perfect )?(success|successful|successfully reproduced|"
        r"passed)\b"
    ),
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


# Caption lines of the markdown: image alt text, HTML captions, "Table 2: ..." / "Fig. 3."
_CAPTIONS = {
    "figure_captions": re.compile(
        r"!\[([^\]]{1,2000})\]|<figcaption[^>]*>(.{1,2000}?)</figcaption>|"
        r"^[ >*_]*((?:fig\.?|figure)\s*\d+[^\n]{0,2000})",
        re.IGNORECASE | re.DOTALL | re.MULTILINE,
    ),
    "table_captions": re.compile(
        r"<caption[^>]*>(.{1,2000}?)</caption>|^[ >*_]*(table\s*[0-9ivx]+[^\n]{0,2000})",
        re.IGNORECASE | re.DOTALL | re.MULTILINE,
    ),
}


def text_captions(text: str) -> dict[str, list[str]]:
    """The figure and table captions written in the paper's markdown, by kind."""
    return {
        kind: [next(g for g in m.groups() if g) for m in pattern.finditer(text)]
        for kind, pattern in _CAPTIONS.items()
    }


def paper_fields(meta, text: str) -> dict:
    """Every field of a paper that reaches a prompt or the report, by name: the text, its
    figure and table captions, and every text of the metadata (captions included)."""
    captions = text_captions(text)
    fields = {"paper_text": text}
    fields |= {f"paper_text.{kind}": found for kind, found in captions.items() if found}
    data = meta.model_dump(mode="json")
    for key in ("paper_id", "paper_text", "supplementary_text"):
        data.pop(key, None)  # names of files and ids, checked by their own patterns
    fields |= {f"metadata.{key}": value for key, value in data.items()}
    return fields


def scan_paper(meta, text: str) -> list[dict]:
    """Findings over the whole paper, each (field, pattern) once; a pattern of the text
    found only inside its captions is listed under the caption that holds it."""
    findings = []
    for field, value in paper_fields(meta, text).items():
        findings += scan(value, field)
    in_captions: dict[str, int] = {}
    for f in findings:
        if f["field"].startswith("paper_text."):
            in_captions[f["pattern"]] = in_captions.get(f["pattern"], 0) + f["count"]
    return [
        f
        for f in findings
        if not (f["field"] == "paper_text" and in_captions.get(f["pattern"], 0) >= f["count"])
    ]


_TAG = re.compile(r"<\s*/?\s*data\b")
_TAG_START = re.compile("[<\uff1c\ufe64]")  # every character whose NFKC form is '<'


def _fold(char: str) -> str:
    if INVISIBLE.match(char) or CONTROL.match(char):
        return ""
    return unicodedata.normalize("NFKC", char).casefold().translate(LOOKALIKES)


def escape_data_tags(text: str) -> str:
    """`text` with a backslash after the '<' of every opening or closing data tag, however
    it is spelled: the tag is found in the text as a reader sees it (NFKC, so fullwidth
    letters are plain; zero-width and control characters dropped; look-alikes folded),
    so `＜／ｄａｔａ＞` and `</d\u200bata>` cannot close a data block early. Nothing
    else of the text changes."""
    cuts = []
    for start in _TAG_START.finditer(text):
        seen, visible, i = "", 0, start.start()
        while i < len(text) and visible < 8:  # '<', '/', 'data', the next character
            folded = _fold(text[i])
            seen += folded
            visible += sum(not c.isspace() for c in folded)
            i += 1
        if _TAG.match(seen):
            cuts.append(start.end())
    if not cuts:
        return text
    parts, last = [], 0
    for cut in cuts:
        parts += [text[last:cut], "\\"]
        last = cut
    return "".join(parts) + text[last:]
