import os
import sys

from reprolab.simulate import SimulationJob, run_job, scrubbed_env, submit


def test_secrets_never_reach_generated_code(tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-secret")
    monkeypatch.setenv("MY_SERVICE_TOKEN", "t0ken")
    script = tmp_path / "leak.py"
    script.write_text(
        "import os\n"
        "open('env.txt', 'w').write('\\n'.join(f'{k}={v}' for k, v in os.environ.items()))\n"
    )
    record = run_job(
        SimulationJob(script=str(script), workdir=str(tmp_path), python=sys.executable)
    )
    assert record["exit_code"] == 0
    dumped = (tmp_path / "env.txt").read_text()
    assert "sk-ant-secret" not in dumped and "t0ken" not in dumped
    assert "PATH=" in dumped
    assert "ANTHROPIC_API_KEY" not in scrubbed_env({"ANTHROPIC_API_KEY": "x", "PATH": "/bin"})


def test_failure_timeout_and_outputs_recorded(tmp_path):
    script = tmp_path / "sim.py"
    script.write_text("import sys\nopen('out.csv', 'w').write('a\\n1\\n')\nsys.exit('boom')\n")
    record = run_job(
        SimulationJob(script=str(script), workdir=str(tmp_path), python=sys.executable)
    )
    assert record["exit_code"] == 1 and "boom" in record["stderr_tail"]
    assert [f["name"] for f in record["output_files"]] == ["out.csv"]
    script.write_text("import time\ntime.sleep(30)\n")
    record = run_job(
        SimulationJob(script=str(script), workdir=str(tmp_path), timeout_s=1, python=sys.executable)
    )
    assert record["timed_out"] and record["exit_code"] != 0
    assert record["runtime_seconds"] < 10


def test_submitit_local_executor_runs_the_job_in_another_process(tmp_path):
    script = tmp_path / "sim.py"
    script.write_text("import os\nprint('pid', os.getpid())\n")
    record = submit(
        SimulationJob(script=str(script), workdir=str(tmp_path), python=sys.executable),
        executor="local",
        log_folder=tmp_path / "submitit",
    )
    assert record["exit_code"] == 0 and record["executor"] == "local"
    assert record["job_id"] and f"pid {os.getpid()}" not in record["stdout_tail"]
