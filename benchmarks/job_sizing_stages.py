"""Job sizing before submission against the real runs: every stage of every bundled
example paper (config/gallery.yaml and config/demo.yaml), its recorded design and script
sized by reprolab.jobs.job_size (what submission asks for), then the script run with real
Meep in its own process (the run-time recorder installed, as in the sandbox; one rank)
and its peak memory (max RSS) and core-seconds (user + system CPU) measured. A sweep's
points each run in their own process: the estimate is one point's, the measure the
points' mean core-seconds and largest memory.

Writes benchmarks/results/job_sizing_stages.json and the section "Every stage of the
bundled examples" of benchmarks/results/job_sizing.md: per stage the estimate, the
measure, their ratio (goal: within a factor 1.5), what it was sized from, and the
core-seconds `sizing.from_record` gives with the run length the run actually took (so a
guessed ring-down is told apart from the per-cell-step figures). Run:
`.venv/bin/python benchmarks/job_sizing_stages.py` (a few minutes).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the driver lives in tests/
from agents.simulation_designer import SimulationDesign  # noqa: E402
from benchmarks.job_sizing import fit  # noqa: E402
from reprolab.jobs import job_size, sizing  # noqa: E402
from reprolab.physics.record_checks import load_record  # noqa: E402

OUT = Path(__file__).parent / "results"
SECTION = "## Every stage of the bundled examples"
CONFIGS = ("config/gallery.yaml", "config/demo.yaml")
GOAL = 1.5
WRAPPER = """
import resource, subprocess, sys
subprocess.run([sys.executable, "-m", "tests.support.planted.driver", sys.argv[1]], check=True)
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print(r.ru_utime + r.ru_stime, r.ru_maxrss / 1024)
"""


def stages() -> list[tuple[str, Path]]:
    """(paper id, recordings folder of one stage) for every stage of every bundled paper."""
    papers = []
    for cfg in CONFIGS:
        for entry in yaml.safe_load((ROOT / cfg).read_text())["papers"]:
            if entry["paper_dir"] not in papers:
                papers.append(entry["paper_dir"])
    out = []
    for paper in papers:
        for folder in sorted((ROOT / paper / "recordings").glob("stage*")):
            out.append((Path(paper).name, folder))
    return out


def recorded(folder: Path, agent: str) -> dict:
    return yaml.safe_load((folder / f"{agent}.a1.yaml").read_text())["output"]


def run_point(folder: Path, code: str, env: dict) -> dict:
    folder.mkdir(parents=True)
    (folder / "sim.py").write_text(code)
    (folder / "env.json").write_text(json.dumps(env))
    out = subprocess.run(
        [sys.executable, "-c", WRAPPER, str(folder)],
        check=True,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    core_s, rss_mb = (float(x) for x in out.stdout.split()[-2:])
    exit_code = (folder / "exit_code").read_text().strip()
    sims = load_record(folder)
    rec = sizing.from_record(sims) if sims else None
    return {"core_seconds": core_s, "memory_mb": rss_mb, "exit_code": exit_code, "rec": rec}


def measure(tmp: Path) -> list[dict]:
    rows = []
    for i, (paper, folder) in enumerate(stages()):
        design = SimulationDesign.model_validate(recorded(folder, "simulation_designer"))
        code = recorded(folder, "code_generator")["code"]
        job = job_size.for_stage(design, code, {"max_mpi_ranks": 1}, env={})
        values = design.sweep.values if design.sweep else [None]
        points = []
        for k, value in enumerate(values):
            env = {}
            if value is not None:
                env = {"REPROLAB_SWEEP_VALUE": json.dumps(value), "REPROLAB_SWEEP_INDEX": str(k)}
            points.append(run_point(tmp / f"s{i}" / f"p{k}", code, env))
            print(f"{paper} {design.stage_id} point {k}: {points[-1]}", flush=True)
        recs = [p["rec"]["core_seconds"] for p in points if p["rec"] is not None]
        actual = {
            "core_seconds": sum(p["core_seconds"] for p in points) / len(points),
            "memory_mb": max(p["memory_mb"] for p in points),
        }
        rows.append(
            {
                "paper": paper,
                "stage": design.stage_id,
                "dims": design.dimensions,
                "points": len(points),
                "exit_codes": sorted({p["exit_code"] for p in points}),
                "estimate": job.to_json(),
                "actual": actual,
                "from_record_core_seconds": sum(recs) / len(recs) if recs else None,
                "points_measured": points,
                "memory_ratio": job.memory_mb / actual["memory_mb"],
                "core_seconds_ratio": job.core_seconds / actual["core_seconds"],
            }
        )
    return rows


NO_RUN = {"grid_cells": 0, "cell_steps": 0, "steps": 0, "runs": 0, "dims": 1}


def combined_fit(rows: list[dict]) -> dict:
    """The calibration's fit (benchmarks/job_sizing.py) on its nine cases and every
    process measured here (a script without a simulation: set-up only; a sweep's points
    weighted 1/sqrt(points)): where sizing's figures come from."""
    cal = json.loads((OUT / "job_sizing.json").read_text())["cases"]
    data = [{**c, "weight": 1.0} for c in cal]
    for r in rows:
        for p in r["points_measured"]:
            data.append(
                {
                    "estimate": p["rec"] or NO_RUN,
                    "memory_mb": p["memory_mb"],
                    "core_seconds": p["core_seconds"],
                    "weight": 1 / len(r["points_measured"]) ** 0.5,
                }
            )
    return {**fit(data), "processes": len(data)}


def within(ratio: float) -> bool:
    return 1 / GOAL <= ratio <= GOAL


def markdown(result: dict) -> list[str]:
    rows, g = result["stages"], result["combined_fit"]
    mem_ok = sum(within(r["memory_ratio"]) for r in rows)
    cpu_ok = sum(within(r["core_seconds_ratio"]) for r in rows)
    lines = [
        SECTION,
        "",
        f"{result['date']}, {result['machine']}, 2 cores shared with other sessions "
        f"(load average {result.get('load_average', 'not recorded')} at the end: CPU "
        "seconds grow with it, a bare Python and Meep import from 0.71 s at load 1 to "
        "0.8-1.2 s at load 10). Each "
        "stage's recorded design and script sized by `reprolab.jobs.job_size.for_stage` "
        "(what submission asks for: the script's cell, resolution and run length, or the "
        "agent's estimate where they are not read), then run with real Meep in its own "
        "process, one rank (a sweep: every point, each in its own process; estimate per "
        "point, measured mean core-s and largest MB). Ratio = estimate / measured; goal "
        f"within a factor {GOAL:g}: memory {mem_ok} of {len(rows)} stages, core-seconds "
        f"{cpu_ok} of {len(rows)}. `rec.` = the core-seconds `sizing.from_record` gives "
        "with the run length the run actually took. This run's combined fit of the "
        f"calibration's cases and these {g['processes']} processes (sizing's core-second "
        "figures were set from the same fit one run earlier; the shared machine moves "
        f"them by tens of percent): {g['setup_seconds']:.2f} s + "
        f"{g['per_run_seconds']:.2f} s per run + "
        f"{g['seconds_per_step']:.2g} s per step + "
        + " / ".join(f"{v:.2g}" for v in g["seconds_per_cell_step"].values())
        + " s per cell-step in 1D / 2D / 3D.",
        "",
        "| paper | stage | sized from | MB est. | MB measured | ratio | core-s est. | "
        "core-s measured | ratio | core-s rec. |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        e, a = r["estimate"], r["actual"]
        rec = r["from_record_core_seconds"]
        pts = f" ({r['points']} points)" if r["points"] > 1 else ""
        lines.append(
            f"| {r['paper']} | {r['stage']}{pts} | {e['source']} | {e['memory_mb']:.0f} | "
            f"{a['memory_mb']:.0f} | {r['memory_ratio']:.2f} | {e['core_seconds']:.3g} | "
            f"{a['core_seconds']:.3g} | {r['core_seconds_ratio']:.2f} | "
            + (f"{rec:.3g} |" if rec is not None else "— |")
        )
    return lines


def write_section(lines: list[str]) -> None:
    """Replace (or add) the section in job_sizing.md; the calibration above it stays."""
    md = OUT / "job_sizing.md"
    text = md.read_text() if md.is_file() else ""
    head = text.split(SECTION)[0].rstrip("\n")
    md.write_text((head + "\n\n" if head else "") + "\n".join(lines) + "\n")


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        rows = measure(Path(tmp))
    result = {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "machine": platform.node(),
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "goal_factor": GOAL,
        "stages": rows,
        "combined_fit": combined_fit(rows),
    }
    OUT.mkdir(exist_ok=True)
    (OUT / "job_sizing_stages.json").write_text(json.dumps(result, indent=1) + "\n")
    lines = markdown(result)
    write_section(lines)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
