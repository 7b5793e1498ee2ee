"""The example paper through `snakemake --profile slurm`, attacked the way a
busy cluster and a dropped login session would, end to end on the real
one-node Slurm. The same run shows how a run goes there: every simulation a
Slurm job with its ranks (gathered over MPI inside one srun step), the sweep one
throttled job array of packed workers, every agent step local. Attacks, in three
runs of the same command (the driver SIGKILLed twice):

- a running simulation job is cancelled from outside (an admin's `scancel`, a
  preemption): it must be resubmitted by itself, said once on the console; the
  driver is then killed while the resubmitted job waits in the queue (a job of
  another user holds the node): the rerun must wait on that job, never delete
  the folder it runs in, and submit nothing again;
- one task of the sweep's packed job array is cancelled mid-way: only its
  unfinished points are resubmitted, and the driver is killed while they run;
  the rerun must wait on them, run no point a third time, regenerate no code;
- a simulation over its time limit must open a gate, make snakemake exit
  non-zero with one line naming the stage, the job, the reason and the command
  to go on; approved, its rerun (twice the time) is interrupted by a killed
  driver, reattached to, times out again, and once accepted the report must say
  why the stage failed.

What must not change is checked against the session's uninterrupted run
(tests/conftest.py): the agent calls and their cost, the consent log, the
simulations' output files.
"""

import json
import signal
import subprocess
import time
from pathlib import Path

import pytest
import yaml

from reprolab.jobs import submit
from tests.support.builders import copy_paper
from tests.support.pipeline import EXAMPLE, REPO, REPROLAB, SNAKEMAKE
from tests.support.slurm import scontrol_job

pytestmark = [pytest.mark.slurm, pytest.mark.usefixtures("slurm_cluster")]
PAPER = "silica_bragg_2026"
CANCELLED_STAGE = "stage2_bragg_mirror"  # ~8 s: long enough to be caught running
SWEEP_STAGE = "stage3_pairs_sweep"
TIMED_OUT = "stage1_single_slab"
STAGES = ("stage0_material_validation", TIMED_OUT, CANCELLED_STAGE, SWEEP_STAGE)


def profile_cmd(wd: Path, *extra: str) -> list[str]:
    return [
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
        *extra,
    ]


def write_config(wd: Path, paper_dir: Path) -> None:
    config = {
        "outputs_dir": "outputs",
        "papers": [{"paper_dir": str(paper_dir)}],
        "provider": {"kind": "replay"},
        # The profile switches executor and launcher; the rest must survive.
        "simulation": {"executor": "local", "max_mpi_ranks": 2, "max_concurrent_jobs": 2},
        "gates": {"auto_approve": ["material_checkpoint"]},
    }
    (wd / "config.yaml").write_text(yaml.safe_dump(config))


def jobs_of(wd: Path) -> list[dict]:
    """Every Slurm job (array tasks included) whose log lies under this run's folder."""
    return [fields for fields in scontrol_job() if fields.get("StdOut", "").startswith(str(wd))]


def submitted_job(fields: dict) -> str:
    """The id submitit knows a job by: `<array>_<task>` for an array task (tasks not
    yet started show as one record, e.g. `6_2-7%2`)."""
    if fields.get("ArrayJobId") and fields.get("ArrayTaskId"):
        return f"{fields['ArrayJobId']}_{fields['ArrayTaskId']}"
    return fields["JobId"]


def name_of(wd: Path, stage: str) -> str:
    """The stage's Slurm job name in this run: paper, stage, the outputs folder's id."""
    return submit.job_name(PAPER, stage, wd / "outputs" / PAPER)


def stage_jobs(wd: Path, stage: str, seen: dict | None = None) -> list[dict]:
    found = jobs_of(wd)
    if seen is not None:
        remember(seen, found)
    return [j for j in found if j.get("JobName") == name_of(wd, stage)]


def remember(seen: dict, found: list[dict]) -> None:
    """Each job's latest `scontrol` record, by the id submitit knows it by: Slurm forgets
    a finished job MinJobAge (600 s) after it ended, and on a loaded machine the attacked
    run outlasts that, so its jobs are asserted from what Slurm said while it knew them."""
    for job in found:
        if job.get("ArrayTaskId", "0").isdigit():  # not yet split off: e.g. `2-7%2`
            seen[submitted_job(job)] = job


def watched(cmd, wd: Path, name: str, seen: dict, timeout: float, attack=None):
    """Run `cmd` (output captured in `name`.out/.err), noting the run's Slurm jobs every
    0.2 s; `attack(proc, jobs)` is called with them and returns True once it is done
    with the run (it killed the driver)."""
    out, err = open(wd / f"{name}.out", "w"), open(wd / f"{name}.err", "w")  # noqa: SIM115
    proc = subprocess.Popen(cmd, stdout=out, stderr=err)
    deadline = time.time() + timeout
    while proc.poll() is None and time.time() < deadline:
        found = jobs_of(wd)
        remember(seen, found)
        if attack is not None and attack(proc, found):
            break
        time.sleep(0.2)
    if proc.poll() is None:
        proc.kill()
    proc.wait()
    remember(seen, jobs_of(wd))
    out.close(), err.close()
    stdout, stderr = (wd / f"{name}.out").read_text(), (wd / f"{name}.err").read_text()
    return subprocess.CompletedProcess(cmd, proc.returncode, stdout, stderr)


def kill_driver(proc) -> None:
    """A dropped login session: the driver dies at once, its jobs live on."""
    proc.send_signal(signal.SIGKILL)
    proc.wait()


def hold_the_node() -> str:
    """Another user's job that takes the whole node once it is free: the next job
    this run submits waits in the queue behind it."""
    out = subprocess.run(
        ["sbatch", "--parsable", "--exclusive", "--mem=64M", "-t", "3", "-J", "holder"]
        + ["-o", "/dev/null", "--wrap", "sleep 170"],
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout.strip().split(";")[0]


class CancelThenKillQueued:
    """Cancel the stage's running job; once its resubmission is in the queue (behind a
    holder job), kill the driver."""

    def __init__(self, wd: Path):
        self.wd, self.cancelled, self.holder, self.resubmitted = wd, None, None, None
        self.state_at_kill = None

    def __call__(self, proc, found) -> bool:
        mine = [j for j in found if j.get("JobName") == name_of(self.wd, CANCELLED_STAGE)]
        if self.cancelled is None:
            running = [j for j in mine if j["JobState"] == "RUNNING"]
            if running:
                self.cancelled = running[0]["JobId"]
                self.holder = hold_the_node()  # queued first: it runs next
                subprocess.run(["scancel", self.cancelled], check=True)
            return False
        again = [j for j in mine if j["JobId"] != self.cancelled]
        if not again:
            return False
        self.resubmitted, self.state_at_kill = again[0]["JobId"], again[0]["JobState"]
        kill_driver(proc)
        subprocess.run(["scancel", self.holder], check=True)
        return True


class CancelSweepTaskThenKill:
    """Cancel one task of the sweep's packed array a few seconds into its points; once
    the points it left are resubmitted and running, kill the driver."""

    def __init__(self, wd: Path):
        self.wd, self.array, self.cancelled, self.resubmitted = wd, None, None, None
        self.running_since = None
        self.recorded = None

    def __call__(self, proc, found) -> bool:
        sweep = [j for j in found if j.get("JobName") == name_of(self.wd, SWEEP_STAGE)]
        tasks = [j for j in sweep if j.get("ArrayTaskId", "").isdigit()]
        if self.cancelled is None:
            running = sorted(
                (j for j in tasks if j["JobState"] == "RUNNING"), key=lambda j: j["ArrayTaskId"]
            )
            if running and self.running_since is None:
                self.running_since = time.time()
            if running and time.time() - self.running_since > 3:
                self.array = running[0]["ArrayJobId"]
                self.cancelled = submitted_job(running[0])
                subprocess.run(["scancel", self.cancelled], check=True)
            return False
        # The points left are resubmitted as an array, or as one job when one worker
        # holds them all (how many remain depends on how far the task got).
        later = [
            j
            for j in sweep
            if j.get("ArrayTaskId", "0").isdigit()
            and (j.get("ArrayJobId") or j["JobId"]) != self.array
            and j["JobState"] == "RUNNING"
        ]
        if not later:
            return False
        self.resubmitted = later[0].get("ArrayJobId") or later[0]["JobId"]
        kill_driver(proc)
        submission = stage_dir(self.wd, SWEEP_STAGE) / "submitit" / submit.SUBMISSION
        if submission.is_file():
            self.recorded = json.loads(submission.read_text())["job_ids"]
        return True


def stage_dir(wd: Path, stage: str) -> Path:
    return wd / "outputs" / PAPER / "stages" / stage


def reprolab_unlock(wd: Path) -> subprocess.CompletedProcess:
    """The killed driver's lock released as the docs say: this outputs folder's only."""
    cmd = [REPROLAB, "unlock", "--configfile", str(wd / "config.yaml"), "--directory", str(wd)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=REPO)
    assert "released the lock of the run on" in done.stdout, done.stdout + done.stderr
    return done


@pytest.fixture(scope="module")
def attacked(tmp_path_factory):
    """Three runs of the same command: the first killed while stage 2's resubmitted job
    is queued, the second while the sweep's resubmitted points run, the third to the end."""
    wd = tmp_path_factory.mktemp("slurm-attacked")
    write_config(wd, EXAMPLE)
    seen: dict = {}
    queued = CancelThenKillQueued(wd)
    first = watched(profile_cmd(wd), wd, "first", seen, 900, queued)
    assert queued.resubmitted, f"stage 2 was never resubmitted:\n{first.stderr[-3000:]}"
    unlock = reprolab_unlock(wd)
    sweep = CancelSweepTaskThenKill(wd)
    second = watched(profile_cmd(wd), wd, "second", seen, 900, sweep)
    assert sweep.resubmitted, (
        "the sweep's points were never resubmitted before the second run ended:\n"
        + second.stderr[-3000:]
    )
    unlock2 = reprolab_unlock(wd)
    final = watched(profile_cmd(wd), wd, "final", seen, 1200)
    return {
        "seen": seen,
        "wd": wd,
        "first": first,
        "second": second,
        "queued": queued,
        "sweep": sweep,
        "unlock": [unlock, unlock2],
        "final": final,
    }


def test_the_attacked_run_completes_with_every_figure_reproduced(attacked):
    final = attacked["final"]
    assert all(u.returncode == 0 for u in attacked["unlock"]), attacked["unlock"]
    assert final.returncode == 0, final.stderr[-4000:]
    o = attacked["wd"] / "outputs" / PAPER
    assert (o / f"REPRODUCTION_REPORT_{PAPER}.md").is_file()
    for stage in sorted((o / "stages").iterdir()):
        comparison = json.loads((stage / "comparison.json").read_text())
        assert {f["classification"] for f in comparison["figures"]} <= {"SUCCESS"}, stage


def test_a_cancelled_job_was_resubmitted_once_and_its_queued_rerun_reattached(attacked):
    wd, queued = attacked["wd"], attacked["queued"]
    stage = stage_dir(wd, CANCELLED_STAGE)
    kept = json.loads((stage / "failed_runs/f1/result.json").read_text())
    assert kept["failure"]["kind"] == "cancelled"
    assert kept["job_id"] == queued.cancelled
    # The driver died while the resubmitted job waited in the queue...
    assert queued.state_at_kill == "PENDING", queued.state_at_kill
    record = json.loads((stage / "result.json").read_text())
    # ...and the next run waited on that very job: nothing submitted a third time.
    assert record["failure"] is None, record["failure"]
    assert record["job_id"] == queued.resubmitted and record.get("reattached")
    name = name_of(wd, CANCELLED_STAGE)
    assert {k for k, j in attacked["seen"].items() if j["JobName"] == name} == {
        queued.cancelled,
        queued.resubmitted,
    }
    assert not (stage / "failed_runs/f2").exists()
    # Its folder is its own: every output it reported is there.
    for entry in record["output_files"]:
        assert (stage / "run" / entry["name"]).is_file(), entry
    # Said once on the console, with the job and the cause, and once in the events.
    said = [
        line
        for run in ("first", "second", "final")
        for line in attacked[run].stderr.splitlines()
        if "resubmitted automatically" in line and f"job {queued.cancelled} " in line
    ]
    assert len(said) == 1 and "cancelled" in said[0], said
    assert said[0] in attacked["first"].stderr
    events = (wd / "outputs" / PAPER / "events.jsonl").read_text()
    assert events.count(f"job {queued.cancelled} cancelled") == 1, events


def test_the_sweeps_cancelled_points_ran_once_more_and_were_reattached_to(attacked):
    wd, sweep = attacked["wd"], attacked["sweep"]
    stage = stage_dir(wd, SWEEP_STAGE)
    kept = json.loads((stage / "failed_runs/f1/result.json").read_text())
    assert kept["failure"]["kind"] == "cancelled", kept["failure"]
    left = kept["sweep"]["failed_points"]
    assert left and all(kept["points"][i]["job_id"] == sweep.cancelled for i in left)
    record = json.loads((stage / "result.json").read_text())
    assert record["failure"] is None, record["failure"]
    # The points the cancelled task left ran in the job (array) submitted for them, which
    # the third run waited on (recorded before the kill); the others were kept.
    assert sweep.recorded, "the resubmission was not recorded before the kill"
    again = {p["index"]: p["job_id"] for p in record["points"] if not p["reused"]}
    assert set(again) == set(left), (again, left)
    assert set(again.values()) <= set(sweep.recorded)
    assert all(job.split("_")[0] == sweep.resubmitted for job in again.values())
    # Slurm saw two submissions of the sweep: the first and the resubmission, no third.
    name = name_of(wd, SWEEP_STAGE)
    arrays = {k.split("_")[0] for k, j in attacked["seen"].items() if j["JobName"] == name}
    assert arrays == {sweep.array, sweep.resubmitted}, arrays
    assert sorted(p.name for p in stage.glob("code.r*.json")) == ["code.r1.json"]
    assert sorted(p.name for p in (stage / "failed_runs").iterdir()) == ["f1"]


def output_tables(wd: Path) -> dict[str, list[list[float]]]:
    """Every stage's CSV outputs (gathered ones for the sweep), as numbers."""
    tables = {}
    for stage in STAGES:
        record = json.loads((stage_dir(wd, stage) / "result.json").read_text())
        for name in (entry["name"] for entry in record["output_files"]):
            if name.endswith(".csv") and "/" not in name:
                rows = (stage_dir(wd, stage) / "run" / name).read_text().splitlines()[1:]
                tables[f"{stage}/{name}"] = [[float(v) for v in r.split(",")] for r in rows]
    return tables


def test_the_attacked_runs_outputs_equal_an_uninterrupted_runs(attacked, offline_example_run):
    got, want = output_tables(attacked["wd"]), output_tables(offline_example_run)
    assert set(got) == set(want) and want
    for key, rows in want.items():
        assert len(got[key]) == len(rows), key
        for a, b in zip(got[key], rows, strict=True):
            assert a == pytest.approx(b, rel=1e-6, abs=1e-9), key


def test_agent_calls_and_consent_log_equal_an_uninterrupted_run(attacked, offline_example_run):
    def total(wd: Path) -> dict:
        return json.loads((wd / "outputs" / PAPER / "cost_summary.json").read_text())["total"]

    def decisions(wd: Path) -> list:
        lines = (wd / "outputs" / PAPER / "user_interactions.jsonl").read_text().splitlines()
        return [
            (e["interaction_type"], e["user_response"]["action"]) for e in map(json.loads, lines)
        ]

    assert total(attacked["wd"]) == total(offline_example_run)
    assert decisions(attacked["wd"]) == decisions(offline_example_run)


class KillDuringRerun:
    """Once the approved rerun of the timed-out stage runs, kill the driver."""

    def __init__(self, wd: Path, first_job: str):
        self.wd, self.first_job, self.rerun = wd, first_job, None

    def __call__(self, proc, found) -> bool:
        name = name_of(self.wd, TIMED_OUT)
        again = [j for j in found if j.get("JobName") == name and j["JobId"] != self.first_job]
        if not any(j["JobState"] == "RUNNING" for j in again):
            return False
        self.rerun = again[0]["JobId"]
        kill_driver(proc)
        return True


@pytest.fixture(scope="module")
def timed_out(tmp_path_factory):
    """Stage 1 given 6 s and a script that sleeps 60 s first: over its time. The rerun
    the user approves (12 s) is interrupted by a killed driver, waited on by the next
    run, times out too, and is accepted."""
    wd = tmp_path_factory.mktemp("slurm-timeout")
    paper = wd / "paper"
    copy_paper(paper, recordings=True)
    plan = paper / "recordings/paper/planner.a1.yaml"
    head, stage1 = plan.read_text().split(f"- stage_id: {TIMED_OUT}\n")
    stage1, rest = stage1.split("- stage_id:", 1)
    assert stage1.count("runtime_budget_minutes: 5\n") == 1
    stage1 = stage1.replace("runtime_budget_minutes: 5\n", "runtime_budget_minutes: 0.1\n")
    plan.write_text(f"{head}- stage_id: {TIMED_OUT}\n{stage1}- stage_id:{rest}")
    code = paper / f"recordings/{TIMED_OUT}/code_generator.a1.yaml"
    text = code.read_text()
    assert text.count("    import numpy as np\n") == 1
    # Each job says which it is, so that its log tells whose folder it wrote.
    slow = (
        "    import os, time\n    print('job', os.environ.get('SLURM_JOB_ID'), flush=True)\n"
        "    time.sleep(60)\n    import numpy as np\n"
    )
    code.write_text(text.replace("    import numpy as np\n", slow))
    # The recorded analysis (of a run that worked) is sent back by the comparison check
    # once the run failed: its second round answers as the first did.
    for agent in ("results_analyzer", "comparison_validator"):
        first_round = (paper / f"recordings/{TIMED_OUT}/{agent}.a1.yaml").read_text()
        assert first_round.count("\nattempt: 1\n") == 1
        second_round = first_round.replace("\nattempt: 1\n", "\nattempt: 2\n")
        (paper / f"recordings/{TIMED_OUT}/{agent}.a2.yaml").write_text(second_round)
    write_config(wd, paper)
    seen: dict = {}
    first = watched(profile_cmd(wd), wd, "first", seen, 900)
    gates = wd / "outputs" / PAPER / "gates"
    asked = gates / f"{TIMED_OUT}.run_failure.1.request.json"
    assert asked.is_file(), first.stderr[-4000:]
    request = json.loads(asked.read_text())
    # Approve the rerun with twice the time; the driver dies while it runs.
    (gates / f"{TIMED_OUT}.run_failure.1.json").write_text(json.dumps(request["answer_example"]))
    killer = KillDuringRerun(wd, request["payload"]["job_id"])
    second = watched(profile_cmd(wd), wd, "second", seen, 900, killer)
    assert killer.rerun, f"the approved rerun never ran:\n{second.stderr[-3000:]}"
    unlock = subprocess.run(
        profile_cmd(wd, "--unlock"), capture_output=True, text=True, timeout=300
    )
    third = watched(profile_cmd(wd), wd, "third", seen, 900)
    asked = gates / f"{TIMED_OUT}.run_failure.2.request.json"
    assert asked.is_file(), third.stderr[-4000:]
    request2 = json.loads(asked.read_text())
    # Accept the failed rerun: the paper goes on to its (failed) report.
    answer = dict(request2["answer_example"], action="reject", note="accept: out of time")
    (gates / f"{TIMED_OUT}.run_failure.2.json").write_text(json.dumps(answer))
    last = watched(profile_cmd(wd), wd, "last", seen, 900)
    return {
        "wd": wd,
        "first": first,
        "request": request,
        "rerun": killer.rerun,
        "unlock": unlock,
        "third": third,
        "request2": request2,
        "second": last,
        "seen": seen,
    }


def test_a_time_limit_opens_a_gate_and_stops_non_zero_with_one_clear_line(timed_out):
    first, request = timed_out["first"], timed_out["request"]
    assert first.returncode != 0
    job = request["payload"]["job_id"]
    lines = [
        line
        for line in first.stderr.splitlines()
        if line.startswith("[reprolab]") and TIMED_OUT in line
    ]
    assert any("timeout" in line and f"job {job}" in line for line in lines), "\n".join(lines)
    # Said once: the profile neither retries the step nor prints its log again.
    assert sum("WAITING FOR YOU" in line for line in lines) == 1, "\n".join(lines)
    assert any("run again: " in line and "--profile" in line for line in first.stderr.splitlines())


def test_an_approved_rerun_outlives_a_killed_driver_and_is_waited_on(timed_out):
    wd, first_job, rerun = (
        timed_out["wd"],
        timed_out["request"]["payload"]["job_id"],
        timed_out["rerun"],
    )
    stage = stage_dir(wd, TIMED_OUT)
    assert timed_out["unlock"].returncode == 0, timed_out["unlock"].stderr[-2000:]
    # The third run waited on the rerun the killed driver left, and asked about it.
    assert timed_out["third"].returncode != 0
    assert timed_out["request2"]["payload"]["job_id"] == rerun
    name = name_of(wd, TIMED_OUT)
    assert {k for k, j in timed_out["seen"].items() if j["JobName"] == name} == {first_job, rerun}
    # Each kept run holds its own job's files: the first run's folder was never put back
    # over the folder the rerun was writing.
    f1 = json.loads((stage / "failed_runs/f1/result.json").read_text())
    f2 = json.loads((stage / "failed_runs/f2/result.json").read_text())
    assert (f1["job_id"], f2["job_id"]) == (first_job, rerun)
    assert f2["failure"]["kind"] == "timeout" and f2["timeout_s"] == 12
    assert f"job {first_job}" in (stage / "failed_runs/f1/stdout.txt").read_text()
    assert f"job {rerun}" in (stage / "failed_runs/f2/stdout.txt").read_text()
    assert f"job {rerun}" in (stage / "run/stdout.txt").read_text()
    record = json.loads((stage / "result.json").read_text())
    assert record["job_id"] == rerun


def test_an_accepted_timeout_is_in_the_report_with_its_reason(timed_out):
    second = timed_out["second"]
    o = timed_out["wd"] / "outputs" / PAPER
    report = (o / f"REPRODUCTION_REPORT_{PAPER}.md").read_text()
    job = timed_out["request2"]["payload"]["job_id"]
    verdict = json.loads((o / f"stages/{TIMED_OUT}/verdict.json").read_text())
    assert verdict["status"] == "completed_failed"
    assert "timeout" in verdict["reason"] and f"job {job}" in verdict["reason"], verdict
    assert f"job {job}" in report and "timeout" in report
    consent = (o / "user_interactions.jsonl").read_text()
    assert "accept: out of time" in consent
    # A decided end: the failed stage and the stages it blocks are in a finished report.
    assert second.returncode == 0, second.stderr[-3000:]
    assert "blocked: dependency stage1_single_slab ended completed_failed (run failed: " in report


def results(wd: Path) -> dict[str, dict]:
    base = wd / "outputs" / PAPER / "stages"
    return {s: json.loads((base / s / "result.json").read_text()) for s in STAGES}


def test_every_simulation_ran_as_a_slurm_job_with_its_ranks(attacked):
    wd = attacked["wd"]
    assert attacked["final"].returncode == 0, attacked["final"].stderr[-3000:]
    for stage, record in results(wd).items():
        assert record["executor"] == "slurm", stage
        assert record["failure"] is None, (stage, record["failure"])
        for job in record.get("points") or [record]:
            assert job["slurm_env"]["SLURM_JOB_ID"], stage
            assert job["mpi"]["size"] == record["mpi_ranks"], stage
            ranks = job["mpi"]["ranks"]
            # The ranks gathered each other's identity over MPI inside one srun step.
            assert sorted(r["rank"] for r in ranks) == list(range(record["mpi_ranks"]))
            if record["mpi_ranks"] > 1:
                assert sorted(r["slurm_procid"] for r in ranks) == ["0", "1"]
                # Each srun rank is its own sandbox (both may be pid 2 in their namespace).
                assert len({(r["pid_ns"], r["pid"]) for r in ranks}) == 2
                assert record["command"][:2] == ["srun", "--mpi=pmix"]
            info = attacked["seen"][job["job_id"]]
            assert info["JobName"] == name_of(wd, stage)  # paper, stage, outputs folder
            assert info["NumTasks"] == str(record["mpi_ranks"]), info
            # A point kept from the cancelled task finished before the cancel.
            cancelled = job["job_id"] == attacked["sweep"].cancelled
            assert info["JobState"] == ("CANCELLED" if cancelled else "COMPLETED"), info
    # Each ran on the ranks its size asked (a 1D stage: one; two ranks meeting inside one
    # srun step are tests/slurm/test_slurm_sizing.py's).
    for stage, record in results(wd).items():
        assert record["mpi_ranks"] == record["job_size"]["request"]["ranks"], stage


def test_sweep_ran_packed_as_one_throttled_job_array(attacked):
    wd = attacked["wd"]
    # The sweep's first submission, as it ran until one task was cancelled.
    sweep = json.loads((stage_dir(wd, SWEEP_STAGE) / "failed_runs/f1/result.json").read_text())
    array_id = sweep["array_job_id"]
    assert array_id == attacked["sweep"].array
    assert [p["value"] for p in sweep["points"]] == list(range(1, 9))
    # Packed: one array task per worker (2: max_concurrent_jobs), 4 points each, dealt
    # in snake order (0 1 1 0 0 1 1 0), every point still its own record.
    for point, task in zip(sweep["points"], (0, 1, 1, 0, 0, 1, 1, 0), strict=True):
        assert point["job_id"] == f"{array_id}_{task}"
    tasks = [j for k, j in attacked["seen"].items() if k.split("_")[0] == array_id]
    assert len(tasks) == 2 < len(sweep["points"])
    assert {t.get("ArrayTaskThrottle") for t in tasks} == {"2"}  # max_concurrent_jobs
    # Each point gets its share of the 10 min budget (8 points in 4 waves of 2); a
    # worker's time limit holds its 4 points one after another, a minute above.
    assert sweep["timeout_s"] == 150 and {t["TimeLimit"] for t in tasks} == {"00:11:00"}
    gathered = wd / "outputs" / PAPER / f"stages/{SWEEP_STAGE}/run/pairs_sweep.csv"
    assert len(gathered.read_text().splitlines()) == 9


def test_agent_rules_ran_locally_and_slurm_saw_only_the_simulations(attacked):
    wd = attacked["wd"]
    log = "".join(attacked[r].stdout + attacked[r].stderr for r in ("first", "second", "final"))
    assert "localrule design:" in log and "localrule generate_code:" in log
    # Snakemake submitted no job itself: Slurm only ever saw the simulations.
    assert "SLURM jobid" not in log
    # Every job Slurm saw is in a record: a stage's run, or a failed run it kept.
    recorded = set()
    for path in (wd / "outputs" / PAPER / "stages").glob("*/**/result.json"):
        record = json.loads(path.read_text())
        recorded |= {job["job_id"] for job in record.get("points") or [record]}
    seen = attacked["seen"]  # every job of the run, as Slurm listed it while it knew it
    assert {j["JobName"] for j in seen.values()} == {name_of(wd, s) for s in STAGES}
    assert set(seen) == recorded
