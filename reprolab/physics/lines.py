"""Narrow lines of a curve: resonances judged against their own linewidth.

A line is a peak or dip (its width the full width at half prominence) or a Fano line:
an isolated, adjacent dip and peak, fitted with

    y = c + A (q + e)² / (1 + e²),   e = 2 (x - x0) / w

whose position is the resonance x0 and whose width is w (the FWHM of the underlying
Lorentzian), not the dip or the peak (they sit w/2 · (q + 1/q) apart, either side of it).
Where the paper states a line's Q (a curve's `lines` in metadata), its linewidth is
position / Q and the reproduced line is compared as Q.

A paper line is narrow where its linewidth is below the ordinary position tolerance
(`thresholds.NARROW_LINE_TOLERANCES`): then its shift is measured in linewidths
(`thresholds.LINE_SHIFT`) and its width error relative to its width
(`thresholds.LINE_WIDTH`). Broad features keep the ordinary rule only.
"""

from __future__ import annotations

import math

from reprolab.physics import positions
from reprolab.physics import thresholds as th

# A dip and a peak are one Fano line where they are this close compared with the next
# feature on either side (a Fabry-Perot fringe's peaks and dips are evenly spaced: never
# paired), no farther apart than this many of their widths, and of widths within this
# ratio (a Fano line's dip and peak differ by 3.8x at q = 0.3 or 1/0.3; a narrow dip on
# a broad band's shoulder is a line of its own).
FANO_ISOLATION = 0.5
FANO_PAIR_WIDTHS = 3.0
FANO_WIDTH_RATIO = 4.0
# A Fano fit is kept where it explains this fraction of the variance of its window.
FANO_FIT_R2 = 0.9
# A stated line (x, Q) belongs to the paper's line nearest x within this many of its
# stated linewidths (or one ordinary tolerance, whichever is larger).
STATED_MATCH_LINEWIDTHS = 3.0


def fano(x, x0: float, width: float, q: float, c: float, a: float):
    import numpy as np

    e = 2.0 * (np.asarray(x, float) - x0) / width
    return c + a * (q + e) ** 2 / (1.0 + e**2)


def fit_fano(x, y, dip: dict, peak: dict, lo: float, hi: float) -> dict:
    """x0, width and q of the Fano line of `dip` and `peak`, fitted on [lo, hi]; where
    the fit fails or explains under FANO_FIT_R2 of the window, the midpoint and the
    separation (exact for q = ±1) with `shape` saying so."""
    import numpy as np
    from scipy.optimize import curve_fit

    sep = abs(peak["x"] - dip["x"])
    mid = 0.5 * (peak["x"] + dip["x"])
    q0 = 1.0 if peak["x"] > dip["x"] else -1.0
    fallback = {"x": mid, "width": sep, "q": q0, "shape": "fano (peak-dip midpoint)"}
    x, y = np.asarray(x, float), np.asarray(y, float)
    inside = (x >= lo) & (x <= hi)
    xw, yw = x[inside], y[inside]
    if len(xw) < 6 or sep <= 0:
        return fallback
    p0 = [mid, sep, q0, dip["y"], max((peak["y"] - dip["y"]) / 2, 1e-12)]
    bounds = (
        [lo, sep * 1e-3, -100.0, -np.inf, 0.0],
        [hi, 10 * sep + (hi - lo), 100.0, np.inf, np.inf],
    )
    try:
        p, _ = curve_fit(fano, xw, yw, p0=p0, bounds=bounds, maxfev=20000)
    except (RuntimeError, ValueError):
        return fallback
    residual = float(np.sum((fano(xw, *p) - yw) ** 2))
    total = float(np.sum((yw - yw.mean()) ** 2)) or 1.0
    if 1.0 - residual / total < FANO_FIT_R2:
        return fallback
    return {"x": float(p[0]), "width": float(abs(p[1])), "q": float(p[2]), "shape": "fano fit"}


def find_lines(x, y, features: list[dict]) -> list[dict]:
    """The lines of a curve from its features (compare.find_features, in order of x):
    isolated dip-peak pairs as Fano lines, every other feature as a line of its own.
    Each line: kind (peak | dip | fano), x, width, shape (how x and width were found)."""
    lines, i, n = [], 0, len(features)
    xs = [f["x"] for f in features]
    while i < n:
        f = features[i]
        if i + 1 < n and _fano_pair(xs, features, i):
            g = features[i + 1]
            dip, peak = (f, g) if f["kind"] == "dip" else (g, f)
            sep = abs(g["x"] - f["x"])
            lo = max(f["x"] - 3 * sep, _midway(xs, i, -1))
            hi = min(g["x"] + 3 * sep, _midway(xs, i + 1, +1))
            fit = fit_fano(x, y, dip, peak, lo, hi)
            lines.append({"kind": "fano", "y": peak["y"], **fit})
            i += 2
            continue
        shape = "half prominence"
        lines.append(
            {"kind": f["kind"], "x": f["x"], "y": f["y"], "width": f["width"], "shape": shape}
        )
        i += 1
    return lines


def _midway(xs: list[float], i: int, side: int) -> float:
    j = i + side
    if j < 0 or j >= len(xs):
        return -math.inf if side < 0 else math.inf
    return 0.5 * (xs[i] + xs[j])


def _fano_pair(xs: list[float], features: list[dict], i: int) -> bool:
    f, g = features[i], features[i + 1]
    if {f["kind"], g["kind"]} != {"peak", "dip"}:
        return False
    sep = xs[i + 1] - xs[i]
    left = xs[i] - xs[i - 1] if i > 0 else math.inf
    right = xs[i + 2] - xs[i + 1] if i + 2 < len(xs) else math.inf
    wide, thin = sorted((f["width"] or 0.0, g["width"] or 0.0), reverse=True)
    if thin <= 0 or wide > FANO_WIDTH_RATIO * thin:
        return False
    return sep <= FANO_ISOLATION * min(left, right) and sep <= FANO_PAIR_WIDTHS * wide


def ordinary_tolerance(x0: float, x_range: tuple[float, float], axis: dict | None) -> float:
    """How far a feature at x0 may move under the ordinary rule (SUCCESS limit)."""
    scale, _ = positions.position_scale(x0, x_range[0], x_range[1], axis)
    return scale * th.DISCREPANCY_THRESHOLDS[0].acceptable


def stated_lines(axis: dict | None) -> list[dict]:
    return list((axis or {}).get("lines") or [])


def paper_lines(lines: list[dict], x_range, axis: dict | None) -> list[dict]:
    """The paper's lines judged in linewidths: narrow ones, and those whose Q the paper
    states (the stated linewidth x / Q replaces the measured one)."""
    out = []
    for line in lines:
        tol = ordinary_tolerance(line["x"], x_range, axis)
        out.append(
            line
            | {
                "tolerance": tol,
                "linewidth": line["width"],
                "linewidth_from": line["shape"],
            }
        )
    for stated in stated_lines(axis):
        width = abs(stated["x"]) / stated["q"]
        tol = ordinary_tolerance(stated["x"], x_range, axis)
        reach = max(STATED_MATCH_LINEWIDTHS * width, tol)
        near = [line for line in out if abs(line["x"] - stated["x"]) <= reach]
        if not near:
            raise ValueError(
                f"the curve states a line at x = {stated['x']:g} (Q {stated['q']:g}) but its "
                f"digitized data has no peak, dip or Fano line within {reach:.3g} of it; "
                "valid: the position of a line the data shows, in the figure's x unit"
            )
        line = min(near, key=lambda c: abs(c["x"] - stated["x"]))
        line.update(q_paper=float(stated["q"]), linewidth=width, linewidth_from="stated Q")
    factor = th.NARROW_LINE_TOLERANCES
    return [
        line | {"narrow": line["linewidth"] < factor * line["tolerance"]}
        for line in out
        if line["linewidth"] < factor * line["tolerance"] or "q_paper" in line
    ]


def match_lines(paper: list[dict], sim: list[dict], axis: dict | None) -> list[dict]:
    """Each judged paper line with the nearest reproduced line of its kind: its shift in
    the paper's linewidths, its width error in linewidths, and Q where the paper states it."""
    turn = positions.period(axis)
    out = []
    for pl in paper:
        entry = {
            "kind": pl["kind"],
            "x_paper": pl["x"],
            "linewidth_paper": pl["linewidth"],
            "linewidth_from": pl["linewidth_from"],
            "narrow": pl["narrow"],
            "tolerance": pl["tolerance"],
        }
        if "q_paper" in pl:
            entry["q_paper"] = pl["q_paper"]
        candidates = [s for s in sim if s["kind"] == pl["kind"]]
        if not candidates:
            out.append(entry | {"x_sim": None, "width_sim": None, "shift_linewidths": math.nan})
            continue
        sl = min(candidates, key=lambda c: positions.distance(c["x"], pl["x"], turn))
        entry |= {
            "x_sim": sl["x"],
            "width_sim": sl["width"],
            "shape_sim": sl["shape"],
            "shift_linewidths": positions.distance(sl["x"], pl["x"], turn) / pl["linewidth"],
        }
        if "q_paper" in pl:
            q_sim = abs(sl["x"]) / sl["width"] if sl["width"] else math.inf
            entry |= {"q_sim": q_sim, "q_log10": abs(math.log10(q_sim / pl["q_paper"]))}
        else:
            entry["width_linewidths"] = abs(sl["width"] - pl["linewidth"]) / pl["linewidth"]
        out.append(entry)
    return out


def _largest(values: list[float]) -> float | None:
    if not values:
        return None
    if any(math.isnan(v) for v in values):
        return math.nan  # an unmatched line is never hidden by a matched one
    return max(values)


def line_metrics(entries: list[dict]) -> dict[str, float | None]:
    """The line metrics (thresholds.LINE_BANDS) of a curve; only those that apply."""
    narrow = [e for e in entries if e["narrow"]]
    values = {
        th.LINE_SHIFT.metric: _largest([e["shift_linewidths"] for e in narrow]),
        th.LINE_WIDTH.metric: _largest(
            [e.get("width_linewidths", math.nan) for e in narrow if "q_paper" not in e]
        ),
        th.LINE_Q.metric: _largest([e.get("q_log10", math.nan) for e in entries if "q_paper" in e]),
    }
    return {k: v for k, v in values.items() if v is not None}


def compare_lines(xp, yp, paper_features, xs, ys, sim_features, x_range, axis) -> dict:
    """`lines` (matched entries) and their `metrics` for compare.compare_curve; both
    empty where the paper's curve has no narrow line and states no Q."""
    judged = paper_lines(find_lines(xp, yp, paper_features), x_range, axis)
    if not judged:
        return {"lines": [], "metrics": {}}
    entries = match_lines(judged, find_lines(xs, ys, sim_features), axis)
    return {"lines": entries, "metrics": line_metrics(entries)}


def line_reasons(curve: dict) -> list[str]:
    """Each judged line that is not SUCCESS, in words (the report's 'why' lines)."""
    out = []
    for i, e in enumerate(curve.get("lines", [])):
        where = f"{e['kind']} line {i} at x = {e['x_paper']:.6g}"
        if e.get("x_sim") is None:
            out.append(f"{where}: no reproduced {e['kind']} line to match (FAILURE)")
            continue
        if e["narrow"]:
            cls = th.classify_value(th.LINE_SHIFT, e["shift_linewidths"])
            if cls != "SUCCESS":
                out.append(
                    f"{where} reproduced at {e['x_sim']:.6g}: {e['shift_linewidths']:.3g} "
                    f"linewidths off ({cls}; SUCCESS within {th.LINE_SHIFT.acceptable:g}, "
                    f"PARTIAL within {th.LINE_SHIFT.investigate:g} linewidths of "
                    f"{e['linewidth_paper']:.3g}, {e['linewidth_from']})"
                )
        if "q_log10" in e and th.classify_value(th.LINE_Q, e["q_log10"]) != "SUCCESS":
            out.append(
                f"{where}: Q {e['q_sim']:.4g} reproduced, {e['q_paper']:.4g} stated "
                f"(|log10 ratio| {e['q_log10']:.3g}, SUCCESS up to {th.LINE_Q.acceptable:g})"
            )
        width = e.get("width_linewidths")
        if width is not None and th.classify_value(th.LINE_WIDTH, width) != "SUCCESS":
            out.append(
                f"{where}: width {e['width_sim']:.3g} reproduced, {e['linewidth_paper']:.3g} "
                f"in the paper ({width:.3g} linewidths, SUCCESS up to "
                f"{th.LINE_WIDTH.acceptable:g})"
            )
    return out


# The numbers a judged line carries, as computed_numbers names them.
LINE_QUANTITIES = (
    "x_paper",
    "x_sim",
    "linewidth_paper",
    "width_sim",
    "shift_linewidths",
    "width_linewidths",
    "q_paper",
    "q_sim",
    "q_log10",
)


def line_numbers(base: str, curve: dict) -> dict[str, float]:
    """`<base>.line<i>.<kind>.<quantity>` for every number of the curve's judged lines."""
    out = {}
    for i, e in enumerate(curve.get("lines", [])):
        for name in LINE_QUANTITIES:
            if isinstance(e.get(name), (int, float)):
                out[f"{base}.line{i}.{e['kind']}.{name}"] = e[name]
    return out


def recheck_lines(where: str, stored: list[dict], fresh: list[dict], close) -> list[str]:
    """Stored judged lines against recomputed ones (`close`: compare's number test)."""
    if len(stored) != len(fresh):
        return [f"{where}: {len(stored)} lines stored, {len(fresh)} recomputed"]
    out = []
    for i, (old, new) in enumerate(zip(stored, fresh, strict=True)):
        for name, value in new.items():
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                if not close(old.get(name), value):
                    out.append(
                        f"{where}: line {i} {name} stored {old.get(name)}, recomputed {value}"
                    )
            elif old.get(name) != value:
                out.append(f"{where}: line {i} {name} differs")
    return out


# Around a narrow line (within LINE_WINDOW of its linewidths) a paper point's difference
# is the smallest |y_run(x') - y_paper(x)| over x' within the shift LINE_SHIFT accepts:
# on a line's flank a shift of a fifth of a linewidth moves y by half the line's height,
# which would fail max_abs_rel for a line the shift rule passes. Heights still count.
LINE_WINDOW = 5.0
SLACK_SAMPLES = 41


def with_slack(diff, xp, yp, xs, ys, entries: list[dict]):
    """`diff` (reproduction - paper at xp) with the x slack of each narrow line applied
    near it; unchanged where the curve has no narrow line."""
    import numpy as np

    narrow = [e for e in entries if e["narrow"]]
    if not narrow:
        return diff
    out = np.abs(np.asarray(diff, float))
    xp, yp = np.asarray(xp, float), np.asarray(yp, float)
    offsets = np.linspace(-1.0, 1.0, SLACK_SAMPLES)
    for e in narrow:
        width = e["linewidth_paper"]
        near = np.abs(xp - e["x_paper"]) <= LINE_WINDOW * width
        if not near.any():
            continue
        xq = xp[near][:, None] + th.LINE_SHIFT.acceptable * width * offsets[None, :]
        inside = (xq >= xs[0]) & (xq <= xs[-1])
        gaps = np.where(inside, np.abs(np.interp(xq, xs, ys) - yp[near][:, None]), np.inf)
        out[near] = np.minimum(out[near], gaps.min(axis=1))
    return out
