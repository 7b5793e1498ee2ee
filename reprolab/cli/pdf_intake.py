"""A PDF read so that every word lands somewhere: in `paper.md`, in a markdown table, or
inside a figure's own image.

PyMuPDF gives the text lines (with their paragraph blocks), the ruled tables
(`find_tables`) and the vector drawings and images. A figure is a drawing cluster or an
image that is not a table; the text around it joins it only when it reads like a label
(short, small type, its whole paragraph beside the plot), never a sentence. Captions are
paired with figures by their number and nearness; the reading order follows the page's
columns. Every line's destination is recorded (`intake_text.json`) and checked here and
by `reprolab check`: a line that went nowhere is named, never dropped in silence.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from reprolab.cli.pdf_curves import frames, read_panel
from reprolab.cli.pdf_tables import key_values, mode_table, table_rows
from reprolab.cli.pdf_text import (
    RUNNING,
    join_hyphen,
    line_text,
    page_lines,
    running_lines,
    unreadable,
)

FIG_CAPTION = re.compile(r"^\s*(?:Fig\.|Fig|Figure)\s*(\d+)\s*(?:[.:|—–]|\s-\s)", re.I)
TABLE_CAPTION = re.compile(r"^\s*Table\s*(\d+|[IVX]+)\s*(?:[.:|—–]|\s-\s)", re.I)
NUMBER = re.compile(r"^[\s\-−+0-9.,eE×^⁰¹²³⁴⁵⁶⁷⁸⁹⁻]*$")
PANEL = re.compile(r"^\(?[a-h]\)$")
ACCOUNT = "intake_text.json"
MAX_PIXELS = 16_000_000  # a figure's image; a page of any size renders within it
MAX_PAGES = 100  # a PDF longer than this is not one paper (each page costs ~0.25 s)
LABEL_WORDS = 5  # a line of this many words or more is a sentence, not a label


@dataclass
class Intake:
    title: str | None
    markdown: str
    figures: list[dict]
    tables: list[dict] = field(default_factory=list)
    lines: list[dict] = field(default_factory=list)  # {"page", "text", "to"}


def norm(text: str) -> str:
    return re.sub(r"\s+", " ", text.replace("|", " ")).strip()


def read_pdf_intake(doc, fig_dir: Path) -> Intake:
    """Title, markdown, figures (images written to `fig_dir`), tables and the
    destination of every text line of the opened PyMuPDF document `doc`."""
    pages = [page_items(page) for page in doc]
    running = running_lines([p["lines"] for p in pages], [page.rect.height for page in doc])
    out = Intake(None, "", [], [], [])
    for pno, p in enumerate(pages, start=1):
        for ln in p["lines"]:
            if id(ln) in running:
                out.lines.append({"page": pno, "text": ln["text"], "to": RUNNING})
        p["lines"] = [ln for ln in p["lines"] if id(ln) not in running]
    body = body_size([ln for p in pages for ln in p["lines"]])
    heads = sorted(
        {ln["size"] for p in pages for ln in p["lines"] if is_heading(ln, body)}, reverse=True
    )
    md: list[str] = []
    last = None  # (index in md, index in out.lines) of the last body line: a hyphen joins it
    for pno, (items, page) in enumerate(zip(pages, doc, strict=True), start=1):
        figures = place_figures(page, pno, items, body, out.figures, fig_dir)
        for fig in figures:
            for ln in fig.pop("text_lines"):
                out.lines.append({"page": pno, "text": ln["text"], "to": fig["image"]})
        for item in reading_order(items, page.rect.width):
            if item["kind"] == "table":
                md.append(table_markdown(item))
                out.tables.append(item)
                for row in item["rows"]:
                    for cell in row:
                        if cell.strip():
                            out.lines.append({"page": pno, "text": cell, "to": "paper.md"})
                last = None
                continue
            if md and md[-1]:
                md.append("")  # a paragraph of its own
            for ln in item["lines"]:
                if unreadable(ln["text"]):  # glyphs without their characters: an image
                    image = equation_image(page, pno, ln, fig_dir)
                    md.append(f"![TODO: type this equation of page {pno} as text]({image})")
                    out.lines.append({"page": pno, "text": ln["text"], "to": image})
                    last = None
                    continue
                text = ln["text"]
                joined = join_hyphen(md[last[0]], text) if last else None
                if joined:
                    md[last[0]], text = joined
                    out.lines[last[1]]["text"] = joined[0]
                line = markdown_line({**ln, "text": text}, body, heads, out, md)
                if not text:
                    continue
                md.append(line)
                out.lines.append({"page": pno, "text": text, "to": "paper.md"})
                heading = line.startswith("\n#")
                last = None if heading else (len(md) - 1, len(out.lines) - 1)
    for table in out.tables:
        table.pop("lines", None)
    out.figures.sort(key=figure_order)
    out.markdown = re.sub(r"\n{3,}", "\n\n", "\n".join(md)).strip() + "\n"
    return out


def equation_image(page, pno: int, ln: dict, fig_dir: Path) -> str:
    """The line rendered as figures/equation_p<page>_<n>.png; its path in the folder."""
    n = 1
    while (fig_dir / f"equation_p{pno}_{n}.png").exists():
        n += 1
    clip = (ln["rect"] + (-3, -3, 3, 3)) & page.rect
    name = f"equation_p{pno}_{n}.png"
    page.get_pixmap(clip=clip, matrix=render_matrix(clip)).save(fig_dir / name)
    return f"figures/{name}"


def figure_order(fig: dict) -> int:
    """Figures by their printed number (a page may set Fig. 4 above Fig. 3)."""
    m = re.fullmatch(r"fig(\d+)(?:_\d+)?", fig["figure_id"])
    return int(m[1]) if m else 10**6


def is_heading(ln: dict, body: float) -> bool:
    """Larger type, or a short line all in bold (a journal's section heading set at the
    body's size), never a caption."""
    if FIG_CAPTION.match(ln["text"]) or TABLE_CAPTION.match(ln["text"]):
        return False
    bold = ln.get("bold") and len(ln["text"].split()) <= 12 and ln["size"] >= body * 0.95
    return (ln["size"] > body * 1.15 and len(ln["text"]) < 120) or bool(bold)


def markdown_line(ln: dict, body: float, heads: list[float], out: Intake, md: list) -> str:
    """A body line as itself; a large-type line as a heading ('#' for the largest), a
    heading printed on two lines joined into one."""
    if not is_heading(ln, body):
        return ln["text"]
    level = min(heads.index(ln["size"]) + 1, 4)
    while md and not md[-1] and ln.get("continues"):
        md.pop()  # the paragraph break put before a heading's second line
    if md and md[-1].startswith("\n" + "#" * level + " ") and ln.get("continues"):
        prev = md.pop().strip()
        word = join_hyphen(prev, ln["text"])  # 'micro-' / 'ring resonators'
        joined = " ".join(word).strip() if word else prev + " " + ln["text"]
        if word and out.lines and out.lines[-1]["to"] == "paper.md":  # the account follows
            out.lines[-1]["text"] = word[0].lstrip("# ")
        if out.title and joined.startswith("# "):
            out.title = joined[2:]
        return "\n" + joined + "\n"
    if out.title is None:
        out.title = ln["text"]
    return f"\n{'#' * level} {ln['text']}\n"


def body_size(lines: list[dict]) -> float:
    counts: Counter = Counter()
    for ln in lines:
        counts[ln["size"]] += len(ln["text"])
    return counts.most_common(1)[0][0] if counts else 10.0


def page_items(page) -> dict:
    """The page's text lines (by block, tables' cells left out), its tables and its
    graphics (drawing clusters and images that are not tables)."""
    import pymupdf

    pymupdf.no_recommend_layout()  # find_tables' advice on stdout is not for our user
    raw = text_lines(page)
    tables = found_tables(page.find_tables(), raw)
    for rect in page.cluster_drawings():  # a small table beside others is found alone
        if not any(overlap(pymupdf.Rect(rect), t["rect"]) > 0.3 for t in tables):
            clip = pymupdf.Rect(rect) + (-2, -2, 2, 2)
            tables += found_tables(page.find_tables(clip=clip), raw)
    for ln in raw:  # a table without vertical rules: beside its caption
        if TABLE_CAPTION.match(ln["text"]) and not any(near_table(ln, t) for t in tables):
            tables += caption_table(page, ln, raw)
    lines = [ln for ln in raw if not any(t["rect"].contains(middle(ln["rect"])) for t in tables)]
    area = page.rect.width * page.rect.height
    rects = [pymupdf.Rect(r) for r in page.cluster_drawings()]
    rects += [pymupdf.Rect(i["bbox"]) & page.rect for i in page.get_image_info()]
    rects = [r for r in rects if 0.01 * area < r.width * r.height < 0.8 * area]
    rects = [r for r in rects if not any(overlap(r, t["rect"]) > 0.3 for t in tables)]
    rects = [r for r in rects if not any(o != r and o.contains(r) for o in rects)]
    drawings = page.get_drawings()
    boxes = [d["rect"] for d in drawings if d["items"] and d["items"][0][0] == "re"]
    graphics = []
    for rect, panels in merge_panels(rects):
        first = min(panels, key=lambda r: (round(r.y0 / 20), r.x0))  # panel (a)
        graphics.append({"rect": rect, "panel": first, "frame": plot_frame(first, boxes)})
    return {"lines": lines, "tables": tables, "graphics": graphics, "drawings": drawings}


def text_lines(page) -> list[dict]:
    import pymupdf

    flags = pymupdf.TEXTFLAGS_DICT & ~pymupdf.TEXT_PRESERVE_LIGATURES  # "ﬁ" read as "fi"
    lines, prev = [], None
    for line, spans, number in page_lines(page.get_text("dict", flags=flags)["blocks"]):
        text = line_text(spans)
        if not text:
            continue
        size = round(max(s["size"] for s in spans), 1)
        rect = pymupdf.Rect(line["bbox"])
        for s in spans:
            rect |= s["bbox"]
        ln = {"text": text, "size": size, "rect": rect, "block": number, "spans": spans}
        ln["horizontal"] = abs(line["dir"][0]) > 0.9
        inked = [s for s in spans if s["text"].strip()]
        ln["bold"] = bool(inked) and all(s["flags"] & 16 or "Bold" in s["font"] for s in inked)
        ln["continues"] = continues(prev, ln)
        lines.append(ln)
        prev = ln
    return lines


def near_table(caption: dict, table: dict) -> bool:
    c, t = caption["rect"], table["rect"]
    return min(abs(t.y0 - c.y1), abs(c.y0 - t.y1)) < 3 * caption["size"]


def caption_table(page, caption: dict, lines: list[dict]) -> list[dict]:
    """The table below (else above) a table caption without vertical rules: the lines
    of its column between the caption and the nearest sentence (or the caption of a
    figure), read as cells; none when they do not make two rows of two columns."""
    import pymupdf

    c, width = caption["rect"], page.rect.width
    x0, x1 = (0, width)
    if c.x1 < width / 2 + 10:
        x0, x1 = 0, width / 2
    elif c.x0 >= width / 2 - 10:
        x0, x1 = width / 2, width
    col = [ln for ln in lines if ln is not caption and x0 <= middle(ln["rect"]).x <= x1]
    stops = [
        ln for ln in col if len(ln["text"].split()) > LABEL_WORDS or FIG_CAPTION.match(ln["text"])
    ]
    below = min((ln["rect"].y0 for ln in stops if ln["rect"].y0 > c.y1), default=page.rect.y1)
    above = max((ln["rect"].y1 for ln in stops if ln["rect"].y1 < c.y0), default=0)
    for y0, y1 in ((c.y1, below), (above, c.y0)):
        region = pymupdf.Rect(x0, y0, x1, y1)
        inside = [ln for ln in col if region.contains(middle(ln["rect"])) and ln["horizontal"]]
        rows = table_rows(inside)
        if len(rows) >= 2 and len(rows[0]) >= 2:
            rect = union(inside)
            if near_table(caption, {"rect": rect}):
                return [{"kind": "table", "rect": rect + (-1, -1, 1, 1), "rows": rows}]
    return []


def middle(rect):
    import pymupdf

    return pymupdf.Point((rect.x0 + rect.x1) / 2, (rect.y0 + rect.y1) / 2)


def found_tables(finder, lines: list[dict]) -> list[dict]:
    """The ruled tables `find_tables` found that have text in most cells (a plot's frame
    and grid lines read as a table of empty cells), their cells read from `lines`."""
    import pymupdf

    out = []
    for tab in finder.tables:
        rows = [[norm(c or "") for c in row] for row in tab.extract()]
        rows = [r for r in rows if any(r)]
        cells = [c for r in rows for c in r]
        filled = sum(1 for c in cells if c) / max(len(cells), 1)
        if len(rows) >= 2 and max(len(r) for r in rows) >= 2 and filled >= 0.6:
            rect = pymupdf.Rect(tab.bbox)
            inside = [ln for ln in lines if rect.contains(middle(ln["rect"]))]
            out.append({"kind": "table", "rect": rect, "rows": table_rows(inside) or rows})
    return out


def continues(prev: dict | None, ln: dict) -> bool:
    """A line directly below one of the same size (a heading printed on two lines)."""
    if prev is None or abs(prev["size"] - ln["size"]) > 0.1:
        return False
    gap = ln["rect"].y0 - prev["rect"].y1
    return -0.5 * ln["size"] < gap < 0.8 * ln["size"]


def overlap(r, other) -> float:
    """The share of `r`'s area that `other` covers."""
    inter = r & other
    a = r.width * r.height
    return 0.0 if inter.is_empty or not a else inter.width * inter.height / a


def merge_panels(rects: list) -> list[tuple]:
    """Graphics side by side or stacked with a narrow gap are panels of one figure:
    (the figure's rectangle, its panels)."""
    groups = [(r, [r]) for r in sorted(rects, key=lambda r: (r.y0, r.x0))]
    merged = True
    while merged:
        merged = False
        for i, (a, pa) in enumerate(groups):
            for j in range(i + 1, len(groups)):
                b, pb = groups[j]
                if (a + (-14, -14, 14, 14)).intersects(b):
                    groups[i] = (a | b, pa + pb)
                    del groups[j]
                    merged = True
                    break
            if merged:
                break
    return groups


def plot_frame(region, frames: list):
    """The axes box inside a figure's drawings: the largest rectangle drawn inside it
    that is not its background (a figure region drawn on a white sheet)."""
    area = region.width * region.height
    inner = [f for f in frames if region.contains(f) and 0.2 * area < f.width * f.height]
    inner = [f for f in inner if f.width * f.height < 0.85 * area]
    return max(inner, key=lambda f: f.width * f.height, default=region)


def place_figures(
    page, pno: int, items: dict, body: float, done: list[dict], fig_dir: Path
) -> list[dict]:
    """Each graphic with its caption (by number and nearness) and its label text; the
    image is the graphic and that text, never a neighbouring paragraph. The figures'
    lines leave `items['lines']`; the figure dicts are appended to `done`."""
    lines = items["lines"]
    caps = caption_blocks(lines)
    graphics = items["graphics"]
    gaps = [
        (caption_gap(g, c, page.rect.height), gi, ci)
        for gi, g in enumerate(graphics)
        for ci, c in enumerate(caps)
    ]
    pairs = sorted(p for p in gaps if p[0] is not None)
    chosen: dict[int, int] = {}
    for _gap, gi, ci in pairs:
        if gi not in chosen and ci not in chosen.values():
            chosen[gi] = ci
    out = []
    for gi, g in enumerate(graphics):
        cap = caps[chosen[gi]] if gi in chosen else None
        taken = figure_text(g, lines, body, cap, page.rect.width)
        for ln in taken:  # a line is one figure's, never two
            lines.remove(ln)
        clip = g["rect"]
        for ln in taken:
            clip = clip | ln["rect"]
        clip = (clip + (-2, -2, 2, 2)) & page.rect
        fid = figure_id(cap, pno, gi, done + out)
        image = f"figures/{fid}.png"
        fig = {"figure_id": fid, "image": image, "caption": cap["text"] if cap else None}
        fig |= axis_labels(g, taken)
        found = frames(page, g["rect"], items["drawings"])
        fig["panels"] = [
            read_panel(f, taken, items["drawings"], [o for o in found if o != f]) for f in found
        ]
        if len(fig["panels"]) == 1:  # one plot: its own labels, read frame by frame
            fig |= {k: v for k, v in fig["panels"][0].items() if k != "curves"}
        fig["text_lines"], fig["clip"] = taken, clip
        out.append(fig)
    for fig in out:
        clip = fig.pop("clip")
        page.get_pixmap(clip=clip, matrix=render_matrix(clip)).save(
            fig_dir / Path(fig["image"]).name
        )
    done.extend(out)
    return out


def render_matrix(clip):
    """150 dpi, or less (below 1 dpi if need be: a page may declare itself kilometres
    wide) where that would make an image of more than MAX_PIXELS."""
    inches = max(clip.width * clip.height / 72**2, 1e-9)
    import pymupdf

    dpi = min(150.0, 0.995 * (MAX_PIXELS / inches) ** 0.5)  # pixels round up
    return pymupdf.Matrix(dpi / 72, dpi / 72)


def figure_id(cap: dict | None, pno: int, gi: int, done: list[dict]) -> str:
    """fig<N> from the caption's number; without one, an id naming the page."""
    ids = {f["figure_id"] for f in done}
    fid = f"fig{cap['number']}" if cap else f"figure_p{pno}_{gi + 1}"
    n, base = 2, fid
    while fid in ids:  # a number printed twice keeps both images
        fid, n = f"{base}_{n}", n + 1
    return fid


def caption_blocks(lines: list[dict]) -> list[dict]:
    """Figure captions: a paragraph that starts 'Fig. N.' / 'Figure N:' (not a sentence
    that mentions a figure), with the lines that continue it."""
    caps = []
    for i, ln in enumerate(lines):
        m = FIG_CAPTION.match(ln["text"])
        first = i == 0 or lines[i - 1]["block"] != ln["block"] or not continuing(lines[i - 1], ln)
        if not m or not first:
            continue
        part = [ln]
        for nxt in lines[i + 1 :]:
            if not continuing(part[-1], nxt) or FIG_CAPTION.match(nxt["text"]):
                break
            part.append(nxt)
        rect = part[0]["rect"]
        for p in part:
            rect = rect | p["rect"]
        text = " ".join(p["text"] for p in part)
        caps.append({"number": int(m[1]), "text": text, "rect": rect, "lines": part})
    return caps


def continuing(prev: dict, ln: dict) -> bool:
    """`ln` is the next line of `prev`'s paragraph: same size, just below, same column."""
    gap = ln["rect"].y0 - prev["rect"].y1
    same_col = abs(ln["rect"].x0 - prev["rect"].x0) < 3 * ln["size"]
    same_size = abs(ln["size"] - prev["size"]) < 0.2
    return same_size and -0.5 * ln["size"] < gap < ln["size"] and same_col


def caption_gap(graphic: dict, cap: dict, page_h: float) -> float | None:
    """How far a caption is from a graphic right below or above it, sharing some of its
    width (a caption set flush left under a centred figure shares little); None when the
    caption is not beside it."""
    r, c = graphic["rect"], cap["rect"]
    shared = (min(r.x1, c.x1) - max(r.x0, c.x0)) / max(min(c.width, r.width), 1)
    if shared <= 0:
        return None
    gap = c.y0 - r.y1 if c.y0 >= r.y1 - 12 else r.y0 - c.y1
    return gap + 30 * (1 - min(shared, 1)) if -12 <= gap < 0.2 * page_h else None


def figure_text(graphic: dict, lines: list[dict], body: float, cap, page_w: float) -> list:
    """The lines that are the figure's own text: inside the graphic, or beside it as a
    label (small type, a short phrase, its whole paragraph near the graphic)."""
    r = graphic["rect"]
    near = r + (-0.1 * page_w, -0.03 * page_w, 0.1 * page_w, 0.05 * page_w)
    mid = page_w / 2
    if r.x1 <= mid + 10:  # a figure in one column: its labels stay in that column
        near = near & (0, near.y0, mid, near.y1)
    elif r.x0 >= mid - 10:
        near = near & (mid, near.y0, page_w, near.y1)
    cap_lines = cap["lines"] if cap else []
    by_block: dict[int, list] = {}
    for ln in lines:
        by_block.setdefault(ln["block"], []).append(ln)
    taken = []
    for ln in lines:
        if ln in cap_lines or FIG_CAPTION.match(ln["text"]) or TABLE_CAPTION.match(ln["text"]):
            continue
        if r.contains(middle(ln["rect"])):
            taken.append(ln)
            continue
        block = by_block[ln["block"]]
        label = all(
            near.contains(b["rect"])
            and len(b["text"].split()) < LABEL_WORDS
            and not is_heading(b, body)
            for b in block
        )
        if label and not (cap and between(ln["rect"], r, cap["rect"])):
            taken.append(ln)
    return taken


def between(rect, graphic, caption) -> bool:
    """`rect` lies on the caption's side of the graphic, past the caption's edge."""
    if caption.y0 >= graphic.y1 - 12:
        return rect.y0 >= caption.y0 - 1
    return rect.y1 <= caption.y1 + 1


def axis_labels(graphic: dict, taken: list[dict]) -> dict:
    """Axis labels and legend read from a vector figure's own text: the longest phrase
    below the plot (x), rotated left of it (left y) and right of it (right y); the
    phrases inside it are the legend."""
    frame, panel = graphic["frame"], graphic["panel"]
    if panel != graphic["rect"]:  # panels: the axes of panel (a), beside it
        own = panel + (-60, -10, 10, 40)
        taken = [ln for ln in taken if own.contains(middle(ln["rect"]))]
    words = [ln for ln in joined(taken) if not NUMBER.match(ln["text"])]
    xs = [ln for ln in words if ln["horizontal"] and ln["rect"].y0 >= frame.y1 - 2]
    left = [ln for ln in words if not ln["horizontal"] and ln["rect"].x1 <= frame.x0 + 2]
    right = [ln for ln in words if not ln["horizontal"] and ln["rect"].x0 >= frame.x1 - 2]
    inside = [ln for ln in words if ln["horizontal"] and frame.contains(middle(ln["rect"]))]
    legend = [ln["text"] for ln in inside if not PANEL.match(ln["text"])]

    def pick(c):
        return max(c, key=lambda ln: len(ln["text"]))["text"] if c else None

    return {"x_label": pick(xs), "y_label": pick(left), "y_right": pick(right), "legend": legend}


def joined(lines: list[dict]) -> list[dict]:
    """Pieces of one phrase set on one baseline (a glyph from a maths font is often a
    line of its own) joined into one line."""
    flat = sorted(
        (ln for ln in lines if ln["horizontal"]),
        key=lambda ln: (round(ln["rect"].y1 / 3), ln["rect"].x0),
    )
    out: list[dict] = []
    for ln in flat:
        last = out[-1] if out else None
        if (
            last
            and abs(last["rect"].y1 - ln["rect"].y1) < 0.35 * ln["size"]
            and 0 <= ln["rect"].x0 - last["rect"].x1 < 0.6 * ln["size"]
        ):
            gap = " " if ln["rect"].x0 - last["rect"].x1 > 0.15 * ln["size"] else ""
            last = {**last, "text": last["text"] + gap + ln["text"]}
            last["rect"] = out[-1]["rect"] | ln["rect"]
            out[-1] = last
        else:
            out.append(dict(ln))
    return out + [ln for ln in lines if not ln["horizontal"]]


def reading_order(items: dict, page_w: float) -> list[dict]:
    """Paragraphs and tables in reading order: what spans the page splits it into
    bands; in each band the left column, then the right."""
    blocks: dict[int, list] = {}
    for ln in items["lines"]:
        blocks.setdefault(ln["block"], []).append(ln)
    things = [{"kind": "text", "lines": b, "rect": union(b)} for b in blocks.values()]
    things += items["tables"]
    mid = page_w / 2

    def full(t):
        return t["rect"].x0 < mid - 10 and t["rect"].x1 > mid + 10

    spans = sorted((t for t in things if full(t)), key=lambda t: t["rect"].y0)

    def key(t):
        seg = sum(1 for s in spans if s is not t and s["rect"].y1 <= t["rect"].y0 + 2)
        if full(t):
            return (seg, 2, 0, t["rect"].y0, t["rect"].x0)
        return (seg, 1, t["rect"].x0 >= mid - 10, t["rect"].y0, t["rect"].x0)

    return sorted(things, key=key)


def union(lines: list[dict]):
    rect = lines[0]["rect"]
    for ln in lines[1:]:
        rect = rect | ln["rect"]
    return rect


def table_markdown(table: dict) -> str:
    rows = table["rows"]
    width = max(len(r) for r in rows)
    rows = [r + [""] * (width - len(r)) for r in rows]
    out = ["", "| " + " | ".join(rows[0]) + " |", "|" + "---|" * width]
    out += ["| " + " | ".join(r) + " |" for r in rows[1:]]
    return "\n".join(out) + "\n"


def table_offers(tables: list[dict], markdown: str) -> tuple[list[dict], list[dict]]:
    """(tables:, key_values:) offered for the paper folder: a table of modes as a
    `tables:` entry, every other table's numbers as key values."""
    numbers = [m[1] for m in re.finditer(r"(?m)^Table\s*(\d+|[IVX]+)\b", markdown, re.I)]
    offered, values = [], []
    for i, table in enumerate(tables):
        label = numbers[i] if i < len(numbers) else str(i + 1)
        caption = next(
            (m[0] for m in re.finditer(rf"(?m)^Table\s*{label}\b.*$", markdown, re.I)), ""
        )
        entry = mode_table(table["rows"], f"tab{roman_value(label)}", caption.strip())
        if entry:
            offered.append(entry)
        else:
            values += key_values(table["rows"], f"Table {label}")
    return offered, values


def roman_value(label: str) -> int:
    if label.isdigit():
        return int(label)
    return {"I": 1, "II": 2, "III": 3, "IV": 4, "V": 5, "VI": 6, "VII": 7, "VIII": 8}.get(
        label.upper(), 0
    )


def write_account(folder: Path, source: str, lines: list[dict]) -> None:
    data = {"source": source, "lines": lines}
    (folder / ACCOUNT).write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n")


def unplaced(folder: Path) -> list[tuple[str, str]]:
    """Text of the source PDF that is neither in the paper text nor in a figure image
    that exists: (file, message) per line, for `reprolab check` and `new-paper`."""
    path = folder / ACCOUNT
    if not path.is_file():
        return []
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        lines = data["lines"]
        md_path = folder / "paper.md"
        md = norm(md_path.read_text(encoding="utf-8")) if md_path.is_file() else ""
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return [(str(path), f"cannot be read ({exc}); it lists where the PDF's text went")]
    problems = []
    for ln in lines:
        text, to = ln.get("text", ""), ln.get("to", "")
        if to == "paper.md" and norm(text) in md:
            continue
        if to.startswith("figures/") and (folder / to).is_file():
            continue
        if to == RUNNING:
            continue
        where = "paper.md" if to == "paper.md" else f"the image {to}"
        problems.append(
            (
                str(folder / "paper.md"),
                f"text of page {ln.get('page')} of {data.get('source')} is not in {where}: "
                f"{text[:80]!r} (put it back, or delete its entry in {ACCOUNT})",
            )
        )
    return problems
