"""Generators of small, real Meep scripts for the planted-failure corpus.

Each returns (code, design): a runnable script (a 1D slab or a 2D plane wave, seconds
each) and the matching design dict. A keyword plants one failure; the defaults are a
correct run of the same problem.
"""

from __future__ import annotations

import textwrap


def slab_script(
    *,
    normalise: bool = True,
    subtract_incident: bool = True,
    decay_by: float = 1e-9,
    pml_um: float = 1.0,
    resolution: int = 100,
    material: str = "const",
    thickness_um: float = 0.3,
    offset_px: float = 0.25,
    bragg_pairs: int = 0,
    band_um: tuple[float, float] = (0.45, 0.9),
    fwidth_factor: float = 1.5,
    stop: str = "fields",
    film_style: str = "literal",
    declared_um: float | None = None,
    declare: bool = True,
    curve: str = "T",
) -> tuple[str, dict]:
    """T and R of a slab (n = 2.0, or a `meep.materials` medium such as fused_quartz or
    Ag) in air, 1D; with `bragg_pairs`, a quarter-wave stack (n = 2.0 / 1.45 at 0.65 µm)
    that rings for long, so stopping early shows.

    The slab sits `offset_px` pixels off the cell centre: a quarter pixel keeps the faces
    of a dispersive layer off the grid (no subpixel smoothing there); 0 puts them on it.
    `film_style` writes the layer as a literal import, `getattr(meep.materials, NAME)`
    or a centre computed by a function; `stop` picks the stop condition (fields,
    energy, dft decayed or a fixed time `fixed:T`); `declared_um` is the thickness the
    design declares (the built one is `thickness_um`); `declare=False` declares none;
    `curve` is the column the figure compares (T or R).
    """
    dispersive = material != "const"
    mat_import = f"from meep.materials import {material}" if dispersive else ""
    mat = material if dispersive else "mp.Medium(index=N_SLAB)"
    centre = f"{offset_px} / RESOLUTION"
    if dispersive and film_style == "getattr":
        mat_import = "import meep.materials"
        mat = f"getattr(mp.materials, {material!r}.strip())"
    elif film_style == "computed":
        centre = "z_centre()"
    if bragg_pairs:
        geometry = textwrap.dedent(
            f"""
            D_H, D_L = 0.65 / (4 * N_SLAB), 0.65 / (4 * 1.45)
            slab = []
            z = -0.5 * ({bragg_pairs} * (D_H + D_L) + D_H)
            for i in range({2 * bragg_pairs + 1}):
                d = D_H if i % 2 == 0 else D_L
                n = N_SLAB if i % 2 == 0 else 1.45
                slab.append(mp.Block(size=mp.Vector3(mp.inf, mp.inf, d),
                                     center=mp.Vector3(z=z + 0.5 * d), material=mp.Medium(index=n)))
                z += d
            """
        )
    else:
        geometry = (
            (
                f"\n\ndef z_centre():\n    return {offset_px} * (1 / RESOLUTION)\n\n\n"
                if film_style == "computed"
                else ""
            )
            + f"slab = [mp.Block(size=mp.Vector3(mp.inf, mp.inf, {thickness_um}), "
            f"center=mp.Vector3(z={centre}), material={mat})]\n"
        )
    wl_lo, wl_hi = band_um
    header = textwrap.dedent(
        f'''
        """Planted-failure corpus: slab T/R in 1D (a = 1 um)."""
        import os

        import meep as mp
        import numpy as np
        {mat_import}

        N_SLAB = 2.0
        RESOLUTION = float(os.environ.get("REPROLAB_RESOLUTION_SCALE", 1)) * {resolution}
        PML_UM = {pml_um}
        DECAY_BY = {decay_by}
        F_MIN, F_MAX = 1 / {wl_hi}, 1 / {wl_lo}
        FCEN, DF = 0.5 * (F_MIN + F_MAX), F_MAX - F_MIN
        FWIDTH = {fwidth_factor} * DF
        NFREQ = 60
        SZ = 2 * PML_UM + 4.0
        cell = mp.Vector3(0, 0, SZ)
        sources = [mp.Source(mp.GaussianSource(FCEN, fwidth=FWIDTH), component=mp.Ex,
                             center=mp.Vector3(z=-0.5 * SZ + PML_UM + 0.3))]
        {{geometry}}
        Z_REFL, Z_TRAN = -0.5 * SZ + PML_UM + 0.6, 0.5 * SZ - PML_UM - 0.3


        def make(geometry):
            sim = mp.Simulation(cell_size=cell, boundary_layers=[mp.PML(PML_UM)], geometry=geometry,
                                sources=sources, resolution=RESOLUTION, dimensions=1)
            refl = sim.add_flux(FCEN, DF, NFREQ, mp.FluxRegion(center=mp.Vector3(z=Z_REFL)))
            tran = sim.add_flux(FCEN, DF, NFREQ, mp.FluxRegion(center=mp.Vector3(z=Z_TRAN)))
            return sim, refl, tran


        def go(sim):
            sim.run(until_after_sources={{stop}})

        '''
    )
    if normalise:
        body = textwrap.dedent(
            """
            sim, refl, tran = make([])
            go(sim)
            empty_refl = sim.get_flux_data(refl)
            incident = np.array(mp.get_fluxes(tran))
            sim.reset_meep()
            sim, refl, tran = make(slab)
            """
        )
        if subtract_incident:
            body += "sim.load_minus_flux_data(refl, empty_refl)\n"
        body += textwrap.dedent(
            """
            go(sim)
            T = np.array(mp.get_fluxes(tran)) / incident
            R = -np.array(mp.get_fluxes(refl)) / incident
            """
        )
    else:
        body = textwrap.dedent(
            """
            sim, refl, tran = make(slab)
            go(sim)
            T = np.array(mp.get_fluxes(tran))
            R = -np.array(mp.get_fluxes(refl))
            """
        )
    body += textwrap.dedent(
        """
        wl = 1 / np.array(mp.get_flux_freqs(tran))
        if mp.am_master():
            np.savetxt("spectrum.csv", np.column_stack([wl, T, R]), delimiter=",",
                       header="wavelength_um,T,R", comments="", fmt="%.8g")
        """
    )
    f_min, f_max = 1 / wl_hi, 1 / wl_lo
    design = {
        "stage_id": "stage1_planted",
        "dimensions": 1,
        "unit_length_um": 1.0,
        "resolution": resolution,
        "pml_thickness": pml_um,
        "source_fcen": 0.5 * (f_min + f_max),
        "source_fwidth": fwidth_factor * (f_max - f_min),
        "materials": ["slab"],
        "output_specifications": [{"file": "spectrum.csv", "columns": ["wavelength_um", "T", "R"]}],
        "figure_outputs": [
            {
                "figure_id": "fig1",
                "curve_id": curve,
                "file": "spectrum.csv",
                "x_column": "wavelength_um",
                "y_column": curve,
            }
        ],
    }
    design["conservation"] = "absorbing" if material == "Ag" else "closed"
    layers = [
        {"name": "high-index layer", "value": 0.65 / (4 * 2.0)},
        {"name": "low-index layer", "value": 0.65 / (4 * 1.45)},
    ]
    slab = [{"name": "slab", "value": declared_um or thickness_um}]
    design["declared_dimensions"] = (layers if bragg_pairs else slab) if declare else []
    stops = {
        "fields": "mp.stop_when_fields_decayed(5, mp.Ex, mp.Vector3(z=Z_TRAN), DECAY_BY)",
        "energy": "mp.stop_when_energy_decayed(5, DECAY_BY)",
        "dft": "mp.stop_when_dft_decayed(DECAY_BY, 0, 2000)",
    }
    cond = stops.get(stop) or stop.removeprefix("fixed:")
    code = header.replace("{geometry}", geometry).replace("{stop}", cond)
    return code + body, design


def plane_wave_script(*, integrated: bool = True) -> tuple[str, dict]:
    """Empty-cell |Ez|^2 across a 2D line source that crosses PML on every side."""
    flag = ", is_integrated=True" if integrated else ""  # a SourceTime argument
    code = textwrap.dedent(
        f'''
        """Planted-failure corpus: a 2D plane wave through PML, uniformity of |Ez|^2."""
        import os

        import meep as mp
        import numpy as np

        RESOLUTION = float(os.environ.get("REPROLAB_RESOLUTION_SCALE", 1)) * 20
        PML_UM = 1.0
        FCEN, DF = 1.0, 0.4
        SX, SY = 4.0, 5.0
        cell = mp.Vector3(SX, SY)
        sources = [mp.Source(mp.GaussianSource(FCEN, fwidth=DF{flag}), component=mp.Ez,
                             center=mp.Vector3(y=-0.5 * SY + PML_UM + 0.2),
                             size=mp.Vector3(SX, 0))]
        sim = mp.Simulation(cell_size=cell, boundary_layers=[mp.PML(PML_UM)], sources=sources,
                            resolution=RESOLUTION)
        line = mp.Volume(center=mp.Vector3(y=0.5), size=mp.Vector3(1.0, 0))
        dft = sim.add_dft_fields([mp.Ez], FCEN, 0, 1, where=line)
        sim.run(until_after_sources=mp.stop_when_fields_decayed(5, mp.Ez, mp.Vector3(y=0.5), 1e-9))
        e2 = np.abs(sim.get_dft_array(dft, mp.Ez, 0)) ** 2
        if mp.am_master():
            x = np.linspace(-0.5, 0.5, len(e2))
            np.savetxt("incident.csv", np.column_stack([x, e2]), delimiter=",",
                       header="x_um,incident_E2", comments="", fmt="%.10g")
        '''
    )
    design = {
        "stage_id": "stage1_planted",
        "dimensions": 2,
        "unit_length_um": 1.0,
        "resolution": 20,
        "pml_thickness": 1.0,
        "source_fcen": 1.0,
        "source_fwidth": 0.4,
        "materials": [],
        "output_specifications": [{"file": "incident.csv", "columns": ["x_um", "incident_E2"]}],
        "figure_outputs": [],
    }
    return code, design
