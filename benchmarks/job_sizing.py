"""Calibration of reprolab.jobs.sizing: memory and core-seconds of real Meep runs (1D, 2D,
3D; each script in its own process, one rank) against the estimate from its run-time
record (cell, resolution, run length, dispersive media, symmetries).

Writes benchmarks/results/job_sizing.{json,md}: per case the grid cells and cell-steps,
the measured peak memory (the process's max RSS) and core-seconds (user + system CPU),
the estimate with the module's figures and their ratios, and the least-squares fit the
figures were set from. Run: `.venv/bin/python benchmarks/job_sizing.py` (a few minutes).
"""

from __future__ import annotations

import datetime as dt
import json
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the corpus lives in tests/
from benchmarks.grid_convergence import SPHERE_3D  # noqa: E402
from reprolab.jobs import sizing  # noqa: E402
from reprolab.physics.record_checks import load_record  # noqa: E402
from tests.support.planted import corpus  # noqa: E402

OUT = Path(__file__).parent / "results"
STAGES_SECTION = "## Every stage of the bundled examples"
# One child process per case; the parent reads its resource use.
WRAPPER = """
import resource, subprocess, sys
subprocess.run([sys.executable, "-m", "tests.support.planted.driver", sys.argv[1]], check=True)
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print(r.ru_utime + r.ru_stime, r.ru_maxrss / 1024)
"""


def cases() -> dict[str, tuple[str, dict]]:
    c = corpus.CORRECT
    scale = "REPROLAB_RESOLUTION_SCALE"
    return {
        "slab_fixed_long (1D)": (c["slab_fixed_long"][0], {}),
        "film_off_grid_literal (1D, Ag)": (c["film_off_grid_literal"][0], {}),
        "ring_resonator (2D)": (c["ring_resonator"][0], {}),
        "ring_resonator 2x (2D)": (c["ring_resonator"][0], {scale: "2"}),
        "bend_open (2D)": (c["bend_open"][0], {}),
        "bend_open 2x (2D)": (c["bend_open"][0], {scale: "2"}),
        "cylinder_scattering (2D)": (c["cylinder_scattering"][0], {}),
        "sphere (3D)": (SPHERE_3D, {}),
        "sphere 1.6x (3D)": (SPHERE_3D, {scale: "1.6"}),
    }


def measure(folder: Path) -> list[dict]:
    rows = []
    for i, (name, (code, env)) in enumerate(cases().items()):
        d = folder / f"case{i}"
        d.mkdir()
        (d / "sim.py").write_text(code)
        (d / "env.json").write_text(json.dumps(env))
        out = subprocess.run(
            [sys.executable, "-c", WRAPPER, str(d)],
            check=True,
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=900,
        )
        core_s, rss_mb = (float(x) for x in out.stdout.split()[-2:])
        est = sizing.from_record(load_record(d))
        dims = int(name.rsplit("(", 1)[1][0])
        row = {"case": name, "dims": dims, "core_seconds": core_s, "memory_mb": rss_mb}
        rows.append({**row, "estimate": est})
    return rows


def fit(rows: list[dict]) -> dict:
    """Memory = base + bytes * cells (least squares); core_s = setup + per_run * runs +
    per_step * steps + k_d * cell_steps by dimensions d (non-negative least squares,
    relative: each run weighs alike, or its `weight`). Rows: a measured `memory_mb` and
    `core_seconds`
    and the run's `estimate` (sizing.from_record: grid_cells, cell_steps, steps, runs,
    dims)."""
    from scipy.optimize import nnls

    est = [r["estimate"] for r in rows]
    cells = np.array([e["grid_cells"] for e in est])
    cell_steps = np.array([e["cell_steps"] for e in est])
    steps = np.array([e["steps"] for e in est])
    runs = np.array([e["runs"] for e in est], dtype=float)
    dims = np.array([e["dims"] for e in est])
    mem = np.array([r["memory_mb"] for r in rows])
    cpu = np.array([r["core_seconds"] for r in rows])
    (base, per_cell), *_ = np.linalg.lstsq(np.c_[np.ones_like(cells), cells / 1e6], mem, rcond=None)
    a = np.c_[np.ones_like(cpu), runs, steps, *(cell_steps * (dims == d) for d in (1, 2, 3))]
    w = np.array([r.get("weight", 1.0) for r in rows])
    (setup, per_run, per_step, *k), _ = nnls(a * (w / cpu)[:, None], w)
    return {
        "base_memory_mb": float(base),
        "bytes_per_cell": float(per_cell),
        "setup_seconds": float(setup),
        "per_run_seconds": float(per_run),
        "seconds_per_step": float(per_step),
        "seconds_per_cell_step": {d: float(v) for d, v in zip((1, 2, 3), k, strict=True)},
    }


def per_step(figures: dict) -> str:
    return " / ".join(f"{v:.2g}" for v in figures["seconds_per_cell_step"].values())


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        rows = measure(Path(tmp))
    for r in rows:
        e = r["estimate"]
        r["memory_ratio"] = round(e["memory_mb"] / r["memory_mb"], 3)
        r["core_seconds_ratio"] = round(e["core_seconds"] / r["core_seconds"], 3)
    result = {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "machine": platform.node(),
        "figures": {
            "base_memory_mb": sizing.BASE_MEMORY_MB,
            "bytes_per_cell": sizing.BYTES_PER_CELL,
            "setup_seconds": sizing.SETUP_SECONDS,
            "per_run_seconds": sizing.PER_RUN_SECONDS,
            "seconds_per_step": sizing.SECONDS_PER_STEP,
            "seconds_per_cell_step": sizing.SECONDS_PER_CELL_STEP,
        },
        "fit": fit(rows),
        "cases": rows,
    }
    OUT.mkdir(exist_ok=True)
    (OUT / "job_sizing.json").write_text(json.dumps(result, indent=1) + "\n")
    f, g = result["figures"], result["fit"]
    lines = [
        "# Job sizing: estimate against measured memory and core-seconds",
        "",
        f"{result['date']}, {result['machine']}, 2 cores shared with other sessions; each "
        "case in its own process, one rank. Measured: max RSS and user + system CPU of "
        "the process (Python and Meep's import included). Estimated "
        "(reprolab.jobs.sizing.from_record, from the run's record): "
        f"{f['base_memory_mb']:g} MB + {f['bytes_per_cell']:g} bytes per grid cell; "
        f"{f['setup_seconds']:g} s + {f['per_run_seconds']:g} s per run + "
        f"{f['seconds_per_step']:.2g} s per time step + {per_step(f)} s per cell-step in "
        "1D / 2D / 3D "
        "(a dispersive medium's cells x "
        f"{sizing.DISPERSIVE_FACTOR:g}). Least-squares fit of this run: "
        f"{g['base_memory_mb']:.0f} MB + {g['bytes_per_cell']:.0f} bytes per cell; "
        f"{g['setup_seconds']:.2f} s + {g['per_run_seconds']:.2f} s per run + "
        f"{g['seconds_per_step']:.2g} s per step + {per_step(g)} s per cell-step.",
        "",
        "| case | grid cells | cell-steps | MB measured | MB est. | ratio | core-s measured "
        "| core-s est. | ratio |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        e = r["estimate"]
        lines.append(
            f"| {r['case']} | {e['grid_cells']:.3g} | {e['cell_steps']:.3g} | "
            f"{r['memory_mb']:.0f} | {e['memory_mb']:.0f} | {r['memory_ratio']:.2f} | "
            f"{r['core_seconds']:.2f} | {e['core_seconds']:.2f} | "
            f"{r['core_seconds_ratio']:.2f} |"
        )
    # The per-stage section (benchmarks/job_sizing_stages.py) stays below the calibration.
    md = OUT / "job_sizing.md"
    kept = md.read_text().split(STAGES_SECTION, 1) if md.is_file() else [""]
    tail = "\n" + STAGES_SECTION + kept[1] if len(kept) > 1 else ""
    md.write_text("\n".join(lines) + "\n" + tail)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
