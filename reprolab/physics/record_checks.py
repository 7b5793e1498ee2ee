"""Checks that judge the run-time record (`as_built.json`, streamed by `as_built` to the
launcher and written beside the run folder: `record_store.record_home`).

The static lint reads the script before it runs (an early, cheap warning); these read
the object Meep constructed, so a constant written through a name, `getattr`, a loop
or a computed centre is judged the same as a literal. Every check is named
`built:<what>` and carries its number and threshold.
"""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

from reprolab.physics import harminv as hv
from reprolab.physics import meanings
from reprolab.physics import thresholds as th
from reprolab.physics.boundary_checks import boundary_checks
from reprolab.physics.check import Check
from reprolab.physics.emitters import emitter_checks
from reprolab.physics.record_store import RECORD_FILE, record_home


def load_record(workdir: Path) -> list[dict]:
    """The simulations of a run (a sweep's points each have their own record), from the
    launcher's record beside the run folder; an `as_built.json` in the run folder itself
    is the script's own file and never read."""
    home = record_home(workdir)
    sims = []
    for path in [home / RECORD_FILE] + sorted(home.glob(f"points/*/{RECORD_FILE}")):
        if path.is_file() and not path.is_symlink():
            try:
                sims += json.loads(path.read_text(encoding="utf-8"))["simulations"]
            except (OSError, ValueError, KeyError):
                continue
    return sims


def _status_low(value: float, lim: th.CheckLimit) -> str:
    return "fail" if value < lim.fail else "warn" if value < lim.warn else "pass"


def _status_high(value: float, lim: th.CheckLimit) -> str:
    return "fail" if value > lim.fail else "warn" if value > lim.warn else "pass"


def _label(sim: dict) -> str:
    return f"simulation {sim['index']}"


def _measures(sim: dict) -> bool:
    """Has flux/DFT monitors or an LDOS (what a run's spectra come from)."""
    return bool(sim.get("ldos")) or any(m["kind"] != "energy" for m in sim.get("monitors", []))


def _resonance(sim: dict) -> bool:
    return any(r.get("harminv") for r in sim["runs"])


def _materials(sim: dict) -> list[dict]:
    return [sim["default_material"]] + [g["material"] for g in sim.get("geometry", [])]


def lossless(sims: list[dict]) -> bool:
    """No lossy material (conductivity or a damped susceptibility) in any measuring run."""
    return not any(m.get("lossy") for s in sims if _measures(s) for m in _materials(s))


def resolution_check(sims: list[dict]) -> Check | None:
    worst = None
    for s in sims:
        if not (_measures(s) or _resonance(s)) or not s.get("band"):
            continue
        ns = [m.get("n_max") for m in _materials(s) if not m.get("negative_eps")]
        n_max = max([n for n in ns if n] + [1.0])
        ppw = s["resolution"] / s["band"][1] / n_max
        if worst is None or ppw < worst[0]:
            worst = (ppw, s, n_max)
    if worst is None:
        return None
    ppw, s, n_max = worst
    return Check(
        "built:resolution_ppw",
        _status_low(ppw, th.PPW_AS_BUILT),
        f"{_label(s)}: resolution {s['resolution']:g}/a, shortest monitored wavelength "
        f"{1 / s['band'][1]:.4g} a, densest material n = {n_max:.4g}: {ppw:.3g} pixels per "
        "wavelength (below the fail level only a converged 2x run can stand)",
        round(ppw, 3),
        f"fail < {th.PPW_AS_BUILT.fail:g}, warn < {th.PPW_AS_BUILT.warn:g}",
    )


def pml_check(sims: list[dict]) -> Check | None:
    worst = None
    for s in sims:
        resonance = _resonance(s)
        need = th.PML_RESONANCE_WAVELENGTHS if resonance else th.PML_FAIL_WAVELENGTHS
        for layer in s.get("boundary_layers", []):
            if layer["kind"] != "PML":
                continue
            wl = None if quasi_static(s, layer) else layer["wavelengths"]
            bad = layer["pixels"] < th.PML_MIN_PIXELS or (wl is not None and wl < need)
            warn = wl is not None and wl < th.PML_MIN_WAVELENGTHS
            rank = (bad, warn, -(wl or 0))
            if worst is None or rank > worst[0]:
                worst = (rank, s, layer, need, resonance)
    if worst is None:
        return None
    (bad, warn, _), s, layer, need, resonance = worst
    still = quasi_static(s, layer)
    wl = None if still else layer["wavelengths"]
    return Check(
        "built:pml_thickness",
        "fail" if bad else "warn" if warn else "pass",
        f"{_label(s)}: thinnest PML {layer['thickness']:g} a on the {layer['side']} "
        f"{layer['axis']} side = {layer['pixels']:.3g} pixels"
        + (f" = {wl:.3g} wavelengths at the band centre" if wl is not None else "")
        + (" (the source's wavelength exceeds the cell: pixels judged only)" if still else "")
        + (" (a resonance run: PML reflection biases Q)" if resonance else ""),
        round(wl, 4) if wl is not None else None,
        f"fail < {th.PML_MIN_PIXELS:g} pixels or < {need:g} λ, warn < {th.PML_MIN_WAVELENGTHS:g} λ",
    )


def quasi_static(sim: dict, layer: dict) -> bool:
    """The judged wavelength is longer than the whole cell: a static or moving charge
    (Meep's Cherenkov example drives a ContinuousSource at 1e-10 c/a), whose radiation
    takes its spectrum from the motion, not from the source's frequency. Its PML has no
    wavelength to be measured in; its pixels are still judged."""
    wl = layer.get("wavelengths")
    extent = max((c for c in sim.get("cell") or [] if c), default=0.0)
    return bool(wl) and layer["thickness"] / wl > extent > 0


def plane_wave_check(sims: list[dict]) -> Check | None:
    crossing = [
        (s, src) for s in sims for src in s["sources"] if src["reaches_pml"] and src["fcen"]
    ]
    if not crossing:
        n = sum(len(s["sources"]) for s in sims)
        return Check(
            "built:plane_wave_is_integrated",
            "pass",
            f"none of {n} source(s) reaches the PML (compact sources are not plane waves)",
            0,
            "fail: a source that reaches the PML without is_integrated",
        )
    bad = [(s, src) for s, src in crossing if src["kind"] == "Source" and not src["is_integrated"]]
    s, src = (bad or crossing)[0]
    return Check(
        "built:plane_wave_is_integrated",
        "fail" if bad else "pass",
        f"{_label(s)}: {src['kind']} of size {src['size']} at {src['center']} reaches the "
        f"PML; is_integrated={src['is_integrated']}"
        + (" (a source through PML needs is_integrated=True)" if bad else ""),
        len(bad),
        "fail: a source that reaches the PML without is_integrated",
    )


def source_band_check(sims: list[dict]) -> Check | None:
    """Monitored frequencies against what the fields contain. In a linear run that is the
    source's band: a spectrum outside it is normalised by an incident flux that vanishes
    there, so every monitored frequency must lie inside. A nonlinear medium (χ(2), χ(3))
    also generates harmonics k·fcen (k up to its order, each about √k times as wide): the
    monitored spectrum is then itself the result, zero between the generated bands, so a
    monitor is judged by how near its frequencies come to a band the run generates."""
    worst = None
    for s in sims:
        gauss = [x for x in s["sources"] if x["fwidth"] and x["fcen"]]
        monitors = [m["freqs"] for m in s.get("monitors", []) if m["freqs"]]
        monitors += [f] if (f := (s.get("ldos") or {}).get("freqs", [])) else []
        if not gauss or not monitors:
            continue
        src = max(gauss, key=lambda x: x["fwidth"])
        order = max(m.get("nonlinear_order", 1) for m in _materials(s))
        reach = (
            max(_reach(freqs, src, 1) for freqs in monitors)
            if order == 1
            else max(
                min(min(_reach([f], src, k) for f in freqs) for k in _harmonics(order))
                for freqs in monitors
            )
        )
        if worst is None or reach > worst[0]:
            worst = (reach, s, src, [f for m in monitors for f in m], order)
    if worst is None:
        return None
    reach, s, src, freqs, order = worst
    generated = (
        f"; a χ({order}) medium generates {', '.join(f'{k}·fcen' for k in _harmonics(order))}: "
        "each monitor judged at its nearest generated band"
        if order > 1
        else ""
    )
    return Check(
        "built:source_bandwidth",
        _status_high(reach, th.SOURCE_BAND),
        f"{_label(s)}: monitors {min(freqs):.4g}-{max(freqs):.4g} c/a, source "
        f"{src['fcen']:.4g} ± {src['fwidth'] / 2:.4g}: farthest monitored frequency "
        f"{reach:.3g}·fwidth from {'its band' if order > 1 else 'fcen'}{generated}",
        round(reach, 4),
        f"fail > {th.SOURCE_BAND.fail:g}·fwidth, warn > {th.SOURCE_BAND.warn:g}·fwidth",
    )


def _harmonics(order: int) -> list[int]:
    """The harmonics a medium of this order generates from one band: χ(2) sums to 2·fcen,
    χ(3) to 3·fcen (its even products cancel); the fundamental stays."""
    return [1, 2] if order == 2 else list(range(1, order + 1, 2))


def _reach(freqs: list[float], src: dict, k: int) -> float:
    """The farthest of `freqs` from the k-th harmonic of the source's band, in units of
    that band's width (√k·fwidth: the k-th power of a Gaussian pulse)."""
    return max(abs(f - k * src["fcen"]) for f in freqs) / (math.sqrt(k) * src["fwidth"])


def field_decay_check(sims: list[dict]) -> Check | None:
    """Whether the last run of every measuring simulation ran long enough, whatever
    stopped it. What a truncated run gets wrong is its monitors' spectra, so where the
    record followed them (flux and mode monitors, a near2far's surface) the check judges
    how much they would still change after the stop; otherwise the field energy left in
    the cell against its peak."""
    worst = None
    for s in sims:
        if not _measures(s) or not s["runs"]:
            continue
        if all(x["time"] == "ContinuousSource" for x in s["sources"]):
            continue  # a CW steady state never decays, by design
        run = s["runs"][-1]
        left = spectrum_left_to_change(
            run.get("spectrum_changes") or [],
            run.get("energy_recent") or [],
            run.get("spectrum_wander"),
        )
        if left is not None:
            status = _status_high(left, th.SPECTRUM_UNSETTLED)
            found = (_RANK[status], left, "spectra", s, run)
        elif run["energy_decay"] is not None:
            status = _status_high(run["energy_decay"], th.ENERGY_DECAY)
            found = (_RANK[status], run["energy_decay"], "energy", s, run)
        else:
            continue
        if worst is None or found[:2] > worst[:2]:
            worst = found
    if worst is None:
        return None
    rank, value, measure, s, run = worst
    status = {v: k for k, v in _RANK.items()}[rank]
    said = (
        f"the monitored spectra would still change by {value:.3g} of their largest value "
        f"after the stop (last changes per {run['spectrum_interval']:.3g} time units: "
        f"{', '.join(f'{c:.2g}' for c in run['spectrum_changes'][-4:])}; field energy "
        f"at the end / its peak = {run['energy_decay']:.3g})"
        if measure == "spectra"
        else f"field energy at the end / its peak = {value:.3g}"
    )
    lim = th.SPECTRUM_UNSETTLED if measure == "spectra" else th.ENERGY_DECAY
    return Check(
        "built:field_decay",
        status,
        f"{_label(s)}: {said} (stop: {json.dumps(run['stop'])}, t = {run['sim_time']:.4g})",
        value,
        f"fail > {lim.fail:g}, warn > {lim.warn:g} ({measure})",
    )


_RANK = {"pass": 0, "warn": 1, "fail": 2}


def spectrum_left_to_change(
    changes: list[float], energy: list[float], wander: float | None = None
) -> float | None:
    """How much the spectra would still change after the run, relative to their largest
    value. The DFT's increments follow the field's amplitude: a tail whose amplitude
    decays by r per sample leaves about its current change times r / (1 - r). r comes
    from the cell's energy (r² per sample: free of the beats a single monitor sees), or
    where the record has none from the changes themselves; the current change is the
    largest of the last few carried forward at that rate (a tail of beating modes dips
    between its beats). A tail that does not decay (a static field left by a source's
    DC part, whose DFT oscillates for ever; a pulse still passing) leaves the range the
    spectra moved in over the kept samples (`wander`), unbounded (inf) where that is
    unknown. None with too few samples to tell."""
    if len(changes) < SETTLING_SAMPLES:
        return None
    last = changes[-SETTLING_SAMPLES:]
    half = SETTLING_SAMPLES // 2
    if max(last[half:]) == 0:
        return 0.0
    if len(energy) >= SETTLING_SAMPLES and energy[-SETTLING_SAMPLES] > 0:
        drop = energy[-1] / energy[-SETTLING_SAMPLES]
        ratio = math.sqrt(drop) ** (1 / (SETTLING_SAMPLES - 1))
    else:
        early = max(last[:half])
        ratio = (max(last[half:]) / early) ** (1 / half) if early else math.inf
    if ratio >= 1:
        return wander if wander is not None else math.inf
    now = max(c * ratio ** (len(last) - 1 - i) for i, c in enumerate(last) if i >= half)
    return now * ratio / (1 - ratio)


# Samples that give the tail's decay per sample.
SETTLING_SAMPLES = 6


def valid_range_check(sims: list[dict]) -> Check | None:
    found = []
    for s in sims:
        if not _measures(s) or not s.get("band"):
            continue
        lo, hi = s["band"]
        for g in s.get("geometry", []):
            vr = g["material"].get("valid_range")
            if g["material"].get("dispersive") and vr:
                found.append((lo < vr[0] or hi > vr[1], s, vr, lo, hi))
    if not found:
        return None
    bad = [f for f in found if f[0]]
    _, s, vr, lo, hi = (bad or found)[0]
    return Check(
        "built:materials_valid_range",
        "fail" if bad else "pass",
        f"{_label(s)}: monitored {lo:.4g}-{hi:.4g} c/a; dispersive model valid "
        f"{vr[0]:.4g}-{vr[1]:.4g} c/a",
        len(bad),
        "fail: a monitored frequency outside a material model's valid range",
    )


def film_check(sims: list[dict]) -> Check | None:
    """Dispersive blocks get no subpixel smoothing: both faces on grid points adds a pixel.
    Only a face inside the cell and outside its absorbing layers is an interface: a
    substrate that runs into the PML or past the cell (a half-space) has one face, and
    a pixel more of it is no film's thickness."""
    worst = None
    for s in sims:
        for g in s.get("geometry", []):
            if not g["material"].get("dispersive") or not g.get("faces"):
                continue
            face = min(g["faces"], key=lambda f: f["thickness"])
            inside = interfaces(s, g, face)
            on = [
                abs(o) < th.FILM_ON_GRID_PX and i
                for o, i in zip(face["face_offsets_px"], inside, strict=True)
            ]
            rank = sum(on)
            if worst is None or rank > worst[0]:
                worst = (rank, s, g, face)
    if worst is None:
        return None
    rank, s, g, face = worst
    offs = face["face_offsets_px"]
    return Check(
        "built:film_faces_off_grid",
        "fail" if rank == 2 else "warn" if rank else "pass",
        f"{_label(s)}: dispersive {g['kind']} {face['thickness']:.4g} a along {face['axis']} "
        f"({face['pixels']:.3g} pixels): faces {offs[0]:+.3g} and {offs[1]:+.3g} pixels "
        "from the nearest grid point",
        round(min(abs(o) for o in offs), 4),
        f"fail: both faces within {th.FILM_ON_GRID_PX:g} px of grid points, warn: one",
    )


def interfaces(sim: dict, obj: dict, face: dict) -> list[bool]:
    """Whether each of a block's two faces along `face`'s axis is an interface: inside
    the cell, and not within an absorbing layer (PML or absorber) on its side."""
    axes = sim.get("axes") or ["x", "y", "z"]
    name = face.get("axis")
    if name not in axes or not obj.get("size") or not sim.get("cell"):
        return [True, True]
    ax = "xyz".index(name) if name in "xyz" else (0 if name == "r" else 2)
    half = (sim["cell"][ax] or 0.0) / 2
    origin = (sim.get("geometry_center") or [0, 0, 0])[ax] or 0.0
    centre, size = (obj["center"][ax] or 0.0) - origin, obj["size"][ax] or 0.0
    out = []
    for side, pos in (("low", centre - size / 2), ("high", centre + size / 2)):
        layer = sum(
            x["thickness"]
            for x in sim.get("boundary_layers", [])
            if x["axis"] == name and x["side"] == side
        )
        out.append(abs(pos) < half - layer - 1e-9 if half > 0 else True)
    return out


def normalisation_check(sims: list[dict], outputs_ratio: bool) -> Check | None:
    """T/R need an incident (normalisation) run or mode coefficients: >= 2 flux runs."""
    if not outputs_ratio:
        return None
    flux = [s for s in sims if any(m["kind"] == "flux" for m in s.get("monitors", []))]
    modes = any(m["kind"] == "mode" for s in sims for m in s.get("monitors", []))
    if not flux or modes:
        return None
    return Check(
        "built:normalisation_run",
        "fail" if len(flux) < 2 else "pass",
        f"{len(flux)} simulation(s) with flux monitors ran"
        + (": T/R without an incident run are not normalised" if len(flux) < 2 else ""),
        len(flux),
        "fail < 2 flux runs for T/R outputs (one incident run, one with the structure)",
    )


def _sizes(g: dict) -> list[float]:
    """The lengths an object as built has: its size, radii and diameters (a cone's
    both), height, and a prism's extents (`prism_lengths`)."""
    out = [x for x in g.get("size") or [] if x]
    for r in ("radius", "radius2"):
        if g.get(r):
            out += [g[r], 2 * g[r]]
    if g.get("height"):
        out.append(g["height"])
    if g.get("vertices"):
        out += prism_lengths(g["vertices"])
    return out


def prism_lengths(vertices: list[list]) -> list[float]:
    """A polygon's lengths: its extent along each axis, each edge, and the distance
    between each two parallel edges (the width of a waveguide drawn at any angle)."""
    import numpy as np

    v = np.array([[c or 0.0 for c in p] for p in vertices], dtype=float)
    out = [float(x) for x in np.ptp(v, axis=0) if x > 0]
    edges = [(v[i], v[(i + 1) % len(v)] - v[i]) for i in range(len(v))]
    for _, d in edges:
        out.append(float(np.linalg.norm(d)))
    for (p, d), (q, e) in itertools.combinations(edges, 2):
        nd, ne = np.linalg.norm(d), np.linalg.norm(e)
        if nd and ne and np.linalg.norm(np.cross(d / nd, e / ne)) < 1e-9:
            gap = np.linalg.norm(np.cross(q - p, d / nd))
            if gap > 0:
                out.append(float(gap))
    return out


def declared_geometry_check(sims: list[dict], declared: list[dict]) -> Check | None:
    """Each dimension the design declares is the size of some object as built."""
    if not declared:
        return None
    built = [x for s in sims for g in s.get("geometry", []) for x in _sizes(g)]
    missing = []
    for d in declared:
        v = float(d["value"])
        if not any(abs(b - v) <= th.GEOMETRY_DECLARED_REL * abs(v) + 1e-12 for b in built):
            near = min(built, key=lambda b: abs(b - v)) if built else None
            missing.append(f"{d['name']} = {v:g} a (nearest built size {near})")
    return Check(
        "built:geometry_as_declared",
        "fail" if missing else "pass",
        ("not built: " + "; ".join(missing))
        if missing
        else f"all {len(declared)} declared dimensions found in the built geometry",
        len(missing),
        f"fail: a declared dimension matched by no object within {th.GEOMETRY_DECLARED_REL:g}",
    )


def run_label(sim: dict, run: dict) -> str:
    """What tells a run's modes apart: its k point and m (the run's, else the sim's)."""
    k = run.get("k_point") if run.get("k_point") is not None else sim.get("k_point")
    m = run.get("m") if run.get("m") is not None else sim.get("m")
    parts = []
    if k is not None:
        parts.append("k = (" + ", ".join(f"{x or 0:.4g}" for x in k) + ")")
    if m is not None:
        parts.append(f"m = {m:g}")
    return ", ".join(parts)


def harminv_summary(sims: list[dict]) -> Check | None:
    """The trusted Harminv modes of every run, Q as this run can measure it: a lossless
    mode's Q (10^8 or more, or negative: noise) is "above what this run can measure",
    never a number to judge."""
    lines, n, untrusted = [], 0, 0
    for s in sims:
        for r in s["runs"]:
            window = r.get("sim_time") or 0.0
            for h in r.get("harminv", []):
                strongest = max((m.get("amp") or 0.0 for m in h["modes"]), default=0.0)
                for m in h["modes"]:
                    ok, _ = hv.mode_trusted(m, strongest)
                    if not ok:
                        untrusted += 1
                        continue
                    n += 1
                    label = run_label(s, r)
                    lines.append(
                        (f"[{label}] " if label else "")
                        + f"f = {m['freq']:.6g}, Q = {hv.q_text(m, window)}"
                    )
    if not n and not untrusted:
        return None
    return Check(
        "built:harminv_modes",
        "pass",
        "; ".join(lines[:8])
        + (f"; … {len(lines) - 8} more" if len(lines) > 8 else "")
        + (f" ({untrusted} fitted component(s) not trusted as modes)" if untrusted else ""),
        n,
        "recorded (Q beyond what a run's window resolves is reported, never judged)",
    )


def no_simulation_check(sims: list[dict], design: dict) -> Check | None:
    """A design declaring `runs_simulation: false` built nothing to time-step."""
    if design.get("runs_simulation") is not False:
        return None
    return Check(
        "built:no_simulation",
        "fail" if sims else "pass",
        f"the design declares runs_simulation: false and the run built {len(sims)} "
        "simulation(s)"
        + (" (its resolution, PML and source were never designed or checked)" if sims else ""),
        len(sims),
        "0 simulations",
    )


def record_checks(sims: list[dict], design: dict | None) -> list[Check]:
    """Every check of the run-time record (none when the run left no record)."""
    design = design or {}
    found = [
        no_simulation_check(sims, design),
        resolution_check(sims),
        pml_check(sims),
        plane_wave_check(sims),
        source_band_check(sims),
        field_decay_check(sims),
        valid_range_check(sims),
        film_check(sims),
        normalisation_check(sims, meanings.ratio_outputs(design)),
        declared_geometry_check(sims, design.get("declared_dimensions") or []),
        harminv_summary(sims),
        *boundary_checks(sims, design),
        *emitter_checks(sims, design),
    ]
    return [c for c in found if c is not None]


# Static findings whose concern a record check judges from what Meep built.
STATIC_JUDGED_BY = {
    "resolution_ppw": "built:resolution_ppw",
    "pml_thickness": "built:pml_thickness",
    "lint:pml_pixels": "built:pml_thickness",
    "lint:plane_wave_is_integrated": "built:plane_wave_is_integrated",
    "lint:film_faces_off_grid": "built:film_faces_off_grid",
    "lint:decay_tolerance": "built:field_decay",
    "lint:early_stop_pitfall": "built:field_decay",
    "lint:fixed_run_time": "built:field_decay",
    "lint:normalisation_run": "built:normalisation_run",
}


def defer_static(checks: list[Check], judged: list[Check]) -> list[Check]:
    """A static reading the record judges stays an early warning: its `fail` becomes
    `warn`, naming the record check that decides (a constant written through a name
    or a computed centre is no reason to fail a run that built the right thing)."""
    names = {c.name for c in judged}
    out = []
    for c in checks:
        by = STATIC_JUDGED_BY.get(c.name)
        if c.status == "fail" and by in names:
            c = Check(
                c.name,
                "warn",
                f"{c.detail} [static reading; decided by {by}]",
                c.value,
                c.threshold,
            )
        out.append(c)
    return out
