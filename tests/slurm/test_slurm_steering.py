"""Steering on the real one-node Slurm: a cancelled job is resubmitted, a killed
driver is reattached to, every job is named by paper and stage.

Short sleeper scripts stand in for Meep: what is under test is the job handling.
The cluster comes from the session fixture in tests/support/slurm.py.
"""

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from agents.simulation_designer import SimulationDesign
from reprolab.cli.control import running_jobs
from reprolab.jobs import stage_run, submit
from reprolab.settings import paper_run
from reprolab.steps import run as run_step
from reprolab.steps import run_failures
from tests.support.builders import minimal_design
from tests.support.pipeline import EXAMPLE, REPO
from tests.support.slurm import SRUN, scontrol_job

pytestmark = [pytest.mark.slurm, pytest.mark.usefixtures("slurm_cluster")]
PAPER = "silica_bragg_2026"


def design(stage_id: str, sweep: list | None = None) -> SimulationDesign:
    spec = minimal_design(stage_id, summary="a sleeper standing in for Meep")
    if sweep:
        spec["sweep"] = {"parameter": "n", "values": sweep}
    return SimulationDesign.model_validate(spec)


def paper_settings(tmp_path: Path, **simulation):
    config = {
        "outputs_dir": str(tmp_path / "outputs"),
        "papers": [{"paper_dir": str(EXAMPLE)}],
        "provider": {"kind": "replay"},
        "simulation": {"executor": "slurm", "mpi_launcher": SRUN, **simulation},
    }
    return paper_run(config, PAPER)


def jobs_named(name: str) -> list[dict]:
    return [fields for fields in scontrol_job() if fields.get("JobName") == name]


def test_a_job_cancelled_from_outside_is_resubmitted_and_completes(tmp_path):
    run = paper_settings(tmp_path)
    stage_id = f"stage1_resubmit_{os.getpid()}"  # job names unique to this test session
    stage_dir = run.out_dir / "stages" / stage_id
    script = tmp_path / "simulation.py"
    script.write_text(
        "import os, time\n"
        "open('jobid.txt', 'w').write(os.environ['SLURM_JOB_ID'])\n"
        "time.sleep(4)\n"
        "open('out.csv', 'w').write('x\\n1\\n')\n"
    )
    jobid = stage_dir / "run" / "jobid.txt"
    cancelled: list[str] = []

    def cancel_the_first_job():
        for _ in range(1200):
            if jobid.is_file() and jobid.read_text():
                cancelled.append(jobid.read_text())
                subprocess.run(["scancel", cancelled[0]], check=True)
                return
            time.sleep(0.1)

    threading.Thread(target=cancel_the_first_job, daemon=True).start()
    reruns = run_failures.RerunState()
    repairs: list = []
    stage = SimpleNamespace(runtime_budget_minutes=2)
    record, _ = run_step.settle_run(
        run, design(stage_id), stage, (tmp_path / "code.json", script), stage_dir, repairs, reruns
    )
    assert record["failure"] is None, record["failure"]
    assert reruns.resubmits == 1 and [r["kind"] for r in repairs] == ["resubmit"]
    assert cancelled and record["job_id"] != cancelled[0]
    assert scontrol_job(cancelled[0])[0]["JobState"] == "CANCELLED"
    assert settled(record["job_id"]) == "COMPLETED"
    # Both jobs carry paper and stage in their name; the failed run is kept.
    named = jobs_named(submit.job_name(PAPER, stage_id, run.out_dir))
    assert {j["JobId"] for j in named} == {cancelled[0], record["job_id"]}
    kept = json.loads((stage_dir / "failed_runs/f1/result.json").read_text())
    assert kept["failure"]["kind"] == "cancelled" and kept["job_id"] == cancelled[0]
    events = (run.out_dir / "events.jsonl").read_text()
    assert f"job {cancelled[0]} cancelled" in events and "resubmitted automatically" in events


DRIVER = textwrap.dedent(
    """
    import json, sys
    sys.path.insert(0, {repo!r})
    from agents.simulation_designer import SimulationDesign
    from reprolab.jobs import stage_run
    from pathlib import Path
    design = SimulationDesign.model_validate(json.loads({design!r}))
    cfg = {{"executor": "slurm", "mpi_launcher": {srun!r}, "job_name": {name!r},
           "max_concurrent_jobs": 3}}
    stage_run.run_stage(design, 2, cfg, Path({script!r}), Path({stage!r}))
    """
)

SWEEP_POINT = (
    "import os, time\n"
    "time.sleep(8)\n"
    "open('out.csv', 'w').write('n\\n' + os.environ['REPROLAB_SWEEP_VALUE'] + '\\n')\n"
)


def test_a_killed_driver_is_reattached_to_and_no_point_runs_twice(tmp_path):
    name = f"reprolab-reattach-{os.getpid()}"
    sweep = design("stage3_sweep", sweep=[1, 2, 3])
    script = tmp_path / "simulation.py"
    script.write_text(SWEEP_POINT)
    stage = tmp_path / "stage"
    code = DRIVER.format(
        repo=str(REPO),
        design=sweep.model_dump_json(),
        srun=SRUN,
        name=name,
        script=str(script),
        stage=str(stage),
    )
    # The driver (as snakemake) runs the waiter (as the simulate step) as its child.
    driver = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"import subprocess, sys; subprocess.run([sys.executable, '-c', {code!r}])",
        ]
    )
    submission = stage / "submitit" / submit.SUBMISSION
    for _ in range(600):
        if submission.is_file():
            break
        time.sleep(0.1)
    assert submission.is_file(), "the waiter never recorded its submission"
    job_ids = json.loads(submission.read_text())["job_ids"]
    waiter = [p for p in _children(driver.pid)]
    driver.send_signal(signal.SIGKILL)
    driver.wait()
    # The orphaned waiter notices its driver is gone and stops without writing anything.
    for _ in range(100):
        if not any(_alive(p) for p in waiter):
            break
        time.sleep(0.1)
    assert not any(_alive(p) for p in waiter), "the old waiter kept waiting"
    assert submission.is_file()
    # `reprolab status` shows the jobs left running, with ids, state and elapsed time.
    line = running_jobs(stage)
    assert line.startswith("simulating: Slurm job") and all(j in line for j in job_ids), line
    assert "RUNNING 00:" in line or "PENDING" in line, line
    # The rerun waits on the same jobs instead of submitting them again.
    cfg = {"executor": "slurm", "mpi_launcher": SRUN, "job_name": name, "max_concurrent_jobs": 3}
    record = stage_run.run_stage(sweep, 2, cfg, script, stage)
    assert record["failure"] is None, record["failure"]
    # Packed: 3 points x 5 s estimated make 2 workers (array tasks), dealt in snake order.
    assert [p["job_id"] for p in record["points"]] == [job_ids[0], job_ids[1], job_ids[1]]
    assert all(p["value"] == v for p, v in zip(record["points"], [1, 2, 3], strict=True))
    for i in range(3):
        assert json.loads((stage / f"run/points/p{i:03d}/.point.json").read_text())["reattached"]
    # One array of two tasks ever existed under this name: no point ran twice.
    tasks = jobs_named(name)
    assert len(tasks) == 2 == len(job_ids), tasks
    assert {
        settled(t["JobId"] if "_" in t["JobId"] else f"{t['ArrayJobId']}_{t['ArrayTaskId']}")
        for t in tasks
    } == {"COMPLETED"}
    rows = (stage / "run" / "out.csv").read_text().split()
    assert rows == ["n", "1", "2", "3"]
    assert not submission.exists()


def settled(job_id: str) -> str:
    """The job's state once Slurm is done with it (the worker's result comes first)."""
    for _ in range(100):
        state = scontrol_job(job_id)[0]["JobState"]
        if state not in ("RUNNING", "COMPLETING"):
            return state
        time.sleep(0.2)
    return state


def _children(pid: int) -> list[int]:
    for _ in range(100):
        out = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout
        if out.split():
            return [int(p) for p in out.split()]
        time.sleep(0.1)
    return []


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is gone for our purposes (its parent died; init reaps it).
    stat = Path(f"/proc/{pid}/stat")
    return stat.is_file() and stat.read_text().rsplit(")", 1)[1].split()[0] != "Z"
