"""Quantitative comparison of a reproduced curve with the paper's digitized data.

All numbers an analysis cites are computed here; the classification reads the
canonical thresholds in `reprolab.physics.thresholds`.
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING

from reprolab import units
from reprolab.physics import bands, lines, modes, positions
from reprolab.physics import thresholds as th

# numpy is imported where curves are compared: a step that only reads comparison numbers
# (claims, the verdict, the report) starts ~60 ms sooner.
if TYPE_CHECKING:
    import numpy as np

# The numbers a matched peak or dip carries, as computed_numbers names them (and the
# only ones an analysis claim may cite of a feature: reprolab.physics.claims).
FEATURE_QUANTITIES = (
    "x_paper",
    "x_sim",
    "shift_rel",
    "y_paper",
    "y_sim",
    "height_rel",
    "width_paper",
    "width_sim",
    "width_rel",
)

FEATURE_PROMINENCE = 0.05  # fraction of the curve's y range an extremum must stand out by


def find_features(x: np.ndarray, y: np.ndarray, prominence: float) -> list[dict]:
    """Interior local maxima/minima standing out by `prominence` on both sides, in order
    of position (scipy.signal.find_peaks; a flat top or bottom is one feature, at its
    middle sample).

    Each feature: kind (peak | dip), x (parabolic vertex), y, prominence and width, the
    full width at half prominence (scipy.signal.peak_widths, crossings interpolated
    linearly between samples).
    """
    import numpy as np
    from scipy.signal import find_peaks, peak_widths

    x, y = np.asarray(x, float), np.asarray(y, float)
    found = []
    for kind, sign in (("peak", 1.0), ("dip", -1.0)):
        peaks, props = find_peaks(sign * y, prominence=prominence)
        bases = (props["prominences"], props["left_bases"], props["right_bases"])
        _, _, left, right = peak_widths(sign * y, peaks, rel_height=0.5, prominence_data=bases)
        samples = np.arange(len(x))
        widths = np.interp(right, samples, x) - np.interp(left, samples, x)
        for i, prom, width in zip(peaks, props["prominences"], widths, strict=True):
            feature = {"kind": kind, "x": refine_vertex(x, y, i), "y": float(y[i])}
            found.append((i, feature | {"prominence": float(prom), "width": float(width)}))
    return [feature for _, feature in sorted(found, key=lambda item: item[0])]


def find_extrema(x: np.ndarray, y: np.ndarray, prominence: float) -> list[tuple[str, float]]:
    """(kind, position) of every feature of `find_features`."""
    return [(f["kind"], f["x"]) for f in find_features(x, y, prominence)]


def resample(x_src, y_src, x_common) -> np.ndarray:
    """y_src linearly interpolated onto the common axis (the paper's digitized x).

    Points of the common axis outside x_src's range become NaN (no extrapolation).
    """
    import numpy as np

    order = np.argsort(x_src)
    xs, ys = np.asarray(x_src, float)[order], np.asarray(y_src, float)[order]
    xc = np.asarray(x_common, float)
    out = np.interp(xc, xs, ys)
    out[(xc < xs[0]) | (xc > xs[-1])] = np.nan
    return out


def refine_vertex(x: np.ndarray, y: np.ndarray, i: int) -> float:
    """Extremum position from the parabola through points i-1, i, i+1.

    Without it a position is quantised to the sampling step (0.005 µm on a 0.6 µm
    fringe is already 0.8 %), which would swamp the shifts being measured.
    """
    x0, x1, x2 = x[i - 1], x[i], x[i + 1]
    y0, y1, y2 = y[i - 1], y[i], y[i + 1]
    denom = (x0 - x1) * (x0 - x2) * (x1 - x2)
    a = (x2 * (y1 - y0) + x1 * (y0 - y2) + x0 * (y2 - y1)) / denom
    b = (x2**2 * (y0 - y1) + x1**2 * (y2 - y0) + x0**2 * (y1 - y2)) / denom
    if a == 0:
        return float(x1)
    vertex = -b / (2 * a)
    return float(min(max(vertex, x0), x2))


def match_features(
    paper_features: list[dict],
    sim_features: list[dict],
    scale: float,
    x_span: float = 0.0,
    axis: dict | None = None,
    x_range: tuple[float, float] | None = None,
) -> list[dict]:
    """Each paper feature with the nearest reproduced one of its kind: position, shift
    (over the scale `positions.position_scale` chooses from the axis, named in
    `shift_basis`), height (relative to `scale`) and width."""
    turn = positions.period(axis)
    lo, hi = x_range if x_range is not None else (0.0, x_span)
    features = []
    for pf in paper_features:
        x0 = pf["x"]
        candidates = [f for f in sim_features if f["kind"] == pf["kind"]]
        shift_scale, basis = positions.position_scale(x0, lo, hi, axis)
        entry = {
            "kind": pf["kind"],
            "x_paper": x0,
            "y_paper": pf["y"],
            "width_paper": pf["width"],
            "shift_basis": basis,
            "shift_scale": shift_scale,
        }
        if not candidates:
            features.append(
                entry
                | {
                    "x_sim": None,
                    "shift_rel": math.nan,
                    "y_sim": None,
                    "height_rel": math.nan,
                    "width_sim": None,
                    "width_rel": None,
                }
            )
            continue
        sf = min(candidates, key=lambda c: positions.distance(c["x"], x0, turn))
        width_rel = (
            abs(sf["width"] - pf["width"]) / pf["width"]
            if pf["width"] and sf["width"] is not None
            else None
        )
        features.append(
            entry
            | {
                "x_sim": sf["x"],
                "shift_rel": positions.distance(sf["x"], x0, turn) / shift_scale,
                # the height of the matched extremum: a peak value scaled by 0.8 keeps
                # its position, so position alone never sees it
                "y_sim": sf["y"],
                "height_rel": abs(sf["y"] - pf["y"]) / scale,
                "width_sim": sf["width"],
                "width_rel": width_rel,
            }
        )
    return features


def _both_features(xp, yp, one_turn, turn, full) -> tuple[list[dict], list[dict], list, tuple]:
    """The paper's features and the reproduction's, both at the sampling the two curves
    support (`_seen_alike`); the reproduction's at its own sampling (narrow lines are
    judged there, physics/lines.py); and the reproduced curve they were found on."""
    import numpy as np

    y_range = float(np.ptp(yp)) or 1.0
    start = float(np.min(xp))
    paper_features = positions.features_on(
        xp, yp, FEATURE_PROMINENCE * y_range, turn, find_features, start
    )
    # Features of both curves on the common x range: a reproduction that runs past the
    # paper's window to a higher shoulder would otherwise measure its dips deeper and
    # wider (prominence and half-prominence width depend on the window).
    xs_t, ys_t = one_turn
    common = (xs_t >= xp.min()) & (xs_t <= xp.max())
    if turn is None and common.sum() >= 3:
        xs_t, ys_t = xs_t[common], ys_t[common]
    sim_prominence = FEATURE_PROMINENCE * y_range / 2
    sim_features = positions.features_on(xs_t, ys_t, sim_prominence, turn, find_features, start)
    paper_seen, sim_seen = _seen_alike(
        xp, yp, (xs_t, ys_t), full, turn, start, (paper_features, sim_features), y_range
    )
    return paper_seen, sim_seen, sim_features, (xs_t, ys_t)


def _seen_alike(xp, yp, sim_turn, full, turn, start, found, y_range):
    """Both curves' features at the coarser of their two samplings over the x range both
    cover: a peak resolved by the finer one stands higher and narrower than the coarser
    one can show (an exact series at 0.05 against a paper's 60 plotted vertices), which
    is the sampling, not the physics. The finer curve is seen through the coarser one's
    x samples (linear between its own, as a plotted line is), its features found there."""
    import numpy as np

    xs_t, ys_t = sim_turn
    lo, hi = max(float(xp.min()), float(xs_t.min())), min(float(xp.max()), float(xs_t.max()))
    if turn is not None:
        lo, hi = float(xp.min()), float(xp.max())
    n_paper = int(np.sum((xp >= lo) & (xp <= hi)))
    n_sim = int(np.sum((xs_t >= lo) & (xs_t <= hi)))
    paper_features, sim_features = found
    if n_sim > n_paper >= 3:
        inside = (xp >= lo) & (xp <= hi)
        seen = resample(full[0], full[1], xp[inside])
        coarse = positions.features_on(
            xp[inside], seen, FEATURE_PROMINENCE * y_range / 2, turn, find_features, start
        )
        sim_features = _heights_from(sim_features, coarse, xp[inside], turn)
    elif n_paper > n_sim >= 3:
        inside = (xs_t >= lo) & (xs_t <= hi)
        xp_full, yp_full = (xp, yp) if turn is None else positions.periodic_copy(xp, yp, turn)
        seen = resample(xp_full, yp_full, xs_t[inside])
        coarse = positions.features_on(
            xs_t[inside], seen, FEATURE_PROMINENCE * y_range, turn, find_features, start
        )
        paper_features = _heights_from(paper_features, coarse, xs_t[inside], turn)
    return paper_features, sim_features


def _heights_from(fine: list[dict], coarse: list[dict], grid, turn) -> list[dict]:
    """Each feature of the finer curve with the height and width the coarser sampling
    shows of it (the nearest feature of its kind there, within one step of that grid).
    Its position stays the finer curve's: a coarse grid biases a peak lower and wider,
    never to one side, and its parabola would hide a real shift smaller than a step."""
    import numpy as np

    step = float(np.max(np.diff(np.sort(grid)))) if len(grid) > 1 else 0.0
    out = []
    for f in fine:
        near = [c for c in coarse if c["kind"] == f["kind"]]
        c = min(near, key=lambda c: positions.distance(c["x"], f["x"], turn), default=None)
        if c is not None and positions.distance(c["x"], f["x"], turn) <= step:
            f = f | {"y": c["y"], "width": c["width"], "prominence": c["prominence"]}
        out.append(f)
    return out


def compare_curve(
    x_paper: list[float],
    y_paper: list[float],
    x_sim: list[float],
    y_sim: list[float],
    axis: dict | None = None,
) -> dict:
    """The reproduced curve against the paper's on the paper's x samples. `axis`
    (`positions.axis_context`) says how: log y compared in log space, dB or normalised
    polar patterns, angles that wrap, the scale of position errors."""
    import numpy as np

    xp, yp = np.asarray(x_paper, float), np.asarray(y_paper, float)
    axis = positions.with_wrap(axis, xp)
    yp, y_sim_c, scale, y_note = positions.to_compared_y(yp, y_sim, axis)
    turn = positions.period(axis)
    xs, ys = np.asarray(x_sim, float), np.asarray(y_sim_c, float)
    if turn is not None:
        xs, ys = positions.on_circle(xs, ys, turn, float(np.min(xp)))
    order = np.argsort(xs, kind="stable")
    xs, ys = xs[order], ys[order]
    one_turn = (xs, ys)
    if turn is not None:
        xs, ys = positions.periodic_copy(xs, ys, turn)
    inside = (xp >= xs[0]) & (xp <= xs[-1])
    coverage = float(inside.mean())
    if inside.sum() < 2:
        return {
            "coverage": coverage,
            "rms_abs": math.nan,
            "max_abs": math.nan,
            "metrics": {b.metric: math.nan for b in th.DISCREPANCY_THRESHOLDS},
            "features": [],
            "note": "reproduced x range does not overlap the paper's",
        }
    diff = resample(xs, ys, xp[inside]) - yp[inside]
    paper_features, sim_seen, sim_features, (xs_t, ys_t) = _both_features(
        xp, yp, one_turn, turn, (xs, ys)
    )
    x_range = (float(np.min(xp)), float(np.max(xp)))
    features = match_features(paper_features, sim_seen, scale, float(np.ptp(xp)), axis, x_range)
    # narrow lines: judged in their linewidths too, and the differences around them taken
    # with the x slack that judgement allows (physics/lines.py)
    judged = lines.compare_lines(xp, yp, paper_features, xs_t, ys_t, sim_features, x_range, axis)
    diff = lines.with_slack(diff, xp[inside], yp[inside], xs, ys, judged["lines"])
    rms = float(np.sqrt(np.mean(diff**2)))
    max_abs = float(np.max(np.abs(diff)))
    shift = max((f["shift_rel"] for f in features), default=None)
    height = max((f["height_rel"] for f in features), default=None)
    widths = [f["width_rel"] for f in features if f["width_rel"] is not None]
    metrics = {
        "feature_shift_rel": shift,
        "feature_height_rel": height,
        "feature_width_rel": max(widths) if widths else None,
        "rms_rel": rms / scale,
        "max_abs_rel": max_abs / scale,
    } | judged["metrics"]
    if coverage < 0.95:
        metrics = {k: math.nan for k in metrics}
    notes = [y_note] if y_note else []
    if coverage < 0.95:
        notes.append("reproduction covers under 95 % of the paper's x range")
    return {
        "coverage": coverage,
        "rms_abs": rms,
        "max_abs": max_abs,
        "metrics": metrics,
        "features": features,
        **({"lines": judged["lines"]} if judged["lines"] else {}),
        "compared_as": positions.y_kind(axis),
        "note": "; ".join(notes),
    }


def _x_in_axis_units(kv: dict, x_sim) -> list[float]:
    """The reproduced x in the figure's x unit (c/a to nm through `unit_length_m`, the
    paper's length a; to a size parameter through `radius_m`, its scatterer's).
    UnitError where the column cannot be converted to the axis: its values in another
    unit would be compared as if they were the axis's."""
    src = units.column_quantity(kv.get("x_column") or "")
    dst = tuple(kv["x_axis"]) if kv.get("x_axis") else None
    if src is None or dst is None or dst[0] == units.FREE:  # a free parameter: read as is
        return list(x_sim)
    if src[0] == dst[0] and units.same_unit(src[0], src[1], dst[1]):
        return list(x_sim)
    return units.convert_with_radius(
        list(x_sim), src, dst, kv.get("unit_length_m"), kv.get("radius_m")
    )


def key_value(kv: dict, x_sim, y_sim) -> dict:
    """A headline number of the paper (metadata `key_values`: y at x, x of the maximum
    or minimum, the maximum or minimum y) read off the reproduced curve and classified
    by its relative error (`thresholds.KEY_VALUE`). The paper states x in its figure's
    unit: with `x_axis` ([quantity, unit] of that axis) and `x_column` (the simulation's
    column, `wavelength_um`), the reproduced x is converted to it first."""
    import numpy as np

    try:
        x_sim = _x_in_axis_units(kv, x_sim)
    except units.UnitError as exc:
        note = f"column '{kv.get('x_column')}' not in the figure's x unit: {exc}"
        return {**kv, "sim": None, "rel_error": math.nan, "class": "FAILURE", "note": note}
    order = np.argsort(x_sim)
    xs, ys = np.asarray(x_sim, float)[order], np.asarray(y_sim, float)[order]
    kind = kv["kind"]
    if kind == "y_at_x":
        inside = xs[0] <= kv["x"] <= xs[-1]
        sim = float(np.interp(kv["x"], xs, ys)) if inside else math.nan
    elif kind in ("x_of_max", "x_of_min"):
        i = int(np.argmax(ys) if kind == "x_of_max" else np.argmin(ys))
        sim = refine_vertex(xs, ys, i) if 0 < i < len(xs) - 1 else float(xs[i])
    elif kind in ("max_y", "min_y"):
        sim = float(np.max(ys) if kind == "max_y" else np.min(ys))
    elif kind in SPLITTING_KINDS:
        return _splitting_value(kv, xs, ys)
    else:
        return {**kv, "sim": None, "rel_error": None, "class": None}
    value = kv["value"]
    rel = abs(sim - value) / abs(value) if value else abs(sim - value)
    return {**kv, "sim": sim, "rel_error": rel, "class": th.classify_value(th.KEY_VALUE, rel)}


# A splitting read off one curve: the distance between its two most prominent peaks
# (dips), in the key value's unit (a Rabi splitting in meV off a spectrum in nm).
SPLITTING_KINDS = ("x_splitting_of_max", "x_splitting_of_min")


def _splitting_value(kv: dict, xs, ys) -> dict:
    """The two most prominent peaks (dips) of the curve, each refined to its parabolic
    vertex and converted from the figure's x unit to the value's (through c and h
    between photon quantities): their distance, classified as a splitting (relative to
    itself: `thresholds.SPLITTING`)."""
    import numpy as np
    from scipy.signal import find_peaks

    sign = 1.0 if kv["kind"] == "x_splitting_of_max" else -1.0
    idx, props = find_peaks(sign * ys, prominence=0)
    if len(idx) < 2:
        what = "peaks" if sign > 0 else "dips"
        note = f"the reproduced curve has {len(idx)} {what}: no splitting to read"
        return {**kv, "sim": None, "rel_error": math.nan, "class": "FAILURE", "note": note}
    top = sorted(idx[np.argsort(props["prominences"])[-2:]])
    at = [refine_vertex(xs, sign * ys, i) for i in top]
    axis = tuple(kv["x_axis"]) if kv.get("x_axis") else None
    dst = (units.photon_quantity(kv["unit"]) or (axis[0] if axis else ""), kv["unit"])
    if axis and axis != dst and axis[0] in units.PHOTON and dst[0] in units.PHOTON:
        at = units.convert(at, axis, dst, kv.get("unit_length_m"))
    sim = abs(at[1] - at[0])
    value = kv["value"]
    rel = abs(sim - value) / abs(value) if value else abs(sim - value)
    return {**kv, "sim": sim, "rel_error": rel, "class": th.classify_value(th.SPLITTING, rel)}


def classify_curve(result: dict) -> dict[str, str]:
    """A class per metric; the line metrics only where the curve has judged lines."""
    bands_ = [*th.DISCREPANCY_THRESHOLDS]
    bands_ += [b for b in th.LINE_BANDS if b.metric in result["metrics"]]
    return {b.metric: th.classify_value(b, result["metrics"].get(b.metric)) for b in bands_}


# --- recomputation: the ComparisonValidator's numbers come from here -------------------

RECOMPUTE_RTOL = 1e-6


def _close(a, b, rtol: float = RECOMPUTE_RTOL) -> bool:
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return math.isclose(float(a), float(b), rel_tol=rtol, abs_tol=1e-12)


def _recheck_features(where: str, curve: dict, fresh: dict) -> list[str]:
    """A curve's stored features and judged lines against the recomputed ones."""
    out = lines.recheck_lines(where, curve.get("lines", []), fresh.get("lines", []), _close)
    if len(curve.get("features", [])) != len(fresh["features"]):
        return out + [
            f"{where}: {len(curve.get('features', []))} features stored, "
            f"{len(fresh['features'])} recomputed"
        ]
    for i, (old, new) in enumerate(zip(curve["features"], fresh["features"], strict=True)):
        for name, value in new.items():
            if name in ("kind", "shift_basis"):
                if old.get(name, value) != value:
                    out.append(f"{where}: feature {i} {name} differs")
                continue
            if not _close(old.get(name), value):
                out.append(
                    f"{where}: feature {i} {name} stored {old.get(name)}, recomputed {value}"
                )
    return out


def recompute_comparison(comparison: dict, curves: dict) -> list[str]:
    """Recompute every stored number of a comparison from the raw data; list mismatches.

    `curves` maps (figure_id, curve_id) → (x_paper, y_paper, x_sim, y_sim), read by the
    caller from the paper's digitized CSV and the run's output file. Every metric, the
    RMS/max differences, the feature positions, shifts and widths, and each class are
    recomputed and compared; an empty list means the comparison file is right.
    """
    mismatches = []
    for fig in comparison["figures"]:
        if fig.get("kind") in MODE_KINDS:
            mismatches += recheck_mode_entry(fig)
            continue
        classes = []
        for curve in fig["curves"]:
            key = (fig["figure_id"], curve["curve_id"])
            where = f"{key[0]}/{key[1]}"
            if "error" in curve:
                classes.append("FAILURE")
                continue
            if curve.get("qualitative"):  # no digitized data: judged by eye, never SUCCESS
                classes.append("PARTIAL")
                continue
            if key not in curves:
                mismatches.append(f"{where}: no raw data to recompute from")
                continue
            fresh = compare_curve(*curves[key])
            for name in ("coverage", "rms_abs", "max_abs"):
                if not _close(curve.get(name), fresh[name]):
                    mismatches.append(
                        f"{where}: {name} stored {curve.get(name)}, recomputed {fresh[name]}"
                    )
            for name, value in fresh["metrics"].items():
                if not _close(curve["metrics"].get(name), value):
                    mismatches.append(
                        f"{where}: metric {name} stored {curve['metrics'].get(name)}, "
                        f"recomputed {value}"
                    )
            mismatches += _recheck_features(where, curve, fresh)
            fresh_classes = classify_curve(fresh)
            if curve.get("classes") != fresh_classes:
                mismatches.append(
                    f"{where}: classes stored {curve.get('classes')}, recomputed {fresh_classes}"
                )
            classes += list(fresh_classes.values())
            for kv in curve.get("key_values", []):
                again = key_value(kv, curves[key][2], curves[key][3])
                if kv.get("class") is not None:
                    classes.append(again["class"])
                if again["class"] != kv.get("class") or not _close(kv.get("sim"), again["sim"]):
                    mismatches.append(
                        f"{where}: key value '{kv['quantity']}' stored {kv.get('sim')} "
                        f"({kv.get('class')}), recomputed {again['sim']} ({again['class']})"
                    )
        expected = th.worst(classes)
        if fig.get("classification") != expected:
            mismatches.append(
                f"{fig['figure_id']}: classification stored {fig.get('classification')}, "
                f"recomputed {expected}"
            )
    return mismatches


# Entries of results about modes (compared from the Harminv record, not from curves).
MODE_KINDS = ("table", "band_diagram")
# The band of each measure of a table value (`other`: not classified).
MEASURE_BANDS = {
    "mode_frequency": th.MODE_FREQUENCY,
    "mode_wavelength": th.MODE_FREQUENCY,
    "quality_factor": th.QUALITY_FACTOR,
    "linewidth": th.LINEWIDTH,
    "splitting": th.SPLITTING,
    "gap_lower": th.GAP_EDGE,
    "gap_upper": th.GAP_EDGE,
    "gap_midgap_ratio": th.GAP_MIDGAP_RATIO,
}


def recheck_mode_entry(fig: dict) -> list[str]:
    """A table or band diagram entry's classes against its own stored errors (the record
    itself is recomputed by the comparison step): each value's or band's class from its
    error and the thresholds, the entry's classification the worst of them."""
    where, out, classes = fig["figure_id"], [], []
    if fig.get("error"):
        classes.append("FAILURE")
    for row in fig.get("rows", []):
        for v in row["values"]:
            band, error = MEASURE_BANDS.get(v["measure"]), v.get("error")
            if v.get("class") is None:
                continue
            fresh = v["class"]
            if band is not None and error is not None and v["status"] != "above_measurable":
                fresh = th.classify_value(band, abs(error))
                if fresh != v["class"]:
                    out.append(
                        f"{where}: {v['name']} of {row['labels']} stored {v['class']}, "
                        f"its error {error:.4g} gives {fresh}"
                    )
            if v["status"] == "missing" and v["class"] != "FAILURE":
                out.append(f"{where}: {v['name']} of {row['labels']} is missing but {v['class']}")
                fresh = "FAILURE"
            classes.append(fresh)
    for b in fig.get("bands", []):
        if b["band"] is None:
            classes.append(b["class"])
            continue
        fresh = bands.band_class(b["rms_rel"], b["max_rel"], b["points"], b["missing"])
        classes.append(fresh)
        if fresh != b["class"]:
            out.append(f"{where}: band {b['band']} stored {b['class']}, recomputed {fresh}")
    classes += [g["class"] for g in fig.get("gaps", [])]
    classes += [kv["class"] for kv in fig.get("key_values", []) if kv.get("class")]
    expected = th.worst(classes) if classes else fig.get("classification")
    if fig.get("kind") == "band_diagram" and not fig.get("bands"):
        expected = "FAILURE"
    if classes and fig.get("kind") == "table" and not fig.get("rows"):
        expected = "FAILURE"
    if fig.get("classification") != expected:
        out.append(
            f"{where}: classification stored {fig.get('classification')}, recomputed {expected}"
        )
    return out


def comparison_numbers(comparison: dict) -> dict[str, float]:
    """Every number a narrative may cite, by name (fractions also as percentages)."""
    numbers: dict[str, float] = {}
    for fig in comparison["figures"]:
        if fig.get("kind") in MODE_KINDS:
            table = fig["kind"] == "table"
            numbers.update(modes.table_numbers(fig) if table else bands.band_numbers(fig))
            for kv in fig.get("key_values", []):  # claim: curve `key_values`, its quantity
                if kv.get("sim") is not None:
                    numbers[f"{fig['figure_id']}/key_values.{kv['quantity']}"] = kv["sim"]
            continue
        for curve in fig["curves"]:
            base = f"{fig['figure_id']}/{curve['curve_id']}"
            for name in ("rms_abs", "max_abs", "coverage"):
                if curve.get(name) is not None:
                    numbers[f"{base}.{name}"] = curve[name]
            for name, value in curve.get("metrics", {}).items():
                if value is not None:
                    numbers[f"{base}.{name}"] = value
            for i, f in enumerate(curve.get("features", [])):
                for name in FEATURE_QUANTITIES:
                    if f.get(name) is not None:
                        numbers[f"{base}.feature{i}.{f['kind']}.{name}"] = f[name]
            numbers.update(lines.line_numbers(base, curve))
    return {k: v for k, v in numbers.items() if isinstance(v, (int, float)) and math.isfinite(v)}


_NUMBER = re.compile(r"(?<![\w.])([-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)\s*(%|percent)?")
_CITES_METRIC = re.compile(
    r"rms|root.mean|max(imum)?\b|largest|shift|offset|differ|deviat|error|width|fwhm|peak|dip|%",
    re.IGNORECASE,
)


def _matches(cited: float, decimals: int, value: float) -> bool:
    """A cited number matches a computed one when it is that number rounded as written
    (or within 5 % of it, for numbers quoted to fewer significant figures)."""
    half_ulp = 0.5 * 10.0 ** (-decimals) + 1e-12
    return abs(cited - value) <= half_ulp or math.isclose(cited, value, rel_tol=0.05)


def narrative_mismatches(
    narrative: str | dict[str, float], comparison: dict, allowed: tuple[float, ...] = ()
) -> list[str]:
    """Numbers in an analysis that no computed number supports.

    `narrative` is prose or a {name: value} dict of numbers the analysis claims. In
    prose only sentences that cite a metric (RMS, shift, width, %, ...) are checked; a
    percentage is compared with fractions ×100. `allowed` are other legitimate numbers
    (design parameters, the paper's own values) that may appear in those sentences.
    """
    numbers = comparison_numbers(comparison)
    values = list(numbers.values()) + list(allowed)
    if isinstance(narrative, dict):
        out = []
        for name, cited in narrative.items():
            if name in numbers and not math.isclose(
                cited, numbers[name], rel_tol=0.05, abs_tol=1e-9
            ):
                out.append(f"'{name}' is {cited} in the analysis but {numbers[name]:.6g} computed")
            elif name not in numbers:
                out.append(f"'{name}' = {cited} is not a computed quantity")
        return out
    out = []
    for sentence in re.split(r"(?<=[.;!?])\s+", narrative):
        if not _CITES_METRIC.search(sentence):
            continue
        for m in _NUMBER.finditer(sentence):
            text, pct = m.group(1), m.group(2)
            cited = float(text)
            decimals = len(text.split(".")[1].split("e")[0].split("E")[0]) if "." in text else 0
            candidates = [v * 100 for v in values] if pct else values
            if pct:
                candidates += list(allowed)
            if not any(_matches(cited, decimals, v) for v in candidates):
                out.append(
                    f"'{m.group(0).strip()}' in \"{sentence.strip()[:160]}\" matches no number "
                    "computed by the comparison"
                )
    return out
