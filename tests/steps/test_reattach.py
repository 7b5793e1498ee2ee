"""A resumed simulate step never touches a run folder a job owns.

On resume (after a gate, or after the driver died), the step first reads the runs
it kept of the same script. A job resubmitted after such a run may be writing to
run/ (or may have finished there while no driver waited on it): reading the kept
run must leave run/ as it is, byte for byte. The console and the event log say each
resubmission once, and Slurm job names tell runs in different outputs folders apart.
"""

import hashlib
import json
from pathlib import Path
from types import SimpleNamespace

from agents.simulation_designer import SimulationDesign
from reprolab.artifacts import RunResult, write_result
from reprolab.fileio import sha256_file
from reprolab.jobs import stage_run, submit
from reprolab.settings import paper_run
from reprolab.steps import run as run_step
from reprolab.steps import run_failures
from tests.support.builders import minimal_design
from tests.support.pipeline import EXAMPLE, PAPER

STAGE = "stage1_slab"


def settings(tmp_path: Path):
    config = {
        "outputs_dir": str(tmp_path / "outputs"),
        "papers": [{"paper_dir": str(EXAMPLE)}],
        "provider": {"kind": "replay"},
        "simulation": {"executor": "local"},
    }
    return paper_run(config, PAPER)


def sums(folder: Path) -> dict[str, str]:
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def kept_cancelled_run(stage_dir: Path, script: Path) -> Path:
    """failed_runs/f1: a run of `script` cancelled from outside, kept by an earlier pass."""
    kept = stage_dir / "failed_runs" / "f1"
    kept.mkdir(parents=True)
    (kept / "simulation.py").write_bytes(script.read_bytes())
    (kept / "stderr.txt").write_text("slurmstepd: CANCELLED AT 12:00\n")
    record = {
        "command": ["python", "simulation.py"],
        "exit_code": None,
        "timed_out": False,
        "runtime_seconds": None,
        "stdout_tail": "",
        "stderr_tail": "CANCELLED",
        "output_files": [],
        "executor": "slurm",
        "job_id": "101",
        "script_sha256": sha256_file(script),
        "failure": {"kind": "cancelled", "summary": "Slurm state CANCELLED", "action": "resubmit"},
    }
    write_result(kept / "result.json", RunResult.model_validate(record))
    return kept


def live_job_folder(stage_dir: Path, script: Path) -> Path:
    """run/ as the resubmitted job 102 left it (finished while no driver waited), with
    its submission still to be collected."""
    run_dir = stage_dir / "run"
    (run_dir / "out").mkdir(parents=True)
    (run_dir / "simulation.py").write_bytes(script.read_bytes())
    (run_dir / "spectrum.csv").write_text("f,T\n1,0.5\n")
    (run_dir / "out" / "field.h5").write_bytes(b"\x89HDF-field")
    (run_dir / "stdout.txt").write_text("job 102 done\n")
    (stage_dir / "submitit").mkdir()
    (stage_dir / "submitit" / submit.SUBMISSION).write_text(json.dumps({"job_ids": ["102"]}))
    return run_dir


def test_reading_a_kept_run_on_resume_leaves_the_jobs_run_folder_untouched(tmp_path):
    run = settings(tmp_path)
    stage_dir = run.out_dir / "stages" / STAGE
    script = tmp_path / "simulation.py"
    script.write_text("print('slab')\n")
    kept = kept_cancelled_run(stage_dir, script)
    run_dir = live_job_folder(stage_dir, script)
    before = sums(run_dir)
    design = SimulationDesign.model_validate(minimal_design(STAGE))
    stage = SimpleNamespace(runtime_budget_minutes=1)
    record = run_step.run_once(
        run,
        design,
        stage,
        (tmp_path / "code.json", script),
        stage_dir,
        kept,
        run_failures.RerunState(),
    )
    # The kept run's record, read where it lies; the job's folder as the job left it.
    assert record["reused_from"] == str(kept) and record["job_id"] == "101"
    assert sums(run_dir) == before
    assert (kept / "stderr.txt").read_text().startswith("slurmstepd: CANCELLED")
    # Accepting a kept run does not put it over a folder a submitted job owns...
    run_step.restore_accepted_run(stage_dir, record)
    assert sums(run_dir) == before
    # ...nor over a run/ that holds files (the kept run's own, archived from it).
    (stage_dir / "submitit" / submit.SUBMISSION).unlink()
    run_step.restore_accepted_run(stage_dir, record)
    assert sums(run_dir) == before
    assert not stage_run.job_pending(stage_dir)


def test_an_accepted_kept_run_fills_an_empty_run_folder_for_the_steps_after(tmp_path):
    stage_dir = tmp_path / "stages" / STAGE
    script = tmp_path / "simulation.py"
    script.write_text("print('slab')\n")
    kept = kept_cancelled_run(stage_dir, script)
    run_step.restore_accepted_run(stage_dir, {"reused_from": str(kept)})
    restored = sums(stage_dir / "run")
    assert set(restored) == {"simulation.py", "stderr.txt"}  # its files, not its record
    assert (kept / "result.json").is_file()


def test_a_resubmission_is_said_once_not_again_on_resume(tmp_path, capfd):
    run = settings(tmp_path)
    failure = {"kind": "cancelled", "summary": "Slurm state CANCELLED", "action": "resubmit"}
    fresh = {"job_id": "101", "executor": "slurm", "failure": failure}
    assert run_failures.rerun_needed(run, STAGE, fresh, run_failures.RerunState()) == "resubmit"
    # The resumed pass reads the same run from where it was kept.
    resumed = {**fresh, "reused_from": "failed_runs/f1"}
    assert run_failures.rerun_needed(run, STAGE, resumed, run_failures.RerunState()) == "resubmit"
    lines = [line for line in capfd.readouterr().err.splitlines() if "resubmitted" in line]
    assert lines == [
        f"[reprolab] {STAGE}: Slurm job 101 cancelled (Slurm state CANCELLED); "
        "resubmitted automatically (1 of 2)"
    ]
    events = (run.out_dir / "events.jsonl").read_text().splitlines()
    assert sum("resubmitted automatically" in e for e in events) == 1


def test_job_names_tell_outputs_folders_apart(tmp_path):
    a = submit.job_name(PAPER, STAGE, tmp_path / "a" / "outputs" / PAPER)
    b = submit.job_name(PAPER, STAGE, tmp_path / "b" / "outputs" / PAPER)
    assert a != b and a.startswith(f"reprolab-{PAPER}-{STAGE}-") and len(a.split("-")[-1]) == 6
    # The same folder, however it is written, is the same name.
    same = tmp_path / "a" / "x" / ".." / "outputs" / PAPER
    assert submit.job_name(PAPER, STAGE, same) == a


def test_the_waiting_line_counts_ranks_not_array_tasks():
    settings_ = submit.ClusterSettings(executor="slurm", job_name="reprolab-p-s-abc123")
    one = [SimpleNamespace(job_id="17")]
    line = submit.waiting_line(one, settings_, submit.Resources(2, 1024, 3))
    assert line == "[reprolab] waiting on Slurm job 17 (2 rank(s), name reprolab-p-s-abc123)"
    array = [SimpleNamespace(job_id="18_0"), SimpleNamespace(job_id="18_1")]
    line = submit.waiting_line(array, settings_, submit.Resources(1, 1024, 3))
    assert "job 18 (array of 2 task(s), 1 rank(s) each," in line
