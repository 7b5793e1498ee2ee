"""What the run-time recorder costs a Meep run: the same script plain and recorded.

Writes benchmarks/results/recorder_overhead.json: per script, the child process's CPU
seconds and wall seconds (median of REPEAT, plain and recorded interleaved), the
recorded/plain ratios, and how the recorder spaced its samples (the record's
`sampling`). Run: `nice .venv/bin/python benchmarks/recorder_overhead.py [--label after]
[--code DIR --commit SHA]`; `--code` measures another checkout of the project (an export
of an older commit, named by `--commit`: its recorder, this file's scripts), `--label`
names the row set it replaces in the file. CPU time is the figure to compare on a
shared machine; wall time follows load. A measurement, not a test.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "benchmarks" / "results" / "recorder_overhead.json"
REPEAT = 3

# A holey-waveguide cavity in the style of Meep's cavity far-field example at a low
# resolution, with its two mirror symmetries (which make the cell's energy integral
# dearest: each symmetry image is summed), run until its field has decayed.
CAVITY = '''
"""A holey-waveguide cavity with two mirror symmetries, run until its field decayed."""
import meep as mp

RES, FCEN, DF, W, R, D, N, DPAD = 10, 0.25, 0.2, 1.2, 0.36, 1.4, 3, 2
DPML = 0.5 / (FCEN - 0.5 * DF)
SX, SY = 2 * (DPAD + DPML + N) + D - 1, W + 2 * (2.2 + DPML)
holes = [mp.Cylinder(R, center=mp.Vector3(s * (D / 2 + i))) for i in range(N) for s in (1, -1)]
sim = mp.Simulation(
    cell_size=mp.Vector3(SX, SY), resolution=RES, boundary_layers=[mp.PML(DPML)],
    geometry=[mp.Block(mp.Vector3(mp.inf, W, mp.inf), material=mp.Medium(epsilon=13)),
              *holes],
    sources=[mp.Source(mp.GaussianSource(FCEN, fwidth=DF), mp.Hz, mp.Vector3())],
    symmetries=[mp.Mirror(mp.X, phase=-1), mp.Mirror(mp.Y, phase=-1)])
above = sim.add_flux(FCEN, DF, 50, mp.FluxRegion(mp.Vector3(0, 0.5 * W + 1),
                                                 size=mp.Vector3(SX - 2 * DPML)))
sim.run(until_after_sources=mp.stop_when_fields_decayed(50, mp.Hz, mp.Vector3(0.1, 0.1),
                                                        1e-3))
flux = mp.get_fluxes(above)
'''

# The field-decay tests' scattering run (a cylinder, no symmetry, 100 units after the
# sources): small and short, where sampling was already cheap.
SCATTERING = '''
"""A dielectric cylinder's scattered flux, run a fixed time after its sources."""
import meep as mp

R, N, DPML, DAIR, RES = 0.5, 2.0, 1.0, 1.0, 12
S = 2 * (DPML + DAIR + R)
FCEN, DF, B = 1.0, 1.0, R + 0.3
sim = mp.Simulation(
    cell_size=mp.Vector3(S, S), resolution=RES, boundary_layers=[mp.PML(DPML)],
    geometry=[mp.Cylinder(R, material=mp.Medium(index=N))],
    sources=[mp.Source(mp.GaussianSource(FCEN, fwidth=DF, is_integrated=True),
                       component=mp.Ez, center=mp.Vector3(-0.5 * S + DPML),
                       size=mp.Vector3(0, S))])
faces = [sim.add_flux(FCEN, 0.8 * DF, 30, mp.FluxRegion(center=c, size=s))
         for c, s in [(mp.Vector3(-B), mp.Vector3(0, 2 * B)),
                      (mp.Vector3(B), mp.Vector3(0, 2 * B))]]
sim.run(until_after_sources=100)
'''

SCRIPTS = {"cavity, 2 mirror symmetries": CAVITY, "cylinder scattering": SCATTERING}


def timed(argv: list[str], cwd: Path, code: Path) -> tuple[float, float]:
    """(CPU s, wall s) of one child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    env = {**os.environ, "PYTHONPATH": str(code), "OMP_NUM_THREADS": "1"}
    subprocess.run(argv, cwd=cwd, env=env, check=True, capture_output=True, timeout=1800)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall


def measure(code: Path) -> dict:
    rows = {}
    for name, script in SCRIPTS.items():
        runs: dict[str, list[tuple[float, float]]] = {"plain": [], "recorded": []}
        sampling = None
        for _ in range(REPEAT):
            with tempfile.TemporaryDirectory() as tmp:
                folder = Path(tmp)
                (folder / "sim.py").write_text(script)
                runs["plain"].append(timed([sys.executable, "sim.py"], folder, code))
                driver = [sys.executable, "-m", "tests.support.planted.driver", str(folder)]
                runs["recorded"].append(timed(driver, code, code))
                assert (folder / "exit_code").read_text().strip() == "0", name
                sampling = _sampling(folder)
        med = {
            how: {
                "cpu_s": round(statistics.median(c for c, _ in got), 2),
                "wall_s": round(statistics.median(w for _, w in got), 2),
            }
            for how, got in runs.items()
        }
        rows[name] = {
            **med,
            "cpu_ratio": round(med["recorded"]["cpu_s"] / med["plain"]["cpu_s"], 3),
            "wall_ratio": round(med["recorded"]["wall_s"] / med["plain"]["wall_s"], 3),
            "sampling": sampling,
        }
        print(name, json.dumps(rows[name]), flush=True)
    return rows


def _sampling(folder: Path) -> dict | None:
    """The record's account of the last run's sampling (None from an older recorder)."""
    from reprolab.physics.record_checks import load_record

    run = load_record(folder)[-1]["runs"][-1]
    return run.get("sampling") or {"samples": run.get("energy_samples")}


def _head() -> str:
    got = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
        check=False,
    )
    return got.stdout.strip() or "unknown"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--label", default="after", help="the row set this run replaces")
    ap.add_argument("--code", type=Path, default=REPO, help="the project checkout measured")
    ap.add_argument("--commit", help="the commit --code holds (default: this checkout's HEAD)")
    args = ap.parse_args()
    code = args.code.resolve()
    if not (code / "reprolab" / "physics" / "as_built.py").is_file():
        sys.exit(f"--code {code}: no reprolab/physics/as_built.py; valid: a project checkout")
    result = json.loads(OUT.read_text()) if OUT.is_file() else {"runs": {}}
    result["runs"][args.label] = {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "machine": f"{platform.node()} {platform.machine()}, {os.cpu_count()} cores, "
        f"load {os.getloadavg()[0]:.1f}",
        "commit": args.commit or _head(),
        "repeat": REPEAT,
        "scripts": measure(code),
    }
    tmp = OUT.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(result, indent=1) + "\n")
    tmp.replace(OUT)  # atomic: a reader never sees half a file


if __name__ == "__main__":
    main()
