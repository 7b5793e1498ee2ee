"""No oversubscription: a run's simulations never keep more cores busy than --cores.

The simulate rule declares its job's ranks as its threads (reprolab.jobs.stage_run.
declared_cores), Snakemake counts them against --cores, and the job keeps within
the cores it was given (local_cap). Checked on the session's finished example run
(--cores 2: a 2-rank stage, an 8-point sweep) from every run's start time,
runtime and the ranks MPI itself reported (.mpi.json)."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import yaml

from reprolab.jobs import stage_run
from reprolab.jobs.launch import SimulationJob, job_env
from reprolab.jobs.stage_run import declared_cores, local_cap

STAGE3 = (
    Path(__file__).resolve().parents[2]
    / "examples/papers/silica_bragg_2026/recordings/stage3_pairs_sweep"
)

CORES = 2  # tests/test_pipeline.snakemake_cmd runs every example with --cores 2


def intervals(wd) -> list[tuple[float, float, int, str]]:
    """(start, end, ranks, what) of every simulation process tree the run started."""
    found = []
    for path in sorted((wd / "outputs").glob("*/stages/*/result.json")):
        rec = json.loads(path.read_text())
        for run in rec.get("points") or [rec]:
            if run.get("reused") or run.get("started_at") is None:
                continue
            ranks = (run.get("mpi") or {}).get("size") or rec.get("mpi_ranks") or 1
            what = f"{path.parent.name} {run.get('label') or ''}"
            found.append(
                (run["started_at"], run["started_at"] + run["runtime_seconds"], ranks, what)
            )
    return found


def test_simulations_never_run_more_ranks_than_cores(offline_example_run):
    runs = intervals(offline_example_run)
    assert len(runs) >= 10, runs  # the single stages and the 8 sweep points
    # A 2-rank stage is among them, run on 2 ranks where 2 cores were idle when it
    # started (the suite's other process may hold one): else 1, and its record says why.
    two = json.loads(
        (
            offline_example_run / "outputs/silica_bragg_2026/stages/stage2_bragg_mirror/result.json"
        ).read_text()
    )
    idle_cap = any("idle core" in n for n in two.get("resource_notes") or [])
    assert max(r[2] for r in runs) == 2 or idle_cap, two.get("resource_notes")
    for start, _, _, what in runs:
        # Start and runtime are each recorded to the millisecond: a point that starts
        # as the one before it in its worker ends may seem to overlap it by 1 ms.
        busy = [r for r in runs if r[0] <= start < r[1] - 0.002]
        assert sum(r[2] for r in busy) <= CORES, f"at the start of {what}: {busy}"


def design(tmp_path, ranks: int, points: int = 0):
    """A valid design.json (the example's sweep stage) with these ranks and points."""
    body = yaml.safe_load((STAGE3 / "simulation_designer.a1.yaml").read_text())["output"]
    body["performance_estimate"] = {"mpi_ranks": ranks, "runtime_seconds": 5, "memory_mb": 100}
    body["sweep"] = {"parameter": "n", "values": list(range(points))} if points else None
    path = tmp_path / "design.json"
    path.write_text(json.dumps({"output": body}))
    return path


def test_declared_cores_are_the_ranks_times_the_points_at_once(tmp_path):
    local = {"executor": "local", "max_mpi_ranks": 2, "max_concurrent_jobs": 8}
    assert declared_cores(design(tmp_path, 2), local) == 2
    assert declared_cores(design(tmp_path, 4), local) == 2  # max_mpi_ranks
    assert declared_cores(design(tmp_path, 1, points=8), local) == 8  # Snakemake caps at --cores
    assert declared_cores(design(tmp_path, 1, points=8), {**local, "max_concurrent_jobs": 3}) == 3
    # On Slurm the rule only waits: Slurm allocates the ranks.
    assert declared_cores(design(tmp_path, 2), {**local, "executor": "slurm"}) == 1
    # Before the design exists (a dry run), 1; Snakemake asks again once it is there.
    assert declared_cores(tmp_path / "missing.json", local) == 1


def test_a_job_keeps_within_the_cores_it_was_given(monkeypatch):
    monkeypatch.setattr(stage_run, "free_cores", lambda: 4)  # a quiet machine
    capped, notes = local_cap({"executor": "local", "max_mpi_ranks": 4, "job_cores": 2})
    assert capped["max_mpi_ranks"] == 2 and capped["concurrent_cap"] == 2 and notes
    # Not capped where no cores were given (other callers) or on Slurm.
    assert local_cap({"max_mpi_ranks": 4}) == ({"max_mpi_ranks": 4}, [])
    slurm = {"executor": "slurm", "max_mpi_ranks": 4, "job_cores": 1}
    assert local_cap(slurm) == (slurm, [])


def test_never_more_local_ranks_than_idle_cores():
    """Every core busy (a CPU-bound process each, started here): a job given two cores
    runs one rank, and says why; a rank waiting for its peer yields its core."""
    cores = os.cpu_count() or 1
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(cores)]
    try:
        time.sleep(0.5)
        assert stage_run.free_cores() == 1
        capped, notes = local_cap({"executor": "local", "max_mpi_ranks": 2, "job_cores": 2})
        assert capped["max_mpi_ranks"] == 1
        assert any("idle core" in n for n in notes), notes
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    two = SimulationJob(script="/x/s.py", workdir="/x", mpi_ranks=2)
    assert job_env(two)["OMPI_MCA_mpi_yield_when_idle"] == "1"
