"""The example paper through `snakemake --profile slurm`, attacked the way a
busy cluster and a dropped login session would, end to end on the real
one-node Slurm. The same run shows how a run goes there: every simulation a
Slurm job with its ranks (gathered over MPI inside one srun step), the sweep one
throttled job array of packed workers, every agent step local. Attacks:

- while the run goes on, a running simulation job is cancelled from outside
  (an admin's `scancel`, a preemption): it must be resubmitted by itself and the
  run must complete;
- while the sweep's jobs run, the driver (snakemake) is SIGKILLed: the rerun
  must wait on the jobs already submitted, run no point twice, log no false
  failure and regenerate no code;
- a simulation over its time limit must open a gate, make snakemake exit
  non-zero with one line naming the stage, the job, the reason and the command
  to go on, and once accepted the report must say why the stage failed.

What must not change is checked against the session's uninterrupted run
(tests/conftest.py): the agent calls and their cost, and the consent log.
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
from tests.support.pipeline import EXAMPLE, REPO, SNAKEMAKE
from tests.support.slurm import scontrol_job

pytestmark = [pytest.mark.slurm, pytest.mark.usefixtures("slurm_cluster")]
PAPER = "silica_bragg_2026"
CANCELLED_STAGE = "stage2_bragg_mirror"  # 2 ranks, ~8 s: long enough to be caught running
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


def stage_jobs(wd: Path, stage: str, seen: dict | None = None) -> list[dict]:
    found = jobs_of(wd)
    if seen is not None:
        remember(seen, found)
    return [j for j in found if j.get("JobName") == f"reprolab-{PAPER}-{stage}"]


def remember(seen: dict, found: list[dict]) -> None:
    """Each job's latest `scontrol` record, by the id submitit knows it by: Slurm forgets
    a finished job MinJobAge (600 s) after it ended, and on a loaded machine the attacked
    run outlasts that, so its jobs are asserted from what Slurm said while it knew them."""
    for job in found:
        if job.get("ArrayTaskId", "0").isdigit():  # not yet split off: e.g. `2-7%2`
            seen[submitted_job(job)] = job


def watched(cmd: list[str], wd: Path, seen: dict, timeout: float) -> subprocess.CompletedProcess:
    """Run `cmd` (output captured), noting the run's Slurm jobs every half second."""
    out, err = open(wd / "watched.out", "w"), open(wd / "watched.err", "w")  # noqa: SIM115
    proc = subprocess.Popen(cmd, stdout=out, stderr=err)
    deadline = time.time() + timeout
    while proc.poll() is None and time.time() < deadline:
        remember(seen, jobs_of(wd))
        time.sleep(0.5)
    if proc.poll() is None:
        proc.kill()
    proc.wait()
    remember(seen, jobs_of(wd))
    out.close(), err.close()
    stdout, stderr = (wd / "watched.out").read_text(), (wd / "watched.err").read_text()
    return subprocess.CompletedProcess(cmd, proc.returncode, stdout, stderr)


@pytest.fixture(scope="module")
def attacked(tmp_path_factory):
    wd = tmp_path_factory.mktemp("slurm-attacked")
    write_config(wd, EXAMPLE)
    out, err = open(wd / "first.out", "w"), open(wd / "first.err", "w")  # noqa: SIM115
    first = subprocess.Popen(profile_cmd(wd), stdout=out, stderr=err)
    cancelled = killed_sweep = None
    seen: dict = {}
    deadline = time.time() + 900
    while time.time() < deadline and first.poll() is None:
        if cancelled is None:
            running = [
                j for j in stage_jobs(wd, CANCELLED_STAGE, seen) if j["JobState"] == "RUNNING"
            ]
            if running:
                cancelled = running[0]["JobId"]
                subprocess.run(["scancel", cancelled], check=True)
        else:
            sweep = stage_jobs(wd, SWEEP_STAGE, seen)
            if any(j["JobState"] == "RUNNING" for j in sweep):
                # A dropped login session: the driver dies at once, its jobs live on.
                first.send_signal(signal.SIGKILL)
                first.wait()
                killed_sweep = sorted({submitted_job(j) for j in sweep})
                break
        time.sleep(0.2)
    out.close()
    err.close()
    assert cancelled, f"no running job of {CANCELLED_STAGE} was ever seen"
    assert killed_sweep, (
        "the sweep never started before the first run ended:\n"
        + (wd / "first.err").read_text()[-3000:]
    )
    submission = wd / "outputs" / PAPER / "stages" / SWEEP_STAGE / "submitit" / submit.SUBMISSION
    recorded = json.loads(submission.read_text())["job_ids"] if submission.is_file() else None
    unlock = subprocess.run(
        profile_cmd(wd, "--unlock"), capture_output=True, text=True, timeout=300
    )
    final = watched(profile_cmd(wd), wd, seen, timeout=1200)
    return {
        "seen": seen,
        "wd": wd,
        "first_err": (wd / "first.err").read_text(),
        "first_out": (wd / "first.out").read_text(),
        "cancelled": cancelled,
        "sweep_at_kill": killed_sweep,
        "recorded": recorded,
        "unlock": unlock,
        "final": final,
    }


def test_the_attacked_run_completes_with_every_figure_reproduced(attacked):
    final = attacked["final"]
    assert attacked["unlock"].returncode == 0, attacked["unlock"].stderr[-2000:]
    assert final.returncode == 0, final.stderr[-4000:]
    o = attacked["wd"] / "outputs" / PAPER
    assert (o / f"REPRODUCTION_REPORT_{PAPER}.md").is_file()
    for stage_dir in sorted((o / "stages").iterdir()):
        comparison = json.loads((stage_dir / "comparison.json").read_text())
        assert {f["classification"] for f in comparison["figures"]} <= {"SUCCESS"}, stage_dir


def test_a_cancelled_job_was_resubmitted_by_itself(attacked):
    stage = attacked["wd"] / "outputs" / PAPER / "stages" / CANCELLED_STAGE
    kept = json.loads((stage / "failed_runs/f1/result.json").read_text())
    assert kept["failure"]["kind"] == "cancelled"
    assert kept["job_id"] == attacked["cancelled"]
    record = json.loads((stage / "result.json").read_text())
    assert record["failure"] is None and record["job_id"] != attacked["cancelled"]
    # The console said so, with the job id, while the run went on.
    assert attacked["cancelled"] in attacked["first_err"]
    events = (attacked["wd"] / "outputs" / PAPER / "events.jsonl").read_text()
    assert f"job {attacked['cancelled']} cancelled" in events
    assert "resubmitted automatically" in events


def test_the_rerun_reattached_to_the_sweep_and_no_point_ran_twice(attacked):
    wd = attacked["wd"]
    stage = wd / "outputs" / PAPER / "stages" / SWEEP_STAGE
    record = json.loads((stage / "result.json").read_text())
    assert record["failure"] is None, record["failure"]
    # The submission recorded before waiting is what the rerun waited on...
    assert attacked["recorded"], "the sweep's submission was not recorded before the kill"
    used = {p["job_id"] for p in record["points"]}
    assert used == set(attacked["recorded"]), (used, attacked["recorded"])
    # ...and Slurm never saw a second submission of the sweep.
    name = f"reprolab-{PAPER}-{SWEEP_STAGE}"
    everything = {k for k, j in attacked["seen"].items() if j["JobName"] == name}
    assert everything == set(attacked["recorded"]), everything
    arrays = {job.split("_")[0] for job in everything}
    assert {job.split("_")[0] for job in attacked["sweep_at_kill"]} == arrays
    # No false failure: nothing kept as failed, no code regenerated.
    assert not (stage / "failed_runs").exists()
    assert sorted(p.name for p in stage.glob("code.r*.json")) == ["code.r1.json"]


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


@pytest.fixture(scope="module")
def timed_out(tmp_path_factory):
    """Stage 1 given 6 s and a script that sleeps 60 s first: over its time."""
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
    slow = "    import time\n    time.sleep(60)\n    import numpy as np\n"
    code.write_text(text.replace("    import numpy as np\n", slow))
    # The recorded analysis (of a run that worked) is sent back by the comparison check
    # once the run failed: its second round answers as the first did.
    for agent in ("results_analyzer", "comparison_validator"):
        first_round = (paper / f"recordings/{TIMED_OUT}/{agent}.a1.yaml").read_text()
        assert first_round.count("\nattempt: 1\n") == 1
        second_round = first_round.replace("\nattempt: 1\n", "\nattempt: 2\n")
        (paper / f"recordings/{TIMED_OUT}/{agent}.a2.yaml").write_text(second_round)
    write_config(wd, paper)
    first = subprocess.run(profile_cmd(wd), capture_output=True, text=True, timeout=900)
    gates = wd / "outputs" / PAPER / "gates"
    asked = gates / f"{TIMED_OUT}.run_failure.1.request.json"
    assert asked.is_file(), first.stderr[-4000:]
    request = json.loads(asked.read_text())
    # Accept the failed run: the paper goes on to its (failed) report.
    answer = dict(request["answer_example"], action="reject", note="accept: out of time")
    (gates / f"{TIMED_OUT}.run_failure.1.json").write_text(json.dumps(answer))
    second = subprocess.run(profile_cmd(wd), capture_output=True, text=True, timeout=900)
    return {"wd": wd, "first": first, "request": request, "second": second}


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


def test_an_accepted_timeout_is_in_the_report_with_its_reason(timed_out):
    second = timed_out["second"]
    o = timed_out["wd"] / "outputs" / PAPER
    report = (o / f"REPRODUCTION_REPORT_{PAPER}.md").read_text()
    job = timed_out["request"]["payload"]["job_id"]
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
            assert info["JobName"] == f"reprolab-{PAPER}-{stage}"  # paper and stage
            assert info["NumTasks"] == str(record["mpi_ranks"]), info
            assert info["JobState"] == "COMPLETED", info
    # Stage 2's design asks for 2 ranks; they ran and saw each other.
    assert results(wd)[CANCELLED_STAGE]["mpi_ranks"] == 2


def test_sweep_ran_packed_as_one_throttled_job_array(attacked):
    wd = attacked["wd"]
    sweep = results(wd)[SWEEP_STAGE]
    array_id = sweep["array_job_id"]
    assert array_id and [p["value"] for p in sweep["points"]] == list(range(1, 9))
    # Packed: one array task per worker (2: max_concurrent_jobs), 4 points each, dealt
    # in snake order (0 1 1 0 0 1 1 0), every point still its own record.
    for point, task in zip(sweep["points"], (0, 1, 1, 0, 0, 1, 1, 0), strict=True):
        assert point["slurm_env"]["SLURM_ARRAY_JOB_ID"] == array_id
        assert point["slurm_env"]["SLURM_ARRAY_TASK_ID"] == str(task)
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
    wd, final = attacked["wd"], attacked["final"]
    log = attacked["first_out"] + attacked["first_err"] + final.stdout + final.stderr
    assert "localrule design:" in log and "localrule generate_code:" in log
    # Snakemake submitted no job itself: Slurm only ever saw the simulations.
    assert "SLURM jobid" not in log
    recorded = {attacked["cancelled"]}
    for record in results(wd).values():
        for job in record.get("points") or [record]:
            recorded.add(job["job_id"])
    seen = attacked["seen"]  # every job of the run, as Slurm listed it while it knew it
    assert {j["JobName"] for j in seen.values()} == {f"reprolab-{PAPER}-{s}" for s in STAGES}
    assert set(seen) == recorded
