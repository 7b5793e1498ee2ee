"""Where bubblewrap cannot run, generated code does not run, with one message saying why
and what to set; `unsafe_none` runs it without the OS boundary and the report says so
in bold; the sandbox's settings are checked with the field named."""

import sys

import pytest

from reprolab.jobs import bwrap, sandbox
from reprolab.jobs.launch import SimulationJob, command_for, run_job
from reprolab.report.security import sandbox_row


@pytest.fixture
def no_bwrap(monkeypatch):
    """A machine without bubblewrap: the real check, with bwrap off the PATH."""
    monkeypatch.setenv("PATH", "/nonexistent")
    bwrap.availability.cache_clear()
    yield
    monkeypatch.undo()
    bwrap.availability.cache_clear()


def job(tmp_path, **kw) -> SimulationJob:
    script = tmp_path / "simulation.py"
    script.write_text("open('ran.txt', 'w').write('ran')\n")
    return SimulationJob(script=str(script), workdir=str(tmp_path), python=sys.executable, **kw)


def test_no_bubblewrap_refuses_to_run_generated_code(tmp_path, no_bwrap):
    record = run_job(job(tmp_path))
    assert not (tmp_path / "ran.txt").exists()
    failure = record["failure"]
    assert failure["kind"] == "sandbox_unavailable" and failure["action"] == "ask_user"
    assert "no bwrap command" in failure["summary"]
    for words in ("bubblewrap", "user.max_user_namespaces", "isolation: unsafe_none"):
        assert words in record["stderr_tail"]


def test_unsafe_none_runs_without_the_boundary_and_the_report_says_so(tmp_path, no_bwrap):
    record = run_job(job(tmp_path, isolation="unsafe_none"))
    assert record["exit_code"] == 0, record["stderr_tail"]
    assert (tmp_path / "ran.txt").read_text() == "ran"
    assert "bwrap" not in " ".join(record["command"])
    row = sandbox_row({"stage0": record, "stage1": {"sandbox": {"isolation": "bwrap"}}})
    assert "**NO OS SANDBOX" in row
    assert "bubblewrap" in sandbox_row({"stage0": {"sandbox": {"isolation": "bwrap"}}})
    assert "not recorded" in sandbox_row({"stage0": {}})
    refused = {"command": [], "exit_code": None, "sandbox_problems": ["line 1: ..."]}
    assert "bubblewrap" in sandbox_row({"s0": {"sandbox": {"isolation": "bwrap"}}, "s1": refused})
    sweep = {"command": ["/usr/bin/bwrap", "--unshare-user"], "points": [{"index": 0}]}
    assert "bubblewrap" in sandbox_row({"stage3": sweep})
    assert "**NO OS SANDBOX" in sandbox_row({"stage3": {**sweep, "command": ["mpirun"]}})


def test_sandbox_settings_checked_naming_the_field():
    assert sandbox.job_settings({}) == {"isolation": "bwrap", "folder_mb": 4096}
    assert sandbox.job_settings({"sandbox": {"isolation": "unsafe_none", "run_folder_mb": 9}}) == {
        "isolation": "unsafe_none",
        "folder_mb": 9,
    }
    with pytest.raises(ValueError, match="simulation.sandbox.isolation is 'none'; valid: bwrap"):
        sandbox.job_settings({"sandbox": {"isolation": "none"}})
    with pytest.raises(ValueError, match="run_folder_mb is 0"):
        sandbox.job_settings({"sandbox": {"run_folder_mb": 0}})
    with pytest.raises(
        ValueError, match=r"min_memory_mb \(9000\) is above .*max_memory_mb \(512\)"
    ):
        sandbox.job_settings({"min_memory_mb": 9000, "max_memory_mb": 512})
    with pytest.raises(
        ValueError, match="memory_safety_factor is 1e\\+06; valid: above 0, at most 20"
    ):
        sandbox.job_settings({"memory_safety_factor": 1e6})
    # YAML reads an unquoted `network: off` as false: it means off.
    assert sandbox.network_plan(False, launcher_uses_srun=False)[0] is False


def test_srun_ranks_are_each_a_sandbox_with_the_step_pmix_dir(tmp_path):
    cmd = command_for(job(tmp_path, mpi_ranks=2, mpi_launcher="srun --mpi=pmix -n {ranks}"))
    assert cmd[:4] == ["srun", "--mpi=pmix", "-n", "2"]
    assert "PMIX_SERVER_TMPDIR" in cmd[6] and "bwrap" in cmd[7]
    assert "--unshare-net" not in cmd  # the PMIx server is TCP on the node
    local = command_for(job(tmp_path, mpi_ranks=2, isolate_network=True))
    assert local[0].endswith("bwrap") and "--unshare-net" in local and "mpirun" in local
