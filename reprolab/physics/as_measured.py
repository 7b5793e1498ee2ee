"""What the monitors measured, recorded as the script reads it (part of the run-time
record, `reprolab.physics.as_built`).

`patch(mp, report)` wraps the calls a script reads its monitors through, so the record
holds the very numbers the script got: `meep.get_fluxes` (a flux spectrum with its
frequencies), `Simulation.get_eigenmode_coefficients` (|alpha|^2 per band, frequency
and direction), `Simulation.get_dft_array` (a DFT field array as a digest: its shape,
|F|^2 sampled on a regular stride to at most DIGEST_POINTS values, and its sum), and
`meep.dft_ldos` (the LDOS spectrum at the run's end) and `Simulation.get_farfield`
(|F|^2 of each far-field component at the point and the Poynting vector Re(E* x H)
per frequency). `report(sim, values)` attaches them to that simulation's entry under
`measured`; the host traces the outputs to them (`reprolab.physics.trace`).

Every `add_near2far` also gets a flux monitor on the same regions (same weights and
frequencies; fields are not changed by a DFT monitor), read when the script first asks
for a far field at a given time: the power through the near surface
(`near_surface_flux`) that `reprolab.physics.near_far_power` balances against the far
field. Where the script loads or subtracts near-field data into the near2far object
that flux no longer describes it and is not read; `scale_near2far_fields` is not
mirrored: a far field scaled by the script no longer carries the power the run put
through the surface.
"""

from __future__ import annotations

import contextlib
import math

DIGEST_POINTS = 4096


def patch(mp, report, freqs_of) -> None:
    """Wrap the readers of `mp`; `freqs_of(args, kwargs)` reads a DFT call's frequencies."""
    orig_fluxes, orig_freqs = mp.get_fluxes, mp.get_flux_freqs

    def get_fluxes(f):
        values = orig_fluxes(f)
        owner = getattr(f, "_reprolab_owner", None)
        if owner is not None:
            _guard(
                report,
                owner[0],
                {
                    "kind": "flux",
                    "monitor": owner[1],
                    "sim_time": _time(owner[0]),
                    "freqs": _floats(orig_freqs(f)),
                    "values": _floats(values),
                },
            )
        return values

    mp.get_fluxes = get_fluxes
    sim_cls = mp.Simulation
    if hasattr(sim_cls, "get_eigenmode_coefficients"):
        sim_cls.get_eigenmode_coefficients = _coefficients(
            sim_cls.get_eigenmode_coefficients, report, orig_freqs
        )
    if hasattr(sim_cls, "get_dft_array"):
        sim_cls.get_dft_array = _dft_array(sim_cls.get_dft_array, report)
    if hasattr(mp, "dft_ldos"):
        mp.dft_ldos = _ldos(mp.dft_ldos, freqs_of)
    if hasattr(sim_cls, "get_farfield"):
        sim_cls.get_farfield = _farfield(sim_cls.get_farfield, report, orig_fluxes, orig_freqs)
    if hasattr(sim_cls, "add_near2far"):
        add_flux = getattr(sim_cls.add_flux, "__wrapped__", sim_cls.add_flux)
        sim_cls.add_near2far = _near2far(mp, sim_cls.add_near2far, add_flux)
        for name in dir(sim_cls):
            if name.startswith(("load_near2far", "load_minus_near2far")):
                setattr(sim_cls, name, _loaded(getattr(sim_cls, name), name))
    if hasattr(sim_cls, "get_near2far_data"):
        sim_cls.get_near2far_data = _near_data_read(sim_cls.get_near2far_data, report)


def _farfield(method, report, get_fluxes, flux_freqs):
    """A near-to-far field at one point: |component|^2 of (Ex, Ey, Ez, Hx, Hy, Hz) and
    the Poynting vector Re(E* x H) per frequency, as the script got them (a pattern's
    power is one of them); the first read at a time also reads the near surface's flux."""

    def get_farfield(self, near2far, x, *args, **kwargs):
        values = method(self, near2far, x, *args, **kwargs)
        owner = getattr(near2far, "_reprolab_owner", None)
        flux = getattr(near2far, "_reprolab_surface_flux", None)
        now = _time(self)
        if owner is not None and flux is not None and near2far._reprolab_read != now:
            near2far._reprolab_read = now  # on every rank alike: get_fluxes is collective
            with contextlib.suppress(Exception):
                read = {"freqs": _floats(flux_freqs(flux)), "values": _floats(get_fluxes(flux))}
                value = {"kind": "near_surface_flux", "monitor": owner[1], **read}
                _guard(report, self, value | {"sim_time": now})
        with contextlib.suppress(Exception):
            point = [float(getattr(x, a)) for a in "xyz"]
            abs2 = [float(abs(complex(v)) ** 2) for v in values]
            value = {"kind": "farfield", "sim_time": _time(self), "point": point, "abs2": abs2}
            if owner is not None:
                value["monitor"] = owner[1]
            value["poynting"] = _poynting(values)
            _guard(report, self, value)
        return values

    return get_farfield


def _poynting(values) -> list[list[float]]:
    """Re(E* x H) per frequency from (Ex, Ey, Ez, Hx, Hy, Hz) per frequency."""
    out = []
    for i in range(0, len(values) - 5, 6):
        e = [complex(v).conjugate() for v in values[i : i + 3]]
        h = [complex(v) for v in values[i + 3 : i + 6]]
        s = [e[1] * h[2] - e[2] * h[1], e[2] * h[0] - e[0] * h[2], e[0] * h[1] - e[1] * h[0]]
        out.append([float(c.real) for c in s])
    return out


def _near2far(mp, method, add_flux):
    """add_near2far, plus a flux monitor on the same regions (not a monitor of the
    script's: it is added through the unrecorded `add_flux`)."""

    def add_near2far(self, *args, **kwargs):
        obj = method(self, *args, **kwargs)
        with contextlib.suppress(Exception):  # no flux: the balance is not judged
            obj._reprolab_surface_flux, obj._reprolab_read = None, None
            # Near2FarRegion is FluxRegion in Meep: the same regions, weights and directions
            regions = [a for a in args if isinstance(a, mp.FluxRegion)]
            freqs = [a for a in args if not isinstance(a, mp.FluxRegion)]
            if regions and int(kwargs.get("nperiods", 1)) == 1:  # a periodic surface: not closed
                extra = {k: v for k, v in kwargs.items() if k == "decimation_factor"}
                obj._reprolab_surface_flux = add_flux(self, *freqs, *regions, **extra)
        return obj

    return add_near2far


def _loaded(method, name: str):
    """Near-field data loaded into a near2far object: its surface's flux no longer
    describes it, and its monitor's entry says how it was loaded (`near_data`: `minus`
    where a reference run's data is subtracted, leaving the scattered field)."""

    def load(self, *args, **kwargs):
        for a in [*args, *kwargs.values()]:
            if getattr(a, "_reprolab_surface_flux", None) is not None:
                a._reprolab_surface_flux = None
        out = method(self, *args, **kwargs)
        for a in [*args, *kwargs.values()]:  # after: Meep's minus load calls the plain one
            _mark_loaded(a, "minus" if "minus" in name else "loaded")
        return out

    return load


def _mark_loaded(obj, how: str) -> None:
    owner = getattr(obj, "_reprolab_owner", None)
    with contextlib.suppress(Exception):  # not a recorded monitor: nothing to say
        owner[0]._reprolab_monitors[owner[1]]["near_data"] = how


def _near_data_read(method, report):
    """A near2far's near-field data read out (to be loaded, usually subtracted, in another
    run): a reference run's surface, as the record says (`near_data_read`)."""

    def get_near2far_data(self, near2far, *args, **kwargs):
        data = method(self, near2far, *args, **kwargs)
        owner = getattr(near2far, "_reprolab_owner", None)
        if owner is not None:
            _guard(report, self, {"kind": "near_data_read", "monitor": owner[1]})
        return data

    return get_near2far_data


def tag(obj, sim, index: int) -> None:
    """Which simulation and monitor a DFT object belongs to."""
    with contextlib.suppress(AttributeError):  # no __dict__: simply not traced
        obj._reprolab_owner = (sim, index)


def after_run(sim, report) -> None:
    """The LDOS a `dft_ldos` step function left on the simulation."""
    data = getattr(sim, "ldos_data", None)
    if data is None or getattr(sim, "_reprolab_ldos_seen", None) is data:
        return
    sim._reprolab_ldos_seen = data
    freqs = getattr(sim, "_reprolab_ldos_freqs", None) or []
    _guard(
        report,
        sim,
        {"kind": "ldos", "sim_time": _time(sim), "freqs": freqs, "values": _floats(data)},
    )


def _guard(report, sim, value: dict) -> None:
    with contextlib.suppress(Exception):  # recording must never break the script's read
        report(sim, [value])


def _coefficients(method, report, freqs):
    def get_eigenmode_coefficients(self, flux, bands, *args, **kwargs):
        res = method(self, flux, bands, *args, **kwargs)
        owner = getattr(flux, "_reprolab_owner", None)
        if owner is not None:
            alpha = getattr(res, "alpha", None)
            _guard(
                report,
                self,
                {
                    "kind": "mode_coefficients",
                    "monitor": owner[1],
                    "sim_time": _time(self),
                    "bands": [b if isinstance(b, int) else str(b) for b in bands],
                    "freqs": _floats(freqs(flux)),
                    # |alpha|^2 as [band][frequency][forward, backward]
                    "alpha_abs2": _abs2_nested(alpha),
                },
            )
        return res

    return get_eigenmode_coefficients


def _dft_array(method, report):
    def get_dft_array(self, dft_obj, component, num_freq):
        arr = method(self, dft_obj, component, num_freq)
        owner = getattr(dft_obj, "_reprolab_owner", None)
        if owner is not None:
            value = {
                "kind": "dft_field",
                "monitor": owner[1],
                "sim_time": _time(self),
                "component": int(component),
                "freq_index": int(num_freq),
                **digest(arr),
            }
            with contextlib.suppress(Exception):  # unreadable: the index remains
                value["freq"] = float(dft_obj.freq[int(num_freq)])
            _guard(report, self, value)
        return arr

    return get_dft_array


def digest(arr) -> dict:
    """|F|^2 on a regular stride (the same along every axis) to at most DIGEST_POINTS."""
    import numpy as np

    a = np.abs(np.asarray(arr)) ** 2
    shape = list(a.shape)
    stride = 1
    while math.prod(math.ceil(n / stride) for n in shape) > DIGEST_POINTS:
        stride += 1
    sampled = a[tuple(slice(None, None, stride) for _ in shape)]
    return {
        "shape": shape,
        "stride": stride,
        "sampled_shape": list(sampled.shape),
        "abs2": _floats(sampled.ravel()),
        "sum_abs2": float(a.sum()),
    }


def _ldos(factory, freqs_of):
    def dft_ldos(*args, **kwargs):
        step = factory(*args, **kwargs)
        ldos = kwargs.get("ldos")
        try:
            freqs = _floats([ldos.freq[i] for i in range(ldos.freq.size())]) if ldos else None
        except Exception:  # noqa: BLE001
            freqs = None
        freqs = freqs or freqs_of(args, kwargs)

        def ldos_step(sim, todo):  # Meep counts a step function's arguments: two
            sim._reprolab_ldos_freqs = freqs
            return step(sim, todo)

        return ldos_step

    return dft_ldos


def _time(sim) -> float | None:
    try:
        return float(sim.meep_time())
    except Exception:  # noqa: BLE001
        return None


def _floats(values) -> list[float | None]:
    out = []
    for v in values:
        x = float(v.real if isinstance(v, complex) else v)
        out.append(x if math.isfinite(x) else None)
    return out


def _abs2_nested(alpha) -> list:
    if alpha is None:
        return []
    import numpy as np

    return np.where(np.isfinite(a := np.abs(np.asarray(alpha)) ** 2), a, -1.0).tolist()
