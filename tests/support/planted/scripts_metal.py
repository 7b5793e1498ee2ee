"""Planted-corpus scripts of a metal nanostructure: a 2D silver cylinder's absorption
cross-section (TE: E in the plane, the polarization with a plasmon resonance), from the
net flux into a box around it."""

from __future__ import annotations

import textwrap

from tests.support.planted.scripts2d import _design

# meep.materials.Ag as approved (a = 1 µm), its Drude damping scaled by `loss`.
AG = "from meep.materials import Ag as AG"
AG_LOSS = """from meep.materials import Ag as _AG
AG = mp.Medium(epsilon=_AG.epsilon_diag.x, valid_freq_range=_AG.valid_freq_range,
               E_susceptibilities=[
                   type(s)(frequency=s.frequency, sigma=s.sigma_diag.x,
                           gamma=s.gamma * ({loss} if i == 0 else 1))
                   for i, s in enumerate(_AG.E_susceptibilities)])"""


def ag_cylinder_script(*, resolution: int = 400, radius_um: float = 0.02, loss: float = 1.0):
    """sigma_abs of an Ag cylinder of radius `radius_um` in air, 0.3-0.6 µm; `loss`
    scales the Drude term's damping (1: meep.materials.Ag as approved)."""
    ag = AG if loss == 1.0 else AG_LOSS.format(loss=loss)
    code = (
        textwrap.dedent(
            f'''
        """Planted corpus: absorption of a 2D silver nanocylinder."""
        import os

        import meep as mp
        import numpy as np

        RES = float(os.environ.get("REPROLAB_RESOLUTION_SCALE", 1)) * {resolution}
        DPML, R, B = 0.3, {radius_um}, 0.1
        SX = SY = 2 * (DPML + B) + 0.1
        FCEN, DF, NF = 1 / 0.42, 2.2, 60
        '''
        )
        + ag
        + textwrap.dedent(
            """

        src = [mp.Source(mp.GaussianSource(FCEN, fwidth=DF, is_integrated=True),
                         component=mp.Hz, center=mp.Vector3(-0.5 * SX + DPML),
                         size=mp.Vector3(0, SY))]


        def box(sim):
            regions = [mp.FluxRegion(center=mp.Vector3(s * B, 0), size=mp.Vector3(0, 2 * B),
                                     weight=s) for s in (-1, 1)]
            regions += [mp.FluxRegion(center=mp.Vector3(0, s * B), size=mp.Vector3(2 * B, 0),
                                      weight=s) for s in (-1, 1)]
            return [sim.add_flux(FCEN, DF, NF, r) for r in regions]


        def make(geometry):
            return mp.Simulation(cell_size=mp.Vector3(SX, SY), geometry=geometry, sources=src,
                                 boundary_layers=[mp.PML(DPML)], resolution=RES)


        stop = lambda: mp.stop_when_fields_decayed(5, mp.Hz, mp.Vector3(B), 1e-7)
        sim = make([])
        empty = box(sim)
        sim.run(until_after_sources=stop())
        intensity = np.array(mp.get_fluxes(empty[0])) / (2 * B) * -1  # weight -1 on the left
        freqs = np.array(mp.get_flux_freqs(empty[0]))
        sim.reset_meep()
        sim = make([mp.Cylinder(radius=R, material=AG)])
        tot = box(sim)
        sim.run(until_after_sources=stop())
        sigma_abs = -sum(np.array(mp.get_fluxes(f)) for f in tot) / intensity
        if mp.am_master():
            np.savetxt("spectrum.csv", np.column_stack([1 / freqs, sigma_abs]),
                       delimiter=",", header="wavelength_um,sigma_abs", comments="",
                       fmt="%.8g")
        """
        )
    )
    return code, _design(
        2,
        resolution,
        0.3,
        1 / 0.42,
        2.2,
        ["wavelength_um", "sigma_abs"],
        conservation="absorbing",
        declared_dimensions=[{"name": "cylinder radius", "value": radius_um}],
        figure_outputs=[
            {
                "figure_id": "fig1",
                "curve_id": "abs",
                "file": "spectrum.csv",
                "x_column": "wavelength_um",
                "y_column": "sigma_abs",
            }
        ],
    )
