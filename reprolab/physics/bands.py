"""A band diagram omega(k) of the paper against the Harminv modes of the run-time record.

Each run's k_point is projected onto the paper's k path (symmetry point i at path
coordinate i, the coordinate along a segment linear in k); at each measured k the
trusted modes, sorted, are the bands in order. Band 1 at Gamma of a dielectric crystal
is omega = 0, which no time series returns: it is added there, and said so. The paper's
points are assigned to measured modes at each k by an order-preserving match (a stated
band skipped is `missing`; a spurious measured mode may be skipped), where two stated
bands within MODE_FREQUENCY.acceptable of each other may share one measured mode (a
degeneracy the run resolved as one mode). Labelled points (a `band` column) are
interpolated along their band onto the measured k; unlabelled ones go to their nearest
measured k and take the band of the mode they match. Pure functions of data.
"""

from __future__ import annotations

import math

from reprolab.physics import modes as modes_mod
from reprolab.physics import thresholds as th

K_PATH_TOL = 1e-6  # a k point this far (2π/a) from a segment is not on it
X_TOL = 1e-9  # path coordinates closer than this are one
# Digitized points of one band farther apart (path units) are not interpolated between:
# a band given only at the symmetry points is compared there, not on a straight line.
MAX_INTERPOLATION_GAP = 0.25
SKIP_MEASURED = 1e-3  # cost of passing over a measured mode: order wins a near tie
ZERO_NOTE = "the omega = 0 mode at Gamma (band 1 of a dielectric crystal; Harminv cannot return it)"


def _vec(k) -> list[float]:
    return [float(v) for v in (list(k) + [0.0, 0.0, 0.0])[:3]]


def project(k, path: list[dict]) -> list[float]:
    """Every path coordinate at which k lies on the path (Gamma twice on Γ-X-M-Γ)."""
    k = _vec(k)
    found: list[float] = []
    for i in range(len(path) - 1):
        a, b = _vec(path[i]["k"]), _vec(path[i + 1]["k"])
        d = [bj - aj for aj, bj in zip(a, b, strict=True)]
        length2 = sum(v * v for v in d)
        t = 0.0
        if length2 > 0:
            t = sum((kj - aj) * dj for kj, aj, dj in zip(k, a, d, strict=True)) / length2
            t = min(max(t, 0.0), 1.0)
        dist = math.dist([aj + t * dj for aj, dj in zip(a, d, strict=True)], k)
        if dist <= K_PATH_TOL * (1 + math.sqrt(length2)):
            x = i + t
            if not any(abs(x - y) <= X_TOL for y in found):
                found.append(x)
    return sorted(found)


def measured_columns(sims: list[dict], path: list[dict]) -> tuple[list[dict], list[str]]:
    """[{k_path, k_point, modes (ordered, omega = 0 first at Gamma)}] sorted by k_path,
    and notes (k points off the path, the omega = 0 mode added)."""
    modes = modes_mod.record_modes(sims)
    ks: list[list[float]] = []
    for sim in sims:
        for run in sim.get("runs", []):
            k = modes_mod._k_of(run, sim)
            if run.get("harminv") and k is not None and not any(modes_mod.same_k(k, y) for y in ks):
                ks.append(k)
    columns, notes, zero_at = [], [], []
    for k in ks:
        xs = project(k, path)
        if not xs:
            notes.append(f"k_point {k} is not on the stated k path: not compared")
            continue
        ordered = modes_mod.ordered_at(modes, k)
        ordered = [dict(x, note=ZERO_NOTE) if x.get("zero") else x for x in ordered]
        if ordered and ordered[0].get("zero"):
            zero_at += xs
        columns += [{"k_path": x, "k_point": k, "modes": ordered} for x in xs]
    if zero_at:
        where = ", ".join(f"{x:g}" for x in sorted(zero_at))
        notes.append(f"added {ZERO_NOTE} as band 1 at k_path {where}")
    return sorted(columns, key=lambda c: c["k_path"]), notes


def of_polarization(sims: list[dict], polarization: str | None) -> tuple[list[dict], str]:
    """The simulations of the diagram's polarization (TE or TM): a 2D simulation whose
    sources excite only the other one is left out, and said so."""
    if polarization not in ("TE", "TM"):
        return sims, ""
    other = [s for s in sims if modes_mod.polarization_of(s) not in (None, polarization)]
    if not other:
        return sims, ""
    kept = [s for s in sims if s not in other]
    only = modes_mod.polarization_of(other[0])
    note = (
        f"{len(other)} simulation(s) excite only {only} modes: left out of this "
        f"{polarization} band diagram"
    )
    return kept, note


def relative(stated: float, measured: float, scale: float) -> float:
    """|f_run - f_paper| / max(f_paper, floor): the floor keeps band 1 near Gamma (omega
    tending to 0) from turning a digitizing error into a large relative one."""
    floor = th.BAND_FREQUENCY_FLOOR * scale
    return abs(measured - stated) / max(abs(stated), floor, 1e-300)


def align(stated: list[float], measured: list[float], scale: float) -> list[tuple]:
    """Order-preserving match of stated (ascending) to measured (ascending) frequencies:
    for each stated value (index of its measured mode or None, None | "first" |
    "second": the lower and upper of two stated values sharing one measured mode).

    Costs: a match its relative error (only within MODE_MATCH_REL); a stated value left
    unmatched MODE_MATCH_REL x 2; a measured mode passed over SKIP_MEASURED; two stated
    values within MODE_FREQUENCY.acceptable may share one measured mode (a degeneracy)."""
    p, q = len(stated), len(measured)
    miss = 2 * th.MODE_MATCH_REL
    inf = math.inf
    best = [[inf] * (q + 1) for _ in range(p + 1)]
    step: list[list[tuple | None]] = [[None] * (q + 1) for _ in range(p + 1)]
    best[0][0] = 0.0

    def relax(i, j, cost, move):
        if cost < best[i][j] - 1e-15:
            best[i][j], step[i][j] = cost, move

    for i in range(p + 1):
        for j in range(q + 1):
            here = best[i][j]
            if here == inf:
                continue
            if j < q:
                relax(i, j + 1, here + SKIP_MEASURED, ("skip", i, j))
            if i < p:
                relax(i + 1, j, here + miss, ("miss", i, j))
            if i < p and j < q:
                e = relative(stated[i], measured[j], scale)
                if e <= th.MODE_MATCH_REL:
                    relax(i + 1, j + 1, here + e, ("match", i, j))
                    coincide = i + 1 < p and relative(stated[i], stated[i + 1], scale) <= (
                        th.MODE_FREQUENCY.acceptable
                    )
                    e2 = relative(stated[i + 1], measured[j], scale) if coincide else inf
                    if e2 <= th.MODE_MATCH_REL:
                        relax(i + 2, j + 1, here + e + e2 + SKIP_MEASURED, ("degenerate", i, j))
    out: list[tuple] = [(None, None)] * p
    i, j = p, min(range(q + 1), key=lambda jj: best[p][jj])
    while step[i][j] is not None:
        move, pi, pj = step[i][j]
        if move == "match":
            out[pi] = (pj, None)
        elif move == "degenerate":
            out[pi], out[pi + 1] = (pj, "first"), (pj, "second")
        i, j = pi, pj
    return out


def _interpolate(points: list[tuple[float, float]], x: float) -> float | None:
    """A band's stated frequency at x: a digitized point there, else linear between its
    two neighbours when they are at most MAX_INTERPOLATION_GAP apart; else None."""
    at = [f for px, f in points if abs(px - x) <= X_TOL]
    if at:
        return at[0]
    for (x0, f0), (x1, f1) in zip(points, points[1:], strict=False):
        if x0 < x < x1:
            return (
                f0 + (f1 - f0) * (x - x0) / (x1 - x0) if x1 - x0 <= MAX_INTERPOLATION_GAP else None
            )
    return None


def stated_at(points: list[tuple], x: float) -> list[tuple]:
    """The labelled points' bands at path coordinate x, interpolated along each band:
    (band, freq, x), in band order."""
    by_band: dict[int, list[tuple[float, float]]] = {}
    for px, f, b in points:
        by_band.setdefault(int(b), []).append((float(px), float(f)))
    out = []
    for band, pts in sorted(by_band.items()):
        f = _interpolate(sorted(pts), x)
        if f is not None:
            out.append((band, f, x))
    return out


def column_at(columns: list[dict], x: float) -> dict:
    """The measured modes at path coordinate x: a measured column there, else each mode
    of the neighbouring column with more modes interpolated to x with the mode of the
    same order on the other side (a surplus mode with its nearest in frequency: a
    degenerate pair meets one mode), beyond the measured range the nearest column."""
    exact = [c for c in columns if abs(c["k_path"] - x) <= X_TOL]
    if exact:
        return exact[0]
    left = [c for c in columns if c["k_path"] < x]
    right = [c for c in columns if c["k_path"] > x]
    if not left or not right:
        return (left or right)[-1 if left else 0]
    lo, hi = left[-1], right[0]
    t = (x - lo["k_path"]) / (hi["k_path"] - lo["k_path"])
    big, small = (lo, hi) if len(lo["modes"]) >= len(hi["modes"]) else (hi, lo)
    found = []
    for i, m in enumerate(big["modes"]):
        other = (
            small["modes"][i]
            if i < len(small["modes"])
            else min(small["modes"], key=lambda o: abs(o["freq"] - m["freq"]), default=m)
        )
        f_lo, f_hi = (m["freq"], other["freq"]) if big is lo else (other["freq"], m["freq"])
        found.append({"freq": f_lo + t * (f_hi - f_lo), "interpolated": True})
    return {"k_path": x, "modes": sorted(found, key=lambda m: m["freq"])}


def match_column(col: dict, stated: list[tuple], scale: float) -> tuple:
    """(matched points, missing points, {band: measured freq}) of stated (band or None,
    freq, x) at one column, in order (labelled: by band; unlabelled: by frequency)."""
    measured = [m["freq"] for m in col["modes"]]
    matched, missing, assigned = [], [], {}
    seconds = 0  # upper members of degenerate pairs so far: each shifts the bands above
    for s, (j, tag) in zip(stated, align([s[1] for s in stated], measured, scale), strict=True):
        band = s[0]
        if j is None:
            missing.append({"k_path": s[2], "band": band, "stated": s[1]})
            continue
        seconds += tag == "second"
        if band is None:  # unlabelled: the matched mode's order
            band = j + 1 + seconds
        point = {"k_path": s[2], "band": band, "stated": s[1], "freq": measured[j]}
        point |= {"rel": relative(s[1], measured[j], scale), "degenerate": tag is not None}
        if col["modes"][j].get("zero"):
            point["note"] = ZERO_NOTE
        if col["modes"][j].get("interpolated"):
            point["note"] = "measured frequency interpolated between the neighbouring k"
        matched.append(point)
        assigned[band] = measured[j]
    return matched, missing, assigned


def band_class(rms: float | None, worst_rel: float | None, points: int, missing: int) -> str:
    classes = []
    if points:
        classes += [th.classify_value(th.BAND_RMS, rms), th.classify_value(th.BAND_MAX, worst_rel)]
    if missing:
        share = missing / (points + missing)
        classes.append("FAILURE" if share > th.BAND_MISSING_FAILURE else "PARTIAL")
    return th.worst(classes)


def per_band(matched: list[dict], missing: list[dict]) -> list[dict]:
    out = []
    for band in sorted({p["band"] for p in matched + missing if p["band"] is not None}):
        rels = [p["rel"] for p in matched if p["band"] == band]
        lost = sum(1 for p in missing if p["band"] == band)
        rms = math.sqrt(sum(r * r for r in rels) / len(rels)) if rels else None
        worst_rel = max(rels) if rels else None
        entry = {"band": band, "points": len(rels), "missing": lost, "rms_rel": rms}
        entry |= {"max_rel": worst_rel, "class": band_class(rms, worst_rel, len(rels), lost)}
        out.append(entry)
    unlabelled = sum(1 for p in missing if p["band"] is None)
    if unlabelled:
        out.append(
            {"band": None, "points": 0, "missing": unlabelled, "rms_rel": None, "max_rel": None}
            | {"class": "FAILURE" if unlabelled else "SUCCESS"}
        )
    return out


def gaps(stated_gaps: list[dict], band_at: list[dict]) -> list[dict]:
    """Each stated gap (below_band n: band n's maximum, band n+1's minimum over the
    measured k) against the measured one; `band_at` is {band: freq} per column."""
    out = []
    for gap in stated_gaps:
        n = int(gap["below_band"])
        lows = [b[n] for b in band_at if n in b]
        highs = [b[n + 1] for b in band_at if n + 1 in b]
        stated = {"lower": gap.get("lower"), "upper": gap.get("upper")}
        stated["ratio"] = midgap(stated["lower"], stated["upper"])
        entry = {"below_band": n, "stated": stated}
        if not lows or not highs:
            out.append(entry | {"measured": None, "class": "FAILURE", "status": "missing"})
            continue
        measured = {"lower": max(lows), "upper": min(highs)}
        measured["ratio"] = midgap(measured["lower"], measured["upper"])
        classes = []
        for edge in ("lower", "upper"):
            if stated[edge] is not None:
                err = abs(measured[edge] - stated[edge]) / abs(stated[edge])
                entry[f"{edge}_rel"] = err
                classes.append(th.classify_value(th.GAP_EDGE, err))
        if stated["ratio"] is not None:
            entry["ratio_abs"] = abs(measured["ratio"] - stated["ratio"])
            classes.append(th.classify_value(th.GAP_MIDGAP_RATIO, entry["ratio_abs"]))
        closed = measured["upper"] <= measured["lower"]
        cls = "FAILURE" if closed else th.worst(classes) if classes else "PARTIAL"
        status = "closed" if closed else "compared"
        out.append(entry | {"measured": measured, "class": cls, "status": status})
    return out


def midgap(lower, upper) -> float | None:
    if lower is None or upper is None or lower + upper == 0:
        return None
    return (upper - lower) / ((upper + lower) / 2)


def compare_band_diagram(
    figure_id: str, band_diagram: dict, points: list[tuple], sims: list[dict]
) -> dict:
    """The comparison.json entry of kind `band_diagram`: per-band errors, gaps, missing
    modes and the measured points (k_path, band, freq) for the overlay.

    `band_diagram`: {k_path: [{label, k}], bands, gaps}; `points`: the digitized
    (k_path, frequency, band or None), frequencies in c/a."""
    path = band_diagram["k_path"]
    sims, left_out = of_polarization(sims, band_diagram.get("polarization"))
    columns, notes = measured_columns(sims, path)
    notes += [left_out] if left_out else []
    scale = max((abs(p[1]) for p in points), default=0.0) or 1.0
    labelled = [p for p in points if p[2] is not None]
    matched, missing, band_at = [], [], []
    for col in columns:  # labelled bands, interpolated onto each measured k
        got, lost, assigned = match_column(col, stated_at(labelled, col["k_path"]), scale)
        matched += got
        missing += lost
        band_at.append({i + 1: m["freq"] for i, m in enumerate(col["modes"])} | assigned)
    by_x: dict[float, list] = {}
    for x, f, _ in (p for p in points if p[2] is None):
        by_x.setdefault(round(float(x), 9), []).append((None, float(f), float(x)))
    for x, stated in sorted(by_x.items()) if columns else ():
        got, lost, _ = match_column(
            column_at(columns, x), sorted(stated, key=lambda s: s[1]), scale
        )
        matched += got
        missing += lost
    xs = [c["k_path"] for c in columns]
    far = [p for p in labelled if not any(abs(p[0] - x) <= MAX_INTERPOLATION_GAP for x in xs)]
    if far and columns:
        notes.append(
            f"{len(far)} digitized point(s) farther than {MAX_INTERPOLATION_GAP:g} (k path) from "
            "every measured k: not compared (the run has no k near them)"
        )
    if not columns:
        notes.append("the record has no Harminv run at a k point on the stated path")
    bands = per_band(matched, missing)
    gap_rows = gaps(band_diagram.get("gaps") or [], band_at)
    classes = [b["class"] for b in bands] + [g["class"] for g in gap_rows]
    shown = max([int(band_diagram.get("bands") or 0)] + [b["band"] or 0 for b in bands])
    measured = [
        {"k_path": c["k_path"], "band": i + 1, "freq": m["freq"]}
        | ({"note": ZERO_NOTE} if m.get("zero") else {})
        for c in columns
        for i, m in enumerate(c["modes"])
        if i < shown + 1
    ]
    return {
        "figure_id": figure_id,
        "kind": "band_diagram",
        "classification": th.worst(classes) if bands else "FAILURE",
        "bands": bands,
        "gaps": gap_rows,
        "missing": missing,
        "points": matched,
        "measured": measured,
        "measured_k": len(columns),
        "notes": notes,
        "curves": [],
    }


def band_numbers(entry: dict) -> dict[str, float]:
    """Citable numbers of a band diagram: `<id>/band<n>.rms_rel|max_rel|points|missing`,
    `<id>/gap<n>.lower|upper|ratio` (measured), `.stated_lower|...`, `.lower_rel|...`."""
    out: dict[str, float] = {}
    fid = entry["figure_id"]
    for b in entry.get("bands", []):
        if b["band"] is None:
            continue
        for name in ("rms_rel", "max_rel", "points", "missing"):
            if b.get(name) is not None:
                out[f"{fid}/band{b['band']}.{name}"] = b[name]
    for g in entry.get("gaps", []):
        base = f"{fid}/gap{g['below_band']}"
        for name in ("lower", "upper", "ratio"):
            if g.get("measured") and g["measured"].get(name) is not None:
                out[f"{base}.{name}"] = g["measured"][name]
            if g["stated"].get(name) is not None:
                out[f"{base}.stated_{name}"] = g["stated"][name]
        for name in ("lower_rel", "upper_rel", "ratio_abs"):
            if g.get(name) is not None:
                out[f"{base}.{name}"] = g[name]
    return out
