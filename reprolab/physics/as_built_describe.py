"""What a `meep.Simulation` object holds, as plain JSON (for `as_built`).

Runs inside the simulation's process, after a run: the cell, the boundary layers per
side (thickness in pixels and in wavelengths), the sources (and whether they reach the
PML), the geometry objects with their materials (dispersive, valid range, loss, index
over the monitored band) and the faces of each block relative to the grid points.
"""

from __future__ import annotations

import cmath
import math

AXES = "xyz"


def _vec(v) -> list[float | None]:
    out = []
    for x in (v.x, v.y, v.z):
        x = float(x)
        out.append(x if math.isfinite(x) and abs(x) < 1e19 else None)
    return out


def axes_of(dims: int) -> list[int]:
    return [2] if dims == 1 else [0, 1] if dims == 2 else [0, 1, 2]


def structure(mp, sim, monitors: list[dict]) -> dict:
    dims = int(sim.dimensions)
    cell = _vec(sim.cell_size)
    freqs = sorted(f for m in monitors for f in m["freqs"] if f > 0)
    sources = [source(mp, s) for s in sim.sources or []]
    band = _band(freqs, sources)
    layers = boundary_layers(mp, sim, dims, cell, band)
    out = {
        "dimensions": dims,
        "cylindrical": bool(getattr(sim, "is_cylindrical", False)),
        "resolution": float(sim.resolution),
        "cell": cell,
        "geometry_center": _vec(sim.geometry_center),
        "k_point": _vec(sim.k_point) if sim.k_point else None,
        "band": band,
        "boundary_layers": layers,
        "sources": sources,
        "symmetries": [
            {"kind": type(s).__name__, "direction": int(s.direction), "phase": str(s.phase)}
            for s in sim.symmetries or []
        ],
        "monitors": monitors,
        "default_material": material(mp, sim.default_material, band),
        "geometry": [geometric_object(mp, g, sim, band) for g in sim.geometry or []],
    }
    for s in out["sources"]:
        s["reaches_pml"] = _reaches_pml(s, cell, layers, dims)
    return out


def _band(freqs: list[float], sources: list[dict]) -> list[float] | None:
    """(f_min, f_max) judged: the monitored frequencies, else the sources' bands."""
    if freqs:
        return [freqs[0], freqs[-1]]
    lo = [s["fcen"] - (s["fwidth"] or 0) / 2 for s in sources if s["fcen"]]
    hi = [s["fcen"] + (s["fwidth"] or 0) / 2 for s in sources if s["fcen"]]
    return [max(min(lo), 1e-3), max(hi)] if lo else None


def boundary_layers(mp, sim, dims: int, cell, band) -> list[dict]:
    """One entry per axis and side that has a layer: thickness, pixels, wavelengths."""
    # in wavelengths at the band's centre (the rule of thumb: half a wavelength is ample)
    lam_max = 2 / (band[0] + band[1]) if band else None
    sides = {}
    for layer in sim.boundary_layers or []:
        for ax in axes_of(dims):
            if layer.direction not in (mp.ALL, ax):
                continue
            for side, word in ((mp.Low, "low"), (mp.High, "high")):
                if layer.side in (mp.ALL, side):
                    key = (AXES[ax], word, type(layer).__name__)
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
    }


def _reaches_pml(s: dict, cell, layers: list[dict], dims: int) -> bool:
    """The source's extent touches or enters a PML along one of its sized axes."""
    for ax in axes_of(dims):
        size = s["size"][ax]
        if not size:
            continue
        half = (cell[ax] or 0) / 2
        for layer in layers:
            if layer["axis"] != AXES[ax] or layer["kind"] != "PML":
                continue
            edge = half - layer["thickness"]
            c = s["center"][ax] or 0
            if layer["side"] == "high" and c + size / 2 > edge - 1e-9:
                return True
            if layer["side"] == "low" and c - size / 2 < -edge + 1e-9:
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
    return out


def faces(center, size, sim) -> list[dict]:
    """Per axis with a finite extent: both faces' signed distance to the nearest grid
    point, in pixels (grid points sit at integer multiples of 1/resolution from the
    cell centre along the normal, as the static film lint measures)."""
    res = float(sim.resolution)
    origin = _vec(sim.geometry_center)
    out = []
    for ax in axes_of(int(sim.dimensions)):
        s, c = size[ax], center[ax]
        if s is None or c is None or s <= 0:
            continue
        lo = (c - s / 2 - (origin[ax] or 0)) * res
        hi = (c + s / 2 - (origin[ax] or 0)) * res
        out.append(
            {
                "axis": AXES[ax],
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
