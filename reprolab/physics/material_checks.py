"""Checks that know metals, from the run-time record: the built media against the
approved material models (`built:materials_as_approved`), and the pixels across a metal
or high-index nanostructure's smallest feature, its gaps and the metal's skin depth
(`built:nanostructure_pixels`).

Pixels per wavelength in the densest material say nothing about a 40 nm metal disk: its
plasmon resonance is decided by the few pixels across the disk, across the gap to its
neighbour and across the depth the field enters the metal."""

from __future__ import annotations

import math

import numpy as np

from reprolab.physics import material_models as mm
from reprolab.physics import thresholds as th
from reprolab.physics.check import Check

FREQ_SAMPLES = 25  # monitored frequencies the built media are compared at (spread)


def _measures(sim: dict) -> bool:
    return bool(sim.get("ldos")) or any(m["kind"] != "energy" for m in sim.get("monitors", []))


def objects(sim: dict) -> list[tuple[str, dict]]:
    """(label, record entry) of the background and every geometry object."""
    out = [(f"simulation {sim['index']} background (default_material)", sim["default_material"])]
    for i, g in enumerate(sim.get("geometry", [])):
        centre = ", ".join(f"{c:.4g}" for c in g["center"] if c is not None)
        out.append((f"simulation {sim['index']} geometry[{i}] {g['kind']} at ({centre})", g))
    return out


def monitored_freqs(sim: dict) -> list[float]:
    freqs = sorted({f for m in sim.get("monitors", []) for f in m["freqs"] if f > 0})
    freqs += (sim.get("ldos") or {}).get("freqs", [])
    freqs = sorted(set(freqs))
    if not freqs and sim.get("band"):
        freqs = list(np.linspace(*sim["band"], 7))
    if len(freqs) > FREQ_SAMPLES:
        idx = np.linspace(0, len(freqs) - 1, FREQ_SAMPLES).round().astype(int)
        freqs = [freqs[i] for i in sorted(set(idx))]
    return freqs


def materials_as_approved_check(
    sims: list[dict], approved: list[dict] | None, unit_length_um: float | None
) -> Check | None:
    """Every medium a measuring run built (vacuum excepted) must be one of the approved
    models at every monitored frequency, within the approved model's tolerance (a fit's
    largest n and k errors; exact models: rounding). A failure names the object, the
    wavelength, the built and the nearest approved n and k."""
    models = [
        (m["material_id"], m["approved_model"]) for m in approved or [] if m.get("approved_model")
    ]
    if not models or not unit_length_um:
        return None
    worst, judged = None, 0
    for sim in sims:
        if not _measures(sim):
            continue
        wl = [unit_length_um / f for f in monitored_freqs(sim)]
        if not wl:
            continue
        for label, obj in objects(sim):
            mat = obj.get("material", obj)
            built = mat.get("model")
            if built is None or any(t.get("unsupported") for t in built["terms"]):
                continue
            built = {**built, "unit_length_um": unit_length_um}
            if mm.is_vacuum(built):
                continue
            judged += 1
            found = min(
                ((mm.compare(built, model, wl), mid) for mid, model in models),
                key=lambda x: x[0]["excess"],
            )
            if worst is None or found[0]["excess"] > worst[0]["excess"]:
                worst = (*found, label)
    if worst is None:
        return None
    cmp, mid, label = worst
    detail = (
        f"{judged} built medi{'um' if judged == 1 else 'a'} compared with the approved "
        f"materials at the monitored frequencies; the farthest, {label}, is nearest "
        f"'{mid}': at {cmp['wavelength_um']:.4g} µm built n = {cmp['n_built']:.4g}, "
        f"k = {cmp['k_built']:.4g} against approved n = {cmp['n_approved']:.4g}, "
        f"k = {cmp['k_approved']:.4g} (|dn| {cmp['dn']:.3g}, |dk| {cmp['dk']:.3g}; allowed "
        f"{cmp['limit_n']:.3g}, {cmp['limit_k']:.3g}: the fit's error plus rounding)"
    )
    if not cmp["ok"]:
        detail += ": the run did not build the approved material"
    return Check(
        "built:materials_as_approved",
        "pass" if cmp["ok"] else "fail",
        detail,
        round(cmp["excess"], 4),
        "largest |dn|, |dk| within the approved model's tolerance (excess <= 1)",
    )


def _extents(g: dict, dims_axes: list[int]) -> list[float]:
    """The object's sizes along the cell's axes (a sphere's and a cylinder's diameter;
    a cylinder's height along z in 3D)."""
    if g["kind"] == "Sphere" and "radius" in g:
        return [2 * g["radius"]] * len(dims_axes)
    if "radius" in g:
        sizes = [2 * g["radius"]] * 2
        if 2 in dims_axes and len(dims_axes) == 3:
            sizes.append(g.get("height", math.inf))
        return sizes
    size = g.get("size") or []
    return [size[a] if size[a] is not None else math.inf for a in dims_axes if a < len(size)]


def _axes(sim: dict) -> list[int]:
    dims = sim.get("dimensions")
    return (
        [2]
        if dims == 1
        else [0, 2]
        if sim.get("cylindrical")
        else [0, 1]
        if dims == 2
        else [0, 1, 2]
    )


def _bounded(g: dict, sim: dict, axes: list[int]) -> list[float]:
    """The object's sizes along axes where it ends inside the cell."""
    cell = sim.get("cell") or [None] * 3
    sizes = _extents(g, axes)
    return [
        s
        for s, a in zip(sizes, axes, strict=False)
        if math.isfinite(s) and s > 0 and (cell[a] is None or s < cell[a] - 1e-9)
    ]


def is_nanostructure(g: dict, sim: dict) -> bool:
    """Ends inside the cell along two axes or more (a particle, a rod, a disk; not a film
    across the cell)."""
    return len(_bounded(g, sim, _axes(sim))) >= 2


def _strong(mat: dict) -> bool:
    """A metal (eps < 0 somewhere in the band) or a dispersive high-index medium: Meep
    smooths only non-dispersive media at their faces, so these are as large as the grid
    points inside them."""
    metal = bool(mat.get("negative_eps"))
    return metal or (bool(mat.get("dispersive")) and (mat.get("n_max") or 0) >= th.HIGH_INDEX)


def plasmonic(sims: list[dict]) -> bool:
    """A measuring run holds a metal nanostructure (its resonance hangs on the pixels
    across it: convergence evidence is always needed)."""
    return any(
        g["material"].get("negative_eps") and is_nanostructure(g, s)
        for s in sims
        if _measures(s)
        for g in s.get("geometry", [])
    )


def skin_depth(mat: dict, band: list[float]) -> float | None:
    """The least lambda / (4 pi k) over the band, in units of a, from the built terms."""
    model = mat.get("model")
    if not model or any(t.get("unsupported") for t in model["terms"]):
        return None
    wl = 1 / np.linspace(band[0], band[1], 15)
    _, k = mm.n_k(mm.epsilon({**model, "unit_length_um": 1.0}, wl))
    depths = [w / (4 * math.pi * kk) for w, kk in zip(wl, k, strict=True) if kk > 0]
    return min(depths) if depths else None


def _gaps(objs: list[dict], axes: list[int]) -> list[float]:
    """Edge-to-edge distances between bounding boxes that face each other along one axis
    (overlapping along the others)."""
    boxes = []
    for g in objs:
        ext = _extents(g, axes)
        boxes.append(
            [
                (g["center"][a] - e / 2, g["center"][a] + e / 2)
                for a, e in zip(axes, ext, strict=False)
            ]
        )
    out = []
    for i in range(len(boxes)):
        for j in range(i + 1, len(boxes)):
            a, b = boxes[i], boxes[j]
            for k in range(len(axes)):
                others = all(
                    min(a[m][1], b[m][1]) > max(a[m][0], b[m][0])
                    for m in range(len(axes))
                    if m != k
                )
                gap = max(b[k][0] - a[k][1], a[k][0] - b[k][1])
                if others and gap > 0:
                    out.append(gap)
    return out


def nanostructure_pixels_check(sims: list[dict]) -> Check | None:
    """Pixels across each metal or high-index nanostructure's smallest feature, across
    the gaps between such objects, and across a metal's skin depth lambda / (4 pi k) at
    the shortest monitored wavelength."""
    worst = None
    for sim in sims:
        if not _measures(sim) or not sim.get("band"):
            continue
        res, axes = float(sim["resolution"]), _axes(sim)
        strong = [
            g
            for g in sim.get("geometry", [])
            if _strong(g["material"]) and is_nanostructure(g, sim)
        ]
        if not strong:
            continue
        items = []
        for g in strong:
            label = f"simulation {sim['index']} {g['kind']} at {g['center']}"
            items.append(
                (
                    min(_bounded(g, sim, axes)) * res,
                    th.NANO_FEATURE_PIXELS,
                    f"smallest feature of {label}",
                )
            )
            depth = skin_depth(g["material"], sim["band"])
            if g["material"].get("negative_eps") and depth:
                items.append((depth * res, th.SKIN_DEPTH_PIXELS, f"skin depth of {label}"))
        for gap in _gaps(strong, axes):
            items.append((gap * res, th.NANO_FEATURE_PIXELS, f"a gap in simulation {sim['index']}"))
        for px, lim, what in items:
            rank = (px < lim.fail, px < lim.warn, -px / lim.warn)
            if worst is None or rank > worst[0]:
                worst = (rank, px, lim, what, res)
    if worst is None:
        return None
    (bad, warn, _), px, lim, what, res = worst
    return Check(
        "built:nanostructure_pixels",
        "fail" if bad else "warn" if warn else "pass",
        f"{what}: {px:.3g} pixels at resolution {res:g}/a (dispersive and high-index "
        "objects are resolved by their pixels, not by pixels per wavelength)",
        round(px, 3),
        f"fail < {lim.fail:g}, warn < {lim.warn:g} pixels",
    )
