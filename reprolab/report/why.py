"""Why a figure is not SUCCESS: the metric, its value against its band, and the peak or
dip that set it, so that a reader of a PARTIAL or FAILURE sees what made it so."""

from __future__ import annotations

import math

from reprolab.physics import lines
from reprolab.physics import thresholds as th

# The feature quantity each feature metric is the largest of (physics/compare.py).
FEATURE_OF_METRIC = {
    "feature_shift_rel": "shift_rel",
    "feature_height_rel": "height_rel",
    "feature_width_rel": "width_rel",
}
BANDS = {b.metric: b for b in th.DISCREPANCY_THRESHOLDS}


def _pct(v: float) -> str:
    return f"{v * 100:.3g} %"


def _feature_phrase(curve: dict, metric: str, unit: str = "") -> str:
    """The matched feature whose quantity is the metric's value (positions in `unit`)."""
    q = FEATURE_OF_METRIC.get(metric)
    if q is None:
        return ""
    feats = [
        (i, f)
        for i, f in enumerate(curve.get("features", []))
        if isinstance(f.get(q), (int, float)) and math.isfinite(f[q])
    ]
    unmatched = [i for i, f in enumerate(curve.get("features", [])) if f.get("x_sim") is None]
    if unmatched:
        f = curve["features"][unmatched[0]]
        return f", set by {f['kind']} {unmatched[0]} at x = {f['x_paper']:.5g}{unit}, unmatched"
    if not feats:
        return ""
    i, f = max(feats, key=lambda item: item[1][q])
    return (
        f", set by {f['kind']} {i} (x = {f['x_paper']:.5g}{unit} in the paper, "
        f"{f['x_sim']:.5g}{unit} reproduced)"
    )


def curve_reasons(curve: dict, x_unit: str | None = None) -> list[str]:
    """Each metric and key value of one curve that is not SUCCESS, in words (feature
    positions in the figure's `x_unit`)."""
    unit = "" if x_unit in (None, "", "1") else f" {'µm' if x_unit == 'um' else x_unit}"
    cid = curve["curve_id"]
    if "error" in curve:
        return [f"`{cid}`: FAILURE, not compared ({curve['error']})"]
    if curve.get("qualitative"):
        return [f"`{cid}`: PARTIAL, no digitized data (compared by eye only)"]
    out = []
    line_metrics = {b.metric for b in th.LINE_BANDS}
    for metric, cls in (curve.get("classes") or {}).items():
        if cls == "SUCCESS" or metric in line_metrics:  # said line by line below
            continue
        value = (curve.get("metrics") or {}).get(metric)
        band = BANDS.get(metric)
        if value is None or not isinstance(value, (int, float)) or not math.isfinite(value):
            out.append(f"`{cid}` {metric}: {cls}, not computed ({curve.get('note') or 'no value'})")
            continue
        limits = (
            f" (SUCCESS up to {_pct(band.acceptable)}, PARTIAL up to {_pct(band.investigate)})"
            if band
            else ""
        )
        out.append(
            f"`{cid}` {metric} = {_pct(value)}: {cls}{limits}{_feature_phrase(curve, metric, unit)}"
        )
    out += [f"`{cid}` {reason}" for reason in lines.line_reasons(curve)]
    for kv in curve.get("key_values", []):
        if kv.get("class") not in (None, "SUCCESS"):
            err = kv.get("rel_error")
            said = _pct(err) if isinstance(err, (int, float)) and math.isfinite(err) else "n/a"
            out.append(
                f"`{cid}` key value {kv.get('quantity') or kv['kind']}: {kv['class']} "
                f"(relative error {said}, SUCCESS up to {_pct(th.KEY_VALUE.acceptable)})"
            )
    return out


def figure_reasons(fig: dict) -> list[str]:
    """Why the figure is not SUCCESS (empty when it is)."""
    if fig.get("classification") == "SUCCESS":
        return []
    reasons = [r for c in fig.get("curves", []) for r in curve_reasons(c, fig.get("x_unit"))]
    if fig.get("capped_by"):  # counted FAILURE by its stage's verdict, whatever its curves
        reasons.insert(0, f"counted {fig['classification']}: {fig['capped_by']}")
    return reasons


def why_lines(fig: dict) -> list[str]:
    """The report's lines under a figure that is PARTIAL or FAILURE."""
    reasons = figure_reasons(fig)
    if not reasons:
        return []
    return [
        "",
        f"Why {fig['classification']} (the code's metrics):",
        "",
        *(f"- {r}" for r in reasons),
    ]
