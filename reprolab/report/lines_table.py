"""The report's table of narrow lines: each judged in its own linewidths (or as Q where
the paper states Q), with the scale the code chose for it."""

from __future__ import annotations

from reprolab import units
from reprolab.physics import thresholds as th
from reprolab.report import wording
from reprolab.report.fmt import cell, table_header

SCALE_TEXT = {
    "half prominence": "its full width at half prominence in the paper's data",
    "fano fit": "the width of a Fano fit to the paper's dip and peak",
    "fano (peak-dip midpoint)": "the paper's peak-dip separation (the Fano fit failed)",
    "stated Q": "its position / the Q the paper states",
}


def _unit(curve: dict) -> str:
    found = units.column_quantity(curve.get("x_column") or "")
    return f" ({wording.unit_words(found[1])})" if found else ""


def _error_cell(e: dict) -> str:
    """The line's shift in linewidths (narrow lines) and its width or Q error."""
    parts = []
    if e["narrow"]:
        parts.append(f"{cell(e.get('shift_linewidths'), '.2g')} linewidths")
    if "q_log10" in e:
        parts.append(f"Q {cell(e.get('q_sim'), '.4g')} vs {cell(e['q_paper'], '.4g')}")
    elif e.get("width_linewidths") is not None:
        parts.append(f"width off by {cell(e['width_linewidths'], '.2g')} linewidths")
    return "; ".join(parts) or "–"


def _class(e: dict) -> str:
    if e.get("x_sim") is None:
        return "FAILURE (unmatched)"
    classes = []
    if e["narrow"]:
        classes.append(th.classify_value(th.LINE_SHIFT, e.get("shift_linewidths")))
    if "q_log10" in e:
        classes.append(th.classify_value(th.LINE_Q, e["q_log10"]))
    elif e.get("width_linewidths") is not None:
        classes.append(th.classify_value(th.LINE_WIDTH, e["width_linewidths"]))
    return th.worst(classes) if classes else "–"


def line_table(fig: dict) -> list[str]:
    """One row per judged line of the figure's curves, and what each was scaled by."""
    rows = [(c, e) for c in fig.get("curves", []) for e in c.get("lines", [])]
    if not rows:
        return []
    band = th.LINE_SHIFT
    md = [
        "",
        f"Narrow lines, judged in their linewidths (SUCCESS within {band.acceptable:g}, "
        f"PARTIAL within {band.investigate:g} linewidths; a stated Q as Q):",
        "",
        *table_header("curve", "line", "x paper", "x reproduced", "linewidth", "error", "class"),
    ]
    notes = []
    for curve, e in rows:
        unit = _unit(curve)
        md.append(
            f"| {curve['curve_id']} | {e['kind']} | {cell(e['x_paper'], '.6g')}{unit} | "
            f"{cell(e.get('x_sim'), '.6g')} | {cell(e['linewidth_paper'], '.3g')} | "
            f"{_error_cell(e)} | {_class(e)} |"
        )
        why = (
            f"below the ordinary position tolerance {e['tolerance']:.3g}"
            if e["narrow"]
            else f"not narrower than the ordinary tolerance {e['tolerance']:.3g}: its shift "
            "is judged by the ordinary rule"
        )
        scale = SCALE_TEXT.get(e["linewidth_from"], e["linewidth_from"])
        notes.append(
            f"- {curve['curve_id']} {e['kind']} at {e['x_paper']:.6g}: linewidth "
            f"{e['linewidth_paper']:.3g} from {scale}, {why}"
        )
    return [*md, "", *notes]
