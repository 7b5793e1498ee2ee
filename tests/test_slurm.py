"""The example paper on a real one-node Slurm cluster, through `--profile slurm`.

The session fixture installs and starts Slurm with the project's own script
(scripts/slurm_up.sh: slurm-wlm, munge, PMIx) and stops the daemons it started
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
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import yaml

from agents.simulation_designer import SimulationDesign
from reprolab.jobs import stage_run
from reprolab.jobs.launch import SimulationJob
from reprolab.jobs.submit import ClusterSettings, Resources, submit_all
from reprolab.physics import checks
from tests.conftest import EXAMPLE, REPO

pytestmark = pytest.mark.slurm
SNAKEMAKE = str(Path(sys.executable).with_name("snakemake"))
PAPER = "silica_bragg_2026"
STAGES = (
    "stage0_material_validation",
    "stage1_single_slab",
    "stage2_bragg_mirror",
    "stage3_pairs_sweep",
)


@pytest.fixture(scope="session")
def slurm_cluster():
    # Shared state dir: parallel sessions on one machine share one cluster, and
    # the daemons stop when the last of them is done.
    state, user = "/run/reprolab-slurm", str(os.getpid())
    up = subprocess.run(
        ["bash", str(REPO / "scripts/slurm_up.sh"), state, user],
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert up.returncode == 0, f"Slurm did not come up:\n{up.stdout}\n{up.stderr}"
    yield state
    subprocess.run(["bash", str(REPO / "scripts/slurm_down.sh"), state, user], timeout=120)


def scontrol_job(job_id: str) -> dict:
    out = subprocess.run(
        ["scontrol", "show", "job", "-o", job_id], capture_output=True, text=True, check=True
    ).stdout
    records = []
    for line in out.splitlines():
        fields = dict(t.split("=", 1) for t in line.split() if "=" in t)
        records.append(fields)
    return records


@pytest.fixture(scope="module")
def slurm_run(slurm_cluster, tmp_path_factory):
    wd = tmp_path_factory.mktemp("slurm-run")
    config = {
        "outputs_dir": "outputs",
        "papers": [{"paper_dir": str(EXAMPLE)}],
        "provider": {"kind": "replay"},
        # The profile switches executor and launcher; the rest must survive.
        "simulation": {"executor": "local", "max_mpi_ranks": 2, "max_concurrent_jobs": 2},
        "gates": {"auto_approve": ["material_checkpoint"]},
    }
    (wd / "config.yaml").write_text(yaml.safe_dump(config))
    started = time.time()
    proc = subprocess.run(
        [
            SNAKEMAKE,
            "--profile",
            str(REPO / "slurm"),
            "--snakefile",
            str(REPO / "Snakefile"),
            "--directory",
            str(wd),
            "--configfile",
            str(wd / "config.yaml"),
            # An extra --config once replaced the profile's Slurm settings.
            "--config",
            "outputs_dir=outputs",
        ],
        capture_output=True,
        text=True,
        timeout=1500,
    )
    return wd, proc, time.time() - started


def results(wd: Path) -> dict[str, dict]:
    base = wd / "outputs" / PAPER / "stages"
    return {s: json.loads((base / s / "result.json").read_text()) for s in STAGES}


def test_example_paper_reproduced_through_the_profile(slurm_run):
    wd, proc, _ = slurm_run
    assert proc.returncode == 0, (proc.stdout[-3000:], proc.stderr[-5000:])
    o = wd / "outputs" / PAPER
    assert (o / f"REPRODUCTION_REPORT_{PAPER}.md").is_file()
    for stage in STAGES:
        comparison = json.loads((o / "stages" / stage / "comparison.json").read_text())
        for fig in comparison["figures"]:
            assert fig["classification"] == "SUCCESS", (stage, fig["figure_id"])


def test_every_simulation_ran_as_a_slurm_job_with_its_ranks(slurm_run):
    wd, proc, _ = slurm_run
    assert proc.returncode == 0, proc.stderr[-3000:]
    for stage, record in results(wd).items():
        assert record["executor"] == "slurm", stage
        assert record["failure"] is None, (stage, record["failure"])
        jobs = record.get("points") or [record]
        for job in jobs:
            env = job["slurm_env"]
            assert env["SLURM_JOB_ID"], stage
            assert job["mpi"]["size"] == record["mpi_ranks"], stage
            ranks = job["mpi"]["ranks"]
            # The ranks gathered each other's identity over MPI inside one srun step.
            assert sorted(r["rank"] for r in ranks) == list(range(record["mpi_ranks"]))
            if record["mpi_ranks"] > 1:
                assert sorted(r["slurm_procid"] for r in ranks) == ["0", "1"]
                # Each srun rank is its own sandbox (both may be pid 2 in their namespace).
                assert len({(r["pid_ns"], r["pid"]) for r in ranks}) == 2
                assert record["command"][:2] == ["srun", "--mpi=pmix"]
            info = scontrol_job(job["job_id"])[0]
            assert info["JobName"] == f"reprolab-{PAPER}-{stage}"  # paper and stage
            assert info["NumTasks"] == str(record["mpi_ranks"]), info
            assert info["JobState"] == "COMPLETED", info
    # Stage 2's design asks for 2 ranks; they ran and saw each other.
    assert results(wd)["stage2_bragg_mirror"]["mpi_ranks"] == 2


def test_sweep_ran_as_one_throttled_job_array(slurm_run):
    wd, proc, _ = slurm_run
    assert proc.returncode == 0, proc.stderr[-3000:]
    sweep = results(wd)["stage3_pairs_sweep"]
    array_id = sweep["array_job_id"]
    assert array_id and [p["value"] for p in sweep["points"]] == list(range(1, 9))
    for i, point in enumerate(sweep["points"]):
        assert point["slurm_env"]["SLURM_ARRAY_JOB_ID"] == array_id
        assert point["slurm_env"]["SLURM_ARRAY_TASK_ID"] == str(i)
        assert point["job_id"] == f"{array_id}_{i}"
    tasks = scontrol_job(array_id)
    assert len(tasks) == 8
    assert {t.get("ArrayTaskThrottle") for t in tasks} == {"2"}  # max_concurrent_jobs
    # Each point gets its share of the 10 min budget: 8 points in 4 waves of 2.
    assert sweep["timeout_s"] == 150 and {t["TimeLimit"] for t in tasks} == {"00:04:00"}
    gathered = wd / "outputs" / PAPER / "stages/stage3_pairs_sweep/run/pairs_sweep.csv"
    assert len(gathered.read_text().splitlines()) == 9


def test_agent_rules_ran_locally(slurm_run):
    wd, proc, _ = slurm_run
    log = proc.stdout + proc.stderr
    assert "localrule design:" in log and "localrule generate_code:" in log
    # Snakemake submitted no job itself: Slurm only ever saw the simulations.
    assert "SLURM jobid" not in log
    recorded = set()
    for record in results(wd).values():
        for job in record.get("points") or [record]:
            recorded.add(job["slurm_env"]["SLURM_JOB_ID"])
    first = min(int(j) for j in recorded)
    listing = subprocess.run(
        ["scontrol", "show", "jobs", "-o"], capture_output=True, text=True, check=True
    ).stdout
    since = [
        dict(t.split("=", 1) for t in line.split() if "=" in t)
        for line in listing.splitlines()
        if line.startswith("JobId=")
    ]
    since = [j for j in since if int(j["JobId"]) >= first]
    assert since and {j["JobName"] for j in since} == {f"reprolab-{PAPER}-{s}" for s in STAGES}
    assert {j["JobId"] for j in since} == recorded


def test_started_daemons_do_not_hold_the_script_lock(slurm_cluster):
    # A daemon that inherited slurm_up's lock fd kept every later slurm_up waiting.
    lock = Path(slurm_cluster) / "lock"
    free = subprocess.run(["flock", "-n", str(lock), "true"], timeout=10)
    assert free.returncode == 0, f"{lock} is held by a process that outlived slurm_up.sh"


# ---------------------------------------------------------------------------
# Jobs Slurm stops, cancels or refuses: each ends as a classified failure.

SRUN = "srun --mpi=pmix -n {ranks}"
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
        {
            "stage_id": "stage1_cancelled",
            "summary": "a run someone cancels",
            "dimensions": 1,
            "unit_length_um": 1.0,
            "resolution": 10,
            "pml_thickness": 1.0,
            "source_fcen": 1.0,
            "source_fwidth": 0.5,
            "geometry": "none",
            "output_specifications": [{"file": "out.csv", "columns": ["x"], "description": "x"}],
            "performance_estimate": {"runtime_seconds": 5, "memory_mb": 100, "mpi_ranks": 1},
        }
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
    # leaves it pending with Reason PartitionTimeLimit. No queue-wait limit here,
    # so only that reason can end the wait.
    settings = ClusterSettings(executor="slurm", partition="short", queue_wait_min=0)
    record = submit_bounded(
        sleeper(tmp_path, "p"), settings, Resources(1, 512, 5), tmp_path / "submitit"
    )
    failure = record["failure"]
    assert failure["kind"] == "unschedulable" and failure["action"] == "ask_user", failure
    assert "PartitionTimeLimit" in failure["summary"], failure
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
