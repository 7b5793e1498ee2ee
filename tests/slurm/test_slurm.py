"""The real one-node Slurm cluster, and simulations submitted to it directly.

The example paper through `snakemake --profile slurm` (a whole run, attacked on
the way) is tests/slurm/test_slurm_faults.py. The session fixture installs and starts
Slurm with the project's own script (scripts/slurm_up.sh: slurm-wlm, munge, PMIx)
and stops the daemons it started
by pid at the end (scripts/slurm_down.sh). If Slurm cannot be brought up these
tests fail with the script's output; they never skip.

Everything is asserted from recorded job data: the result records written by
the simulate rule (Slurm's own environment inside the job, the MPI ranks that
gathered over MPI) and `scontrol show job`.

The last tests make Slurm itself stop, cancel or refuse jobs (time limit,
scancel from outside, a job that would pend for an hour, requests the cluster
can never satisfy) and check each ends as a classified failure, not a hang.
"""

import contextlib
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from agents.simulation_designer import SimulationDesign
from reprolab.jobs import stage_run
from reprolab.jobs.launch import SimulationJob
from reprolab.jobs.submit import ClusterSettings, Resources, submit_all
from reprolab.physics import checks
from tests.support.builders import minimal_design
from tests.support.slurm import SRUN, scontrol_job

pytestmark = pytest.mark.slurm
SNAKEMAKE = str(Path(sys.executable).with_name("snakemake"))
PAPER = "silica_bragg_2026"


def test_started_daemons_do_not_hold_the_script_lock(slurm_cluster):
    # A daemon that inherited slurm_up's lock fd kept every later slurm_up waiting.
    lock = Path(slurm_cluster) / "lock"
    free = subprocess.run(["flock", "-n", str(lock), "true"], timeout=10)
    assert free.returncode == 0, f"{lock} is held by a process that outlived slurm_up.sh"


# ---------------------------------------------------------------------------
# Jobs Slurm stops, cancels or refuses: each ends as a classified failure.

SLEEPER = "import time\nprint('running', flush=True)\ntime.sleep(600)\n"


def sleeper(tmp_path: Path, name: str, code: str = SLEEPER) -> SimulationJob:
    wd = tmp_path / name
    wd.mkdir()
    (wd / "simulation.py").write_text(code)
    return SimulationJob(
        script=str(wd / "simulation.py"), workdir=str(wd), timeout_s=600, mpi_launcher=SRUN
    )


def submit_bounded(sim, settings, resources, folder, bound_s=300) -> dict:
    """submit_all, failing (instead of hanging the test session) if it never returns."""
    box: list = []
    worker = threading.Thread(
        target=lambda: box.append(submit_all([sim], settings, resources, folder)[0]), daemon=True
    )
    worker.start()
    worker.join(bound_s)
    if not box:
        pytest.fail(f"submit_all did not return within {bound_s} s: the job hung the pipeline")
    return box[0]


def test_job_over_its_time_limit_is_killed_by_slurm_and_classified_timeout(slurm_cluster, tmp_path):
    # --time=1 (Slurm's least; the one test here that waits over a minute) and a
    # script that sleeps 10 min under a 10 min run timeout: only Slurm stops it.
    record = submit_bounded(
        sleeper(tmp_path, "t"),
        ClusterSettings(executor="slurm"),
        Resources(1, 512, 1),
        tmp_path / "submitit",
    )
    failure = record["failure"]
    assert failure["kind"] == "timeout" and failure["action"] == "ask_user", failure
    assert "Slurm stopped it at the job's time limit (00:01:00)" in failure["summary"]
    assert record["slurm_state"]["JobState"] == "TIMEOUT"
    assert "running" in record["stdout_tail"]  # the log tail is kept
    assert scontrol_job(record["job_id"])[0]["JobState"] == "TIMEOUT"


def test_job_cancelled_from_outside_is_a_classified_failed_run(slurm_cluster, tmp_path):
    design = SimulationDesign.model_validate(
        minimal_design("stage1_cancelled", summary="a run someone cancels")
    )
    script = tmp_path / "simulation.py"
    script.write_text(
        "import os, time\n"
        "open('jobid.txt', 'w').write(os.environ['SLURM_JOB_ID'])\n"
        "time.sleep(600)\n"
    )
    stage = tmp_path / "stage"
    jobid = stage / "run" / "jobid.txt"

    def cancel_when_running():
        for _ in range(1200):
            if jobid.is_file() and jobid.read_text():
                subprocess.run(["scancel", jobid.read_text()], check=True)
                return
            time.sleep(0.25)

    threading.Thread(target=cancel_when_running, daemon=True).start()
    cfg = {"executor": "slurm", "mpi_launcher": SRUN}
    record = stage_run.run_stage(design, 5, cfg, script, stage)
    failure = record["failure"]
    assert failure["kind"] == "cancelled" and failure["action"] == "resubmit", failure
    assert record["slurm_state"]["JobState"] == "CANCELLED"
    assert scontrol_job(record["job_id"])[0]["JobState"] == "CANCELLED"
    # The checks fail it like any other failed run.
    result = checks.run_checks(record, stage / "run", ["out.csv"], True)
    failed = {c["name"] for c in result["checks"] if c["status"] == "fail"}
    assert result["verdict"] == "fail" and "exit_code" in failed, result["checks"]


def test_job_pending_past_the_queue_wait_limit_is_cancelled(slurm_cluster, tmp_path):
    # --begin=now+1hour: pending (Reason BeginTime), a reason that clears on its own.
    sim = sleeper(tmp_path, "q")
    settings = ClusterSettings(
        executor="slurm", queue_wait_min=0.1, extra_sbatch={"begin": "now+1hour"}
    )
    record = submit_bounded(sim, settings, Resources(1, 512, 2), tmp_path / "submitit")
    failure = record["failure"]
    assert failure["kind"] == "queue_timeout" and failure["action"] == "ask_user", failure
    assert "reason BeginTime" in failure["summary"] and "limit 0.1 min" in failure["summary"]
    assert scontrol_job(record["job_id"])[0]["JobState"] == "CANCELLED"
    assert not (Path(sim.workdir) / "stdout.txt").exists()  # it never ran


def test_requests_slurm_can_never_satisfy_fail_fast_with_the_reason(slurm_cluster, tmp_path):
    # Over the 'short' partition's MaxTime (1 min): Slurm accepts the job and
    # leaves it pending with Reason PartitionTimeLimit (or PartitionConfig: which of
    # the two Slurm names first varies, e.g. with other jobs in the queue). No
    # queue-wait limit here, so only that reason can end the wait.
    settings = ClusterSettings(executor="slurm", partition="short", queue_wait_min=0)
    record = submit_bounded(
        sleeper(tmp_path, "p"), settings, Resources(1, 512, 5), tmp_path / "submitit"
    )
    failure = record["failure"]
    assert failure["kind"] == "unschedulable" and failure["action"] == "ask_user", failure
    assert re.search(r"reason Partition(TimeLimit|Config)\b", failure["summary"]), failure
    assert scontrol_job(record["job_id"])[0]["JobState"] == "CANCELLED"
    # More memory than the node has: sbatch refuses it, in its own words.
    node_mb = int(
        subprocess.run(["sinfo", "-h", "-o", "%m"], capture_output=True, text=True, check=True)
        .stdout.split()[0]
        .rstrip("+")
    )
    record = submit_bounded(
        sleeper(tmp_path, "m"),
        ClusterSettings(executor="slurm"),
        Resources(1, node_mb * 4, 2),
        tmp_path / "submitit-mem",
    )
    failure = record["failure"]
    assert failure["kind"] == "submission_refused" and failure["action"] == "ask_user", failure
    assert "memory" in failure["summary"].lower() and record["job_id"] is None, failure


def test_tasks_slurm_cannot_start_are_a_launch_failure_not_a_success(slurm_cluster, tmp_path):
    # srun exits 0 when no task could start (here: PMIx step directories left in /tmp
    # for the job ids Slurm hands out next). Read as success, "no outputs" would send
    # correct code back to be regenerated; it is a launch failure, to resubmit.
    planted = [Path(f"/tmp/spmix_appdir_0_{i}.0") for i in range(1, 2000)]
    made = [p for p in planted if not p.exists()]
    try:
        for p in made:
            p.mkdir()
        sim = sleeper(tmp_path, "launch", code="print('never runs')\n")
        sim = SimulationJob(**{**sim.__dict__, "mpi_ranks": 2})
        record = submit_bounded(
            sim, ClusterSettings(executor="slurm"), Resources(2, 512, 2), tmp_path / "submitit"
        )
    finally:
        for p in made:
            with contextlib.suppress(OSError):
                p.rmdir()
    failure = record["failure"]
    assert failure and failure["kind"] == "launch_failed", record.get("stderr_tail")
    assert failure["action"] == "resubmit"
    assert "launch" in failure["summary"]  # srun's own words
    assert "never runs" not in record["stdout_tail"]


def test_ranks_get_no_signal_that_kills_them_before_the_time_limit(tmp_path):
    # submitit asks for USR2 90 s before the limit; Slurm sends it to the srun ranks,
    # which it kills (seen: "srun: error: vm: tasks 0-1: User defined signal 2", exit
    # 140, taken for the code's fault). The job asks for URG, ignored by default.
    from reprolab.jobs.submit import executor_for

    ex = executor_for(ClusterSettings(executor="slurm"), Resources(2, 512, 3), tmp_path, 1)
    text = ex._executor._make_submission_file_text("true", "0")
    assert "#SBATCH --signal=URG@90" in text and "USR2" not in text, text
