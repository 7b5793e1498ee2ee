"""Mode runs for the run-time record: a Bloch cell's band structure and a cylindrical
(1D-radial) ring. Each returns (code, design): a script of a second or two and the
design that says what it builds (coordinates, boundaries, k points, m)."""

from __future__ import annotations

import textwrap

# Γ, X, M of the square lattice (Meep's k_point, units of 2π/a).
SQUARE_K = [[0.0, 0.0, 0.0], [0.5, 0.0, 0.0], [0.5, 0.5, 0.0]]


def _design(stage_id: str, **fields) -> dict:
    return {
        "stage_id": stage_id,
        "summary": "modes measured with Harminv",
        "unit_length_um": 1.0,
        "geometry": "see the script",
        "materials": [],
        "performance_estimate": {"runtime_seconds": 5, "memory_mb": 200, "mpi_ranks": 1},
        "figure_outputs": [],
        **fields,
    }


def bloch_script(*, resolution: int = 20) -> tuple[str, dict]:
    """TM bands of a square lattice of ε = 8.9 rods (r = 0.2 a) at Γ, X and M with
    `run_k_points`: one Simulation for every k point, no PML. The CSV's `k` runs over a
    path from -X to X (negative on purpose: a wavevector, not an extinction)."""
    code = textwrap.dedent(
        f'''\
        """Square-lattice Bloch cell: TM bands at Γ, X, M (run_k_points)."""
        import csv
        import os

        import meep as mp

        RES = float(os.environ.get("REPROLAB_RESOLUTION_SCALE", 1)) * {resolution}
        FCEN, DF = 0.35, 0.3
        rods = [mp.Cylinder(0.2, material=mp.Medium(epsilon=8.9))]
        src = [mp.Source(mp.GaussianSource(FCEN, fwidth=DF), mp.Ez,
                         center=mp.Vector3(0.1234, 0.0312))]
        sim = mp.Simulation(cell_size=mp.Vector3(1, 1), geometry=rods, sources=src,
                            resolution=RES, k_point=mp.Vector3())
        ks = [mp.Vector3(*k) for k in {SQUARE_K}]
        freqs = sim.run_k_points(100, ks)
        with open("bands.csv", "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(["k", "freq"])
            for sign in (-1, 1):
                for k, fs in zip(ks, freqs):
                    for f in fs:
                        w.writerow([sign * k.norm(), f.real])
        '''
    )
    design = _design(
        "stage1_bands",
        dimensions=2,
        resolution=resolution,
        source_fcen=0.35,
        source_fwidth=0.3,
        boundaries=[{"axis": "x", "kind": "bloch"}, {"axis": "y", "kind": "bloch"}],
        k_points=SQUARE_K,
        sources=[
            {"kind": "point_dipole", "component": "Ez", "fcen": 0.35, "fwidth": 0.3},
        ],
        output_specifications=[
            {
                "file": "bands.csv",
                "columns": ["k", "freq"],
                "column_meanings": {"k": "wavevector", "freq": "frequency"},
                "description": "TM band frequencies per k point",
            }
        ],
    )
    return code, design


def ring_script(*, resolution: int = 10, m: int = 3) -> tuple[str, dict]:
    """A ring (n = 3.4, r = 1, w = 1) in cylindrical coordinates, radial only (cell
    (sr, 0, 0)), azimuthal order m, PML at the outer radius, Harminv at one point."""
    code = textwrap.dedent(
        f'''\
        """Cylindrical ring, 1D radial: whispering-gallery modes of order m."""
        import os

        import meep as mp

        RES = float(os.environ.get("REPROLAB_RESOLUTION_SCALE", 1)) * {resolution}
        DPML = float(os.environ.get("REPROLAB_PML_SCALE", 1)) * 2.0
        N, W, R, PAD = 3.4, 1.0, 1.0, 4.0
        SR = R + W + PAD + DPML
        FCEN, DF = 0.15, 0.1
        sim = mp.Simulation(
            cell_size=mp.Vector3(SR), dimensions=mp.CYLINDRICAL, m={m}, resolution=RES,
            geometry=[mp.Block(center=mp.Vector3(R + W / 2), size=mp.Vector3(W, mp.inf, mp.inf),
                               material=mp.Medium(index=N))],
            boundary_layers=[mp.PML(DPML)],
            sources=[mp.Source(mp.GaussianSource(FCEN, fwidth=DF), mp.Ez, mp.Vector3(R + 0.1))],
        )
        h = mp.Harminv(mp.Ez, mp.Vector3(R + 0.1), FCEN, DF)
        sim.run(mp.after_sources(h), until_after_sources=200)
        with open("modes.csv", "w") as fh:
            fh.write("freq,Q\\n")
            for mode in h.modes:
                fh.write(f"{{mode.freq}},{{mode.Q}}\\n")
        '''
    )
    design = _design(
        "stage1_ring",
        dimensions=2,
        coordinates="cylindrical",
        m=[m],
        resolution=resolution,
        pml_thickness=2.0,
        source_fcen=0.15,
        source_fwidth=0.1,
        boundaries=[{"axis": "r", "kind": "pml", "thickness": 2.0}],
        output_specifications=[
            {
                "file": "modes.csv",
                "columns": ["freq", "Q"],
                "column_meanings": {"freq": "frequency", "Q": "quality_factor"},
                "description": "Harminv modes",
            }
        ],
    )
    return code, design
