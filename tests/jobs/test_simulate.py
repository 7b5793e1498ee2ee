"""Jobs, the sandbox and sweeps on submitit's local executor (no Slurm needed).

The same code on a real Slurm cluster: tests/slurm/test_slurm.py.
"""

import json
import os
import subprocess
import sys

import pytest

from agents.simulation_designer import SimulationDesign
from reprolab.jobs import sandbox, stage_run
from reprolab.jobs.failures import ACTIONS, FAILURES, classify_failure, failure, pending_verdict
from reprolab.jobs.launch import SimulationJob, command_for, run_job, scrubbed_env
from reprolab.jobs.submit import ClusterSettings, Resources, submit
from tests.support.builders import minimal_design


def job(tmp_path, code: str, **kw) -> SimulationJob:
    script = tmp_path / "sim.py"
    script.write_text(code)
    return SimulationJob(script=str(script), workdir=str(tmp_path), python=sys.executable, **kw)


def test_secrets_never_reach_generated_code(tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-secret")
    monkeypatch.setenv("MY_SERVICE_TOKEN", "t0ken")
    record = run_job(
        job(
            tmp_path,
            "import os\n"
            "open('env.txt', 'w').write('\\n'.join(f'{k}={v}' for k, v in os.environ.items()))\n",
        )
    )
    assert record["exit_code"] == 0, record["stderr_tail"]
    dumped = (tmp_path / "env.txt").read_text()
    assert "sk-ant-secret" not in dumped and "t0ken" not in dumped
    assert "PATH=" in dumped and f"HOME={tmp_path}" in dumped
    assert "ANTHROPIC_API_KEY" not in scrubbed_env({"ANTHROPIC_API_KEY": "x", "PATH": "/bin"})


def test_static_checks_refuse_escapes_with_reasons():
    code = (
        "import os, socket\n"
        "import subprocess\n"
        "from urllib.request import urlopen\n"
        "os.system('ls')\n"
        "eval('1 + 1')\n"
        "open('/etc/passwd').read()\n"
        "open('../other_stage/x.csv', 'w')\n"
        "key = os.environ['ANTHROPIC_API_KEY']\n"
        "import matplotlib.pyplot as plt\n"
        "plt.show()\n"
        "input()\n"
    )
    problems = sandbox.static_problems(code)
    text = "\n".join(problems)
    for needle in (
        "line 1: sandbox refuses import of 'socket' (network access)",
        "line 2: sandbox refuses import of 'subprocess'",
        "line 3: sandbox refuses import of 'urllib.request'",
        "line 4: sandbox refuses os.system()",
        "line 5: sandbox refuses eval()",
        "line 6: sandbox refuses file path '/etc/passwd'",
        "line 7: sandbox refuses file path '../other_stage/x.csv'",
        "line 8: sandbox refuses reading the secret-like variable 'ANTHROPIC_API_KEY'",
        "line 10: sandbox refuses plt.show()",
        "line 11: sandbox refuses input()",
    ):
        assert needle in text, text
    assert [int(p.split(":")[0].split()[1]) for p in problems] == sorted(
        int(p.split(":")[0].split()[1]) for p in problems
    )
    clean = "import numpy as np\nnp.savetxt('out.csv', [[1, 2]], delimiter=',')\n"
    assert sandbox.static_problems(clean) == []


def test_refused_script_is_fed_back_to_code_regeneration():
    from agents.code_generator import GeneratedCode
    from reprolab.steps.code import code_problems

    design = SimulationDesign.model_validate(_design(sweep=None))
    code = GeneratedCode(
        stage_id="stage3_pairs_sweep",
        code="import socket\nopen('out.csv', 'w').write('x,y\\n')\n",
        expected_outputs=["out.csv"],
        estimated_runtime_minutes=1,
    )
    problems = code_problems(code, design)
    assert any("import of 'socket'" in p for p in problems)


def test_runtime_guard_contains_what_static_checks_cannot_see(tmp_path, monkeypatch):
    # Paths and module names built at run time slip past the AST checks; the
    # audit hook in every rank still refuses them.
    outside = tmp_path.parent / "outside.txt"
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    code = (
        "import importlib, os\n"
        f"name = ''.join(['/'] + {list(str(outside)[1:])!r})\n"
        "try:\n"
        "    open(name, 'w').write('escaped')\n"
        "except PermissionError as exc:\n"
        "    print('write refused:', exc)\n"
        "sock = importlib.import_module('so' + 'cket')\n"
        "try:\n"
        "    sock.create_connection(('127.0.0.1', 9))\n"
        "except PermissionError as exc:\n"
        "    print('socket refused:', exc)\n"
        "open('inside.txt', 'w').write('fine')\n"
        "print('key:', os.environ.get('ANTHROPIC' + '_API_KEY'))\n"
    )
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-secret")
    record = run_job(job(run_dir, code, memory_mb=2048))
    assert record["exit_code"] == 0, record["stderr_tail"]
    assert not outside.exists()
    assert "write refused: sandbox: writing" in record["stdout_tail"]
    assert "socket refused: sandbox: resolving a network name" in record["stdout_tail"]
    assert "key: None" in record["stdout_tail"]
    assert [f["name"] for f in record["output_files"]] == ["inside.txt"]
    # An uncaught refusal is classified as a sandbox violation for regeneration.
    record = run_job(job(run_dir, code.replace("except PermissionError", "except KeyError")))
    assert record["failure"]["kind"] == "sandbox_violation"
    assert record["failure"]["action"] == "regenerate_code"


def test_network_namespace_where_the_os_allows_it(tmp_path):
    ok, why = sandbox.network_isolation_available()
    if not ok:
        pytest.skip(f"no network namespace here: {why}")  # the runtime guard still applies
    code = "print(open('/proc/net/dev').read())\n"
    record = run_job(job(tmp_path, code, isolate_network=True, sandbox=False))
    assert record["exit_code"] == 0, record["stderr_tail"]
    interfaces = [ln.split(":")[0].strip() for ln in record["stdout_tail"].splitlines()[2:]]
    assert [i for i in interfaces if i] == ["lo"]
    assert "--unshare-net" in command_for(SimulationJob("s.py", "/w", isolate_network=True))
    unsafe = SimulationJob("s.py", "/w", isolate_network=True, isolation="unsafe_none")
    assert command_for(unsafe)[:2] == ["unshare", "-n"]
    with pytest.raises(RuntimeError, match="require"):
        sandbox.network_plan("require", launcher_uses_srun=True)


def test_failures_told_apart(tmp_path):
    cases = {
        "python_exception": "raise ValueError('resolution must be positive')\n",
        "nonzero_exit": "import sys\nsys.exit(3)\n",
        "meep_nan": "print('meep: simulation fields are NaN or Inf')\nraise SystemExit(1)\n",
        "out_of_memory": "x = bytearray(8 * 1024**3)\n",
    }
    for kind, code in cases.items():
        record = run_job(job(tmp_path, code, memory_mb=1024))
        assert record["failure"]["kind"] == kind, (kind, record["stderr_tail"])
        assert record["failure"]["summary"] and record["failure"]["action"]
    assert (
        "resolution must be positive"
        in run_job(job(tmp_path, cases["python_exception"]))["failure"]["summary"]
    )
    record = run_job(job(tmp_path, "import time\ntime.sleep(30)\n", timeout_s=1))
    assert record["timed_out"] and record["failure"]["kind"] == "timeout"
    assert record["runtime_seconds"] < 10
    assert run_job(job(tmp_path, "print('ok')\n"))["failure"] is None
    # What only Slurm can tell (state from scontrol show job).
    base = {"exit_code": None, "stdout_tail": "", "stderr_tail": ""}
    for state, kind, action in [
        ({"JobState": "TIMEOUT"}, "timeout", "ask_user"),
        ({"JobState": "OUT_OF_MEMORY"}, "out_of_memory", "ask_user"),
        ({"JobState": "CANCELLED", "Reason": "None"}, "cancelled", "resubmit"),
        ({"JobState": "NODE_FAIL", "NodeList": "n1"}, "node_failure", "resubmit"),
        ({"JobState": "PREEMPTED"}, "preempted", "resubmit"),
        ({"JobState": "REQUEUED", "Restarts": "1"}, "preempted", "resubmit"),
    ]:
        got = classify_failure(base, state)
        assert (got["kind"], got["action"]) == (kind, action), state
    # srun's own words when no task could start; it exits 0 all the same.
    launch = dict(
        base, exit_code=0, stderr_tail="srun: error: task 0 launch failed: Unspecified error\n"
    )
    assert classify_failure(launch)["kind"] == "launch_failed"


def test_submitit_local_executor_runs_the_job_in_another_process(tmp_path):
    record = submit(
        job(tmp_path, "import os\nprint('pid', os.getpid())\n"), "local", tmp_path / "s"
    )
    assert record["exit_code"] == 0 and record["executor"] == "local"
    assert record["job_id"] and f"pid {os.getpid()}" not in record["stdout_tail"]
    assert record["mpi"]["size"] == 1


def test_two_ranks_start_under_a_process_where_mpi_was_initialised(tmp_path):
    # `import meep` initialises MPI as a singleton and leaves PMIX_*/OMPI_* in the
    # C environment; its children (here: the pipeline run from a test session that
    # imported meep) inherit them, and a nested mpirun then exits 1 with no output.
    script = tmp_path / "sim.py"
    script.write_text("print('hello')\n")
    record_path = tmp_path / "record.json"
    child = (
        "import json, sys\n"
        "from reprolab.jobs.launch import SimulationJob, run_job\n"
        f"job = SimulationJob(script={str(script)!r}, workdir={str(tmp_path)!r}, mpi_ranks=2,"
        " python=sys.executable, timeout_s=120)\n"
        f"open({str(record_path)!r}, 'w').write(json.dumps(run_job(job)))\n"
    )
    parent = f"import subprocess, sys, meep\nsubprocess.run([sys.executable, '-c', {child!r}])\n"
    subprocess.run([sys.executable, "-c", parent], capture_output=True, timeout=180, check=True)
    record = json.loads(record_path.read_text())
    assert record["exit_code"] == 0, record["stderr_tail"]
    assert record["mpi"]["size"] == 2
    assert record["stdout_tail"].count("hello") == 2


def test_a_one_rank_run_starts_no_mpi_daemon(tmp_path):
    # `import meep` without a launcher makes Open MPI fork orted for the process's
    # lifetime (~0.1 s per run and per packed worker); one rank needs none.
    # The sandbox's own PID namespace: every process the run has, and nothing else.
    listing = (
        "import os\n"
        "import meep\n"
        "names = [open(f'/proc/{p}/comm').read().strip() for p in os.listdir('/proc')"
        " if p.isdigit()]\n"
        "print('PROCESSES', sorted(names))\n"
    )
    record = run_job(job(tmp_path, listing, timeout_s=120))
    assert record["exit_code"] == 0, record["stderr_tail"]
    assert record["mpi"]["size"] == 1
    line = next(ln for ln in record["stdout_tail"].splitlines() if ln.startswith("PROCESSES"))
    assert "python" in line and "orted" not in line, line


def _design(sweep):
    return minimal_design(
        "stage3_pairs_sweep",
        summary="test sweep",
        output_specifications=[{"file": "out.csv", "columns": ["n", "y"], "description": "y"}],
        performance_estimate={"runtime_seconds": 1, "memory_mb": 100, "mpi_ranks": 1},
        sweep=sweep,
    )


SWEEP_CODE = (
    "import json, os\n"
    "n = json.loads(os.environ['REPROLAB_SWEEP_VALUE'])\n"
    "if n == 3 and os.environ.get('REPROLAB_TEST_FLAKY'):\n"
    "    raise RuntimeError('point failed on purpose')\n"
    "open('out.csv', 'w').write(f'n,y\\n{n},{n * n}\\n')\n"
)


def test_sweep_gathers_points_and_reruns_only_the_failed_one(tmp_path, monkeypatch):
    design = SimulationDesign.model_validate(_design({"parameter": "n", "values": [1, 2, 3, 4, 5]}))
    script = tmp_path / "simulation.py"
    script.write_text(SWEEP_CODE)
    cfg = {"executor": "local", "max_concurrent_jobs": 2}
    monkeypatch.setenv("REPROLAB_TEST_FLAKY", "1")
    first = stage_run.run_stage(design, 1, cfg, script, tmp_path / "stage")
    assert first["failure"]["failed_points"] == [2]
    assert "point 2 (n=3)" in first["failure"]["summary"]
    assert "point failed on purpose" in first["failure"]["summary"]
    assert first["failure"]["kind"] == "python_exception"
    assert not (tmp_path / "stage/run/out.csv").exists()  # nothing half-gathered
    monkeypatch.delenv("REPROLAB_TEST_FLAKY")
    second = stage_run.run_stage(design, 1, cfg, script, tmp_path / "stage")
    assert second["failure"] is None
    assert [p["reused"] for p in second["points"]] == [True, True, False, True, True]
    assert (tmp_path / "stage/run/out.csv").read_text() == "n,y\n1,1\n2,4\n3,9\n4,16\n5,25\n"
    assert second["sweep"]["values"] == [1, 2, 3, 4, 5]
    assert [f["name"] for f in second["output_files"]] == ["out.csv"]


def test_refused_script_is_never_submitted(tmp_path):
    design = SimulationDesign.model_validate(_design(None))
    script = tmp_path / "simulation.py"
    script.write_text("import subprocess\nsubprocess.run(['curl', 'evil'])\n")
    record = stage_run.run_stage(design, 1, {"executor": "local"}, script, tmp_path / "stage")
    assert record["job_id"] is None and record["failure"]["kind"] == "sandbox_refused"
    assert "import of 'subprocess'" in record["stderr_tail"]
    assert not (tmp_path / "stage/submitit").exists()
    json.dumps(record)  # the record is plain JSON


def test_resources_from_budget_and_estimate():
    design = SimulationDesign.model_validate(
        {
            **_design(None),
            "performance_estimate": {"runtime_seconds": 900, "memory_mb": 6000, "mpi_ranks": 8},
        }
    )
    res, timeout_s, notes = stage_run.resources_for(
        design, 10, {"max_mpi_ranks": 2, "max_memory_mb": 4000}
    )
    assert res == Resources(ranks=2, mem_mb=4000, time_min=11) and timeout_s == 600
    assert len(notes) == 3 and "max_mpi_ranks=2" in notes[0]
    # A sweep's budget is the whole stage's: each point gets its wave's share.
    sweep = SimulationDesign.model_validate(_design({"parameter": "n", "values": list(range(8))}))
    res, timeout_s, notes = stage_run.resources_for(sweep, 10, {"max_concurrent_jobs": 2})
    assert timeout_s == 150 and res.time_min == 4  # 4 waves of 2 in 600 s
    assert "8 points in 4 wave(s)" in notes[0]
    _, timeout_s, _ = stage_run.resources_for(sweep, 10, {"max_concurrent_jobs": 8})
    assert timeout_s == 600
    _, timeout_s, notes = stage_run.resources_for(sweep, 2, {"max_concurrent_jobs": 1})
    assert timeout_s == 60 and "at least 60 s" in notes[0]  # Slurm's minute floor
    settings = ClusterSettings.from_config(
        {"executor": "slurm", "slurm": {"partition": "p", "qos": "q", "extra_sbatch": {"x": 1}}}
    )
    assert (settings.partition, settings.qos, settings.extra_sbatch) == ("p", "q", {"x": 1})
    with pytest.raises(ValueError, match="valid: auto, require, off"):
        stage_run.SandboxSettings.from_config({"sandbox": {"network": "maybe"}})


def test_pending_jobs_that_must_not_wait_longer():
    for reason in ("PartitionTimeLimit", "BadConstraints", "QOSMaxWallDurationPerJobLimit"):
        got = pending_verdict({"JobState": "PENDING", "Reason": reason}, 0, 30)
        assert got["kind"] == "unschedulable" and reason in got["summary"], got
        assert got["action"] == "ask_user"
    for reason in ("Resources", "Priority", "ReqNodeNotAvail", "BeginTime", "QOSGrpCpuLimit"):
        state = {"JobState": "PENDING", "Reason": reason}
        assert pending_verdict(state, 29 * 60, 30) is None, reason
        got = pending_verdict(state, 31 * 60, 30)
        assert got["kind"] == "queue_timeout" and f"reason {reason}" in got["summary"]
        assert got["action"] == "ask_user"
        assert pending_verdict(state, 10**6, 0) is None  # 0: no limit
    assert ClusterSettings.from_config({"queue_wait_minutes": 5}).queue_wait_min == 5
    assert ClusterSettings.from_config({}).queue_wait_min == 30
    with pytest.raises(ValueError, match="queue_wait_minutes is -1; valid: 0"):
        ClusterSettings.from_config({"queue_wait_minutes": -1})


def test_every_failure_record_says_what_to_do():
    # The checks and the decision step act on failure.action; every kind has one.
    for kind, (action, words) in FAILURES.items():
        got = failure(kind, "detail", "log")
        assert set(got) == {"kind", "summary", "action", "log_tail"}, kind
        assert got["action"] == action in ACTIONS and got["summary"].startswith(words), kind


def test_a_stage_config_names_its_jobs_without_changing_the_config(tmp_path):
    from reprolab.jobs import submit

    cfg = {"executor": "slurm", "max_mpi_ranks": 2}
    named = submit.named_config(cfg, "paper_x", "stage1_a", tmp_path)
    assert named["job_name"] == submit.job_name("paper_x", "stage1_a", tmp_path)
    assert named["job_name"].startswith("reprolab-paper_x-stage1_a-")
    assert "job_name" not in cfg and named["max_mpi_ranks"] == 2


def test_a_cancel_that_killed_the_sandbox_probe_is_a_cancel_not_a_missing_sandbox():
    unavailable = failure("sandbox_unavailable", "the bwrap probe was killed by signal 15", "")
    record = {"exit_code": 1, "sandbox_failure": unavailable}
    got = classify_failure(record, {"JobState": "CANCELLED by 0"})
    assert got["kind"] == "cancelled" and got["action"] == "resubmit"
    # Not cancelled: a machine without namespaces is still said to be one.
    assert classify_failure(record, {"JobState": "FAILED"})["kind"] == "sandbox_unavailable"
    # A limit the sandbox saw crossed keeps its kind even when the job was then cancelled.
    limit = {"exit_code": 1, "sandbox_failure": failure("out_of_memory", "over", "")}
    assert classify_failure(limit, {"JobState": "CANCELLED"})["kind"] == "out_of_memory"


def test_a_killed_bwrap_probe_is_not_reported_as_missing_namespaces(monkeypatch):
    from reprolab.jobs import bwrap

    killed = subprocess.CompletedProcess([], -15, "", "")
    monkeypatch.setattr(bwrap.subprocess, "run", lambda *a, **k: killed)
    monkeypatch.setattr(bwrap.shutil, "which", lambda _: "/usr/bin/bwrap")
    bwrap.availability.cache_clear()
    try:
        ok, why = bwrap.availability()
    finally:
        bwrap.availability.cache_clear()
    assert not ok and "killed by signal 15" in why and "namespaces" not in why
