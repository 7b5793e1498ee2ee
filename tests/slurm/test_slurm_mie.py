"""The 3D Mie sphere (mie_sphere_2026) through `snakemake --profile slurm` on the real
one-node cluster: its stage and the coarser runs of its convergence evidence (one packed
job) are Slurm jobs whose ranks, memory and time limit were derived from the design and
script before submission (not the designer's guess), the estimate is kept beside what
the ranks used, and the reproduction is SUCCESS as it is offline."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.support.pipeline import REPO, SNAKEMAKE
from tests.support.slurm import scontrol_job

pytestmark = [pytest.mark.slurm, pytest.mark.usefixtures("slurm_cluster")]
PAPER = "mie_sphere_2026"
STAGE = "stage1_mie_efficiency"


@pytest.fixture(scope="module")
def mie_on_slurm(tmp_path_factory) -> Path:
    wd = tmp_path_factory.mktemp("mie_slurm")
    config = {
        "outputs_dir": "outputs",
        "papers": [{"paper_dir": str(REPO / "examples" / "papers" / PAPER)}],
        "provider": {"kind": "replay"},
        "simulation": {"executor": "local", "max_mpi_ranks": 2},
        "gates": {"auto_approve": ["material_checkpoint"]},
        "checks": {"convergence": True},  # auto: the coarse reruns in 3D
    }
    (wd / "config.yaml").write_text(yaml.safe_dump(config))
    cmd = [SNAKEMAKE, "--profile", str(REPO / "slurm"), "--snakefile", str(REPO / "Snakefile")]
    cmd += ["--directory", str(wd), "--configfile", str(wd / "config.yaml")]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=1500)
    assert run.returncode == 0, run.stderr[-3000:]
    return wd


def stage_dir(wd: Path) -> Path:
    return wd / "outputs" / PAPER / "stages" / STAGE


def test_the_sphere_reproduces_on_slurm(mie_on_slurm):
    stage = stage_dir(mie_on_slurm)
    verdict = json.loads((stage / "verdict.json").read_text())
    assert verdict["status"] == "completed_success", verdict
    (fig,) = json.loads((stage / "comparison.json").read_text())["figures"]
    assert fig["classification"] == "SUCCESS"


COARSE = ["convergence_0.75x", "convergence_0.55x"]


def assert_request_held(job: dict, asked: dict) -> None:
    hours, minutes = divmod(asked["time_min"], 60)
    assert job["TimeLimit"] == f"{hours:02d}:{minutes:02d}:00", (job["TimeLimit"], asked)
    mem = f"{asked['mem_mb']}M"
    assert job.get("MinMemoryNode") == mem or f"mem={mem}" in job.get("TRES", ""), job


def test_the_coarser_runs_shared_one_job_sized_for_them_all(mie_on_slurm):
    """One packed worker runs both coarser runs (one interpreter, one import of Meep):
    one Slurm job named after it, holding the largest run's memory and the runs' time
    limits one after another, each run still sized from the script at its own scale."""
    records = [
        json.loads((stage_dir(mie_on_slurm) / r / "result.json").read_text()) for r in COARSE
    ]
    (job_id,) = {r["job_id"] for r in records}
    (job,) = scontrol_job(str(job_id))
    assert job["JobName"].startswith(f"reprolab-{PAPER}-{STAGE}-convergence_coarse-")
    held = records[0]["resources"]
    assert all(r["resources"] == held for r in records)
    assert job["NumTasks"] == str(held["ranks"]) == str(records[0]["mpi_ranks"])
    assert_request_held(job, held)
    asked = [r["job_size"]["request"] for r in records]
    assert held["mem_mb"] == max(a["mem_mb"] for a in asked)
    assert held["time_min"] >= sum(a["timeout_s"] for a in asked) / 60
    assert asked[0]["mem_mb"] > asked[1]["mem_mb"]  # the finer run is sized larger


@pytest.mark.parametrize("run", ["", *COARSE])
def test_each_job_got_the_request_derived_from_its_design(mie_on_slurm, run):
    record = json.loads((stage_dir(mie_on_slurm) / run / "result.json").read_text())
    assert record["executor"] == "slurm" and record["failure"] is None, record["failure"]
    size = record["job_size"]
    assert size["source"] == "design", size["notes"]  # the script's cell and resolution
    asked = size["request"]
    assert asked["ranks"] == record["mpi_ranks"]
    if not run:  # the stage's own job (the coarser runs': above)
        (job,) = scontrol_job(str(record["job_id"]))
        assert job["JobName"].startswith(f"reprolab-{PAPER}-{STAGE}-")
        assert job["NumTasks"] == str(asked["ranks"])
        assert_request_held(job, asked)
    # what the ranks used is kept beside the estimate, both known
    actual = size["actual"]
    assert actual["core_seconds"] > 0 and actual["memory_mb"] > 100, actual
    assert size["core_seconds"] > 0 and size["memory_mb"] > 0
    ratios = size["core_seconds_ratio"], size["memory_mb_ratio"]
    print(f"{run or 'run'}: estimate/actual core-s {ratios[0]:.2f}, memory {ratios[1]:.2f}")
