"""Run-time record of the simulation Meep actually built (`as_built.json`).

`install_as_built_recorder(workdir)` is called once per rank by the sandbox's entry
point (and may be called again per sweep point with another folder). It patches
`meep` when the script imports it: every `Simulation.run` adds a sampler of the
cell's field energy and, after the run, records what was constructed (cell,
resolution, boundary layers per side, sources, geometry with its materials and faces
relative to the grid, symmetries, flux/DFT monitors), the stop condition, the energy
decay reached and the Harminv modes, and what the monitors measured as the script
read it (`reprolab.physics.as_measured`). Rank 0 streams each finished run and each
measured value to the launcher over the channel it opened before the script started
(`open_channel`; the launcher's end is `reprolab.jobs.record_channel`), so a script
that crashes later still leaves what it built, and nothing it does afterwards removes
or rewrites what was sent; no record file is written in the run folder. Each event is
signed with a key drawn before the script runs (`record_store.signed_line`), so what a
script writes into the channel's descriptor itself is refused; a simulation's fields
are sent once, with its first run. Reading the
object Meep holds judges the script however it was written (named constants,
`getattr`, loops).

What a `meep.Simulation` object holds is described as plain JSON (`structure`), in the
simulation's process after a run: the cell, the boundary layers per side (thickness in
pixels and in wavelengths), the sources (and whether they reach the PML), the geometry
objects with their materials (dispersive, valid range, loss, index over the monitored
band) and the faces of each block relative to the grid points.
"""

from __future__ import annotations

import atexit
import cmath
import functools
import importlib.abc
import importlib.util
import math
import os
import sys

from reprolab.physics import as_measured, rebuild_record, record_store, run_samplers
from reprolab.physics.record_store import CHANNEL_ENV, RECORD_FILE

__all__ = ["RECORD_FILE", "install_as_built_recorder", "open_channel"]

_STATE: dict = {"workdir": None, "record": None, "harminvs": [], "patched": False, "fd": None}
# MPI launchers' names for a process's rank: only rank 0 streams the record.
_RANK_ENV = ("OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID")


def open_channel() -> bool:
    """Open the launcher's record channel (its path in REPROLAB_RECORD_CHANNEL) for
    writing: before the script runs and before the runtime guard, which refuses writes
    outside the run folder. False (and nothing recorded) where there is none."""
    if _STATE["fd"] is not None:
        return True
    path = os.environ.get(CHANNEL_ENV)
    rank = next((os.environ[k] for k in _RANK_ENV if os.environ.get(k)), "0")
    if not path or rank != "0":
        return False
    try:
        # Non-blocking open: no reader means no record, never a hang.
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        os.set_blocking(fd, True)
    except OSError as exc:
        print(f"[reprolab] no record channel at {path}: {exc}", file=sys.stderr)
        return False
    _STATE["fd"] = fd
    # The key lives only here: an event a script writes straight into the descriptor
    # carries no valid signature and is refused by the launcher.
    _STATE["key"] = os.urandom(32)
    _send_line(record_store.key_line(_STATE["key"]))
    return _STATE["fd"] is not None


def install_as_built_recorder(workdir: str) -> None:
    """Record every simulation this process runs as `workdir`'s (sent to the launcher)."""
    _STATE.update(workdir=str(workdir), record={"version": 1, "simulations": []}, harminvs=[])
    _STATE["sent"] = {}
    if open_channel():
        _send({"event": "begin", "workdir": os.path.abspath(workdir)})
    if "meep" in sys.modules:
        _patch(sys.modules["meep"])
    elif not any(isinstance(f, _MeepFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _MeepFinder())  # importing meep costs ~0.5 s: only if used
    if not _STATE.get("atexit"):
        atexit.register(_write)
        _STATE["atexit"] = True


class _MeepFinder(importlib.abc.MetaPathFinder):
    """Patches `meep` right after the script's first `import meep`."""

    def find_spec(self, name, path=None, target=None):
        if name != "meep":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec("meep")
        if spec is None or spec.loader is None:
            return spec
        loader_exec = spec.loader.exec_module

        def exec_module(module):
            loader_exec(module)
            _patch(module)

        spec.loader.exec_module = exec_module
        return spec


def _patch(mp) -> None:
    if _STATE["patched"]:
        return
    _STATE["patched"] = True
    sim_cls = mp.Simulation
    orig_run = sim_cls.run

    def run(self, *step_funcs, **kwargs):
        sampler = run_samplers.EnergySampler(mp)
        spectra = run_samplers.SpectrumSampler(mp, _STATE["get_fluxes"])
        dt = run_samplers.sample_interval(self)
        stop = {k: _describe_stop(v) for k, v in kwargs.items() if k.startswith("until")}
        monitors_before = len(getattr(self, "_reprolab_monitors", []))
        samplers = (mp.at_every(dt, sampler.step), mp.at_every(dt, spectra.step))
        out = orig_run(self, *step_funcs, *samplers, **kwargs)
        try:
            _record_run(mp, self, stop, sampler, monitors_before)
            _record_spectrum_settling(self, spectra, sampler.recent, dt)
        except Exception as exc:  # noqa: BLE001 - the record must never break a run
            _STATE["record"].setdefault("errors", []).append(f"{type(exc).__name__}: {exc}")
        as_measured.after_run(self, _report_measured)
        _write()
        return out

    sim_cls.run = run
    for method, kind in (
        ("add_flux", "flux"),
        ("add_mode_monitor", "mode"),
        ("add_dft_fields", "dft_fields"),
        ("add_near2far", "near2far"),
        ("add_energy", "energy"),
        ("add_force", "force"),
    ):
        if hasattr(sim_cls, method):
            setattr(sim_cls, method, _monitor_wrapper(getattr(sim_cls, method), kind))
    for name in ("stop_when_fields_decayed", "stop_when_energy_decayed", "stop_when_dft_decayed"):
        if hasattr(mp, name):
            setattr(mp, name, _stop_wrapper(getattr(mp, name), name))
    orig_harminv_init = mp.Harminv.__init__

    def harminv_init(self, *args, **kwargs):
        orig_harminv_init(self, *args, **kwargs)
        _STATE["harminvs"].append(self)

    mp.Harminv.__init__ = harminv_init
    rebuild_record.patch_flux_data(sim_cls, _key, _STATE.setdefault("flux_data", {}))
    _STATE["get_fluxes"] = mp.get_fluxes  # before as_measured wraps it: samples are not reads
    as_measured.patch(mp, _report_measured, _freqs_of)


def _monitor_wrapper(method, kind):
    @functools.wraps(method)  # keeps the unwrapped method: the record adds its own monitors
    def add(self, *args, **kwargs):
        obj = method(self, *args, **kwargs)
        freq_args = args[1:] if kind == "dft_fields" else args  # first: the components
        entry = {"kind": kind, "regions": [], "freqs": _freqs_of(freq_args, kwargs)}
        regions = getattr(obj, "regions", None) or [
            a for a in args if hasattr(a, "center") and hasattr(a, "size")
        ]
        if kind == "dft_fields" and kwargs.get("where") is not None:
            regions = [kwargs["where"]]
        for r in regions:
            entry["regions"].append(region(r))
        if not hasattr(self, "_reprolab_monitors"):
            self._reprolab_monitors = []
        self._reprolab_monitors.append(entry)
        as_measured.tag(obj, self, len(self._reprolab_monitors) - 1)
        return obj

    return add


def region(r) -> dict:
    """A monitor's region; a FluxRegion's weight too (its sign is the face's: a box's
    lower faces read with weight=-1 give the outward flux, reprolab.physics.trace)."""
    out = {"center": _vec(r.center), "size": _vec(r.size)}
    if isinstance(getattr(r, "direction", None), int):
        out["direction"] = int(r.direction)
    weight = getattr(r, "weight", None)
    if weight is not None:
        out["weight"] = _real(complex(weight))
    return out


def _freqs_of(args, kwargs) -> list[float]:
    """The monitor's frequencies: (fcen, df, nfreq) or an array, positional or keyword."""
    nums = [a for a in args if isinstance(a, (int, float))]
    arrays = [a for a in args if hasattr(a, "__len__") and not hasattr(a, "center")]
    if "freq" in kwargs:
        arrays = [kwargs["freq"]]
    if arrays and all(isinstance(v, (int, float)) for v in list(arrays[0])):
        return [float(v) for v in arrays[0]]
    fcen = kwargs.get("fcen", nums[0] if nums else None)
    df = kwargs.get("df", nums[1] if len(nums) > 1 else 0.0)
    nfreq = int(kwargs.get("nfreq", nums[2] if len(nums) > 2 else 1))
    if fcen is None:
        return []
    if nfreq <= 1:
        return [float(fcen)]
    return [fcen - df / 2 + df * i / (nfreq - 1) for i in range(nfreq)]


def _stop_wrapper(factory, name):
    def make(*args, **kwargs):
        cond = factory(*args, **kwargs)
        params = dict(zip(_STOP_ARGS.get(name, ()), args, strict=False)) | kwargs

        def tagged(sim):
            return cond(sim)

        tagged._reprolab_stop = {
            "kind": name.removeprefix("stop_when_"),
            **{k: _jsonable(v) for k, v in params.items() if k in ("dt", "decay_by", "tol")},
        }
        return tagged

    return make


_STOP_ARGS = {
    "stop_when_fields_decayed": ("dt", "c", "pt", "decay_by"),
    "stop_when_energy_decayed": ("dt", "decay_by"),
    "stop_when_dft_decayed": ("tol", "minimum_run_time", "maximum_run_time"),
}


def _describe_stop(value) -> dict:
    if isinstance(value, (int, float)):
        return {"kind": "fixed_time", "time": float(value)}
    if isinstance(value, (list, tuple)):
        return {"kind": "any_of", "conditions": [_describe_stop(v) for v in value]}
    tag = getattr(value, "_reprolab_stop", None)
    return dict(tag) if tag else {"kind": "custom", "name": getattr(value, "__name__", "?")}


def _record_spectrum_settling(
    sim, spectra: run_samplers.SpectrumSampler, energy: list, dt: float
) -> None:
    """The last run's spectrum changes per sample, their wander and the field energy at
    the same samples (`reprolab.physics.record_checks` judges what they leave to come
    after the run stopped)."""
    sims = _STATE["record"]["simulations"]
    entry = next((s for s in sims if s["_id"] == _key(sim)), None)
    if entry and entry["runs"]:
        entry["runs"][-1]["spectrum_changes"] = spectra.changes
        entry["runs"][-1]["spectrum_wander"] = spectra.wander()
        entry["runs"][-1]["spectrum_interval"] = dt
        entry["runs"][-1]["energy_recent"] = energy


def _vec(v) -> list[float | None]:
    return [_num(v.x), _num(v.y), _num(v.z)]


def _num(x) -> float | None:
    x = float(x)
    return x if math.isfinite(x) and abs(x) < 1e19 else None  # mp.inf is 1e20


def _jsonable(v):
    if isinstance(v, (int, float, str, bool)) or v is None:
        return v
    return str(v)


def _record_run(
    mp, sim, stop: dict, sampler: run_samplers.EnergySampler, monitors_before: int
) -> None:
    entry = _entry_as_built(structure(mp, sim, getattr(sim, "_reprolab_monitors", [])), sim)
    modes = [harminv(h) for h in _STATE["harminvs"] if getattr(h, "modes", None)]
    _STATE["harminvs"] = [h for h in _STATE["harminvs"] if not getattr(h, "modes", None)]
    entry["runs"].append(
        {
            # run_k_points (or change_k_point/change_m in a loop) reuses one Simulation:
            # each run keeps the k point and m it ran with
            "k_point": _k_point(sim),
            "m": _m(sim),
            "stop": stop,
            "sim_time": float(sim.meep_time()),
            "energy_peak": sampler.peak,
            "energy_final": sampler.last,
            "energy_samples": sampler.samples,
            "energy_decay": (sampler.last / sampler.peak)
            if sampler.peak and sampler.last is not None
            else None,
            "monitors": len(getattr(sim, "_reprolab_monitors", [])),
            "new_monitors": len(getattr(sim, "_reprolab_monitors", [])) - monitors_before,
            "harminv": modes,
        }
    )


# What a later run of the same Simulation may change without being another simulation.
_PER_RUN_FIELDS = ("k_point", "m")


def _entry_as_built(built: dict, sim) -> dict:
    """The record's entry of `sim` as built now. Its fields are sent once and the
    launcher refuses a change: a Simulation rebuilt between runs (`reset_meep` and new
    geometry, `change_sources`, a monitor added) becomes a new simulation of its own."""
    sims = _STATE["record"]["simulations"]
    entry = next((s for s in sims if s["_id"] == _key(sim)), None)

    def same(a: dict, b: dict) -> bool:
        keys = (set(a) | set(b)) - {"_id", "index", "runs", "measured", *_PER_RUN_FIELDS}
        return all(a.get(k) == b.get(k) for k in keys)

    if entry is not None and not same(entry, built):
        sim._reprolab_key = None  # a new number: the old entry stays as it was sent
        entry = None
    if entry is None:
        entry = {**built, "_id": _key(sim), "index": len(sims), "runs": []}
        sims.append(entry)
    return entry


def _is_master() -> bool:
    mp = sys.modules.get("meep")
    try:
        return bool(mp.am_master()) if mp is not None else True
    except Exception:  # noqa: BLE001
        return True


def _key(sim) -> int:
    """A simulation's own number (an id() is reused once the object is freed)."""
    if getattr(sim, "_reprolab_key", None) is None:
        _STATE["serial"] = _STATE.get("serial", 0) + 1
        sim._reprolab_key = _STATE["serial"]
    return sim._reprolab_key


def _report_measured(sim, values: list[dict]) -> None:
    """Values a monitor of `sim` measured, attached to its entry and sent."""
    record = _STATE.get("record")
    sims = record["simulations"] if record else []
    entry = next((s for s in sims if s["_id"] == getattr(sim, "_reprolab_key", None)), None)
    if entry is None:
        return  # read before any run: nothing was measured
    kept = entry.setdefault("measured", [])
    for v in values:
        if not any(_same_reading(v, k) for k in kept):
            kept.append(v)
    _write()


def _same_reading(a: dict, b: dict) -> bool:
    keys = ("kind", "monitor", "sim_time", "freq_index", "component", "point")
    return all(a.get(k) == b.get(k) for k in keys)


def _send(event: dict) -> None:
    if _STATE.get("fd") is not None:
        _send_line(record_store.signed_line(_STATE["key"], event))


def _send_line(data: bytes) -> None:
    fd = _STATE.get("fd")
    if fd is None:
        return
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    except OSError as exc:  # the launcher is gone: the run goes on unrecorded
        print(f"[reprolab] record channel closed: {exc}", file=sys.stderr)
        _STATE["fd"] = None


def _write() -> None:
    """Send what the record gained since the last call: runs, measured values, errors."""
    record = _STATE.get("record")
    if not record or not record["simulations"] or not _is_master():
        return
    sent = _STATE.setdefault("sent", {})
    for entry in record["simulations"]:
        runs, measured = sent.get(entry["_id"], (0, 0))
        if len(entry["runs"]) > runs:
            new = entry["runs"][runs:]
            event = {"event": "run", "sim": entry["_id"], "runs": new}
            if not runs:  # the fields once, with the first run (the launcher keeps them)
                event["fields"] = {
                    k: v for k, v in entry.items() if k not in ("runs", "measured", "_id")
                }
            _send(event)
        values = entry.get("measured", [])
        if len(values) > measured:
            _send({"event": "measured", "sim": entry["_id"], "values": values[measured:]})
        sent[entry["_id"]] = (len(entry["runs"]), len(values))
    errors = record.get("errors", [])
    for text in errors[sent.get("errors", 0) :]:
        _send({"event": "error", "text": text})
    sent["errors"] = len(errors)


# What a Simulation object holds, as plain JSON.

AXES = "xyz"


def axes_of(dims: int) -> list[int]:
    return [2] if dims == 1 else [0, 1] if dims == 2 else [0, 1, 2]


def is_cylindrical(mp, sim) -> bool:
    """Meep keeps `dimensions=mp.CYLINDRICAL` until the run, then sets it to 2 with
    `is_cylindrical`: either means axes r and z."""
    return bool(getattr(sim, "is_cylindrical", False)) or sim.dimensions == mp.CYLINDRICAL


def sim_axes(mp, sim) -> list[tuple[int, str]]:
    """(vector index, name) of the cell's axes: r (index 0) and z in cylindrical
    coordinates (z only with a length: a cell (sr, 0, 0) is radial only)."""
    if is_cylindrical(mp, sim):
        return [(0, "r")] + ([(2, "z")] if float(sim.cell_size.z) > 0 else [])
    return [(ax, AXES[ax]) for ax in axes_of(int(sim.dimensions))]


def _k_point(sim) -> list[float | None] | None:
    return _vec(sim.k_point) if sim.k_point else None


def _m(sim) -> float | None:
    m = getattr(sim, "m", None)
    if m is None or not (getattr(sim, "is_cylindrical", False) or sim.dimensions < 0):
        return None
    return int(m) if float(m).is_integer() else float(m)


def structure(mp, sim, monitors: list[dict]) -> dict:
    cyl = is_cylindrical(mp, sim)
    dims = mp.CYLINDRICAL if cyl else int(sim.dimensions)
    axes = sim_axes(mp, sim)
    cell = _vec(sim.cell_size)
    # a dft_ldos step function's frequencies (reprolab.physics.as_measured) are monitored too
    ldos = [float(f) for f in getattr(sim, "_reprolab_ldos_freqs", None) or []]
    freqs = sorted(f for m in [*monitors, {"freqs": ldos}] for f in m["freqs"] if f > 0)
    sources = [source(mp, s) for s in sim.sources or []]
    band = _band(freqs, sources)
    layers = boundary_layers(mp, sim, axes, band)
    out = {
        "dimensions": dims,
        "cylindrical": cyl,
        "coordinates": "cylindrical" if cyl else "cartesian",
        "axes": [name for _, name in axes],
        "m": _m(sim) if cyl else None,
        "resolution": float(sim.resolution),
        "cell": cell,
        "geometry_center": _vec(sim.geometry_center),
        "k_point": _k_point(sim),
        "band": band,
        "boundary_layers": layers,
        "boundaries": boundary_kinds(axes, layers, _k_point(sim), cyl),
        "sources": sources,
        "symmetries": [
            {"kind": type(s).__name__, "direction": int(s.direction), "phase": str(s.phase)}
            for s in sim.symmetries or []
        ],
        "monitors": monitors,
        "ldos": {"freqs": ldos} if ldos else None,
        "default_material": material(mp, sim.default_material, band),
        "geometry": [geometric_object(mp, g, sim, band) for g in sim.geometry or []],
        "numerics": rebuild_record.numerics(sim),
    }
    for s in out["sources"]:
        s["reaches_pml"] = _reaches_pml(s, cell, layers, axes)
    out["bloch_axes"] = [a for a, b in out["boundaries"].items() if "bloch" in b.values()]
    out["metallic_axes"] = [a for a, b in out["boundaries"].items() if "metallic" in b.values()]
    return out


def _band(freqs: list[float], sources: list[dict]) -> list[float] | None:
    """(f_min, f_max) judged: the monitored frequencies, else the sources' bands."""
    if freqs:
        return [freqs[0], freqs[-1]]
    lo = [s["fcen"] - (s["fwidth"] or 0) / 2 for s in sources if s["fcen"]]
    hi = [s["fcen"] + (s["fwidth"] or 0) / 2 for s in sources if s["fcen"]]
    return [max(min(lo), 1e-3), max(hi)] if lo else None


def boundary_layers(mp, sim, axes: list[tuple[int, str]], band) -> list[dict]:
    """One entry per axis and side that has a layer: thickness, pixels, wavelengths.
    In cylindrical coordinates r has only its outer side (r = 0 is the axis) and a
    layer along mp.R or mp.X is along r."""
    # in wavelengths at the band's centre (the rule of thumb: half a wavelength is ample)
    lam_max = 2 / (band[0] + band[1]) if band else None
    cyl = is_cylindrical(mp, sim)
    sides = {}
    for layer in sim.boundary_layers or []:
        for ax, name in axes:
            along = (mp.ALL, ax) + ((mp.R,) if name == "r" else ())
            if layer.direction not in along:
                continue
            for side, word in ((mp.Low, "low"), (mp.High, "high")):
                if cyl and name == "r" and word == "low":
                    continue
                if layer.side in (mp.ALL, side):
                    key = (name, word, type(layer).__name__)
                    sides[key] = sides.get(key, 0.0) + float(layer.thickness)
    return [
        {
            "axis": ax,
            "side": side,
            "kind": kind,
            "thickness": t,
            "pixels": t * float(sim.resolution),
            "wavelengths": t / lam_max if lam_max else None,
        }
        for (ax, side, kind), t in sorted(sides.items())
    ]


def boundary_kinds(axes, layers: list[dict], k_point, cyl: bool) -> dict[str, dict[str, str]]:
    """axis -> {side: kind}: `pml` or `absorber` where a layer is, else what Meep puts
    at the cell's edge: `bloch` with a k_point (every Cartesian axis; in cylindrical
    coordinates z only), `metallic` without; `axis` at r = 0."""
    out = {}
    for _, name in axes:
        sides = {}
        for word in ("low", "high"):
            if cyl and name == "r" and word == "low":
                sides[word] = "axis"
                continue
            kinds = {x["kind"] for x in layers if x["axis"] == name and x["side"] == word}
            if kinds:
                sides[word] = "pml" if "PML" in kinds else "absorber"
            elif k_point is not None and not (cyl and name == "r"):
                sides[word] = "bloch"
            else:
                sides[word] = "metallic"
        out[name] = sides
    return out


def source(mp, s) -> dict:
    src = s.src
    width = getattr(src, "width", 0) or 0
    fwidth = getattr(src, "fwidth", None) or (1 / width if width else None)
    return {
        "kind": type(s).__name__,
        "time": type(src).__name__,
        "fcen": float(getattr(src, "frequency", 0) or 0) or None,
        "fwidth": float(fwidth) if fwidth else None,
        "is_integrated": bool(getattr(src, "is_integrated", False)),
        "center": _vec(s.center),
        "size": _vec(s.size),
        "component": int(s.component) if hasattr(s, "component") else None,
        **rebuild_record.source_profile(s),
    }


def _reaches_pml(s: dict, cell, layers: list[dict], axes: list[tuple[int, str]]) -> bool:
    """The source's extent enters a PML along one of its sized axes: one that ends at the
    PML's inner edge (Meep's pw-source example) meets no PML conductivity, which is zero
    there and grows inside."""
    for ax, name in axes:
        size = s["size"][ax]
        if not size:
            continue
        half = (cell[ax] or 0) / 2
        for layer in layers:
            if layer["axis"] != name or layer["kind"] != "PML":
                continue
            edge = half - layer["thickness"]
            c = s["center"][ax] or 0
            if name == "r":  # r runs from the axis (0) to the cell's size
                c -= half
            if layer["side"] == "high" and c + size / 2 > edge + 1e-9:
                return True
            if layer["side"] == "low" and c - size / 2 < -edge - 1e-9:
                return True
    return False


def material(mp, m, band) -> dict:
    """Kind, dispersion, valid range, loss and the largest index over the band."""
    if not isinstance(m, mp.Medium):
        return {"kind": type(m).__name__}
    sus = list(m.E_susceptibilities or []) + list(m.H_susceptibilities or [])
    cond = any(abs(float(x)) > 0 for x in _vec(m.D_conductivity_diag) if x is not None)
    vr = getattr(m, "valid_freq_range", None)
    info = {
        "kind": "Medium",
        "dispersive": bool(sus),
        "valid_range": [float(vr.min), float(vr.max)] if vr is not None else None,
        "lossy": cond or any(float(getattr(x, "gamma", 0) or 0) > 0 for x in sus),
        "susceptibilities": [
            {"kind": type(x).__name__, "frequency": float(x.frequency), "gamma": float(x.gamma)}
            for x in sus
            if hasattr(x, "frequency")
        ],
        **built_model(m),
        "nonlinear_order": nonlinear_order(m),
    }
    eps = [float(x) for x in _vec(m.epsilon_diag) if x is not None]
    mu = [float(x) for x in _vec(m.mu_diag) if x is not None]
    n_static = math.sqrt(max(eps) * max(mu)) if eps and mu and min(eps) > 0 else None
    if sus and band:
        ns, ks = [], []
        for f in _samples(band):
            try:
                e = complex(m.epsilon(f)[0, 0])
            except Exception:  # noqa: BLE001 - outside what the model can evaluate
                continue
            n = cmath.sqrt(e)
            ns.append(abs(n.real))
            ks.append(abs(n.imag))
        info["n_max"] = max(ns) if ns else n_static
        info["k_max"] = max(ks) if ks else None
        info["negative_eps"] = any(k > n for n, k in zip(ns, ks, strict=True))
    else:
        info["n_max"] = n_static
    return info


def nonlinear_order(m) -> int:
    """3 with a χ(3) term, else 2 with a χ(2) term, else 1 (linear): a nonlinear medium
    generates harmonics and mixing products of the source's frequencies."""
    for order in (3, 2):
        for field in (f"E_chi{order}_diag", f"H_chi{order}_diag"):
            diag = getattr(m, field, None)
            if diag is not None and any(abs(x or 0) > 0 for x in _vec(diag)):
                return order
    return 1


def built_model(m) -> dict:
    """Every term Meep builds, in Meep's units (c/a): the instantaneous permittivity,
    the D conductivity and each electric susceptibility's sigma, frequency and gamma
    (`model`, the form `reprolab.physics.material_models` evaluates); `anisotropic`
    when a diagonal is not uniform or off-diagonals are set (the model is then its
    x entry)."""
    diag = [float(x) for x in _vec(m.epsilon_diag) if x is not None]
    offdiag = [
        abs(complex(x)) for x in (m.epsilon_offdiag.x, m.epsilon_offdiag.y, m.epsilon_offdiag.z)
    ]
    terms, aniso = [], len(set(diag)) > 1 or any(offdiag)
    for x in m.E_susceptibilities or []:
        if not hasattr(x, "frequency"):
            terms.append({"kind": type(x).__name__, "unsupported": True})
            continue
        # not `_vec`: a Drude term's sigma may be huge (meep.materials' f0 = 1e-10)
        sig = [float(x.sigma_diag.x), float(x.sigma_diag.y), float(x.sigma_diag.z)]
        aniso = aniso or len(set(sig)) > 1
        terms.append(
            {
                "kind": "drude" if type(x).__name__.startswith("Drude") else "lorentzian",
                "frequency": float(x.frequency),
                "gamma": float(x.gamma),
                "sigma": sig[0] if sig else 0.0,
            }
        )
    cond = [float(v) for v in _vec(m.D_conductivity_diag) if v is not None]
    return {
        "model": {
            "eps_inf": diag[0] if diag else 1.0,
            "terms": terms,
            "conductivity": cond[0] if cond else 0.0,
            "magnetic": bool(m.H_susceptibilities)
            or any(float(v) != 1.0 for v in _vec(m.mu_diag) if v is not None),
        },
        "anisotropic": aniso,
    }


def _samples(band) -> list[float]:
    lo, hi = band
    return [lo + (hi - lo) * i / 6 for i in range(7)]


def geometric_object(mp, g, sim, band) -> dict:
    out = {
        "kind": type(g).__name__,
        "center": _vec(g.center),
        "material": material(mp, g.material, band),
    }
    for attr in ("radius", "height"):
        if hasattr(g, attr):
            out[attr] = float(getattr(g, attr))
    if hasattr(g, "size") and hasattr(g.size, "x"):
        out["size"] = _vec(g.size)
        out["faces"] = faces(out["center"], out["size"], sim)
    out.update(shape_of(g))
    return out


def shape_of(g) -> dict:
    """What else fixes an object's shape, for the kinds whose lengths radius, height and
    size do not hold (Prism: vertices, axis; Cone: radius2; Wedge: its angle), so every
    GeometricObject kind of Meep is seen at its dimensions."""
    out: dict = {}
    if getattr(g, "vertices", None) is not None:
        out["vertices"] = [_vec(v) for v in g.vertices]
    for attr in ("radius2", "wedge_angle", "sidewall_angle"):
        if getattr(g, attr, None) is not None:
            out[attr] = float(getattr(g, attr))
    for attr in ("axis", "e1", "e2", "e3", "wedge_start"):
        if hasattr(getattr(g, attr, None), "x"):
            out[attr] = _vec(getattr(g, attr))
    return out


def faces(center, size, sim) -> list[dict]:
    """Per axis with a finite extent: both faces' signed distance to the nearest grid
    point, in pixels (grid points sit at integer multiples of 1/resolution from the
    cell centre along the normal, as the static film lint measures)."""
    res = float(sim.resolution)
    origin = _vec(sim.geometry_center)
    out = []
    cyl = bool(getattr(sim, "is_cylindrical", False))
    for ax in [0, 2] if cyl else axes_of(int(sim.dimensions)):
        s, c = size[ax], center[ax]
        if s is None or c is None or s <= 0:
            continue
        lo = (c - s / 2 - (origin[ax] or 0)) * res
        hi = (c + s / 2 - (origin[ax] or 0)) * res
        out.append(
            {
                "axis": "rz"[ax // 2] if cyl else AXES[ax],
                "thickness": s,
                "pixels": s * res,
                "face_offsets_px": [lo - round(lo), hi - round(hi)],
            }
        )
    return out


def harminv(h) -> dict:
    return {
        "fcen": float(h.fcen),
        "df": float(h.df),
        "point": _vec(h.pt),
        "modes": [
            {
                "freq": _real(m.freq),
                "decay": _real(m.decay),
                "Q": _real(m.Q),
                "amp": abs(complex(m.amp)),
                "error": abs(complex(m.err)),
            }
            for m in h.modes
        ],
    }


def _real(x) -> float:
    return float(x.real) if isinstance(x, complex) else float(x)
