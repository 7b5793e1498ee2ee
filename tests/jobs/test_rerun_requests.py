"""What a rerun asks for: "twice the memory" doubles what the failed run asked (floor
included), and a stage's new round (after an invalidation) starts with no attempts: an
earlier round's kept run or Slurm job is never counted in it."""

import sys

from agents.simulation_designer import SimulationDesign
from reprolab.gates import consent
from reprolab.jobs import job_size, stage_run, submit
from reprolab.jobs.launch import SimulationJob
from reprolab.steps import run as run_step
from tests.support.builders import minimal_design

SMALL = {"runtime_seconds": 5, "memory_mb": 140, "mpi_ranks": 1}


def design() -> SimulationDesign:
    return SimulationDesign.model_validate(minimal_design(performance_estimate=SMALL))


def test_twice_the_memory_doubles_what_was_asked_not_the_estimate():
    """A 140 MB estimate is asked as the 512 MB floor; the approved rerun asks 1024 MB,
    then 2048 (it asked 512 three times: each killed at the same size)."""
    cfg = {"min_memory_mb": 512, "max_memory_mb": 8192}
    asked = [
        stage_run.resources_for(design(), 5, {**cfg, "rerun_memory_factor": f})[0].mem_mb
        for f in (1, 2, 4)
    ]
    assert asked == [512, 1024, 2048]
    capped, _, notes = stage_run.resources_for(
        design(), 5, {**cfg, "max_memory_mb": 1500, "rerun_memory_factor": 4}
    )
    assert capped.mem_mb == 1500 and any("max_memory_mb=1500" in n for n in notes)


def test_a_sized_job_doubles_its_request_too():
    request = {"mem_mb": 210, "time_min": 1, "ranks": 1}
    sized = job_size.JobSize("design", 140.0, 2.0, 1, request)
    cfg = {"min_memory_mb": 512, "max_memory_mb": 8192}
    first = stage_run.sized_resources(sized, design(), 5, cfg)[0]
    again, _, notes = stage_run.sized_resources(
        sized, design(), 5, {**cfg, "rerun_memory_factor": 2}
    )
    assert (first.mem_mb, again.mem_mb) == (512, 1024)
    assert sum("rerun granted" in n for n in notes) == 1


def test_a_new_round_reuses_no_kept_run_of_the_last(tmp_path):
    stage = tmp_path / "stages" / "stage1_x"
    stage.mkdir(parents=True)
    assert run_step.failed_run_dir(stage, 1) == stage / "failed_runs" / "f1"
    consent.invalidate_stage(tmp_path, "stage1_x", "finer grid", source="user")
    assert run_step.failed_run_dir(stage, 1) == stage / "failed_runs" / "r1" / "f1"
    consent.invalidate_stage(tmp_path, "stage1_x", "again", source="user")
    assert run_step.failed_run_dir(stage, 2) == stage / "failed_runs" / "r2" / "f2"


def test_a_new_round_waits_on_no_job_of_the_last(tmp_path, monkeypatch):
    """A submission an earlier round's waiter left is cancelled and forgotten, not
    waited on as this round's first attempt; the same round's is reattached."""
    cancelled = []
    monkeypatch.setattr(submit, "_cancel", lambda job_id: cancelled.append(job_id) or "")
    script = tmp_path / "simulation.py"
    script.write_text("print('x')\n")
    sim = SimulationJob(script=str(script), workdir=str(tmp_path), python=sys.executable)

    class Job:
        job_id = "41"

    res = submit.Resources(ranks=1, mem_mb=512, time_min=2)
    sha = submit.sha256_file(script)
    submit.record_submission(tmp_path, [sim], [Job()], res, round=0)
    sims, jobs, _, _ = submit.reattach(tmp_path, sha, round=0)
    assert len(sims) == 1 and [j.job_id for j in jobs] == ["41"] and not cancelled
    assert submit.reattach(tmp_path, sha, round=1) == ([], [], None, None)
    assert cancelled == ["41"] and not (tmp_path / submit.SUBMISSION).exists()
    assert submit.ClusterSettings.from_config({"stage_round": 3}).round == 3
