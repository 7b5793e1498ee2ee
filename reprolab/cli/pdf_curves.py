"""A vector figure read as data: its panels (the plot frames drawn inside it), each
panel's axis labels and tick labels, and its curves taken from the PDF's own drawing
paths, mapped to data by the tick labels (linear, or logarithmic where the ticks are
powers). The curves are offered as digitized CSVs for the researcher to confirm; a
panel whose axes cannot be calibrated from two ticks each gives labels but no data."""

from __future__ import annotations

import math
import re

from reprolab.cli.pdf_tables import number

PANEL = re.compile(r"^\(?[a-h]\)$")
MIN_POINTS = 5  # a path with fewer points is a marker, a tick or a legend sample


def frames(page, rect, drawings: list[dict]) -> list:
    """The plot frames inside a figure's rectangle: drawn rectangles, or a left and a
    bottom axis line meeting in a corner (a plot without a box), that are a sizeable
    share of it, left to right, top down."""
    import pymupdf

    area = rect.width * rect.height
    boxes = [pymupdf.Rect(d["rect"]) for d in drawings if d["items"] and d["items"][0][0] == "re"]
    found = []
    for r in boxes + axis_corners(rect, drawings):
        if not within(r, rect + (-2, -2, 2, 2)):
            continue
        same = any(abs(r.x0 - f.x0) < 1 and abs(r.y1 - f.y1) < 1 for f in found)
        if 0.04 * area < r.width * r.height and not same:
            found.append(r)

    def size(r):
        return r.width * r.height

    # a background around a plot (a figure's own sheet) gives way to the plot; a box
    # inside a plot (a legend, an inset) is part of it
    found = [
        f for f in found if sum(size(o) for o in found if o != f and f.contains(o)) <= 0.3 * size(f)
    ]
    found = [f for f in found if not any(o != f and o.contains(f) for o in found)]
    return sorted(found, key=lambda f: (round(f.y0 / 20), f.x0))


def axis_corners(rect, drawings: list[dict]) -> list:
    """The frame a vertical and a horizontal line span where they meet bottom left: the
    y and x axes of a plot drawn without a box."""
    import pymupdf

    lines = []
    for d in drawings:
        if len(d["items"]) == 1 and d["items"][0][0] == "l" and d.get("color") is not None:
            a, b = d["items"][0][1], d["items"][0][2]
            lines.append((min(a.x, b.x), min(a.y, b.y), max(a.x, b.x), max(a.y, b.y)))
    upright = [ln for ln in lines if ln[2] - ln[0] < 0.5 and ln[3] - ln[1] > 0.2 * rect.height]
    across = [ln for ln in lines if ln[3] - ln[1] < 0.5 and ln[2] - ln[0] > 0.2 * rect.width]
    return [
        pymupdf.Rect(v[0], v[1], h[2], h[1])
        for v in upright
        for h in across
        if abs(h[0] - v[0]) < 2 and abs(h[1] - v[3]) < 2
    ]


def middle(rect) -> tuple[float, float]:
    return (rect.x0 + rect.x1) / 2, (rect.y0 + rect.y1) / 2


def read_panel(frame, lines: list[dict], drawings: list[dict], others: list) -> dict:
    """One panel: axis labels, legend, and curves in data units where its ticks allow."""
    left_edge = max((o.x1 for o in others if o.x1 <= frame.x0 + 1), default=-1e9)
    below_edge = min((o.y0 for o in others if o.y0 >= frame.y1 - 1), default=1e9)
    right_edge = min((o.x0 for o in others if o.x0 >= frame.x1 - 1), default=1e9)
    xs, ys, right, x_words, y_words, r_words, inside = [], [], [], [], [], [], []
    for ln in lines:
        cx, cy = middle(ln["rect"])
        value = number(ln["text"])
        below = frame.y1 - 2 <= ln["rect"].y0 < below_edge and frame.x0 - 10 < cx < frame.x1 + 10
        leftof = left_edge - 2 < ln["rect"].x0 and ln["rect"].x1 <= frame.x0 + 2
        leftof = leftof and frame.y0 - 10 < cy < frame.y1 + 10
        rightof = frame.x1 - 2 <= ln["rect"].x0
        rightof = rightof and ln["rect"].x0 - frame.x1 < right_edge - ln["rect"].x1
        rightof = rightof and frame.y0 - 10 < cy < frame.y1 + 10
        if value is not None and ln["horizontal"]:
            if below and ln["rect"].y0 < frame.y1 + 3 * ln["size"]:
                xs.append((cx, value))
            elif leftof and frame.x0 - ln["rect"].x1 < ln["rect"].x0 - left_edge:
                ys.append((cy, value))
            elif rightof and ln["rect"].x0 < frame.x1 + 8 * ln["size"]:
                right.append((cy, value))
            continue
        if frame.contains(ln["rect"]) and ln["horizontal"] and not PANEL.match(ln["text"]):
            inside.append(ln)
        elif below and ln["horizontal"]:
            x_words.append(ln)
        elif leftof and not ln["horizontal"]:
            y_words.append(ln)
        elif rightof and not ln["horizontal"] and ln["rect"].x0 < frame.x1 + 60:
            r_words.append(ln)

    def nearest(words, key):
        return min(words, key=key)["text"] if words else None

    panel = {
        "x_label": nearest(x_words, lambda ln: ln["rect"].y0),
        "y_label": nearest(y_words, lambda ln: -ln["rect"].x1),
        "y_right": nearest(r_words, lambda ln: ln["rect"].x0) if right else None,
        "legend": [ln["text"] for ln in inside],
        "curves": [],
    }
    marks_x, marks_y = tick_marks(frame, drawings)
    to_x, to_y = calibration(snapped(xs, marks_x)), calibration(snapped(ys, marks_y))
    if to_x and to_y and not right:  # two y axes: which one a curve uses is the person's call
        panel["curves"] = curves(frame, drawings, inside, to_x, to_y)
    return panel


def tick_marks(frame, drawings: list[dict]) -> tuple[list[float], list[float]]:
    """Where the short tick marks stand on the bottom axis (x) and the left axis (y)."""
    xs, ys = [], []
    for d in drawings:
        if len(d["items"]) != 1 or d["items"][0][0] != "l":
            continue
        a, b = d["items"][0][1], d["items"][0][2]
        upright = abs(a.x - b.x) < 0.1 and abs(a.y - b.y) < 10
        across = abs(a.y - b.y) < 0.1 and abs(a.x - b.x) < 10
        on_bottom = min(abs(a.y - frame.y1), abs(b.y - frame.y1)) < 1
        on_left = min(abs(a.x - frame.x0), abs(b.x - frame.x0)) < 1
        if upright and on_bottom and frame.x0 - 1 <= a.x <= frame.x1 + 1:
            xs.append(a.x)
        elif across and on_left and frame.y0 - 1 <= a.y <= frame.y1 + 1:
            ys.append(a.y)
    return xs, ys


def snapped(labels: list[tuple[float, float]], marks: list[float]) -> list[tuple[float, float]]:
    """Each tick label at the tick mark it is centred on (within 3 pt), which places it
    more exactly than the middle of its text; a label without a mark as it is."""
    out = []
    for pos, value in labels:
        near = min(marks, key=lambda m: abs(m - pos), default=None)
        out.append((near if near is not None and abs(near - pos) < 3 else pos, value))
    return out


def calibration(ticks: list[tuple[float, float]]):
    """Page coordinate -> value from tick labels (position, value): a straight line
    through them, or through their logarithms where that fits better (a log axis); None
    without two distinct values or where neither fits within a tenth of a tick step."""
    ticks = sorted(set(ticks))
    if len({v for _, v in ticks}) < 2:
        return None
    fits = [(fit(ticks, lambda v: v), lambda v: v)]
    if all(v > 0 for _, v in ticks):
        fits.append((fit(ticks, math.log10), lambda v: 10**v))
    best = min((f for f in fits if f[0]), key=lambda f: f[0][2], default=None)
    if best is None or best[0][2] > 0.1:
        return None
    (slope, offset, _), back = best
    return lambda pos: back(slope * pos + offset)


def fit(ticks, scale):
    """Least squares value-scale = slope*pos + offset; its worst error in tick steps."""
    pos = [p for p, _ in ticks]
    val = [scale(v) for _, v in ticks]
    n = len(pos)
    mp, mv = sum(pos) / n, sum(val) / n
    var = sum((p - mp) ** 2 for p in pos)
    if var == 0:
        return None
    slope = sum((p - mp) * (v - mv) for p, v in zip(pos, val, strict=True)) / var
    offset = mv - slope * mp
    step = (max(val) - min(val)) / max(n - 1, 1)
    worst = max(abs(slope * p + offset - v) for p, v in zip(pos, val, strict=True))
    return slope, offset, worst / step if step else math.inf


def curves(frame, drawings: list[dict], legend: list[dict], to_x, to_y) -> list[dict]:
    """Stroked paths inside the frame with enough points, in data units, named by the
    legend entry whose sample line has their colour."""
    import pymupdf

    out, samples = [], []
    for d in drawings:
        r = pymupdf.Rect(d["rect"])
        if d.get("color") is None or not within(r, frame + (-3, -3, 3, 3)):
            continue
        points = path_points(d)
        if len(points) >= MIN_POINTS and r.width > 0.2 * frame.width:
            out.append({"color": d["color"], "points": [(to_x(x), to_y(y)) for x, y in points]})
        elif 2 <= len(points) <= 3 and r.height < 1 and r.width < 0.2 * frame.width:
            samples.append((r, d["color"]))
    for i, c in enumerate(out):
        name = None
        for r, color in samples:
            if color == c["color"]:
                right = [ln for ln in legend if 0 <= ln["rect"].x0 - r.x1 < 20]
                right = [ln for ln in right if abs(middle(ln["rect"])[1] - r.y0) < ln["size"]]
                name = right[0]["text"] if right else name
        c["label"] = name or f"curve {i + 1}"
    return out


def within(r, box) -> bool:
    """`r` inside `box`, a line's zero-height rectangle included (which PyMuPDF calls
    empty and so contained nowhere)."""
    return box.x0 <= r.x0 and r.x1 <= box.x1 and box.y0 <= r.y0 and r.y1 <= box.y1


def path_points(d: dict) -> list[tuple[float, float]]:
    """The vertices of a path made of straight segments, in order; [] if it has curves
    (a marker's outline)."""
    points: list[tuple[float, float]] = []
    for item in d["items"]:
        if item[0] != "l":
            return []
        a, b = item[1], item[2]
        if not points or (abs(points[-1][0] - a.x) > 1e-6 or abs(points[-1][1] - a.y) > 1e-6):
            points.append((a.x, a.y))
        points.append((b.x, b.y))
    return points


def csv_text(points: list[tuple[float, float]]) -> str:
    """x,y rows: the header states no unit, so the figure's axis units apply."""
    return "x,y\n" + "".join(f"{x:.6g},{y:.6g}\n" for x, y in points)
