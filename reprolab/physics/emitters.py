"""Checks of emitter runs from the run-time record and the design: the emitter's
distance to the nearest interface in pixels, the Purcell normalisation of an LDOS
(`design.ldos`) and the near-to-far transformation (`design.near_to_far`): its surface
encloses every source, its far field is far (at the design's radius and at the points the
script read) and carries the power that crossed the surface
(`reprolab.physics.near_far_power`).

A record simulation is an LDOS run when it ran `mp.dft_ldos` (its `ldos` entry); the
source-band, resolution and field-decay checks of `record_checks` then judge it too.
"""

from __future__ import annotations

import math

from reprolab.physics import thresholds as th
from reprolab.physics.check import Check
from reprolab.physics.near_far_power import power_balance_check


def _n(material: dict) -> float | None:
    return material.get("n_max")


def _ldos_runs(sims: list[dict]) -> list[dict]:
    return [s for s in sims if s.get("ldos")]


def _homogeneous(s: dict) -> bool:
    """No object whose material differs from the background (the reference medium)."""
    return all(g.get("material") == s["default_material"] for g in s.get("geometry", []))


def _dipoles(s: dict) -> list[tuple]:
    return sorted((d["component"], tuple(d["center"])) for d in s["sources"])


def purcell_normalisation_check(sims: list[dict], ldos: dict) -> Check | None:
    """The normalisation a Purcell factor needs, as the design states it."""
    how, n_ref = ldos.get("normalisation"), float(ldos.get("reference_index", 1.0))
    runs = _ldos_runs(sims)
    name, limit = "built:purcell_normalisation", f"reference index {n_ref:g}"
    if how in (None, "none"):
        return None
    if not runs:
        return Check(name, "fail", "the design states an LDOS, the run called no dft_ldos", 0)
    if how == "analytic_bulk":
        bad = [
            s
            for s in runs
            if not math.isclose(
                _n(s["default_material"]) or 0, n_ref, rel_tol=th.REFERENCE_INDEX_RTOL
            )
        ]
        detail = ", ".join(f"simulation {s['index']}: n = {_n(s['default_material'])}" for s in bad)
        return Check(
            name,
            "fail" if bad else "pass",
            f"analytic bulk LDOS of n = {n_ref:g}: "
            + (
                f"the emitter's background differs ({detail})" if bad else "every LDOS run is in it"
            ),
            len(bad),
            limit,
        )
    refs = [s for s in runs if _homogeneous(s)]
    structured = [s for s in runs if not _homogeneous(s)]
    if not refs or not structured:
        return Check(
            name,
            "fail",
            f"{len(structured)} LDOS run(s) with a structure and {len(refs)} in a homogeneous "
            "medium: a Purcell factor by a homogeneous run needs both",
            len(refs),
            limit,
        )
    problems = []
    for s in structured:
        ref = refs[0]
        n = _n(ref["default_material"]) or 0
        if not math.isclose(n, n_ref, rel_tol=th.REFERENCE_INDEX_RTOL):
            problems.append(f"reference simulation {ref['index']} is in n = {n:g}, not {n_ref:g}")
        if ref["resolution"] != s["resolution"]:
            problems.append(
                f"reference resolution {ref['resolution']:g} ≠ {s['resolution']:g} "
                f"(simulation {s['index']})"
            )
        if ref["ldos"]["freqs"] != s["ldos"]["freqs"]:
            problems.append(f"reference LDOS frequencies differ from simulation {s['index']}'s")
        if [c for c, _ in _dipoles(ref)] != [c for c, _ in _dipoles(s)]:
            problems.append(f"reference dipole components differ from simulation {s['index']}'s")
    return Check(
        name,
        "fail" if problems else "pass",
        "; ".join(problems)
        or f"{len(structured)} LDOS run(s) normalised by homogeneous simulation "
        f"{refs[0]['index']} (n = {n_ref:g}, same resolution, frequencies and dipoles)",
        len(problems),
        limit,
    )


def _box(regions: list[dict]) -> list[tuple[float, float]]:
    lo = [min(r["center"][i] - r["size"][i] / 2 for r in regions) for i in range(3)]
    hi = [max(r["center"][i] + r["size"][i] / 2 for r in regions) for i in range(3)]
    return list(zip(lo, hi, strict=True))


def _open_sides(s: dict, regions: list[dict], box: list[tuple[float, float]]) -> list[str]:
    """The sides of the surface's bounding box no face covers (a periodic axis needs
    none; cylindrical surfaces are not judged): the surface is not closed there."""
    if s.get("cylindrical"):
        return []
    periodic = set(s.get("bloch_axes") or [])
    spans = [hi - lo for lo, hi in box]
    missing = []
    for i, (lo, hi) in enumerate(box):
        if spans[i] <= 0 or "xyz"[i] in periodic:
            continue
        others = [j for j in range(3) if j != i and spans[j] > 0]
        for side in (lo, hi):
            faces = [r for r in regions if r["size"][i] == 0 and abs(r["center"][i] - side) < 1e-9]
            area = sum(math.prod(r["size"][j] for j in others) for r in faces)
            if area < (1 - 1e-6) * math.prod(spans[j] for j in others):
                missing.append(f"{'xyz'[i]} = {side:g}")
    return missing


def _interior(s: dict) -> list[tuple[float, float]]:
    """The cell's extent inside its absorbing layers, per axis (x, y, z)."""
    centre = s.get("geometry_center") or [0.0, 0.0, 0.0]
    out = []
    for i, axis in enumerate("xyz"):
        lo, hi = centre[i] - s["cell"][i] / 2, centre[i] + s["cell"][i] / 2
        for layer in s.get("boundary_layers") or []:
            if layer.get("axis") == axis and layer.get("side") in ("low", "both"):
                lo += layer["thickness"]
            if layer.get("axis") == axis and layer.get("side") in ("high", "both"):
                hi -= layer["thickness"]
        out.append((lo, hi))
    return out


def _far_points(s: dict, index: int) -> list[list[float]]:
    return [
        m["point"]
        for m in s.get("measured", [])
        if m["kind"] == "farfield" and m.get("monitor") == index and m.get("point")
    ]


def _dividing_face(s: dict, regions: list[dict], sources: list[dict], points) -> str | None:
    """A face that spans the cell from absorbing layer to absorbing layer (or across a
    periodic axis) with every source strictly on one side of it and every far-field
    point the script read strictly on the other: an open surface then still holds every
    field that reaches the far field there (the equivalence principle over a plane that
    ends in the PML, as Meep's cavity far-field example uses). Returns where it lies."""
    if not regions:
        return None
    tol = 1.0 / float(s.get("resolution") or 1e9) + 1e-9  # a pixel: cells round to pixels
    inner = _interior(s)
    active = [i for i in range(3) if s["cell"][i] > 0]
    for r in regions:
        normal = [i for i in active if r["size"][i] == 0]
        if len(normal) != 1:
            continue
        n = normal[0]
        spans = all(
            r["center"][j] - r["size"][j] / 2 <= inner[j][0] + tol
            and r["center"][j] + r["size"][j] / 2 >= inner[j][1] - tol
            for j in active
            if j != n
        )
        plane = r["center"][n]
        sides = {(c[n] > plane) - (c[n] < plane) for c in (x["center"] for x in sources)}
        far = {(p[n] > plane) - (p[n] < plane) for p in points}
        if spans and len(sides) == 1 and 0 not in sides and not (far & sides) and 0 not in far:
            return f"{'xyz'[n]} = {plane:g}"
    return None


def near_surface_check(sims: list[dict]) -> Check | None:
    """A near-field surface of two or more regions is closed (a face on every side of its
    bounding box) and encloses every source strictly (a scattered-field surface: the
    scatterer, which the incident source outside it is not), or it divides the cell: one
    face spans it between absorbing layers with the sources on one side and the far-field
    points read on the other (`_dividing_face`)."""
    found = [
        (s, i, m)
        for s in sims
        for i, m in enumerate(s.get("monitors", []))
        if m["kind"] == "near2far"
    ]
    if not found:
        return None
    outside = []
    for s, i, m in found:
        sources = [] if _scattered_or_reference(s, i, m) else s["sources"]
        regions = [r for r in m["regions"] if None not in r["center"] + r["size"]]
        if len(regions) < 2:
            continue  # one plane: an open surface, judged by the far-field check only
        box = _box(regions)
        missing = _open_sides(s, regions, box)
        if missing and _dividing_face(s, regions, sources, _far_points(s, i)):
            continue
        if missing:
            outside.append(
                f"simulation {s['index']}: the surface is open (no face at "
                f"{', '.join(missing)} of {box})"
            )
        for src in sources:
            c = src["center"]
            if any(hi > lo and not lo < c[i] < hi for i, (lo, hi) in enumerate(box)):
                outside.append(f"simulation {s['index']}: source at {c} outside {box}")
    return Check(
        "built:near_surface_encloses_sources",
        "fail" if outside else "pass",
        "; ".join(outside) or f"{len(found)} closed near-to-far surface(s) enclose their sources",
        len(outside),
        "fail: an open surface of two or more regions, a source on or outside it",
    )


def _scattered_or_reference(s: dict, index: int, m: dict) -> bool:
    """A surface that holds a scattered field: a reference run's near data subtracted
    from it (the incident source outside is taken away with it), or the reference run
    itself, whose data is read out to be subtracted and whose own far field is never
    read. The sources it must enclose are then the scatterer's, not the incident one."""
    if m.get("near_data") == "minus":
        return True
    read = {x.get("kind") for x in s.get("measured", []) if x.get("monitor") == index}
    return "near_data_read" in read and "farfield" not in read


def _read_radius(s: dict, index: int, centre: list[float]) -> float | None:
    """The nearest point at which the script read monitor `index`'s far field, from the
    near surface's centre (in the plane of a 2D cell)."""
    axes = range(3) if s.get("dimensions") == 3 else range(2)
    found = [
        math.sqrt(sum((m["point"][i] - centre[i]) ** 2 for i in axes))
        for m in s.get("measured", [])
        if m["kind"] == "farfield" and m.get("monitor") == index and m.get("point")
    ]
    return min(found, default=None)


def far_field_check(sims: list[dict], n2f: dict) -> Check:
    """The far-field radius ≫ the wavelength and beyond the near surface's Fraunhofer
    distance: the design's radius, and the points where the script read the far field."""
    found = [
        (s, i, m)
        for s in sims
        for i, m in enumerate(s.get("monitors", []))
        if m["kind"] == "near2far"
    ]
    name = "built:far_field_is_far"
    if not found:
        return Check(name, "fail", "the design states a near-to-far surface, the run added none")
    stated = float(n2f["far_field_radius"])
    worst = None
    for s, i, m in found:
        freqs = [f for f in m["freqs"] if f > 0]
        if not freqs:
            continue
        n = _n(s["default_material"]) or 1.0
        wl = 1 / min(freqs) / n
        box = _box([r for r in m["regions"] if None not in r["center"] + r["size"]])
        extent = max(hi - lo for lo, hi in box)
        need = max(th.FAR_FIELD_WAVELENGTHS * wl, th.FAR_FIELD_FRAUNHOFER * 2 * extent**2 / wl)
        read = _read_radius(s, i, [(lo + hi) / 2 for lo, hi in box])
        radius = stated if read is None else min(stated, read)
        if worst is None or radius / need < worst[0]:
            worst = (radius / need, radius, read, wl, extent, need)
    if worst is None:
        return Check(name, "fail", "the near-to-far monitor has no frequency")
    ratio, radius, read, wl, extent, need = worst
    read_closer = read is not None and read < stated * (1 - 1e-6)
    where = f" where read (the design: {stated:g} a)" if read_closer else ""
    return Check(
        name,
        "pass" if ratio >= 1 else "fail",
        f"far-field radius {radius:.4g} a{where} = {radius / wl:.3g} wavelengths (λ = {wl:.4g}"
        f" a in the medium); near surface {extent:.4g} a across: needs ≥ {need:.4g} a "
        f"(≥ {th.FAR_FIELD_WAVELENGTHS:g} λ and ≥ 2D²/λ)",
        round(radius / wl, 4),
        f"fail < max({th.FAR_FIELD_WAVELENGTHS:g} λ, 2D²/λ)",
    )


BIG = 1e10  # Meep's mp.inf is 1e20: an unbounded extent


def _gap(point: list[float], g: dict) -> float | None:
    """Distance from `point` to object `g`'s surface (block, cylinder, sphere), in a."""
    c = [x or 0.0 for x in g["center"]]
    d = [(p or 0.0) - q for p, q in zip(point, c, strict=True)]
    if "size" in g:
        half = [(s or 0.0) / 2 if (s or 0.0) < BIG else math.inf for s in g["size"]]
        finite = [(abs(x), h) for x, h in zip(d, half, strict=True) if 0 < h < math.inf]
        if not finite:
            return None
        if all(a <= h for a, h in finite):
            return min(h - a for a, h in finite)
        return math.sqrt(sum(max(a - h, 0.0) ** 2 for a, h in finite))
    if "radius" in g:
        r = math.hypot(d[0], d[1]) if g["kind"] == "Cylinder" else math.hypot(*d)
        return abs(r - g["radius"])
    return None


def emitter_gap_check(sims: list[dict]) -> Check | None:
    """Each point dipole of an LDOS run: pixels to the nearest material interface."""
    worst = None
    for s in _ldos_runs(sims):
        for src in s["sources"]:
            if any(x for x in src["size"] if x):
                continue  # an extended source is not an emitter
            for g in s.get("geometry", []):
                if g.get("material") == s["default_material"]:
                    continue
                gap = _gap(src["center"], g)
                if gap is not None and (worst is None or gap * s["resolution"] < worst[0]):
                    worst = (gap * s["resolution"], s, src, g)
    if worst is None:
        return None
    px, s, src, g = worst
    lim = th.EMITTER_GAP_PIXELS
    return Check(
        "built:emitter_resolution",
        "fail" if px < lim.fail else "warn" if px < lim.warn else "pass",
        f"simulation {s['index']}: dipole at {src['center']} is {px / s['resolution']:.4g} a "
        f"= {px:.3g} pixels from the {g['kind']} at {g['center']}",
        round(px, 3),
        f"fail < {lim.fail:g} pixels, warn < {lim.warn:g}",
    )


def emitter_checks(sims: list[dict], design: dict) -> list[Check]:
    """The emitter checks a design calls for (none without `ldos` or `near_to_far`)."""
    found = [emitter_gap_check(sims)]
    if design.get("ldos"):
        found.append(purcell_normalisation_check(sims, design["ldos"]))
    if design.get("near_to_far"):
        found += [near_surface_check(sims), far_field_check(sims, design["near_to_far"])]
    elif any(m["kind"] == "near2far" for s in sims for m in s.get("monitors", [])):
        found.append(near_surface_check(sims))
    found.append(power_balance_check(sims))
    return [c for c in found if c is not None]
