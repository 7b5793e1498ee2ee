"""Cost of a stage's resolution evidence as a ratio of its own Meep run, in 1D, 2D and 3D:
the two coarser runs (checks.convergence_method: coarse, 0.8x and 0.6x) next to the 2x
rerun (refine_2x), measured in one process (Meep imported once, the planted corpus's
driver) on the same machine.

Writes benchmarks/results/grid_convergence.{json,md}. Run:
`.venv/bin/python benchmarks/grid_convergence.py` (one to three minutes on 2 cores).
The 1D and 2D cases are the planted corpus's correct runs; the 3D case is a small
dielectric sphere in a PML box run for a fixed time (a timing case only).
"""

from __future__ import annotations

import datetime as dt
import json
import platform
import re
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the corpus lives in tests/
from reprolab.physics import grid_convergence as gc  # noqa: E402
from reprolab.physics.lint import RESOLUTION_SCALE_ENV  # noqa: E402
from tests.support.planted import corpus  # noqa: E402

OUT = Path(__file__).parent / "results"
SCALES = (1.0, *gc.DEFAULT_SCALES, 2.0)

SPHERE_3D = """
import os
import meep as mp

RESOLUTION = float(os.environ.get("REPROLAB_RESOLUTION_SCALE", 1)) * 12
cell = mp.Vector3(3, 3, 3)
sim = mp.Simulation(
    cell_size=cell,
    resolution=RESOLUTION,
    boundary_layers=[mp.PML(0.5)],
    geometry=[mp.Sphere(radius=0.4, material=mp.Medium(index=1.6))],
    sources=[
        mp.Source(
            mp.GaussianSource(1.0, fwidth=0.4),
            component=mp.Ez,
            center=mp.Vector3(x=-0.9),
            size=mp.Vector3(0, 2, 2),
        )
    ],
)
box = sim.add_flux(1.0, 0.4, 20, mp.FluxRegion(center=mp.Vector3(x=0.7), size=mp.Vector3(0, 1, 1)))
sim.run(until=15)
print("flux", mp.get_fluxes(box)[0])
"""


def cases() -> dict[str, tuple[int, str, float]]:
    """{case: (dimensions, script, the run's resolution factor)}: the larger runs show
    the ratio once Meep's per-step fixed costs weigh less."""
    c = corpus.CORRECT
    return {
        "slab_fixed_long": (1, c["slab_fixed_long"][0], 1.0),
        "bragg_stack_decayed": (1, c["bragg_stack_decayed"][0], 1.0),
        "ring_resonator": (2, c["ring_resonator"][0], 1.0),
        "bend_open": (2, c["bend_open"][0], 1.0),
        "cylinder_scattering": (2, c["cylinder_scattering"][0], 1.0),
        "bend_open at 2x resolution": (2, c["bend_open"][0], 2.0),
        "sphere_3d": (3, SPHERE_3D, 1.0),
        "sphere_3d at 1.5x resolution": (3, SPHERE_3D, 1.5),
    }


def meep_seconds(folder: Path) -> float:
    """Meep's own time stepping: the sum of its "Elapsed run time" lines (set-up, the
    Python import and the output excluded), from the run's stdout.txt and what Meep's
    C++ buffer flushed after it (the driver's output, kept in driver.txt)."""
    text = "".join(
        (folder / n).read_text(errors="replace")
        for n in ("stdout.txt", "driver.txt")
        if (folder / n).is_file()
    )
    found = re.findall(r"Elapsed run time = ([0-9.eE+-]+) s", text)
    if not found:
        raise RuntimeError(f"{folder}: no 'Elapsed run time' line from Meep")
    return sum(float(x) for x in found)


def measure(folder: Path) -> dict:
    for name, (_, code, base) in cases().items():
        for s in SCALES:
            d = folder / f"{name}@{s:g}"
            d.mkdir()
            (d / "sim.py").write_text(code)
            (d / "env.json").write_text(json.dumps({RESOLUTION_SCALE_ENV: f"{base * s:g}"}))
            # one process per run: Meep's buffered output lands in this run's driver.txt
            out = subprocess.run(
                [sys.executable, "-m", "tests.support.planted.driver", str(d)],
                check=True,
                cwd=Path(__file__).resolve().parents[1],
                capture_output=True,
                text=True,
                timeout=1200,
            )
            (d / "driver.txt").write_text(out.stdout + out.stderr)
    out = {}
    for name, (dims, _, _) in cases().items():
        secs = {}
        for s in SCALES:
            d = folder / f"{name}@{s:g}"
            if (d / "exit_code").read_text() != "0":
                raise RuntimeError(f"{d}: exit {(d / 'exit_code').read_text()}")
            secs[f"{s:g}"] = meep_seconds(d)
        run = secs["1"]
        coarse = sum(secs[f"{s:g}"] for s in gc.DEFAULT_SCALES)
        out[name] = {
            "dims": dims,
            "seconds": secs,
            "coarse_ratio": round(coarse / run, 3),
            "refine_2x_ratio": round(secs["2"] / run, 3),
            "model_coarse_ratio": round(gc.cost_ratio(gc.DEFAULT_SCALES, dims), 3),
            "model_refine_2x_ratio": 2 ** (dims + 1),
        }
    return out


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        rows = measure(Path(tmp))
    result = {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "machine": platform.node(),
        "scales": list(gc.DEFAULT_SCALES),
        "cases": rows,
    }
    OUT.mkdir(exist_ok=True)
    (OUT / "grid_convergence.json").write_text(json.dumps(result, indent=1) + "\n")
    lines = [
        "# Resolution evidence: coarser runs against the 2x rerun",
        "",
        f"{result['date']}, {result['machine']}, 2 cores shared with other sessions "
        "(absolute seconds vary; each case's runs ran back to back in one process). "
        f"Coarse: runs at {gc.DEFAULT_SCALES[0]:g}x and {gc.DEFAULT_SCALES[1]:g}x of the "
        "resolution (checks.convergence_method: coarse, the default); 2x: one rerun at "
        "twice it (refine_2x). Ratios are of the case's own run; the model is pixels "
        "times steps, sum of s^(d+1) against 2^(d+1). Seconds are Meep's own time "
        "stepping (its 'Elapsed run time' lines, summed over the script's runs); each "
        "run's fixed costs (set-up, flux output) weigh on the smallest cases.",
        "",
        "| case | dims | run s | 0.8x s | 0.6x s | 2x s | coarse / run | model | "
        "2x / run | model |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, r in rows.items():
        s = r["seconds"]
        lines.append(
            f"| {name} | {r['dims']}D | {s['1']:.2f} | {s['0.8']:.2f} | {s['0.6']:.2f} | "
            f"{s['2']:.2f} | {r['coarse_ratio']:.2f} | {r['model_coarse_ratio']:.2f} | "
            f"{r['refine_2x_ratio']:.1f} | {r['model_refine_2x_ratio']} |"
        )
    (OUT / "grid_convergence.md").write_text("\n".join(lines) + "\n")
    print(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
