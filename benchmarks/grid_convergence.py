"""Cost of a stage's resolution evidence as a ratio of its own Meep run, in 1D, 2D and 3D:
the two coarser runs (checks.convergence_method: coarse; the default scales moved to
whole pixels of each case's cell, as the convergence step does) and, for the resonance,
its PML doubled at the coarsest scale, next to the 2x rerun (refine_2x); each run in its
own process (the planted corpus's driver) on the same machine.

Writes benchmarks/results/grid_convergence.{json,md}. Run:
`.venv/bin/python benchmarks/grid_convergence.py` (about 20 minutes on 2 cores).
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
from reprolab.physics.lint import PML_SCALE_ENV, RESOLUTION_SCALE_ENV  # noqa: E402
from reprolab.physics.record_checks import load_record  # noqa: E402
from tests.support.planted import corpus  # noqa: E402

OUT = Path(__file__).parent / "results"
# the cases whose PML is doubled at the coarsest scale too (a resonance: Harminv Q)
RESONANCES = ("ring_resonator",)
# each run is timed this often, the least kept: the machine is shared
REPEATS = 2

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
        "sphere_3d at 2x resolution": (3, SPHERE_3D, 2.0),
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


def drive(folder: Path, name: str, code: str, label: str, env: dict) -> Path:
    """One run of a case in its own process; its folder."""
    d = folder / f"{name}@{label}"
    d.mkdir()
    (d / "sim.py").write_text(code)
    (d / "env.json").write_text(json.dumps(env))
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
    if (d / "exit_code").read_text() != "0":
        raise RuntimeError(f"{d}: exit {(d / 'exit_code').read_text()}")
    return d


def timed(folder: Path, name: str, code: str, label: str, env: dict, repeats=REPEATS) -> float:
    """Meep seconds of a run, the least of `repeats` (other sessions' load only adds)."""
    runs = (drive(folder, name, code, f"{label}#{i}", env) for i in range(repeats))
    return min(meep_seconds(d) for d in runs)


def measure_case(folder: Path, name: str, dims: int, code: str, base: float) -> dict:
    """The case's run, its coarser runs at the whole-pixel scales, the PML doubled at the
    coarsest (a resonance) and the 2x rerun: Meep seconds and ratios to the run."""
    res = RESOLUTION_SCALE_ENV
    secs = {"run": timed(folder, name, code, "1", {res: f"{base:g}"})}
    sc, misfit = gc.grid_scales(gc.DEFAULT_SCALES, load_record(folder / f"{name}@1#0"))
    for label, s in zip(("mid", "low"), sc, strict=True):
        secs[label] = timed(folder, name, code, label, {res: f"{base * s:.10g}"})
    if name in RESONANCES:
        env = {res: f"{base * sc[1]:.10g}", PML_SCALE_ENV: "2"}
        secs["low_pml2x"] = timed(folder, name, code, "low_pml2x", env)
    # the 2x rerun once: 16x the run in 3D, and not the ratio the method must keep low
    secs["2x"] = timed(folder, name, code, "2x", {res: f"{base * 2:g}"}, repeats=1)
    coarse = secs["mid"] + secs["low"]
    return {
        "dims": dims,
        "scales": sc,
        "cell_misfit": misfit,
        "seconds": secs,
        "coarse_ratio": round(coarse / secs["run"], 3),
        "coarse_pml_ratio": round(secs.get("low_pml2x", 0.0) / secs["run"], 3),
        "refine_2x_ratio": round(secs["2x"] / secs["run"], 3),
        "model_coarse_ratio": round(gc.cost_ratio(sc, dims), 3),
        "model_refine_2x_ratio": 2 ** (dims + 1),
    }


def measure(folder: Path) -> dict:
    return {
        name: measure_case(folder, name, dims, code, base)
        for name, (dims, code, base) in cases().items()
    }


def per_dimension(rows: dict) -> dict:
    """Per dimension: the largest run's ratios (Meep's per-run fixed costs weigh least)
    and the range over the dimension's cases."""
    out = {}
    for dims in (1, 2, 3):
        mine = {n: r for n, r in rows.items() if r["dims"] == dims}
        big = max(mine, key=lambda n: mine[n]["seconds"]["run"])
        ratios = [r["coarse_ratio"] for r in mine.values()]
        out[f"{dims}D"] = {
            "largest_case": big,
            "coarse_ratio": mine[big]["coarse_ratio"],
            "refine_2x_ratio": mine[big]["refine_2x_ratio"],
            "coarse_ratio_range": [min(ratios), max(ratios)],
            "model_coarse_ratio": mine[big]["model_coarse_ratio"],
            "model_refine_2x_ratio": mine[big]["model_refine_2x_ratio"],
        }
    return out


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        rows = measure(Path(tmp))
    dims = per_dimension(rows)
    result = {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "machine": platform.node(),
        "scales": list(gc.DEFAULT_SCALES),
        "per_dimension": dims,
        "cases": rows,
    }
    OUT.mkdir(exist_ok=True)
    (OUT / "grid_convergence.json").write_text(json.dumps(result, indent=1) + "\n")
    mid, low = gc.DEFAULT_SCALES
    lines = [
        "# Resolution evidence: coarser runs against the 2x rerun",
        "",
        f"{result['date']}, {result['machine']}, 2 cores shared with other sessions "
        "(absolute seconds vary; each run in its own process, one after the other, the "
        f"least of {REPEATS} kept, the 2x rerun once). "
        f"Coarse: runs at {mid:g}x and {low:g}x of the resolution, each moved to whole "
        "pixels of the case's cell (checks.convergence_method: coarse; `auto` decides by "
        "it in 3D and starts with it in 2D); 2x: one rerun at twice it (refine_2x). "
        "Ratios are of the case's own run; the model is pixels times steps, sum of "
        "s^(d+1) against 2^(d+1). Seconds "
        "are Meep's own time stepping (its 'Elapsed run time' lines, summed over the "
        "script's runs); each run's fixed costs (set-up, flux and DFT output) weigh on "
        "the smallest cases.",
        "",
        "Per dimension (the largest case; the range over the dimension's cases):",
        "",
        "| dims | case | coarse / run | range | model | 2x / run | model |",
        "|---|---|---|---|---|---|---|",
    ]
    for d, r in dims.items():
        lo, hi = r["coarse_ratio_range"]
        lines.append(
            f"| {d} | {r['largest_case']} | {r['coarse_ratio']:.2f} | {lo:.2f}-{hi:.2f} | "
            f"{r['model_coarse_ratio']:.2f} | {r['refine_2x_ratio']:.1f} | "
            f"{r['model_refine_2x_ratio']} |"
        )
    lines += [
        "",
        "| case | dims | scales | run s | mid s | low s | 2x s | coarse / run | model | "
        "PML 2x at low / run | 2x / run | model |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, r in rows.items():
        s = r["seconds"]
        sc = ", ".join(f"{x:.4g}" for x in r["scales"])
        pml = f"{r['coarse_pml_ratio']:.2f}" if "low_pml2x" in s else "–"
        lines.append(
            f"| {name} | {r['dims']}D | {sc} | {s['run']:.2f} | {s['mid']:.2f} | "
            f"{s['low']:.2f} | {s['2x']:.2f} | {r['coarse_ratio']:.2f} | "
            f"{r['model_coarse_ratio']:.2f} | {pml} | {r['refine_2x_ratio']:.1f} | "
            f"{r['model_refine_2x_ratio']} |"
        )
    (OUT / "grid_convergence.md").write_text("\n".join(lines) + "\n")
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
