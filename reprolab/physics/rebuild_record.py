"""What the run-time recorder (`reprolab.physics.as_built`) keeps so that the host can
build a simulation again from its record alone (`reprolab.physics.resimulate`): each
source's amplitude and time profile, the scheme's settings, and where the flux data a
monitor was loaded with came from."""

from __future__ import annotations

import contextlib
import math


def patch_flux_data(sim_cls, key_of, origins: dict) -> None:
    """Flux data read from one monitor and loaded into another (a reflection's
    normalisation run subtracted): the loaded monitor's entry names where the data came
    from (`flux_data`: how, the simulation's key, the monitor, the time it was read),
    so the host's re-simulation can load the same data (`reprolab.physics.resimulate`).
    `key_of(sim)` is the recorder's number of a simulation; `origins` keeps each read
    datum (and so its id) while the script runs."""
    read = getattr(sim_cls, "get_flux_data", None)
    if read is None:
        return

    def get_flux_data(self, flux, *args, **kwargs):
        data = read(self, flux, *args, **kwargs)
        owner = getattr(flux, "_reprolab_owner", None)
        if owner is not None:  # the data itself is kept, so its id is not reused
            origins[id(data)] = (data, key_of(owner[0]), owner[1], float(owner[0].meep_time()))
        return data

    sim_cls.get_flux_data = get_flux_data
    for name in dir(sim_cls):
        if name.startswith(("load_flux", "load_minus_flux", "load_mode", "load_minus_mode")):
            setattr(sim_cls, name, _flux_loader(getattr(sim_cls, name), name, origins))


def _flux_loader(method, name: str, origins: dict):
    def load(self, *args, **kwargs):
        out = method(self, *args, **kwargs)
        monitors = [a for a in [*args, *kwargs.values()] if hasattr(a, "_reprolab_owner")]
        datas = [origins.get(id(a)) for a in [*args, *kwargs.values()]]
        origin = next((d for d in datas if d is not None), None)
        for mon in monitors:  # after: Meep's minus load calls the plain one
            sim, index = mon._reprolab_owner
            entry = {"how": "minus" if "minus" in name else "loaded", "by": name}
            if origin is not None and not name.endswith(("flux", "mode")):
                entry.update(sim=origin[1], monitor=origin[2], sim_time=origin[3])
            with contextlib.suppress(Exception):
                sim._reprolab_monitors[index]["flux_data"] = entry
        return out

    return load


def numerics(sim) -> dict:
    """The scheme's own settings a script may change (the host's re-simulation uses them)."""
    out = {}
    for attr in ("Courant", "eps_averaging", "subpixel_tol", "subpixel_maxeval"):
        value = getattr(sim, attr, None)
        if isinstance(value, (bool, int, float)):
            out[attr] = value
    out["custom_layers"] = custom_layers(sim)
    out["material_function"] = any(
        _given(sim, a) for a in ("material_function", "epsilon_func", "epsilon_input_file")
    )
    return out


def custom_layers(sim) -> list[str]:
    """A boundary layer's settings other than Meep's defaults (R_asymptotic,
    mean_stretch, pml_profile), which the record does not keep per layer."""
    import inspect

    out = []
    for layer in getattr(sim, "boundary_layers", None) or []:
        params = inspect.signature(type(layer).__init__).parameters
        for name in ("R_asymptotic", "mean_stretch", "pml_profile"):
            if name in params and getattr(layer, name, None) != params[name].default:
                out.append(f"{type(layer).__name__} {name}")
    return sorted(set(out))


def source_profile(s) -> dict:
    """What else the host's re-simulation (`reprolab.physics.resimulate`) needs to build
    the source again: its complex amplitude, its time profile's start, cutoff or end and
    width, and whether an amplitude function or array shapes it (not rebuilt)."""
    src, amp = s.src, complex(getattr(s, "amplitude", 1.0))
    out = {"amplitude": [amp.real, amp.imag]}
    for attr in ("start_time", "cutoff", "end_time", "width"):
        value = getattr(src, attr, None)
        if isinstance(value, (int, float)):
            out[attr] = _num(value)
    shaped = [a for a in ("amp_func", "amp_func_file", "amp_data") if _given(s, a)]
    out["amp_shaped"] = shaped
    return out


def _given(obj, attr: str) -> bool:
    value = getattr(obj, attr, None)
    return value is not None and not (isinstance(value, str) and not value)


def _num(x) -> float | None:
    x = float(x)
    return x if math.isfinite(x) and abs(x) < 1e19 else None  # mp.inf is 1e20
