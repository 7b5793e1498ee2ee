"""A paper's table of modes against the Harminv modes of the run-time record.

A table row names a mode by its labels (`m`, `k`, `band`, `order`, ...) and states
values (frequency, Q, linewidth, splitting, gap edges). Each row is matched to a
measured mode: the labels first (m to the simulation's `m`, k to its `k_point`, band to
the order of the modes at that k), then the nearest frequency. Only trusted modes
(`harminv.mode_trusted`) are matched; a Q the run cannot measure (`harminv.q_measurable`
over the run's window) is `above_measurable`, never a number; a row with no mode is
`missing` (FAILURE), never dropped. Pure functions of data: the caller reads the record.
"""

from __future__ import annotations

import math

from reprolab import units
from reprolab.physics import harminv
from reprolab.physics import thresholds as th

# Modes of one k (or one m) closer than this relative frequency are one mode seen by
# several Harminv monitors or runs.
SAME_MODE_REL = 1e-4
FIT = ("simulation", "run", "fit")  # what names one Harminv fit of the record
# Two k points (2π/a) closer than this are the same k.
K_TOL = 1e-6
# Labels the record can match (polarization where a 2D run's sources tell it); parity
# only names the row.
MATCHED_LABELS = ("m", "k", "band", "order", "polarization")
# Measures read off one matched mode (the others: gap values over the record, or none).
MODE_MEASURES = ("mode_frequency", "mode_wavelength", "quality_factor", "linewidth", "splitting")
MEASURES = (
    "mode_frequency",
    "mode_wavelength",
    "quality_factor",
    "linewidth",
    "splitting",
    "gap_lower",
    "gap_upper",
    "gap_midgap_ratio",
    "other",
)


class UnitProblem(ValueError):
    """A stated unit this comparison cannot convert to (the message says what would)."""


# --- the record's modes ---------------------------------------------------------------


def _k_of(run: dict, sim: dict):
    k = run.get("k_point") if run.get("k_point") is not None else sim.get("k_point")
    return None if k is None else [float(v) for v in (list(k) + [0.0, 0.0, 0.0])[:3]]


# Meep's component numbers: a 2D run excited by Ez (or Hx, Hy) sees only TM modes (E
# out of the plane), one excited by Hz (or Ex, Ey) only TE modes.
TM_COMPONENTS = {4, 5, 6}
TE_COMPONENTS = {9, 0, 1}


def polarization_of(sim: dict) -> str | None:
    """TM or TE of a 2D simulation from its sources' components; None when it cannot
    tell (3D, mixed or unrecorded components)."""
    found = {s.get("component") for s in sim.get("sources", [])}
    if sim.get("dimensions") != 2 or not found or None in found:
        return None
    if found <= TM_COMPONENTS:
        return "TM"
    return "TE" if found <= TE_COMPONENTS else None


def record_modes(sims: list[dict]) -> list[dict]:
    """Every Harminv mode of the record with where it was measured: simulation index,
    run, k_point (the run's, else the simulation's), m, the run's window (sim_time)
    and whether its frequency is trusted (and why not)."""
    out = []
    for si, sim in enumerate(sims):
        for ri, run in enumerate(sim.get("runs", [])):
            m = run.get("m") if run.get("m") is not None else sim.get("m")
            for hi, h in enumerate(run.get("harminv", [])):
                found = h.get("modes", [])
                strongest = max((abs(x.get("amp") or 0.0) for x in found), default=0.0)
                for mode in found:
                    ok, why = harminv.mode_trusted(mode, strongest)
                    out.append(
                        {
                            **mode,
                            "simulation": sim.get("index", si),
                            "run": ri,
                            "fit": hi,
                            "k_point": _k_of(run, sim),
                            "m": m,
                            "cylindrical": bool(sim.get("cylindrical")),
                            "polarization": polarization_of(sim),
                            "window": float(run.get("sim_time") or 0.0),
                            "trusted": ok,
                            "why": why,
                        }
                    )
    return out


def distinct(modes: list[dict]) -> list[dict]:
    """Trusted modes sorted by frequency, one per mode: of modes within SAME_MODE_REL
    (several monitors, several runs), or of two fits closer than their windows resolve
    (`resolvable`: one mode seen at two points, which would count as the next band),
    the one with the smallest Harminv error is kept. A fit's own modes stay apart
    beyond SAME_MODE_REL: a mode joins a group from its window only when no mode of
    its fit is in it already."""
    groups: list[tuple[dict, set]] = []  # (kept mode, the fits it stands for)
    for mode in sorted(modes, key=lambda x: x["freq"]):
        fit = tuple(mode.get(k) for k in FIT)
        if groups:
            kept, fits = groups[-1]
            gap = abs(mode["freq"] - kept["freq"])
            same = gap <= SAME_MODE_REL * mode["freq"]
            if same or (gap <= resolvable(mode, kept) and fit not in fits):
                if (mode.get("error") or 0.0) < (kept.get("error") or 0.0):
                    kept = mode
                groups[-1] = (kept, fits | {fit})
                continue
        groups.append((mode, {fit}))
    return [kept for kept, _ in groups]


def resolvable(a: dict, b: dict) -> float:
    """The smallest frequency difference at which two modes are two: SAME_MODE_REL of
    the frequency within one Harminv fit (its joint fit resolved them), and between two
    fits (another point, monitor or run at the same k) what the shorter window tells
    apart, 1 / T (a run's time T bounds the window Harminv saw, so this errs towards
    keeping two modes): two fits each see a mode, not which of them is another's."""
    floor = SAME_MODE_REL * max(abs(a["freq"]), abs(b["freq"]))
    if all(a.get(k) == b.get(k) for k in FIT):
        return floor
    windows = [w for w in (a.get("window"), b.get("window")) if w and w > 0]
    return max(floor, 1 / min(windows)) if windows else floor


def is_gamma(k) -> bool:
    return k is not None and all(abs(v) <= K_TOL for v in k)


def zero_mode(k, note: str = "the omega = 0 mode at Gamma (Harminv cannot return it)") -> dict:
    """Band 1 at Gamma of a dielectric crystal: omega = 0, which no time series shows."""
    return {"freq": 0.0, "Q": None, "k_point": list(k), "zero": True, "note": note}


def ordered_at(modes: list[dict], k, with_zero: bool = True) -> list[dict]:
    """The distinct trusted modes at k in order of frequency (band 1 first); at Gamma of
    a periodic (non-cylindrical) run the omega = 0 band is band 1."""
    here = [x for x in modes if x["trusted"] and same_k(x["k_point"], k)]
    ordered = distinct(here)
    if with_zero and is_gamma(k) and here and not here[0]["cylindrical"]:
        ordered = [zero_mode(k), *ordered]
    return ordered


def same_k(a, b) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return all(abs(x - y) <= K_TOL for x, y in zip(a, b, strict=True))


# --- units ----------------------------------------------------------------------------


def _convert(value: float, src: tuple[str, str], dst: tuple[str, str], a_m, field: str) -> float:
    try:
        return units.convert([value], src, dst, a_m)[0]
    except units.UnitError as exc:
        raise UnitProblem(f"column '{field}': {exc}") from None


def frequency_in(f: float, unit: str, a_m: float | None, field: str) -> float:
    """A frequency (or a frequency difference) in c/a in a column's frequency unit; a
    physical unit needs the paper's length a (`a_m`, metres)."""
    return f * _convert(1.0, ("frequency", "c/a"), ("frequency", unit), a_m, field)


def wavelength_in(f: float, unit: str, a_m: float | None, field: str) -> float:
    """The vacuum wavelength of a mode of frequency f (c/a), in a column's unit."""
    return _convert(f, ("frequency", "c/a"), ("wavelength", unit), a_m, field)


# --- matching a row -------------------------------------------------------------------


def resolve_k(label, k_points: dict[str, list[float]]):
    """A row's `k` label as [kx, ky, kz] (2π/a): a list as given, a symmetry-point name
    through the paper's k paths. Raises KeyError naming the valid labels."""
    if isinstance(label, (list, tuple)):
        return [float(v) for v in (list(label) + [0.0, 0.0, 0.0])[:3]]
    if label in k_points:
        return [float(v) for v in (list(k_points[label]) + [0.0, 0.0, 0.0])[:3]]
    raise KeyError(
        f"k label '{label}' is not a symmetry point of the paper's k paths "
        f"(valid: {sorted(k_points) or 'none: give [kx, ky, kz] in 2π/a'})"
    )


def stated_frequency(row: dict, columns: list[dict], a_m: float | None) -> float | None:
    """The row's stated mode frequency in c/a (from a frequency or wavelength column)."""
    for col in columns:
        value = row.get(col["name"])
        if value is None:
            continue
        if col["measure"] == "mode_frequency":
            return _convert(
                value, ("frequency", col["unit"]), ("frequency", "c/a"), a_m, col["name"]
            )
        if col["measure"] == "mode_wavelength":
            return _convert(
                value, ("wavelength", col["unit"]), ("frequency", "c/a"), a_m, col["name"]
            )
    return None


def candidates(row: dict, modes: list[dict], k_points: dict) -> tuple[list[dict], str]:
    """The trusted modes the row's labels allow (in frequency order), and why none."""
    pool = [x for x in modes if x["trusted"]]
    if "m" in row and row["m"] is not None:
        pool = [x for x in pool if x["m"] is not None and int(x["m"]) == int(row["m"])]
        if not pool:
            runs = sorted({x["m"] for x in modes if x["m"] is not None})
            return [], f"no trusted mode of a run with m = {row['m']} (m run: {runs or 'none'})"
    if row.get("polarization") in ("TE", "TM"):  # where the record tells (2D sources)
        pool = [x for x in pool if x["polarization"] in (None, row["polarization"])]
    k = None
    if row.get("k") is not None:
        k = resolve_k(row["k"], k_points)
        pool = [x for x in pool if same_k(x["k_point"], k)]
        if not pool:
            return [], f"no trusted mode of a run at k = {k}"
    if row.get("band") is not None or row.get("order") is not None:
        ks = {tuple(x["k_point"]) for x in pool if x["k_point"] is not None}
        if k is None and len(ks) > 1:
            return [], "a band or order label needs a k label: the record has several k points"
        if k is None and ks:
            k = list(next(iter(ks)))
        ordered = ordered_at(pool, k, with_zero=row.get("band") is not None)
        if row.get("band") is None:  # `order`: among the modes the other labels allow
            ordered = distinct(pool)
        n = int(row["band"] if row.get("band") is not None else row["order"])
        if n < 1 or n > len(ordered):
            return [], f"the run found {len(ordered)} mode(s) at these labels, no number {n}"
        return ordered[n - 1 : n], ""
    if not pool:
        return [], "no trusted mode in the record"
    return distinct(pool), ""


def match_row(row: dict, modes: list[dict], columns, k_points, a_m) -> tuple:
    """(matched mode or None, the other candidates, why none)."""
    try:
        pool, why = candidates(row, modes, k_points)
    except KeyError as exc:
        return None, [], str(exc.args[0])
    if not pool:
        return None, [], why
    f = stated_frequency(row, columns, a_m)
    if f is None:
        if len(pool) == 1:
            return pool[0], pool, ""
        return None, pool, f"no stated frequency to choose among {len(pool)} modes"
    best = min(pool, key=lambda x: abs(x["freq"] - f))
    if f and abs(best["freq"] - f) / abs(f) > th.MODE_MATCH_REL:
        return (
            None,
            pool,
            f"nearest mode f = {best['freq']:.5g} is {abs(best['freq'] - f) / f:.1%} from the "
            f"stated {f:.5g} (a mode over {th.MODE_MATCH_REL:.0%} away is another mode)",
        )
    return best, pool, ""


# --- values ---------------------------------------------------------------------------


def _status(cls: str) -> str:
    return {"SUCCESS": "match", "PARTIAL": "close", "FAILURE": "mismatch"}[cls]


def _relative(stated: float, measured: float, band: th.Band) -> dict:
    error = (measured - stated) / stated if stated else measured - stated
    cls = th.classify_value(band, abs(error))
    kind = "relative" if stated else "absolute"
    return {"measured": measured, "error": error, "error_kind": kind, "status": _status(cls)} | {
        "class": cls
    }


def _log_factor(stated: float, measured: float, band: th.Band) -> dict:
    if stated <= 0:
        return {"measured": measured, "status": "not_compared", "class": None} | {
            "note": f"stated value {stated} is not positive"
        }
    error = math.log10(measured / stated)
    cls = th.classify_value(band, abs(error))
    return {"measured": measured, "error": error, "error_kind": "log10_factor"} | {
        "status": _status(cls),
        "class": cls,
    }


def q_value(stated: float, mode: dict) -> dict:
    """A stated Q against the matched mode's: log10 factor, or above_measurable."""
    window = mode["window"]
    limit = harminv.q_limit(mode["freq"], window)
    if harminv.q_measurable(mode, window):
        out = _log_factor(stated, mode["Q"], th.QUALITY_FACTOR)
        if stated > limit and out.get("class"):
            out |= {"status": "above_measurable", "note": f"stated Q above {limit:.3g}"}
        return out
    # The run's Q is not a number: consistent with a stated Q the window cannot measure
    # either (PARTIAL: a longer window would tell), a contradiction of a measurable one.
    cls = "PARTIAL" if stated > limit else "FAILURE"
    return {
        "measured": None,
        "measured_text": harminv.q_text(mode, window),
        "status": "above_measurable",
        "class": cls,
        "note": f"the run's Q is {harminv.q_text(mode, window)}",
    }


def linewidth_value(stated: float, col: dict, mode: dict, a_m) -> dict:
    window = mode["window"]
    if not harminv.q_measurable(mode, window):
        return {
            "measured": None,
            "measured_text": "below what this run can measure (Q "
            + harminv.q_text(mode, window)
            + ")",
            "status": "above_measurable",
            "class": "FAILURE",
        }
    width = frequency_in(mode["freq"] / mode["Q"], col["unit"], a_m, col["name"])
    return _log_factor(stated, width, th.LINEWIDTH)


def splitting_value(stated: float, col: dict, mode: dict, pool: list[dict], a_m) -> dict:
    others = [x for x in pool if x is not mode and not x.get("zero")]
    if not others:
        return {"measured": None, "status": "missing", "class": "FAILURE"} | {
            "note": "no second mode at these labels to split from"
        }
    near = min(others, key=lambda x: abs(x["freq"] - mode["freq"]))
    split = frequency_in(abs(near["freq"] - mode["freq"]), col["unit"], a_m, col["name"])
    return _relative(stated, split, th.SPLITTING)


def gap_value(row: dict, col: dict, stated: float, modes: list[dict], a_m) -> dict:
    """gap_lower / gap_upper / gap_midgap_ratio of the gap above band `row['band']`: the
    band's maximum and the next band's minimum over every k of the record."""
    if row.get("band") is None:
        return {"measured": None, "status": "not_compared", "class": None} | {
            "note": "a gap value needs the row's `band` label (the band below the gap)"
        }
    n = int(row["band"])
    edges = band_extremes(modes, n)
    if edges is None:
        return {"measured": None, "status": "missing", "class": "FAILURE"} | {
            "note": f"the record has no k point with bands {n} and {n + 1}"
        }
    lower, upper = edges
    if col["measure"] == "gap_midgap_ratio":
        ratio = (upper - lower) / ((upper + lower) / 2) if upper + lower else 0.0
        frac = stated / 100 if col["unit"] == "%" else stated
        error = ratio - frac
        cls = th.classify_value(th.GAP_MIDGAP_RATIO, abs(error))
        return {"measured": ratio * 100 if col["unit"] == "%" else ratio, "error": error} | {
            "error_kind": "absolute",
            "status": _status(cls),
            "class": cls,
        }
    edge = lower if col["measure"] == "gap_lower" else upper
    return _relative(stated, frequency_in(edge, col["unit"], a_m, col["name"]), th.GAP_EDGE)


def band_extremes(modes: list[dict], n: int) -> tuple[float, float] | None:
    """(max of band n, min of band n+1) over the record's k points, by order at each k."""
    ks = []
    for x in modes:
        if (
            x["trusted"]
            and x["k_point"] is not None
            and not any(same_k(x["k_point"], k) for k in ks)
        ):
            ks.append(x["k_point"])
    lows, highs = [], []
    for k in ks:
        ordered = ordered_at(modes, k)
        if len(ordered) > n:
            lows.append(ordered[n - 1]["freq"])
            highs.append(ordered[n]["freq"])
    if not lows:
        return None
    return max(lows), min(highs)


def compare_value(col: dict, stated, mode, pool, row, modes, a_m) -> dict:
    """One stated value of a row against the matched mode."""
    base = {"name": col["name"], "measure": col["measure"], "unit": col["unit"], "stated": stated}
    measure = col["measure"]
    try:
        if measure == "other":
            return (
                base
                | {"measured": None, "status": "not_compared", "class": None}
                | {"note": "compared by the analyst only"}
            )
        if measure.startswith("gap_"):
            return base | gap_value(row, col, stated, modes, a_m)
        if mode is None:
            return base | {"measured": None, "status": "missing", "class": "FAILURE"}
        if measure == "mode_frequency":
            f = frequency_in(mode["freq"], col["unit"], a_m, col["name"])
            return base | _relative(stated, f, th.MODE_FREQUENCY)
        if measure == "mode_wavelength":
            lam = wavelength_in(mode["freq"], col["unit"], a_m, col["name"])
            return base | _relative(stated, lam, th.MODE_FREQUENCY)
        if measure == "quality_factor":
            return base | q_value(stated, mode)
        if measure == "linewidth":
            return base | linewidth_value(stated, col, mode, a_m)
        if measure == "splitting":
            return base | splitting_value(stated, col, mode, pool, a_m)
    except UnitProblem as exc:
        return (
            base
            | {"measured": None, "status": "not_compared", "class": "FAILURE"}
            | {"note": str(exc)}
        )
    raise ValueError(
        f"column '{col['name']}': measure '{measure}' is not one of {', '.join(MEASURES)}"
    )


def matched_summary(mode: dict) -> dict:
    """What the comparison keeps of the matched mode (Q only where measurable)."""
    if mode.get("zero"):
        return {"freq": 0.0, "Q": None, "note": mode["note"], "k_point": mode["k_point"]}
    measurable = harminv.q_measurable(mode, mode["window"])
    return {
        "freq": mode["freq"],
        "Q": mode["Q"] if measurable else None,
        "Q_text": harminv.q_text(mode, mode["window"]),
        "error": mode.get("error"),
        "amp": mode.get("amp"),
        "simulation": mode["simulation"],
        "run": mode["run"],
        "k_point": mode["k_point"],
        "m": mode["m"],
    }


def compare_table(
    table: dict,
    sims: list[dict],
    k_points: dict[str, list[float]] | None = None,
    unit_length_m: float | None = None,
) -> dict:
    """A table (`table_id`, `labels`, `columns`: name/measure/unit, `rows`) against the
    record's modes: the comparison.json entry of kind `table`. `k_points`: symmetry-point
    labels (2π/a); `unit_length_m`: the paper's a in metres (for physical units)."""
    a_m = unit_length_m
    modes = record_modes(sims)
    rows, classes, missing = [], [], 0
    # `order` counts from 0 in a table that uses 0 (a fundamental mode), else from 1
    shift = 1 if any(r.get("order") == 0 for r in table["rows"]) else 0
    for row in table["rows"]:
        labels = {name: row.get(name) for name in table.get("labels", []) if name in row}
        stated = [c for c in table["columns"] if row.get(c["name"]) is not None]
        mode, pool, why = None, [], ""
        if any(c["measure"] in MODE_MEASURES for c in stated):  # gaps need no one mode
            counted = row | (
                {"order": row["order"] + shift} if row.get("order") is not None else {}
            )
            try:
                mode, pool, why = match_row(counted, modes, table["columns"], k_points or {}, a_m)
            except UnitProblem as exc:
                why = str(exc)
        values = [
            compare_value(col, row[col["name"]], mode, pool, row, modes, a_m) for col in stated
        ]
        entry = {"labels": labels, "matched": matched_summary(mode) if mode else None}
        if mode is None and why:
            missing += 1
            entry["note"] = why
        classes += [v["class"] for v in values if v.get("class")]
        rows.append(entry | {"values": values})
    untrusted = sum(1 for x in modes if not x["trusted"])
    compared = bool(classes)
    unmatched = [n for n in table.get("labels", []) if n not in MATCHED_LABELS]
    notes = ["" if compared else "no value compared in code (analyst only): PARTIAL at most"]
    if unmatched:
        notes.append(
            f"labels {', '.join(unmatched)} name the rows only: the record does not tell "
            "modes apart by them"
        )
    return {
        "figure_id": table["table_id"],
        "kind": "table",
        "classification": th.worst(classes) if compared else "PARTIAL",
        "rows": rows,
        "missing": missing,
        "modes_in_record": len(modes),
        "untrusted_modes": untrusted,
        "note": "; ".join(n for n in notes if n),
        "curves": [],
    }


def table_numbers(entry: dict) -> dict[str, float]:
    """Citable numbers of a table entry: `<id>/<labels>.<column>.stated|measured|error`."""
    out: dict[str, float] = {}
    for row in entry.get("rows", []):
        key = row_key(row["labels"])
        for v in row["values"]:
            for name in ("stated", "measured", "error"):
                if isinstance(v.get(name), (int, float)) and not isinstance(v.get(name), bool):
                    out[f"{entry['figure_id']}/{key}.{v['name']}.{name}"] = v[name]
        if row.get("matched") and isinstance(row["matched"].get("freq"), (int, float)):
            out[f"{entry['figure_id']}/{key}.matched.freq"] = row["matched"]["freq"]
    return out


def row_key(labels: dict) -> str:
    """A row's name in citations: `m=5`, `band=2,k=X` (labels in the table's order)."""
    parts = []
    for name, value in labels.items():
        text = ",".join(f"{v:g}" for v in value) if isinstance(value, list) else str(value)
        parts.append(f"{name}={text}")
    return ",".join(parts) or "row"
