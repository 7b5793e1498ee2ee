"""Words and units for the report's tables, so that it reads like physics: every number
with its unit in the column's header, no Python value in a cell, nothing counted when
there was nothing to count, and each rerun described by what changed."""

from __future__ import annotations

import hashlib
from pathlib import Path

FEATURE_METRICS = ("feature_shift_rel", "feature_height_rel", "feature_width_rel")


def unit_words(unit: str | None) -> str:
    """A unit as a header shows it: `nm`, `µm`, `dimensionless`."""
    if unit in (None, "", "1"):
        return "dimensionless"
    return "µm" if unit == "um" else unit


def yes_no(value) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    return "–" if value is None else str(value)


def classes_text(classes) -> str:
    """`{'visual': 'PARTIAL'}` as `visual: PARTIAL`."""
    if isinstance(classes, dict):
        return ", ".join(f"{k}: {v}" for k, v in classes.items()) or "–"
    return str(classes)


def features_cell(features: list[dict]) -> str:
    if not features:
        return "no features to compare"
    matched = sum(1 for f in features if f.get("x_sim") is not None)
    return f"{matched} of {len(features)}"


def metric_classes(curve: dict) -> str:
    """The class each metric earned; a curve with no peak or dip earned nothing from the
    feature metrics, so they are not listed."""
    classes = dict(curve.get("classes") or {})
    if not curve.get("features"):
        classes = {k: v for k, v in classes.items() if k not in FEATURE_METRICS}
    return classes_text(classes)


def in_axis_units(paper, fig: dict) -> dict:
    """The figure comparison with its features' positions (and, where the conversion
    is a scale, their widths) in the figure's x unit, and `x_unit` and each curve's
    `y_unit` set, for the tables' headers."""
    from reprolab import units

    meta = paper.figure(fig["figure_id"])
    out = {**fig, "x_unit": meta.x_axis.unit, "curves": []}
    for curve in fig.get("curves", []):
        axis = meta.y_axes.right if meta.curve_axis(curve["curve_id"]) == "right" else None
        curve = {**curve, "y_unit": (axis or meta.y_axes.left).unit}
        feats = curve.get("features") or []
        if feats and curve.get("x_column"):
            try:
                curve["features"] = [features_converted(paper, meta, curve, f) for f in feats]
            except (ValueError, KeyError, ZeroDivisionError):  # UnitError is a ValueError
                src = units.column_quantity(curve["x_column"])
                out["x_unit"] = src[1] if src else None  # left in the column's own unit
        out["curves"].append(curve)
    return out


def features_converted(paper, meta, curve: dict, feature: dict) -> dict:
    from reprolab import units

    def to_axis(values):
        return paper.x_in_figure_units(meta.figure_id, curve["x_column"], values)

    f = dict(feature)
    for key in ("x_paper", "x_sim"):
        if f.get(key) is not None:
            f[key] = to_axis([f[key]])[0]
    src = units.column_quantity(curve["x_column"])
    same = src is not None and src[0] in (meta.x_axis.quantity, "length", "wavelength")
    for key in ("width_paper", "width_sim"):
        if f.get(key) is not None:
            # a width scales only between units of one quantity (nm and µm, not nm and eV)
            f[key] = to_axis([f[key]])[0] - to_axis([0.0])[0] if same else None
    return f


def partial_reason(figure_rows: list[tuple]) -> str | None:
    """Why a paper is PARTIAL when only figures without digitized data (compared by
    eye, PARTIAL at most) make it so; None otherwise."""
    partial = [fid for fid, _, fig in figure_rows if fig["classification"] == "PARTIAL"]
    if not partial or any(fig["classification"] == "FAILURE" for _, _, fig in figure_rows):
        return None
    by_eye = [fid for fid, _, fig in figure_rows if fig.get("qualitative")]
    if set(partial) - set(by_eye):
        return None
    data = [fid for fid, _, fig in figure_rows if not fig.get("qualitative")]
    rest = (
        f"; every figure with digitized data ({', '.join(data)}) is SUCCESS"
        if data
        else "; no figure has digitized data"
    )
    return (
        f"{', '.join(partial)} {'has' if len(partial) == 1 else 'have'} no digitized data and "
        f"{'was' if len(partial) == 1 else 'were'} compared by eye, which gives PARTIAL at "
        f"most{rest}"
    )


def sha256(path: Path) -> str | None:
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return None


def repair_line(stage_id: str, repair: dict, next_script: Path, kept: str) -> str:
    """A repaired run as it happened: code regenerated into new code, or the same
    code (byte for byte) run again."""
    failed = sha256(Path(repair["failed_run"]) / "simulation.py")
    again = failed is not None and failed == sha256(next_script)
    if again:
        return (
            f"- `{stage_id}`: a run failed ({repair['kind']}); it was run again with the "
            f"same code (byte-identical; failed run kept in `{kept}`)"
        )
    return (
        f"- `{stage_id}`: a run failed ({repair['kind']}); the code was regenerated with the "
        f"error (failed run kept in `{kept}`)"
    )
