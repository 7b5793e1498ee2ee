"""A PDF's text lines as a reader sees them: raised and lowered type kept as such
(10⁴, Q_i), ligatures spelled out, a word hyphenated at a line end joined again, and the
running headers, footers and page numbers told apart from the paper's own text.

A superscript or subscript is a span in smaller type whose baseline sits above or below
the line's; PyMuPDF often gives it a line of its own, so such lines are merged back into
the line they sit on before the text is read."""

from __future__ import annotations

import re
from collections import Counter

SUPERSCRIPT = str.maketrans("0123456789+-−", "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁻")
SMALL = 0.85  # type at most this share of the line's is a script, if off its baseline
MARGIN = 0.08  # running headers and page numbers live in this share of the page's top/bottom
RUNNING = "dropped: running header, footer or page number"


def script(text: str, kind: str) -> str:
    """`text` raised (kind '^') or lowered ('_') written so that it stays readable and
    unambiguous in plain text: 10⁴, 10^(-x), Q_i, n_eff, T_(1/2)."""
    core = text.strip()
    if not core:
        return text
    if kind == "^":
        out = core.translate(SUPERSCRIPT) if re.fullmatch(r"[-+−0-9]+", core) else f"^({core})"
    else:
        out = f"_{core}" if core.isalnum() else f"_({core})"
    return out + (" " if text.endswith(" ") else "")


def line_text(spans: list[dict]) -> str:
    """The spans of one visual line, left to right, scripts marked."""
    spans = sorted(spans, key=lambda s: s["bbox"][0])
    main = max(s["size"] for s in spans)
    on_base = [s for s in spans if s["size"] == main and s["text"].strip()] or spans
    base = Counter(round(s["origin"][1], 1) for s in on_base).most_common(1)
    baseline = base[0][0]
    out = []
    for s in spans:
        text, size, y = s["text"], s["size"], s["origin"][1]
        if text.strip() and size < SMALL * main:
            if y < baseline - 0.15 * main:
                text = script(text, "^")
            elif y > baseline + 0.08 * main:
                text = script(text, "_")
        out.append(text)
    return " ".join("".join(out).split())


def visual_lines(block: dict) -> list[list[dict]]:
    """A block's lines, with a line in small type that sits within another's height (a
    script PyMuPDF set apart) merged into it."""
    lines = [ln for ln in block.get("lines", []) if ln["spans"]]
    big = [ln for ln in lines if max(s["size"] for s in ln["spans"]) >= SMALL * block_size(lines)]
    merged = {id(ln): list(ln["spans"]) for ln in big}
    order = [ln for ln in lines if id(ln) in merged]
    for ln in lines:
        if id(ln) in merged:
            continue
        y0, y1 = ln["bbox"][1], ln["bbox"][3]
        host = next(
            (
                b
                for b in big
                if b["bbox"][1] - 2 < (y0 + y1) / 2 < b["bbox"][3] + 2 and b["dir"] == ln["dir"]
            ),
            None,
        )
        if host is None:
            merged[id(ln)] = list(ln["spans"])
            order.append(ln)
        else:
            merged[id(host)] += ln["spans"]
    order.sort(key=lambda ln: lines.index(ln))
    return [(ln, merged[id(ln)]) for ln in order]


def block_size(lines: list[dict]) -> float:
    sizes: Counter = Counter()
    for ln in lines:
        for s in ln["spans"]:
            sizes[s["size"]] += len(s["text"])
    return sizes.most_common(1)[0][0] if sizes else 0.0


def running_lines(pages: list[list[dict]], heights: list[float]) -> set[int]:
    """The ids of lines that are running headers, footers or page numbers: in the top or
    bottom margin, and either a bare number or text (digits aside) printed at about the
    same height on another page."""

    def key(ln):
        return re.sub(r"\d+", "#", ln["text"]), round(ln["rect"].y0 / 6)

    in_margin = []
    for lines, h in zip(pages, heights, strict=True):
        in_margin.append(
            [ln for ln in lines if ln["rect"].y1 < MARGIN * h or ln["rect"].y0 > (1 - MARGIN) * h]
        )
    seen = Counter(k for lines in in_margin for k in {key(ln) for ln in lines})
    out = set()
    for lines in in_margin:
        for ln in lines:
            bare = re.fullmatch(r"(page\s*)?\d{1,4}", ln["text"].strip(), re.I)
            if bare or (len(pages) > 1 and seen[key(ln)] > 1):
                out.add(id(ln))
    return out


def join_hyphen(prev: str, text: str) -> tuple[str, str] | None:
    """A word broken at a line end, joined: ('… pho-', 'tonics are …') becomes
    ('… photonics', 'are …'); a hyphen before a capital stays ('Lorentz-Drude'); None
    when `prev` does not end with a broken word."""
    if not re.search(r"[A-Za-z]-$", prev) or not text or not text[0].isalpha():
        return None
    head, _, rest = text.partition(" ")
    keep = prev if text[0].isupper() else prev[:-1]
    return keep + head, rest


def page_lines(blocks: list[dict]) -> list[tuple[dict, list[dict], int]]:
    """(line, its spans, its block number) for a page's visual lines; a line that PyMuPDF
    put in a block of its own though it continues the previous one on the same baseline
    (an equation broken up by its stacked scripts) is merged into it."""
    out: list[tuple[dict, list[dict], int]] = []
    for block in blocks:
        for line, spans in visual_lines(block):
            if out and same_baseline(out[-1][0], out[-1][1], line, spans):
                prev = out[-1]
                bbox = [
                    min(prev[0]["bbox"][0], line["bbox"][0]),
                    min(prev[0]["bbox"][1], line["bbox"][1]),
                    max(prev[0]["bbox"][2], line["bbox"][2]),
                    max(prev[0]["bbox"][3], line["bbox"][3]),
                ]
                out[-1] = ({**prev[0], "bbox": bbox}, prev[1] + spans, prev[2])
            else:
                out.append((line, spans, block["number"]))
    return out


def same_baseline(a: dict, a_spans: list, b: dict, b_spans: list) -> bool:
    size = max(s["size"] for s in a_spans + b_spans)
    gap = b["bbox"][0] - a["bbox"][2]
    overlap = min(a["bbox"][3], b["bbox"][3]) - max(a["bbox"][1], b["bbox"][1])
    return a["dir"] == b["dir"] == (1.0, 0.0) and -1 <= gap < 1.5 * size and overlap > 0.5 * size


def unreadable(text: str) -> bool:
    """A line whose glyphs come without their characters (a maths font with no Unicode
    map: control or private-use code points, replacement characters): a third or more
    of it."""
    inked = [c for c in text if not c.isspace()]
    odd = sum(1 for c in inked if c < " " or "\ue000" <= c <= "\uf8ff" or c == "\ufffd")
    return bool(inked) and odd >= len(inked) / 3
