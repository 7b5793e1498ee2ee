"""Results about modes in the pipeline: the paper's tables and band diagrams that a
stage measures with Harminv (the design's `mode_results`), compared from the run-time
record, and what the other steps need to treat a table id as a target like a figure."""

from __future__ import annotations

import math
from pathlib import Path

from reprolab.physics import bands, modes
from reprolab.physics import thresholds as th
from reprolab.physics.record_checks import load_record

# Key-value kinds read off a table or a band diagram (the others: off a curve).
MODE_KEY_KINDS = ("mode_frequency", "quality_factor", "gap_lower", "gap_upper", "gap_midgap_ratio")


def _dump(obj) -> dict:
    return obj.model_dump() if hasattr(obj, "model_dump") else dict(obj)


def is_table(paper, result_id: str) -> bool:
    """The id names one of the paper's tables (papers without tables: never)."""
    check = getattr(paper, "is_table", None)
    return bool(check(result_id)) if check is not None else False


def band_diagram(paper, result_id: str) -> dict | None:
    """The figure's band diagram as a dict; None for a figure of curves, a table or an
    id the paper does not have."""
    get = getattr(paper, "band_diagram", None)
    if get is None or is_table(paper, result_id):
        return None
    try:
        found = get(result_id)
    except KeyError:
        return None
    return _dump(found) if found is not None else None


def result_meta(paper, result_id: str) -> dict:
    """What an agent reads of a target: the figure's metadata, or the table's (with
    `kind: table` and no image)."""
    if is_table(paper, result_id):
        return {"kind": "table", "figure_id": result_id, **_dump(paper.table(result_id))}
    return paper.figure(result_id).model_dump()


def result_image(paper, result_id: str) -> Path | None:
    """The paper's image of a target; a table has none."""
    if is_table(paper, result_id):
        return None
    return paper.folder / paper.figure(result_id).image


def result_ids(paper) -> list[str]:
    """Every figure and table id of the paper (the targets a plan may name)."""
    ids = getattr(paper, "result_ids", None)
    if ids is not None:
        return list(ids())
    return [f.figure_id for f in paper.meta.figures]


def mode_result_ids(design) -> list[str]:
    """The tables and band diagrams a design measures from the record."""
    return list(getattr(design, "mode_results", None) or [])


def k_labels(paper) -> dict[str, list[float]]:
    """Symmetry-point labels of every band diagram's k path (a table's `k` label)."""
    out: dict[str, list[float]] = {}
    for fig in paper.meta.figures:
        diagram = band_diagram(paper, fig.figure_id)
        for point in (diagram or {}).get("k_path", []):
            out.setdefault(point["label"], list(point["k"]))
    return out


def unit_length(paper) -> float | None:
    """The paper's length a in metres (metadata `unit_length`), or None."""
    return getattr(paper, "unit_length_m", None)


def _in_ca(values, unit: str, a: float | None, where: str) -> list:
    """Frequencies of a figure's y axis in c/a (a c/a-like unit: as they are)."""
    scale = modes.frequency_in(1.0, unit, a, where)
    return [None if v is None else v / scale for v in values]


def compare_band(paper, figure_id: str, sims: list[dict]) -> dict:
    diagram = band_diagram(paper, figure_id)
    axis = paper.figure(figure_id).y_axes.left
    a = unit_length(paper)
    raw = paper.band_points(figure_id)
    freqs = _in_ca([p[1] for p in raw], axis.unit, a, f"{figure_id} y axis")
    points = [(p[0], f, p[2]) for p, f in zip(raw, freqs, strict=True)]
    gaps = []
    for gap in diagram.get("gaps") or []:
        lower, upper = _in_ca([gap.get("lower"), gap.get("upper")], axis.unit, a, figure_id)
        gaps.append({**gap, "lower": lower, "upper": upper})
    entry = bands.compare_band_diagram(figure_id, {**diagram, "gaps": gaps}, points, sims)
    entry["k_path_labels"] = [[i, p["label"]] for i, p in enumerate(diagram["k_path"])]
    return entry


def key_value_table(kv, table: dict | None, gaps: list[dict]) -> tuple[dict, str]:
    """A mode key value as a one-row table (its value in column `v`), or why it cannot
    be read. The row's labels: the key value's (and its band); on a table, a key value
    that restates one row's value also takes that row's labels and stated frequency (a
    `highest Q` names its mode through its row); a gap without a band on a band diagram
    is its one stated gap."""
    row = dict(kv.labels or {}) | ({"band": kv.band} if kv.band is not None else {})
    columns = [{"name": "v", "measure": kv.kind, "unit": kv.unit}]
    same = [
        r
        for r in (table or {}).get("rows", [])
        for c in table["columns"]
        if c["measure"] == kv.kind and _equal(r.get(c["name"]), kv.value)
    ]
    if len(same) == 1:
        row = {name: same[0][name] for name in table["labels"] if name in same[0]} | row
        finds = ("mode_frequency", "mode_wavelength")  # the row's frequency finds its mode
        for c in table["columns"]:
            if c["measure"] in finds and kv.kind not in finds and same[0].get(c["name"]):
                row[f"row_{c['name']}"] = same[0][c["name"]]
                columns.append({**c, "name": f"row_{c['name']}"})
    if kv.kind.startswith("gap_") and "band" not in row:
        if len(gaps) != 1:
            why = f"key value '{kv.quantity}': a gap needs `band` (the band below it); "
            return {}, why + f"the result states {len(gaps)} gap(s)"
        row["band"] = gaps[0]["below_band"]
    labels = [name for name in row if name in modes.MATCHED_LABELS + ("parity", "polarization")]
    return {
        "table_id": "key_value",
        "labels": labels,
        "columns": columns,
        "rows": [row | {"v": kv.value}],
    }, ""


def _equal(a, b) -> bool:
    return isinstance(a, (int, float)) and math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def key_values(paper, rid: str, sims: list[dict], k_points: dict, gaps: list[dict]) -> list:
    """The paper's key values of mode kinds on this table or band diagram, each read
    off the record like a one-row table (labels, band) and classified."""
    table = _dump(paper.table(rid)) if is_table(paper, rid) else None
    out = []
    for kv in getattr(paper.meta, "key_values", []):
        if kv.figure != rid or kv.kind not in MODE_KEY_KINDS:
            continue
        one, why = key_value_table(kv, table, gaps)
        entry = {"quantity": kv.quantity, "kind": kv.kind, "value": kv.value, "unit": kv.unit}
        if why:
            out.append(entry | {"labels": {}, "sim": None, "status": "not_compared", "note": why})
            out[-1]["class"] = "FAILURE"
            continue
        got = modes.compare_table(one, sims, k_points, unit_length(paper))
        value = next(v for v in got["rows"][0]["values"] if v["name"] == "v")
        entry |= {"labels": got["rows"][0]["labels"], "sim": value.get("measured")}
        entry |= {"error": value.get("error"), "error_kind": value.get("error_kind")}
        entry |= {"status": value["status"], "class": value["class"] or "FAILURE"}
        note = value.get("note") or got["rows"][0].get("note")
        out.append(entry | ({"note": note} if note else {}))
    return out


def with_key_values(entry: dict, paper, rid: str, sims, k_points, gaps) -> dict:
    found = key_values(paper, rid, sims, k_points, gaps)
    if found:
        entry["key_values"] = found
        entry["classification"] = th.worst(
            [entry["classification"], *(kv["class"] for kv in found)]
        )
    return entry


def compare_mode_results(run, design, stage_dir: Path) -> list[dict]:
    """One comparison.json entry per id of the design's `mode_results`, from the run's
    record (a table: `modes.compare_table`; a band diagram: `bands.compare_band_diagram`),
    each with its overlay drawn beside comparison.json."""
    from reprolab.report import plots

    ids = mode_result_ids(design)
    if not ids:
        return []
    sims = load_record(Path(stage_dir) / "run")
    out = []
    for rid in ids:
        out_png = Path(stage_dir) / f"overlay_{rid}.png"
        try:
            k_points = k_labels(run.paper)
            if is_table(run.paper, rid):
                table = _dump(run.paper.table(rid))
                entry = modes.compare_table(table, sims, k_points, unit_length(run.paper))
                entry = with_key_values(entry, run.paper, rid, sims, k_points, [])
                entry["overlay"] = plots.table_overlay(entry, out_png)
            elif (diagram := band_diagram(run.paper, rid)) is not None:
                entry = compare_band(run.paper, rid, sims)
                own = {p["label"]: p["k"] for p in diagram["k_path"]}  # its own labels first
                gaps = diagram.get("gaps") or []
                entry = with_key_values(entry, run.paper, rid, sims, k_points | own, gaps)
                entry["overlay"] = plots.band_overlay(run.paper, entry, out_png)
            else:
                entry = _not_a_mode_result(rid)
        except modes.UnitProblem as exc:
            entry = _not_a_mode_result(rid, str(exc))
        if not sims:
            entry["note"] = (
                f"no run-time record in {Path(stage_dir) / 'run'}: no Harminv mode to compare"
            )
        out.append(entry)
    return out


def _not_a_mode_result(rid: str, why: str = "") -> dict:
    return {
        "figure_id": rid,
        "kind": "table",
        "classification": "FAILURE",
        "rows": [],
        "missing": 0,
        "curves": [],
        "error": why
        or f"'{rid}' in mode_results is neither a table nor a figure with a band_diagram",
    }
