"""Packed sweeps on the real one-node Slurm (reprolab.jobs.packed): a sweep's points
run in a few array tasks, one per worker, each worker one sandboxed process that runs
its points one after another.

Attacked: the example's Meep sweep must give byte-identical outputs to one array task
per point (today's way, forced by making the points unpackable) with fewer tasks than
points; a point that raises or takes its worker down fails alone; a worker cancelled
from outside keeps the points it finished and records the rest as cancelled (so that a
rerun resubmits only those); a worker Slurm stops at its time limit records its
unfinished points as timed out. The cluster comes from tests/support/slurm.py.
"""

import json
import os
import subprocess
import threading
import time
from pathlib import Path

import pytest
import yaml

from reprolab.jobs import packed, stage_run
from tests.jobs.test_packed_sweep import FAILING, STAGE3, sweep_design
from tests.support.slurm import SRUN, scontrol_job

pytestmark = [pytest.mark.slurm, pytest.mark.usefixtures("slurm_cluster")]


def slurm_run(tmp_path: Path, name: str, design, code: str, budget_min=2, **cfg) -> dict:
    script = tmp_path / f"{name}.py"
    script.write_text(code)
    sim_cfg = {
        "executor": "slurm",
        "mpi_launcher": SRUN,
        "max_concurrent_jobs": 2,
        "job_name": f"reprolab-packed-{os.getpid()}-{name}",
        **cfg,
    }
    return stage_run.run_stage(design, budget_min, sim_cfg, script, tmp_path / name)


def tasks_of(record: dict) -> list[dict]:
    """Every task of the sweep's array (or its one job: submitit submits an array of
    one as a plain job), as Slurm lists them."""
    return scontrol_job(record["job_id"])


def test_packed_slurm_sweep_runs_fewer_tasks_with_identical_outputs(tmp_path, monkeypatch):
    code = yaml.safe_load((STAGE3 / "code_generator.a1.yaml").read_text())["output"]["code"]
    design = sweep_design([1, 2, 3, 4])
    packed_rec = slurm_run(tmp_path, "packed", design, code)
    with monkeypatch.context() as mp:
        mp.setattr(packed, "packable", lambda jobs: False)
        single_rec = slurm_run(tmp_path, "single", design, code)
    assert packed_rec["failure"] is None, packed_rec["failure"]
    assert single_rec["failure"] is None, single_rec["failure"]
    # One task per worker (2: max_concurrent_jobs, and 4 points x 5 s estimated give
    # each worker at least WORKER_MIN_SECONDS of work) against one task per point.
    assert len(tasks_of(packed_rec)) == 2 < len(design.sweep.values)
    assert len(tasks_of(single_rec)) == 4
    got = (tmp_path / "packed/run/pairs_sweep.csv").read_bytes()
    assert got == (tmp_path / "single/run/pairs_sweep.csv").read_bytes()
    assert len(got.decode().splitlines()) == 5
    for i in range(4):  # every point's own file, byte for byte, and its own records
        name = f"run/points/p{i:03d}/pairs_sweep.csv"
        assert (tmp_path / "packed" / name).read_bytes() == (
            tmp_path / "single" / name
        ).read_bytes()
        out = (tmp_path / f"packed/run/points/p{i:03d}/stdout.txt").read_text()
        assert out.count("stage3: N=") == 1 and f"stage3: N={i + 1} " in out
    array = packed_rec["array_job_id"]
    for i, point in enumerate(packed_rec["points"]):
        # Snake order (0 1 1 0): each point in its worker's array task, in a sandbox.
        task = (0, 1, 1, 0)[i]
        assert point["job_id"] == f"{array}_{task}", point
        assert point["slurm_env"]["SLURM_ARRAY_TASK_ID"] == str(task)
        assert point["mpi"]["size"] == 1 and point["failure"] is None
        rec = json.loads((tmp_path / f"packed/run/points/p{i:03d}/.point.json").read_text())
        assert rec["sandbox"]["packed_worker"] and rec["sandbox"]["isolation"] == "bwrap"
    # The worker's time limit holds its points one after another: 2 x 60 s, a minute above.
    assert {t["TimeLimit"] for t in tasks_of(packed_rec)} == {"00:03:00"}
    assert {t["JobState"] for t in tasks_of(packed_rec)} == {"COMPLETED"}


def test_a_failing_point_on_slurm_fails_alone(tmp_path, monkeypatch):
    monkeypatch.setattr(stage_run, "MIN_POINT_SECONDS", 2)  # point 3's limit, quickly
    design = sweep_design([1, 2, 3, 4, 5, 6, 7], output="out.csv")
    cfg = {"max_concurrent_jobs": 1, "sandbox": {"static_checks": False}}
    rec = slurm_run(tmp_path, "fail", design, FAILING, budget_min=0.1, **cfg)
    assert len(tasks_of(rec)) == 1 and "_" not in rec["job_id"]  # one worker ran all 7
    by_value = {p["value"]: p for p in rec["points"]}
    assert by_value[2]["failure"]["kind"] == "python_exception"
    assert by_value[3]["failure"]["kind"] == "timeout"
    assert by_value[4]["failure"] is not None and by_value[4]["exit_code"] != 0
    assert by_value[5]["exit_code"] == 3 and by_value[5]["failure"]
    for n in (1, 6, 7):
        assert by_value[n]["failure"] is None, by_value[n]
        out = (tmp_path / f"fail/run/points/p{n - 1:03d}/stdout.txt").read_text()
        assert out.strip() == f"point {n}"
    assert rec["sweep"]["failed_points"] == [1, 2, 3, 4]


STOPPED = (
    "import json, os, time\n"
    "n = json.loads(os.environ['REPROLAB_SWEEP_VALUE'])\n"
    "print('point', n, flush=True)\n"
    "if n == 2:\n"
    "    open('started', 'w').write(os.environ['SLURM_JOB_ID'])\n"
    "    time.sleep(600)\n"
    "open('out.csv', 'w').write(f'n\\n{n}\\n')\n"
)


def test_a_cancelled_worker_keeps_its_finished_points_and_records_the_rest(tmp_path):
    design = sweep_design([1, 2, 3], output="out.csv")
    started = tmp_path / "cancel/run/points/p001/started"
    cancelled: list[str] = []

    def cancel_when_point_2_runs():
        for _ in range(3000):
            if started.is_file() and started.read_text():
                cancelled.append(started.read_text())
                subprocess.run(["scancel", cancelled[0]], check=True)
                return
            time.sleep(0.1)

    threading.Thread(target=cancel_when_point_2_runs, daemon=True).start()
    rec = slurm_run(tmp_path, "cancel", design, STOPPED, budget_min=10, max_concurrent_jobs=1)
    assert cancelled, "point 2 never started"
    first, second, third = rec["points"]
    assert first["failure"] is None and first["job_id"] == second["job_id"]
    assert second["failure"]["kind"] == "cancelled", second["failure"]
    assert third["failure"]["kind"] == "cancelled", third["failure"]
    assert third["runtime_seconds"] is None  # never began
    assert (
        "not run"
        in json.loads((tmp_path / "cancel/run/points/p002/.point.json").read_text())["stderr_tail"]
    )
    assert rec["sweep"]["failed_points"] == [1, 2]
    assert tasks_of(rec)[0]["JobState"] == "CANCELLED"


def test_a_worker_over_its_time_limit_records_its_unfinished_points_as_timed_out(
    tmp_path, monkeypatch
):
    # Slurm's least limit (1 min) for the worker while each point may run its share of
    # the plan's 10 min (200 s; not the design's own 1-min sizing, which would let the
    # point's clock race Slurm's): only Slurm stops it (the one test here that waits
    # over a minute).
    monkeypatch.setattr(packed, "_minutes", lambda points, timeout_s: 1)
    monkeypatch.setattr(
        stage_run,
        "sized_resources",
        lambda job, design, budget, cfg: stage_run.resources_for(design, budget, cfg),
    )
    design = sweep_design([1, 2, 3], output="out.csv")
    rec = slurm_run(tmp_path, "late", design, STOPPED, budget_min=10, max_concurrent_jobs=1)
    first, second, third = rec["points"]
    assert first["failure"] is None, first["failure"]
    for point in (second, third):
        assert point["failure"]["kind"] == "timeout", point["failure"]
        assert "Slurm stopped it at the job's time limit (00:01:00)" in point["failure"]["summary"]
    assert tasks_of(rec)[0]["JobState"] == "TIMEOUT"
