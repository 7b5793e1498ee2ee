"""Run-time record of the simulation Meep actually built (`as_built.json`).

`install_as_built_recorder(workdir)` is called once per rank by the sandbox's entry
point (and may be called again per sweep point with another folder). It patches
`meep` when the script imports it: every `Simulation.run` adds a sampler of the
cell's field energy and, after the run, records what was constructed (cell,
resolution, boundary layers per side, sources, geometry with its materials and faces
relative to the grid, symmetries, flux/DFT monitors), the stop condition, the energy
decay reached and the Harminv modes. Rank 0 writes the record after every run, so a
script that crashes later still leaves what it built. Reading the object Meep holds
judges the script however it was written (named constants, `getattr`, loops).
"""

from __future__ import annotations

import atexit
import importlib.abc
import importlib.util
import json
import math
import os
import sys

RECORD_FILE = "as_built.json"

_STATE: dict = {"workdir": None, "record": None, "harminvs": [], "patched": False}


def install_as_built_recorder(workdir: str) -> None:
    """Record into `<workdir>/as_built.json` every simulation this process runs."""
    _STATE.update(workdir=str(workdir), record={"version": 1, "simulations": []}, harminvs=[])
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
        sampler = _EnergySampler(mp)
        dt = _sample_interval(self)
        stop = {k: _describe_stop(v) for k, v in kwargs.items() if k.startswith("until")}
        monitors_before = len(getattr(self, "_reprolab_monitors", []))
        out = orig_run(self, *step_funcs, mp.at_every(dt, sampler.step), **kwargs)
        try:
            _record_run(mp, self, stop, sampler, monitors_before)
        except Exception as exc:  # noqa: BLE001 - the record must never break a run
            _STATE["record"].setdefault("errors", []).append(f"{type(exc).__name__}: {exc}")
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


def _monitor_wrapper(method, kind):
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
            entry["regions"].append({"center": _vec(r.center), "size": _vec(r.size)})
        if not hasattr(self, "_reprolab_monitors"):
            self._reprolab_monitors = []
        self._reprolab_monitors.append(entry)
        return obj

    return add


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


class _EnergySampler:
    """Field energy in the whole cell at regular times: its peak and its last value."""

    def __init__(self, mp):
        self.peak, self.last, self.samples = 0.0, None, 0

        def step(sim):  # Meep counts a step function's arguments: a plain function
            box = mp.Volume(center=sim.geometry_center, size=sim.cell_size)
            e = abs(sim.field_energy_in_box(box=box))
            self.peak, self.last, self.samples = max(self.peak, e), e, self.samples + 1

        self.step = step


def _sample_interval(sim) -> float:
    """About one period of the slowest source (at least a few time steps)."""
    freqs = [getattr(s.src, "frequency", 0) or 0 for s in sim.sources or []]
    f = min([x for x in freqs if x > 0], default=1.0)
    return max(1.0 / f, 4.0 / sim.resolution)


def _vec(v) -> list[float]:
    return [_num(v.x), _num(v.y), _num(v.z)]


def _num(x) -> float | None:
    x = float(x)
    return x if math.isfinite(x) and abs(x) < 1e19 else None  # mp.inf is 1e20


def _jsonable(v):
    if isinstance(v, (int, float, str, bool)) or v is None:
        return v
    return str(v)


def _record_run(mp, sim, stop: dict, sampler: _EnergySampler, monitors_before: int) -> None:
    from reprolab.physics import as_built_describe as describe

    sims = _STATE["record"]["simulations"]
    entry = next((s for s in sims if s["_id"] == id(sim)), None)
    if entry is None:
        entry = {"_id": id(sim), "index": len(sims), "runs": []}
        sims.append(entry)
    entry.update(describe.structure(mp, sim, getattr(sim, "_reprolab_monitors", [])))
    harminv = [describe.harminv(h) for h in _STATE["harminvs"] if getattr(h, "modes", None)]
    _STATE["harminvs"] = [h for h in _STATE["harminvs"] if not getattr(h, "modes", None)]
    entry["runs"].append(
        {
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
            "harminv": harminv,
        }
    )


def _is_master() -> bool:
    mp = sys.modules.get("meep")
    try:
        return bool(mp.am_master()) if mp is not None else True
    except Exception:  # noqa: BLE001
        return True


def _write() -> None:
    record, workdir = _STATE.get("record"), _STATE.get("workdir")
    if not record or not record["simulations"] or not workdir or not _is_master():
        return
    path = os.path.join(workdir, RECORD_FILE)
    tmp = path + ".tmp"
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(record, fh, indent=1, default=str)
        os.replace(tmp, path)
    except OSError as exc:  # a full disk must not turn a finished run into a crash
        print(f"[reprolab] could not write {path}: {exc}", file=sys.stderr)
