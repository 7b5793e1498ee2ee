"""The example paper on a real one-node Slurm cluster, through `--profile slurm`.

The session fixture installs and starts Slurm with the project's own script
(scripts/slurm_up.sh: slurm-wlm, munge, PMIx) and stops the daemons it started
by pid at the end (scripts/slurm_down.sh). If Slurm cannot be brought up these
tests fail with the script's output; they never skip.

Everything is asserted from recorded job data: the result records written by
the simulate rule (Slurm's own environment inside the job, the MPI ranks that
gathered over MPI) and `scontrol show job`.
"""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

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
                assert len({r["pid"] for r in ranks}) == 2
                assert record["command"][:2] == ["srun", "--mpi=pmix"]
            info = scontrol_job(job["job_id"])[0]
            assert info["JobName"] == "reprolab-sim"
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
    assert since and {j["JobName"] for j in since} == {"reprolab-sim"}
    assert {j["JobId"] for j in since} == recorded


def test_started_daemons_do_not_hold_the_script_lock(slurm_cluster):
    # A daemon that inherited slurm_up's lock fd kept every later slurm_up waiting.
    lock = Path(slurm_cluster) / "lock"
    free = subprocess.run(["flock", "-n", str(lock), "true"], timeout=10)
    assert free.returncode == 0, f"{lock} is held by a process that outlived slurm_up.sh"
