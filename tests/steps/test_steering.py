"""Steering without a cluster: the ledger's sources, file modes, the Slurm executor
composing with the user's config, one state query per poll, the run-failure gate.

Slurm itself: tests/slurm/test_slurm_steering.py; whole-pipeline reruns:
tests/workflow/test_rerun.py.
"""

import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from agents.ledger import DEFAULT_PRICES, BudgetExceededError, Ledger, cost_usd
from agents.providers import Usage
from agents.simulation_designer import SimulationDesign
from reprolab.errors import GateError
from reprolab.fileio import atomic_write_json
from reprolab.jobs import submit
from reprolab.settings import SLURM_LAUNCHER, apply_executor, paper_run, simulation_params
from reprolab.smk import driver_command
from reprolab.steps import run as run_step
from reprolab.steps import run_failures
from tests.support.builders import minimal_design
from tests.support.pipeline import EXAMPLE, REPO

PAPER = "silica_bragg_2026"
MODEL = "claude-opus-4-5"


def test_cost_shown_is_money_spent_replays_and_cache_hits_are_not(tmp_path):
    ledger = Ledger(tmp_path, dict(DEFAULT_PRICES), {"max_usd": 1.0})
    usage = Usage(input_tokens=10_000, output_tokens=2_000)
    paid = cost_usd(usage, DEFAULT_PRICES[MODEL])
    common = dict(agent="planner", stage_id="paper", attempt=1, model=MODEL, seconds=0.1)
    ledger.record(
        call_id="a", provider="anthropic", source="api", usage=usage, requests=1, **common
    )
    ledger.record(
        call_id="b", provider="anthropic", source="cache", usage=Usage(), requests=0, **common
    )
    ledger.record(
        call_id="c", provider="replay", source="replay", usage=usage, requests=1, **common
    )
    total = json.loads((tmp_path / "cost_summary.json").read_text())
    assert total["total"]["cost_usd"] == pytest.approx(paid)
    assert (total["total"]["paid_calls"], total["total"]["cache_hits"]) == (1, 1)
    assert total["total"]["replays"] == 1 and total["total"]["calls"] == 3
    assert total["total"]["input_tokens"] == 10_000  # the paid call's only
    assert total["replayed"]["recorded_cost_usd"] == pytest.approx(paid)
    entries = ledger.entries()
    assert [e["cost_usd"] for e in entries] == [pytest.approx(paid), 0.0, 0.0]
    assert entries[2]["recorded_cost_usd"] == pytest.approx(paid)
    # The replay provider stands in for the API: its usage still counts against a budget.
    ledger.budget = {"max_usd": 2 * paid}
    with pytest.raises(BudgetExceededError, match="max_usd"):
        ledger.check_budget("d")


def test_files_honour_the_umask(tmp_path):
    code = (
        "import os, sys; os.umask(0o002); sys.path.insert(0, sys.argv[2]);"
        "from reprolab.fileio import atomic_write_json; atomic_write_json(sys.argv[1], {})"
    )
    target = tmp_path / "shared.json"
    subprocess.run([sys.executable, "-c", code, str(target), str(REPO)], check=True)
    assert stat.S_IMODE(target.stat().st_mode) == 0o664
    atomic_write_json(tmp_path / "mine.json", {})
    mask = os.umask(0)
    os.umask(mask)
    assert stat.S_IMODE((tmp_path / "mine.json").stat().st_mode) == 0o666 & ~mask


def test_slurm_executor_keeps_the_users_launcher_and_slurm_options():
    user = {"mpi_launcher": "mpiexec -n {ranks}", "slurm": {"partition": "p", "account": "a"}}
    config = {"simulation": {**user, "executor": "local"}}
    apply_executor(config, user, "slurm")
    assert config["simulation"]["executor"] == "slurm"
    assert config["simulation"]["mpi_launcher"] == "mpiexec -n {ranks}"
    assert config["simulation"]["slurm"] == {"partition": "p", "account": "a"}
    # The schema's default launcher is not the user's: under Slurm, srun replaces it.
    config = {"simulation": {"mpi_launcher": "mpirun --oversubscribe -np {ranks}"}}
    apply_executor(config, {}, "slurm")
    assert config["simulation"]["mpi_launcher"] == SLURM_LAUNCHER
    config = {"simulation": {"executor": "local"}}
    apply_executor(config, {}, "local")
    assert config == {"simulation": {"executor": "local"}}


def test_profiles_set_touch_semantics_and_no_config_or_retries():
    for path in (REPO / "profiles/default/config.yaml", REPO / "slurm/config.v8+.yaml"):
        profile = yaml.safe_load(path.read_text())
        assert profile["max-checksum-file-size"] == 0, path
        assert "config" not in profile and profile.get("retries", 0) == 0, path


def test_only_settings_that_change_a_run_are_simulation_params():
    base = {"simulation": {"max_mpi_ranks": 2, "executor": "local"}}
    moved = {"simulation": {"max_mpi_ranks": 2, "executor": "slurm", "mpi_launcher": "srun"}}
    assert simulation_params(base) == simulation_params(moved)
    assert simulation_params(base) != simulation_params({"simulation": {"max_mpi_ranks": 1}})


def test_array_task_ids_are_matched_from_one_scontrol_listing():
    assert submit._task_range("2-7%2") == {2, 3, 4, 5, 6, 7}
    assert submit._task_range("1,4-5") == {1, 4, 5}
    pending = {"JobId": "10", "ArrayJobId": "10", "ArrayTaskId": "2-7%2", "JobState": "PENDING"}
    running = {"JobId": "11", "ArrayJobId": "10", "ArrayTaskId": "0", "JobState": "RUNNING"}
    single = {"JobId": "20", "JobState": "RUNNING"}
    assert submit._matches(running, "10_0") and not submit._matches(running, "10_2")
    assert submit._matches(pending, "10_5") and not submit._matches(pending, "10_1")
    assert submit._matches(single, "20") and not submit._matches(pending, "10")


def test_hints_name_the_exact_snakemake_command(tmp_path):
    fake = tmp_path / "snakemake"
    child = (
        f"import sys; sys.path.insert(0, {str(REPO)!r}); "
        "from reprolab.smk import driver_command; print(driver_command())"
    )
    fake.write_text(
        f"#!{sys.executable}\nimport subprocess, sys\n"
        f"sys.exit(subprocess.run([sys.executable, '-c', {child!r}]).returncode)\n"
    )
    fake.chmod(0o755)
    cmd = [str(fake), "--configfile", "my config.yaml", "--cores", "2"]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.strip()
    assert out == f"{fake} --configfile 'my config.yaml' --cores 2"
    assert driver_command() is None  # pytest has no snakemake ancestor


def paper_settings(tmp_path: Path, **simulation):
    config = {
        "outputs_dir": str(tmp_path / "outputs"),
        "papers": [{"paper_dir": str(EXAMPLE)}],
        "provider": {"kind": "replay"},
        "simulation": {"executor": "local", **simulation},
    }
    return paper_run(config, PAPER)


def test_resubmission_stops_at_the_limit_and_asks(tmp_path):
    run = paper_settings(tmp_path, max_resubmits=1)
    state = run_failures.RerunState()
    record = {
        "job_id": "4242",
        "failure": {"kind": "cancelled", "summary": "scancel", "action": "resubmit"},
    }
    assert run_failures.rerun_needed(run, "stage1_x", record, state) == "resubmit"
    with pytest.raises(GateError) as stop:
        run_failures.rerun_needed(run, "stage1_x", record, state)
    message = str(stop.value)
    assert "stage1_x" in message and "job 4242" in message and "cancelled" in message


def test_a_run_over_its_time_limit_opens_a_gate_and_reruns_with_twice_the_time(tmp_path):
    run = paper_settings(tmp_path)
    stage_id = "stage1_slow"
    stage_dir = run.out_dir / "stages" / stage_id
    script = tmp_path / "simulation.py"
    script.write_text("import time\nprint('running', flush=True)\ntime.sleep(60)\n")
    design = SimulationDesign.model_validate(
        minimal_design(
            stage_id,
            summary="a sleeper over its time",
            performance_estimate={"runtime_seconds": 1, "memory_mb": 100, "mpi_ranks": 1},
        )
    )
    stage = SimpleNamespace(runtime_budget_minutes=0.05)  # 3 s

    def settle():
        return run_step.settle_run(
            run,
            design,
            stage,
            (tmp_path / "code.json", script),
            stage_dir,
            [],
            run_failures.RerunState(),
        )

    with pytest.raises(GateError) as stop:
        settle()
    message = str(stop.value)
    assert stage_id in message and "timeout" in message and "twice the time" in message
    request = json.loads((run.out_dir / f"gates/{stage_id}.run_failure.1.request.json").read_text())
    first_job = request["payload"]["job_id"]
    assert f"job {first_job}" in message
    (run.out_dir / f"gates/{stage_id}.run_failure.1.json").write_text(
        json.dumps(request["answer_example"])
    )
    # Answered: the kept run is not run again; the rerun gets 6 s, and times out again.
    with pytest.raises(GateError, match="run_failure.2"):
        settle()
    second = json.loads((stage_dir / "failed_runs/f2/result.json").read_text())
    assert second["timeout_s"] == 6 and second["job_id"] != first_job
    assert json.loads((stage_dir / "failed_runs/f1/result.json").read_text())["job_id"] == first_job
    consent = (run.out_dir / "user_interactions.jsonl").read_text().splitlines()
    assert len(consent) == 1 and json.loads(consent[0])["interaction_type"] == "run_failure"


def test_a_cancelled_run_is_diagnosed_as_cancelled_not_as_physics(tmp_path):
    from reprolab.steps.checks import failure_diagnosis

    record = {
        "job_id": "77",
        "failure": {"kind": "cancelled", "summary": "Slurm state CANCELLED", "log_tail": ""},
    }
    # What the checks of a run stopped half-way say: the fields had not decayed.
    result = {
        "stage_id": "stage1_x",
        "checks": [
            {
                "name": "field_decay",
                "status": "fail",
                "value": 1.0,
                "threshold": "1e-4",
                "detail": "not decayed",
            }
        ],
    }
    page = failure_diagnosis(result, record, tmp_path).read_text()
    assert "cancelled (job 77)" in page and "outside the pipeline" in page
    assert "stop criterion" not in page
    code_failure = {"failure": {"kind": "python_exception", "summary": "x"}}
    assert failure_diagnosis(result, code_failure, tmp_path / "other") is None
