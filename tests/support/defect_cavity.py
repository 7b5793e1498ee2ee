"""A 1D defect cavity (a half-wave layer between two quarter-wave Bragg mirrors, n = 2.0
/ 1.45 at 0.65 µm): its transmission peak is a sharp resonance (linewidth about 1 nm)
that costs a few seconds of real Meep, for the convergence measure's tests."""

from __future__ import annotations

import numpy as np


def defect_cavity_T(resolution: float, pairs: int = 4, nf: int = 200, band=(0.62, 0.68)):
    """(wavelength_um, T) of the cavity at `resolution` px/µm, normalised by an empty run."""
    import meep as mp

    lam0, n_hi, n_lo = 0.65, 2.0, 1.45
    d_hi, d_lo = lam0 / (4 * n_hi), lam0 / (4 * n_lo)
    layers = [(n_hi, d_hi), (n_lo, d_lo)] * pairs + [(n_hi, 2 * d_hi)]
    layers += [(n_lo, d_lo), (n_hi, d_hi)] * pairs
    total = sum(d for _, d in layers)
    dpml, pad = 1.0, 0.5
    size = total + 2 * (dpml + pad)
    geometry, z = [], -total / 2
    for n, d in layers:
        block = mp.Block(
            size=mp.Vector3(mp.inf, mp.inf, d),
            center=mp.Vector3(z=z + d / 2),
            material=mp.Medium(index=n),
        )
        geometry.append(block)
        z += d
    fmin, fmax = 1 / band[1], 1 / band[0]
    fcen, df = (fmin + fmax) / 2, fmax - fmin
    src = mp.Source(
        mp.GaussianSource(fcen, fwidth=2 * df),
        component=mp.Ex,
        center=mp.Vector3(z=-size / 2 + dpml),
    )
    probe = mp.Vector3(z=size / 2 - dpml - 0.1)
    fluxes = []
    for geo in ([], geometry):
        sim = mp.Simulation(
            cell_size=mp.Vector3(z=size),
            dimensions=1,
            geometry=geo,
            sources=[src],
            boundary_layers=[mp.PML(dpml)],
            resolution=resolution,
        )
        flux = sim.add_flux(fcen, df, nf, mp.FluxRegion(center=probe))
        sim.run(until_after_sources=mp.stop_when_fields_decayed(20, mp.Ex, probe, 1e-6))
        fluxes.append(np.array(mp.get_fluxes(flux)))
        freqs = np.array(mp.get_flux_freqs(flux))
    return 1 / freqs, fluxes[1] / fluxes[0]
