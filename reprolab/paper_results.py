"""Results about modes in a paper's metadata: the rows of its tables, and the key values
read off a table or a band diagram rather than off a curve.

Each function returns every problem as a message naming the field and what would be
valid; `reprolab.paper` lists them with the rest of a folder's problems
(docs/paper-format.md, "Tables", "Band diagrams").
"""

from __future__ import annotations

import difflib
import json
import math
import re
from typing import Any

from reprolab import units
from reprolab.paper_format import (
    LABELS,
    MEASURES,
    MODE_KINDS,
    POLARIZATIONS,
    Figure,
    KeyValue,
    PaperMetadata,
    Table,
)

# Measures whose stated value must be above zero (a frequency, a Q, a width).
POSITIVE = ("mode_frequency", "mode_wavelength", "quality_factor", "linewidth")
POSITIVE += ("gap_midgap_ratio",)
GAP_KINDS = ("gap_lower", "gap_upper", "gap_midgap_ratio")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return (isinstance(value, int | float) and not isinstance(value, bool)) and math.isfinite(value)


def label_problem(name: str, value: Any) -> str | None:
    """Why `value` is not a valid value of row label `name`, or None."""
    if name == "m":
        ok, want = _is_int(value), "an integer (the azimuthal order)"
    elif name == "order":
        ok, want = _is_int(value) and value >= 0, "an integer >= 0"
    elif name == "band":
        ok, want = _is_int(value) and value >= 1, "a positive integer (bands count from 1)"
    elif name == "parity":
        ok = (isinstance(value, str) and value.strip() != "") or (
            _is_int(value) and value in (1, -1)
        )
        want = "a text such as even or odd, or +1 / -1"
    elif name == "polarization":
        ok, want = value in POLARIZATIONS, f"one of {', '.join(POLARIZATIONS)}"
    else:  # k
        vector = isinstance(value, list) and 1 <= len(value) <= 3
        ok = (isinstance(value, str) and value.strip() != "") or (
            vector and all(_is_number(v) for v in value)
        )
        want = "a symmetry-point label (e.g. Γ) or [kx, ky, kz] in units of 2π/a"
    return None if ok else f"is {value!r}; valid: {want}"


def _value_problem(measure: str, unit: str, value: Any) -> str | None:
    if measure == "other":
        ok = _is_number(value) or isinstance(value, str)
        return None if ok else f"is {value!r}; valid: a number or a text, or null"
    if not _is_number(value):
        return (
            f"is {value!r}; valid: a number in {unit} (measure {measure}), or null when not stated"
        )
    if measure in POSITIVE and value <= 0:
        return f"is {value!r}; valid: a {measure} above 0"
    if measure in ("gap_lower", "gap_upper") and value < 0:
        return f"is {value!r}; valid: a frequency >= 0"
    return None


def row_problems(t: int, table: Table) -> list[str]:
    """Every row of `tables[t]`: its labels declared and stated, its values numbers (or
    null), no two rows with the same labels."""
    where, out = f"tables[{t}]", []
    valid = [*table.labels, *table.names]
    seen: dict[str, int] = {}
    for r, row in enumerate(table.rows):
        at = f"{where}.rows[{r}]"
        for key in row:
            if key in valid:
                continue
            if key in LABELS:
                out.append(
                    f"field '{at}.{key}': label '{key}' is not declared in '{where}.labels' "
                    f"({list(table.labels)}); declare it there or remove it from the row"
                )
                continue
            close = difflib.get_close_matches(str(key), valid, n=1)
            hint = f"did you mean '{close[0]}'? " if close else ""
            out.append(
                f"field '{at}.{key}' is not a label or column of table '{table.table_id}'; "
                f"{hint}valid: {valid}"
            )
        out += _row_labels(at, table, row)
        out += _row_values(at, table, row)
        if table.labels and not any(f"field '{at}" in m for m in out):
            key = json.dumps(table.row_labels(row), sort_keys=True, ensure_ascii=False)
            if key in seen:
                out.append(
                    f"field '{at}' has the same labels as rows[{seen[key]}] ({key}); add a "
                    f"label that tells them apart (valid labels: {list(LABELS)})"
                )
            seen.setdefault(key, r)
    return out


def _row_labels(at: str, table: Table, row: dict) -> list[str]:
    out = []
    for label in table.labels:
        if row.get(label) is None:
            out.append(
                f"field '{at}' has no label '{label}'; every row of table '{table.table_id}' "
                f"states its labels {list(table.labels)}"
            )
            continue
        problem = label_problem(label, row[label])
        if problem:
            out.append(f"field '{at}.{label}' {problem}")
    return out


def _row_values(at: str, table: Table, row: dict) -> list[str]:
    out, stated = [], 0
    for col in table.columns:
        if row.get(col.name) is None:
            continue
        stated += 1
        problem = _value_problem(col.measure, col.unit, row[col.name])
        if problem:
            out.append(f"field '{at}.{col.name}' {problem}")
    if not stated:
        out.append(f"field '{at}' states no value of the columns {table.names}; a row needs one")
    lower = [row.get(c.name) for c in table.columns if c.measure == "gap_lower"]
    upper = [row.get(c.name) for c in table.columns if c.measure == "gap_upper"]
    pair = len(lower) == len(upper) == 1 and _is_number(lower[0]) and _is_number(upper[0])
    if pair and lower[0] >= upper[0]:
        out.append(f"field '{at}': gap_lower {lower[0]} is not below gap_upper {upper[0]}")
    return out


def table_problems(meta: PaperMetadata) -> list[str]:
    return [m for t, table in enumerate(meta.tables) for m in row_problems(t, table)]


# An area (a cross section σ, C) has no quantity of its own: it is never converted into
# a dimensionless efficiency Q = σ / σ_geo, whose geometric cross section (πr² of a
# sphere, 2r per length of a cylinder) is the very factor a normalisation gets wrong.
_AREA = re.compile(r"^(nm|um|µm|mm|cm|m)\s*(\^2|²|2)$")


def dimension_words(quantity: str | None, unit: str) -> str:
    """What a unit measures, in words: `an area`, `a length`, `dimensionless`."""
    if _AREA.match(unit.strip()):
        return "an area"
    if quantity and unit in units.UNITS.get(quantity, {}):
        return "dimensionless" if quantity == "dimensionless" else f"a {quantity}"
    found = sorted(q for q, us in units.UNITS.items() if unit in us)
    if not found:
        return "no unit of any axis quantity"
    if "dimensionless" in found:
        return "dimensionless"
    return " or ".join(f"a {q}" for q in found[:2])


STATED_IN_AXIS = "a key value is stated in its axis's unit"


def _in_axis_unit(value: float, unit: str, axis, unit_length_m: float | None) -> str:
    """The valid part of a key value's unit problem: the value converted to the axis's
    unit where the two measure one thing (nm and µm, Hz and c/a with the paper's length
    a), else what the axis is and why nothing converts."""
    valid = f"valid: '{axis.unit}'"
    sources = [q for q in (axis.quantity, *units.PHOTON) if unit in units.UNITS.get(q, {})]
    for src in sources:
        try:
            (converted,) = units.convert(
                [value], (src, unit), (axis.quantity, axis.unit), unit_length_m
            )
        except units.UnitError as exc:
            if "unit_length" in str(exc):
                return f"{valid}; {unit} converts to {axis.unit} only with {units.UNIT_LENGTH_HINT}"
            continue
        shown = "" if axis.unit == "1" else f" {axis.unit}"
        return f"{valid}: the value is {converted:.6g}{shown} ({STATED_IN_AXIS})"
    if _AREA.match(unit.strip()) and axis.quantity == "dimensionless":
        return (
            f"{valid}: an efficiency, the cross section over the geometric one (πr² of a "
            "sphere, 2r per length of a cylinder), as the axis plots it; an area is never "
            "converted to it"
        )
    return f"{valid} ({STATED_IN_AXIS}, {dimension_words(axis.quantity, axis.unit)})"


def key_value_problems(meta: PaperMetadata) -> list[str]:
    """Each key value on a real figure, curve or table, read the way its kind says, in
    the unit of the axis or column it is compared with."""
    figs = {f.figure_id: f for f in meta.figures}
    tables = {t.table_id: t for t in meta.tables}
    targets = sorted([*tables, *(i for i, f in figs.items() if f.band_diagram)])
    out = []
    for k, kv in enumerate(meta.key_values):
        where = f"key_values[{k}]"
        if kv.figure is not None and kv.figure not in figs and kv.figure not in tables:
            out.append(
                f"field '{where}.figure' is '{kv.figure}'; valid: {sorted([*figs, *tables])}"
            )
        if kv.kind in MODE_KINDS:
            out += _mode_problems(where, kv, figs, tables, targets)
        else:
            a_m = meta.unit_length.metres if meta.unit_length else None
            out += _curve_problems(where, kv, figs, tables, a_m)
    return out


def _curve_problems(
    where: str, kv: KeyValue, figs: dict, tables: dict, unit_length_m: float | None = None
) -> list[str]:
    out = []
    if kv.labels is not None or kv.band is not None:
        out.append(
            f"field '{where}': labels and band belong to the kinds read off a table or a band "
            f"diagram ({', '.join(MODE_KINDS)}); kind '{kv.kind}' has neither"
        )
    if kv.kind == "other":
        return out
    if kv.figure in tables:
        return out + [
            f"field '{where}.kind' is '{kv.kind}', which reads a curve, but '{kv.figure}' is a "
            f"table; valid kinds for a table: {', '.join(MODE_KINDS)}, other"
        ]
    fig = figs.get(kv.figure)
    if fig is not None and kv.curve is not None:
        valid = [c.curve_id for c in fig.curves]
        if kv.curve not in valid:
            out.append(f"field '{where}.curve' is '{kv.curve}'; valid: {valid}")
        else:
            out += _curve_unit(where, kv, fig, unit_length_m)
    if kv.figure is None or kv.curve is None:
        out.append(f"field '{where}': kind '{kv.kind}' needs a figure and a curve")
    if kv.kind == "y_at_x" and kv.x is None:
        out.append(f"field '{where}.x' is required for kind 'y_at_x'")
    return out


def _curve_unit(where: str, kv: KeyValue, fig: Figure, unit_length_m: float | None) -> list[str]:
    """The value is compared in its axis's unit: it must be stated in it."""
    if kv.kind.startswith("x_splitting_of_"):
        axis = fig.x_axis  # a splitting may be stated in any photon unit: converted
        if axis.quantity in units.PHOTON and units.photon_quantity(kv.unit):
            return []
    if kv.kind.startswith("x_"):
        axis, what = fig.x_axis, "x_axis"
    else:
        right = fig.curve_axis(kv.curve) == "right"
        axis, what = (
            (fig.y_axes.right, "y_axes.right") if right else (fig.y_axes.left, "y_axes.left")
        )
    if axis is None or axis.quantity == units.FREE:
        return []
    if units.same_unit(axis.quantity, kv.unit, axis.unit):
        return []
    measures = dimension_words(axis.quantity, kv.unit)
    return [
        f"field '{where}.unit' is '{kv.unit}' ({measures}), but kind "
        f"'{kv.kind}' reads figure '{fig.figure_id}' {what}, {axis.quantity} in "
        f"'{axis.unit}'; {_in_axis_unit(kv.value, kv.unit, axis, unit_length_m)}"
    ]


def _mode_problems(where: str, kv: KeyValue, figs: dict, tables: dict, targets: list) -> list:
    out = []
    if kv.curve is not None:
        out.append(
            f"field '{where}.curve': kind '{kv.kind}' reads a table or a band diagram, not a "
            "curve; remove curve"
        )
    if kv.figure is None:
        return out + [
            f"field '{where}': kind '{kv.kind}' needs a figure: a table or a band-diagram "
            f"figure; valid: {targets}"
        ]
    if kv.figure in tables:
        return out + _table_kv(where, kv, tables[kv.figure])
    fig = figs.get(kv.figure)
    if fig is None:
        return out
    if fig.band_diagram is None:
        return out + [
            f"field '{where}.figure' is '{kv.figure}', a figure of curves; kind '{kv.kind}' "
            f"reads a table or a band diagram; valid: {targets}"
        ]
    return out + _band_kv(where, kv, fig)


def _table_kv(where: str, kv: KeyValue, table: Table) -> list[str]:
    out = []
    cols = [c for c in table.columns if c.measure == kv.kind]
    problem = units.check_unit(MEASURES[kv.kind] or units.FREE, kv.unit)
    if not cols:
        measures = sorted({c.measure for c in table.columns})
        out.append(
            f"field '{where}.kind' is '{kv.kind}', but table '{table.table_id}' has no column "
            f"of measure {kv.kind}; its measures: {measures}"
        )
    elif problem:
        out.append(f"field '{where}.unit': {problem}")
    elif not any(units.same_unit(MEASURES[kv.kind], kv.unit, c.unit) for c in cols):
        out.append(
            f"field '{where}.unit' is '{kv.unit}', but table '{table.table_id}' states "
            f"{kv.kind} in '{cols[0].unit}' (column '{cols[0].name}'); valid: '{cols[0].unit}'"
        )
    labels = dict(kv.labels or {})
    if kv.band is not None:
        labels.setdefault("band", kv.band)
    for name, value in labels.items():
        if name not in table.labels:
            out.append(
                f"field '{where}.labels.{name}': label '{name}' is not declared by table "
                f"'{table.table_id}'; valid: {list(table.labels)}"
            )
        elif problem := label_problem(name, value):
            out.append(f"field '{where}.labels.{name}' {problem}")
    return out


def _band_kv(where: str, kv: KeyValue, fig: Figure) -> list[str]:
    bd, axis = fig.band_diagram, fig.y_axes.left
    assert bd is not None
    out = []
    if kv.kind == "quality_factor":
        return [
            f"field '{where}.figure' is band diagram '{fig.figure_id}', which states no "
            "quality factor; valid: a table with a quality_factor column"
        ]
    if kv.kind == "gap_midgap_ratio":
        if units.check_unit("dimensionless", kv.unit):
            out.append(f"field '{where}.unit' is '{kv.unit}'; valid: 1 or % (a ratio)")
    elif not units.same_unit("frequency", kv.unit, axis.unit):
        out.append(
            f"field '{where}.unit' is '{kv.unit}', but band diagram '{fig.figure_id}' has "
            f"frequencies in '{axis.unit}'; valid: '{axis.unit}'"
        )
    top = bd.bands - 1 if kv.kind in GAP_KINDS else bd.bands
    what = "the band below the gap" if kv.kind in GAP_KINDS else "the band, from 1"
    if kv.band is None or kv.band > top:
        got = "missing" if kv.band is None else f"{kv.band}"
        one = ", or none where the figure states one gap" if kv.kind in GAP_KINDS else ""
        out.append(
            f"field '{where}.band' is {got}; valid: {what}, 1 to {top} "
            f"(band_diagram.bands is {bd.bands}){one}"
        )
    labels = dict(kv.labels or {})
    for name in sorted(set(labels) - {"k"}):
        out.append(f"field '{where}.labels.{name}': a band diagram's mode has only 'k' (and band)")
    k = labels.get("k")
    if kv.kind == "mode_frequency" and k is None:
        out.append(f"field '{where}.labels.k' is required: the mode's k point; valid: {bd.labels}")
    elif isinstance(k, str) and k not in bd.labels:
        out.append(f"field '{where}.labels.k' is '{k}'; valid: {bd.labels} or [kx, ky, kz]")
    elif k is not None and (problem := label_problem("k", k)):
        out.append(f"field '{where}.labels.k' {problem}")
    return out
