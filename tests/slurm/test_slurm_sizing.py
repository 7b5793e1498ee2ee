"""Jobs sized from the design on the real one-node Slurm cluster: the request derived
from the script (ranks, memory, time limit) is what Slurm holds for the job, and a
request over the partition's limits (read from sinfo) is never submitted."""

import os

import pytest

from agents.simulation_designer import SimulationDesign
from reprolab.jobs import job_size, stage_run
from tests.support.builders import minimal_design
from tests.support.slurm import SRUN, scontrol_job

pytestmark = pytest.mark.slurm

# 2D, 9 x 9 at resolution 100: 810 000 grid cells (4 ranks' worth, capped at 2), a few
# steps: a second of Meep per rank.
BIG_2D = """
import meep as mp
sim = mp.Simulation(cell_size=mp.Vector3(9, 9), resolution=100,
                    sources=[mp.Source(mp.GaussianSource(1.0, fwidth=0.5), mp.Ez, mp.Vector3())])
sim.run(until=0.2)
open("out.csv", "w").write("x\\n1\\n")
"""


def design(stage_id: str) -> SimulationDesign:
    return SimulationDesign.model_validate(minimal_design(stage_id, dimensions=2, resolution=100))


def test_the_sized_request_reaches_sbatch(slurm_cluster, tmp_path):
    script = tmp_path / "simulation.py"
    script.write_text(BIG_2D)
    cfg = {"executor": "slurm", "mpi_launcher": SRUN, "max_mpi_ranks": 2, "min_memory_mb": 64}
    cfg["job_name"] = f"sizing-{os.getpid()}"
    record = stage_run.run_stage(design("stage1_sized"), 60, cfg, script, tmp_path / "stage")
    assert record["failure"] is None, record["failure"]
    size = record["job_size"]
    assert size["source"] == "design" and size["ranks"] == 2
    asked = size["request"]
    assert asked["ranks"] == 2 and asked["time_min"] < 60  # not the plan's hour
    job = scontrol_job(record["job_id"])[0]
    assert job["NumTasks"] == "2"
    assert job["TimeLimit"] == f"00:{asked['time_min']:02d}:00"
    mem = f"{asked['mem_mb']}M"
    assert job.get("MinMemoryNode") == mem or f"mem={mem}" in job.get("TRES", ""), job
    # What the run used, beside the estimate.
    assert [u["rank"] for u in record["rank_usage"]] == [0, 1]  # reported by both ranks
    # The ranks gathered each other's identity over MPI inside one srun step, each rank
    # its own sandbox (both may be pid 2 in their namespace).
    ranks = record["mpi"]["ranks"]
    assert sorted(r["slurm_procid"] for r in ranks) == ["0", "1"]
    assert len({(r["pid_ns"], r["pid"]) for r in ranks}) == 2
    assert record["command"][:2] == ["srun", "--mpi=pmix"]
    assert size["actual"]["core_seconds"] > 0.5 and size["actual"]["memory_mb"] > 150


def test_a_request_over_the_partition_is_never_submitted(slurm_cluster, tmp_path):
    script = tmp_path / "simulation.py"
    script.write_text(BIG_2D)
    name = f"sizing-refused-{os.getpid()}"
    cfg = {"executor": "slurm", "mpi_launcher": SRUN, "slurm": {"partition": "short"}}
    cfg["job_name"] = name
    with pytest.raises(job_size.JobTooLarge) as err:
        stage_run.run_stage(design("stage1_refused"), 60, cfg, script, tmp_path / "stage")
    assert "the partition allows 1 (max_time_min)" in str(err.value), str(err.value)
    assert "limits from sinfo" in str(err.value) or "config and sinfo" in str(err.value)
    assert not (tmp_path / "stage").exists()
    assert [j for j in scontrol_job() if j.get("JobName") == name] == []
