"""Submission overhead and sweep efficiency: submitit's local executor vs Slurm.

    .venv/bin/python benchmarks/slurm_bench.py [--repeats 3]

Brings the one-node cluster up if none answers (scripts/slurm_up.sh), then
measures, through the same code path the `simulate` rule uses
(`reprolab.jobs.submit.submit_all`, sandbox included):

1. submit -> result overhead for a trivial job and for a Meep job (one point
   of the example's stage 3), local executor vs Slurm: wall time of the whole
   submit-and-wait minus the script's own runtime;
2. an 8-point sweep (the example's stage 3, N = 1..8) as one Slurm job array
   throttled to 2 tasks on 2 cores, against the ideal: the sum of the single
   runs divided by 2.

Writes benchmarks/results/slurm.json and slurm.md (machine and date included).
Numbers, not assertions: the tests never time anything.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from reprolab.artifacts import load_recorded_code  # noqa: E402
from reprolab.jobs.launch import SimulationJob  # noqa: E402
from reprolab.jobs.submit import ClusterSettings, Resources, submit_all  # noqa: E402

STAGE3 = REPO / "examples/papers/silica_bragg_2026/recordings/stage3_pairs_sweep"
TRIVIAL = "print('hello')\n"


def meep_code() -> str:
    return load_recorded_code(STAGE3 / "code_generator.a1.yaml").code


def make_job(root: Path, name: str, code: str, value=None, executor="local") -> SimulationJob:
    wd = root / name
    if wd.exists():
        shutil.rmtree(wd)
    wd.mkdir(parents=True)
    (wd / "simulation.py").write_text(code)
    env = () if value is None else (("REPROLAB_SWEEP_VALUE", json.dumps(value)),)
    return SimulationJob(
        script=str(wd / "simulation.py"),
        workdir=str(wd),
        timeout_s=300,
        mpi_launcher="srun --mpi=pmix -n {ranks}" if executor == "slurm" else "mpirun -np {ranks}",
        memory_mb=2048,
        env=env,
    )


def timed(jobs, executor, root, cap=8):
    settings = ClusterSettings(executor=executor, max_concurrent=cap)
    start = time.perf_counter()
    records = submit_all(jobs, settings, Resources(1, 1024, 6), root / f"submitit-{executor}")
    wall = time.perf_counter() - start
    for r in records:
        if r["failure"]:
            raise SystemExit(f"benchmark job failed: {r['failure']['summary']}")
    return wall, records


def overhead(root: Path, executor: str, code: str, value, repeats: int) -> dict:
    walls, runs = [], []
    for i in range(repeats):
        job = make_job(root, f"{executor}-{i}", code, value, executor)
        wall, (record,) = timed([job], executor, root)
        walls.append(wall)
        runs.append(record["runtime_seconds"])
    over = [w - r for w, r in zip(walls, runs, strict=True)]
    return {
        "executor": executor,
        "repeats": repeats,
        "wall_s_median": round(statistics.median(walls), 3),
        "script_s_median": round(statistics.median(runs), 3),
        "overhead_s_median": round(statistics.median(over), 3),
        "overhead_s_all": [round(o, 3) for o in over],
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", default=str(REPO / "benchmarks/results/slurm"))
    args = parser.parse_args()
    ping = subprocess.run(["scontrol", "ping"], capture_output=True, text=True)
    if "is UP" not in ping.stdout:
        subprocess.run(["bash", str(REPO / "scripts/slurm_up.sh")], check=True)
    root = Path(tempfile.mkdtemp(prefix="reprolab-bench-"))
    code = meep_code()
    result: dict = {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "machine": {
            "hostname": platform.node(),
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
            "python": platform.python_version(),
            "slurm": subprocess.run(["sinfo", "-V"], capture_output=True, text=True).stdout.strip(),
        },
        "overhead": [],
    }
    for name, script, value in (("trivial", TRIVIAL, None), ("meep_point_N6", code, 6)):
        for executor in ("local", "slurm"):
            entry = overhead(root / name, executor, script, value, args.repeats)
            entry["job"] = name
            result["overhead"].append(entry)
            print(json.dumps(entry))
    # The sweep: single runs one at a time (local, no contention), then one array.
    singles = []
    for n in range(1, 9):
        _, (record,) = timed([make_job(root / "single", f"n{n}", code, n)], "local", root)
        singles.append(record["runtime_seconds"])
    jobs = [make_job(root / "array", f"n{n}", code, n, "slurm") for n in range(1, 9)]
    wall, records = timed(jobs, "slurm", root, cap=2)
    ideal = sum(singles) / 2
    result["sweep"] = {
        "points": 8,
        "cores": os.cpu_count(),
        "array_throttle": 2,
        "single_runs_s": [round(s, 3) for s in singles],
        "ideal_s": round(ideal, 3),
        "array_wall_s": round(wall, 3),
        "array_point_runtimes_s": [r["runtime_seconds"] for r in records],
        "efficiency": round(ideal / wall, 3),
        "array_job_id": records[0]["array_job_id"],
    }
    print(json.dumps(result["sweep"]))
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps(result, indent=2) + "\n")
    out.with_suffix(".md").write_text(markdown(result))
    shutil.rmtree(root, ignore_errors=True)
    print(f"wrote {out.with_suffix('.json')} and {out.with_suffix('.md')}")


def markdown(r: dict) -> str:
    m = r["machine"]
    lines = [
        "# Slurm benchmark (benchmarks/slurm_bench.py)",
        "",
        f"{r['date']} on {m['hostname']}: {m['cpus']} CPUs, {m['platform']}, "
        f"Python {m['python']}, {m['slurm']}, one-node cluster from scripts/slurm_up.sh.",
        "",
        "## Submit -> result overhead (median; wall of submit-and-wait minus the script's runtime)",
        "",
        "| job | executor | wall s | script s | overhead s |",
        "|---|---|---|---|---|",
    ]
    for e in r["overhead"]:
        lines.append(
            f"| {e['job']} | {e['executor']} | {e['wall_s_median']} | "
            f"{e['script_s_median']} | {e['overhead_s_median']} |"
        )
    s = r["sweep"]
    lines += [
        "",
        f"## {s['points']}-point sweep as one job array (throttle {s['array_throttle']}, "
        f"{s['cores']} cores)",
        "",
        f"- single runs, one at a time: {s['single_runs_s']} s",
        f"- ideal (sum / 2): {s['ideal_s']} s",
        f"- array wall (submit to last result): {s['array_wall_s']} s",
        f"- efficiency (ideal / wall): {s['efficiency']}",
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
