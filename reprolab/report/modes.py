"""Report sections of results about modes: a table compared value by value, a band
diagram's per-band errors, gaps and missing modes (comparison.json entries of kind
`table` and `band_diagram`)."""

from __future__ import annotations

from reprolab.physics import thresholds as th
from reprolab.report.fmt import cell, table_header

MODE_KINDS = ("table", "band_diagram")


def _num(value, spec: str = ".5g") -> str:
    return cell(value, spec)


def _labels(labels: dict) -> str:
    return ", ".join(f"{k} = {_num(v)}" for k, v in labels.items()) or "–"


def _error(v: dict) -> str:
    if v.get("error") is None:
        return "–"
    if v.get("error_kind") == "log10_factor":
        return f"×{10 ** v['error']:.4g} (log10 {v['error']:+.3f})"
    if v.get("error_kind") == "relative":
        return f"{v['error'] * 100:+.3g} %"
    if v.get("unit") == "%":  # a ratio stated in %: its error is a fraction
        return f"{v['error'] * 100:+.3g} points"
    return f"{v['error']:+.4g}"


def _measured(v: dict) -> str:
    """The run's value; a Q or linewidth the run cannot measure says so, never a number."""
    if v.get("measured_text"):
        return v["measured_text"]
    unit = "" if v.get("unit") in (None, "", "1") or v.get("measured") is None else f" {v['unit']}"
    return _num(v.get("measured")) + unit  # in the stated value's unit, said as beside it


def table_rows(entry: dict) -> list[str]:
    """One line per stated value: the row's labels, stated, measured, error, status."""
    md = table_header("labels", "value", "stated", "measured", "error", "status", "class")
    for i, row in enumerate(entry.get("rows", [])):
        labels = _labels(row["labels"]) if row["labels"] else f"row {i + 1}"
        if not row["values"]:
            md.append(f"| {labels} | – | – | – | – | {row.get('note') or '–'} | – |")
        for v in row["values"]:
            unit = "" if v.get("unit") in (None, "", "1") else f" {v['unit']}"
            status = v["status"]
            note = v.get("note") or (row.get("note") if status == "missing" else "")
            status += f": {note}" if note else ""
            md.append(
                f"| {labels} | {v['name']} | {_num(v['stated'])}{unit} | {_measured(v)} | "
                f"{_error(v)} | {status} | {v.get('class') or '–'} |"
            )
    return md


def band_rows(entry: dict) -> list[str]:
    md = table_header("band", "points", "missing", "RMS rel.", "max rel.", "class")
    for b in entry.get("bands", []):
        band = "unassigned" if b["band"] is None else b["band"]
        md.append(
            f"| {band} | {b['points']} | {b['missing']} | {_num(b['rms_rel'], '.2%')} | "
            f"{_num(b['max_rel'], '.2%')} | {b['class']} |"
        )
    return md


def gap_rows(entry: dict) -> list[str]:
    if not entry.get("gaps"):
        return []
    md = [
        "",
        *table_header(
            "gap above band",
            "paper lower–upper",
            "run lower–upper",
            "paper gap/midgap",
            "run gap/midgap",
            "class",
        ),
    ]
    for g in entry["gaps"]:
        st, me = g["stated"], g.get("measured") or {}
        closed = " (closed)" if g.get("status") == "closed" else ""
        md.append(
            f"| {g['below_band']} | {_num(st.get('lower'))}–{_num(st.get('upper'))} | "
            f"{_num(me.get('lower'))}–{_num(me.get('upper'))}{closed} | "
            f"{_num(st.get('ratio'), '.2%')} | {_num(me.get('ratio'), '.2%')} | {g['class']} |"
        )
    return md


def missing_lines(entry: dict) -> list[str]:
    lost = entry.get("missing") or []
    if not lost:
        return []
    shown = ", ".join(
        f"band {_num(p['band'])} at k_path {_num(p['k_path'], '.3g')} "
        f"(paper {_num(p['stated'], '.4g')})"
        for p in lost[:12]
    )
    more = f" and {len(lost) - 12} more" if len(lost) > 12 else ""
    return ["", f"Modes the paper shows that the run did not find (missing): {shown}{more}."]


def key_value_rows(entry: dict) -> list[str]:
    """The paper's key values read off this table or band diagram."""
    found = entry.get("key_values") or []
    if not found:
        return []
    md = ["", "Key values the paper states, read off the run's modes:", ""]
    md += table_header("key value", "labels", "paper", "run", "error", "status", "class")
    for kv in found:
        unit = "" if kv.get("unit") in (None, "", "1") else f" {kv['unit']}"
        status = kv["status"] + (f": {kv['note']}" if kv.get("note") else "")
        md.append(
            f"| {kv['quantity']} | {_labels(kv['labels'])} | {_num(kv['value'])}{unit} | "
            f"{_num(kv.get('sim'))} | {_error(kv)} | {status} | {kv['class']} |"
        )
    return md


def mode_tables(entry: dict) -> list[str]:
    """The tables of a table or band diagram entry, with its notes and thresholds."""
    if entry.get("error"):
        return [f"FAILURE: {entry['error']}"]
    notes = [n for n in [entry.get("note"), *entry.get("notes", [])] if n]
    if entry["kind"] == "table":
        md = table_rows(entry)
        bands = (th.MODE_FREQUENCY, th.QUALITY_FACTOR)
    else:
        md = [*band_rows(entry), *gap_rows(entry), *missing_lines(entry)]
        bands = (th.BAND_RMS, th.BAND_MAX, th.GAP_EDGE)
    md += key_value_rows(entry)
    limits = "; ".join(
        f"`{b.metric}` SUCCESS ≤ {b.acceptable:g}, PARTIAL ≤ {b.investigate:g}" for b in bands
    )
    md += ["", f"Thresholds: {limits}."]
    return [*md, *(f"Note: {n}" for n in notes)]


def summary_cells(entry: dict) -> str:
    """The report's summary-table cells (RMS, max, shift) of a table or band diagram:
    a band diagram's worst band RMS and max relative error; a table's largest relative
    frequency error (a mode's shift)."""
    if entry.get("kind") == "band_diagram":
        rms = [b["rms_rel"] for b in entry.get("bands", []) if b.get("rms_rel") is not None]
        top = [b["max_rel"] for b in entry.get("bands", []) if b.get("max_rel") is not None]
        return f"{_num(max(rms, default=None), '.2%')} | {_num(max(top, default=None), '.2%')} | –"
    shifts = [
        abs(v["error"])
        for row in entry.get("rows", [])
        for v in row["values"]
        if v["measure"] in ("mode_frequency", "mode_wavelength") and v.get("error") is not None
    ]
    return f"– | – | {_num(max(shifts, default=None), '.2%')}"
