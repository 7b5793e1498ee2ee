"""Open 2D structures for the planted-failure corpus, at reduced size (seconds each).

Each returns (code, design). A waveguide bend (open: it radiates), scattering by a
lossy cylinder (cross-sections) and a ring resonator (Harminv Q); keywords plant one
mistake, the defaults are the correct run.
"""

from __future__ import annotations

import textwrap


def _design(dims: int, res: float, pml: float, fcen: float, df: float, columns, **extra) -> dict:
    file = "spectrum.csv"
    return {
        "stage_id": "stage1_planted",
        "dimensions": dims,
        "unit_length_um": 1.0,
        "resolution": res,
        "pml_thickness": pml,
        "source_fcen": fcen,
        "source_fwidth": df,
        "materials": [],
        "output_specifications": [{"file": file, "columns": columns}],
        "figure_outputs": [],
        **extra,
    }


def bend_script(*, resolution: int = 10, pml: float = 1.0, normalise: bool = True):
    """T and R of a 90° bend in an ε = 12 waveguide (Meep's tutorial, smaller cell)."""
    code = textwrap.dedent(
        f'''
        """Planted corpus: waveguide bend, T/R normalised by a straight guide."""
        import os

        import meep as mp
        import numpy as np

        RES = float(os.environ.get("REPROLAB_RESOLUTION_SCALE", 1)) * {resolution}
        DPML, W, PAD = {pml}, 1.0, 2.0
        SX = SY = 2 * (DPML + PAD) + 6.0
        FCEN, DF, NF = 0.15, 0.1, 30
        Y0, X0 = -0.5 * SY + DPML + PAD + 0.5 * W, 0.5 * SX - DPML - PAD - 0.5 * W
        core = mp.Medium(epsilon=12)
        straight = [mp.Block(size=mp.Vector3(mp.inf, W), center=mp.Vector3(y=Y0), material=core)]
        bend = [
            mp.Block(size=mp.Vector3(SX - DPML - PAD, W),
                     center=mp.Vector3(-0.5 * (DPML + PAD), Y0), material=core),
            mp.Block(size=mp.Vector3(W, SY - DPML - PAD),
                     center=mp.Vector3(X0, 0.5 * (DPML + PAD)), material=core),
        ]
        src = [mp.Source(mp.GaussianSource(FCEN, fwidth=DF), component=mp.Ez,
                         center=mp.Vector3(-0.5 * SX + DPML + 0.5, Y0), size=mp.Vector3(0, W))]


        def make(geometry):
            return mp.Simulation(cell_size=mp.Vector3(SX, SY), geometry=geometry, sources=src,
                                 boundary_layers=[mp.PML(DPML)], resolution=RES)


        def stop(pt):
            return mp.stop_when_fields_decayed(50, mp.Ez, pt, 1e-7)


        refl_fr = mp.FluxRegion(center=mp.Vector3(-0.5 * SX + DPML + 1.0, Y0),
                                size=mp.Vector3(0, 2 * W))
        '''
    )
    if normalise:
        code += textwrap.dedent(
            """
            sim = make(straight)
            refl = sim.add_flux(FCEN, DF, NF, refl_fr)
            tran = sim.add_flux(FCEN, DF, NF, mp.FluxRegion(
                center=mp.Vector3(0.5 * SX - DPML - 0.5, Y0), size=mp.Vector3(0, 2 * W)))
            sim.run(until_after_sources=stop(mp.Vector3(0.5 * SX - DPML - 0.5, Y0)))
            straight_refl = sim.get_flux_data(refl)
            incident = np.array(mp.get_fluxes(tran))
            sim.reset_meep()
            """
        )
    code += textwrap.dedent(
        """
        sim = make(bend)
        refl = sim.add_flux(FCEN, DF, NF, refl_fr)
        tran = sim.add_flux(FCEN, DF, NF, mp.FluxRegion(
            center=mp.Vector3(X0, 0.5 * SY - DPML - 0.5), size=mp.Vector3(2 * W, 0)))
        """
    )
    code += "sim.load_minus_flux_data(refl, straight_refl)\n" if normalise else "incident = 1.0\n"
    code += textwrap.dedent(
        """
        sim.run(until_after_sources=stop(mp.Vector3(X0, 0.5 * SY - DPML - 0.5)))
        T = np.array(mp.get_fluxes(tran)) / incident
        R = -np.array(mp.get_fluxes(refl)) / incident
        if mp.am_master():
            np.savetxt("spectrum.csv", np.column_stack([mp.get_flux_freqs(tran), T, R]),
                       delimiter=",", header="freq,T,R", comments="", fmt="%.8g")
        """
    )
    return code, _design(
        2,
        resolution,
        pml,
        0.15,
        0.1,
        ["freq", "T", "R"],
        conservation="open_radiating",
        declared_dimensions=[{"name": "waveguide width", "value": 1.0}],
    )


def cylinder_script(
    *, resolution: int = 10, sca_factor: float = 1.0, abs_sign: int = 1, figure: bool = False
):
    """Scattering and absorption cross-sections of a lossy cylinder (r = 0.5, n = 1.5),
    from the scattered and the total flux out of a box; `sca_factor` and `abs_sign`
    plant a wrong normalisation or a flipped sign; `figure` makes sigma_sca a figure's
    curve (what a convergence rerun compares)."""
    code = textwrap.dedent(
        f'''
        """Planted corpus: 2D scattering by a lossy cylinder."""
        import os

        import meep as mp
        import numpy as np

        RES = float(os.environ.get("REPROLAB_RESOLUTION_SCALE", 1)) * {resolution}
        DPML, R = 1.0, 0.5
        SX = SY = 2 * DPML + 5.0
        FCEN, DF, NF = 0.4, 0.3, 20
        INTEGRATED = True
        src = [mp.Source(mp.GaussianSource(FCEN, fwidth=DF, is_integrated=INTEGRATED),
                         component=mp.Ez, center=mp.Vector3(-0.5 * SX + DPML),
                         size=mp.Vector3(0, SY))]
        cyl = [mp.Cylinder(radius=R, material=mp.Medium(index=1.5, D_conductivity=0.3))]
        B = 1.0  # half side of the flux box


        def box(sim):
            regions = [mp.FluxRegion(center=mp.Vector3(s * B, 0), size=mp.Vector3(0, 2 * B),
                                     weight=s) for s in (-1, 1)]
            regions += [mp.FluxRegion(center=mp.Vector3(0, s * B), size=mp.Vector3(2 * B, 0),
                                      weight=s) for s in (-1, 1)]
            return [sim.add_flux(FCEN, DF, NF, r) for r in regions]


        def make(geometry):
            return mp.Simulation(cell_size=mp.Vector3(SX, SY), geometry=geometry, sources=src,
                                 boundary_layers=[mp.PML(DPML)], resolution=RES)


        stop = lambda: mp.stop_when_fields_decayed(20, mp.Ez, mp.Vector3(1.5), 1e-7)
        sim = make([])
        empty = box(sim)
        sim.run(until_after_sources=stop())
        empty_data = [sim.get_flux_data(f) for f in empty]
        intensity = np.array(mp.get_fluxes(empty[0])) / (2 * B) * -1  # weight -1 on the left
        freqs = mp.get_flux_freqs(empty[0])
        sim.reset_meep()
        sim = make(cyl)
        scat, tot = box(sim), box(sim)
        for f, d in zip(scat, empty_data):
            sim.load_minus_flux_data(f, d)
        sim.run(until_after_sources=stop())
        p_sca = sum(np.array(mp.get_fluxes(f)) for f in scat)
        p_abs = -sum(np.array(mp.get_fluxes(f)) for f in tot)
        sigma_sca = {sca_factor} * p_sca / intensity
        sigma_abs = {abs_sign} * p_abs / intensity
        sigma_ext = (p_sca + p_abs) / intensity
        if mp.am_master():
            np.savetxt("spectrum.csv", np.column_stack([freqs, sigma_sca, sigma_abs, sigma_ext]),
                       delimiter=",", header="freq,sigma_sca,sigma_abs,sigma_ext", comments="",
                       fmt="%.8g")
        '''
    )
    cols = ["freq", "sigma_sca", "sigma_abs", "sigma_ext"]
    return code, _design(
        2,
        resolution,
        1.0,
        0.4,
        0.3,
        cols,
        conservation="open_radiating",
        declared_dimensions=[{"name": "cylinder radius", "value": 0.5}],
        figure_outputs=[
            {
                "figure_id": "fig1",
                "curve_id": "sca",
                "file": "spectrum.csv",
                "x_column": "freq",
                "y_column": "sigma_sca",
            }
        ]
        if figure
        else [],
    )


def ring_script(*, resolution: int = 10, pml: float = 2.0):
    """Harminv modes of a ring resonator (n = 3.4, w = 1, r = 1: Meep's tutorial)."""
    code = textwrap.dedent(
        f'''
        """Planted corpus: ring resonator, Harminv frequencies and Q."""
        import os

        import meep as mp
        import numpy as np

        N, W, R, PAD = 3.4, 1.0, 1.0, 2.0
        DPML = float(os.environ.get("REPROLAB_PML_SCALE", 1)) * {pml}
        RES = float(os.environ.get("REPROLAB_RESOLUTION_SCALE", 1)) * {resolution}
        SR = R + W + PAD + DPML
        FCEN, DF = 0.15, 0.1
        geometry = [mp.Cylinder(radius=R + W, material=mp.Medium(index=N)),
                    mp.Cylinder(radius=R)]
        sim = mp.Simulation(cell_size=mp.Vector3(2 * SR, 2 * SR), geometry=geometry,
                            boundary_layers=[mp.PML(DPML)], resolution=RES,
                            sources=[mp.Source(mp.GaussianSource(FCEN, fwidth=DF), mp.Ez,
                                               mp.Vector3(R + 0.1))],
                            symmetries=[mp.Mirror(mp.Y)])
        h = mp.Harminv(mp.Ez, mp.Vector3(R + 0.1), FCEN, DF)
        sim.run(mp.after_sources(h), until_after_sources=150)
        if mp.am_master():
            rows = [(m.freq, m.Q) for m in h.modes] or [(0.0, 0.0)]
            np.savetxt("modes.csv", np.array(rows), delimiter=",", header="freq,Q",
                       comments="", fmt="%.8g")
        '''
    )
    design = _design(
        2,
        resolution,
        pml,
        0.15,
        0.1,
        ["freq", "Q"],
        conservation="open_radiating",
        declared_dimensions=[
            {"name": "inner radius", "value": 1.0},
            {"name": "outer radius", "value": 2.0},
        ],
    )
    design["output_specifications"][0]["file"] = "modes.csv"
    return code, design


def mie_cylinder_script(*, efficiency_by: str = "2 * R"):
    """Scattering by a lossless cylinder (r = 0.4, n = 1.5): sigma_sca from one flux
    object around it (four weighted faces) over the incident intensity of the empty
    cell's plane monitor, and the efficiency Q_sca = sigma_sca / `efficiency_by` (the
    diameter; "R" plants the radius); a second box of the total fields closes it."""
    code = textwrap.dedent(
        f'''
        """Planted corpus: 2D Mie scattering by a lossless cylinder."""
        import os

        import meep as mp
        import numpy as np

        RES = float(os.environ.get("REPROLAB_RESOLUTION_SCALE", 1)) * 16
        DPML, R, B = 1.0, 0.4, 1.0
        SX = SY = 2 * DPML + 5.0
        FCEN, DF, NF = 0.4, 0.3, 20
        src = [mp.Source(mp.GaussianSource(FCEN, fwidth=DF, is_integrated=True),
                         component=mp.Ez, center=mp.Vector3(-0.5 * SX + DPML),
                         size=mp.Vector3(0, SY))]
        cyl = [mp.Cylinder(radius=R, material=mp.Medium(index=1.5))]
        faces = [mp.FluxRegion(center=mp.Vector3(s * B, 0), size=mp.Vector3(0, 2 * B),
                               weight=s) for s in (-1, 1)]
        faces += [mp.FluxRegion(center=mp.Vector3(0, s * B), size=mp.Vector3(2 * B, 0),
                                weight=s) for s in (-1, 1)]


        def make(geometry):
            return mp.Simulation(cell_size=mp.Vector3(SX, SY), geometry=geometry, sources=src,
                                 boundary_layers=[mp.PML(DPML)], resolution=RES)


        stop = lambda: mp.stop_when_fields_decayed(20, mp.Ez, mp.Vector3(1.5), 1e-7)
        sim = make([])
        inc = sim.add_flux(FCEN, DF, NF, mp.FluxRegion(center=mp.Vector3(-B),
                                                       size=mp.Vector3(0, 2 * B)))
        empty = sim.add_flux(FCEN, DF, NF, *faces)
        sim.run(until_after_sources=stop())
        empty_data = sim.get_flux_data(empty)
        intensity = np.array(mp.get_fluxes(inc)) / (2 * B)
        freqs = mp.get_flux_freqs(inc)
        sim.reset_meep()
        sim = make(cyl)
        scat = sim.add_flux(FCEN, DF, NF, *faces)
        total = sim.add_flux(FCEN, DF, NF, *faces)
        sim.load_minus_flux_data(scat, empty_data)
        sim.run(until_after_sources=stop())
        p_sca = np.array(mp.get_fluxes(scat))
        p_net = np.array(mp.get_fluxes(total))
        sigma_sca = p_sca / intensity
        q_sca = sigma_sca / ({efficiency_by})
        if mp.am_master():
            np.savetxt("spectrum.csv", np.column_stack([freqs, sigma_sca, q_sca]),
                       delimiter=",", header="freq,sigma_sca,Q_sca", comments="", fmt="%.8g")
            print("net/sca", float(np.max(np.abs(p_net) / np.abs(p_sca))))
        '''
    )
    return code, _design(
        2,
        16,
        1.0,
        0.4,
        0.3,
        ["freq", "sigma_sca", "Q_sca"],
        conservation="open_radiating",
        declared_dimensions=[{"name": "cylinder radius", "value": 0.4}],
    )
