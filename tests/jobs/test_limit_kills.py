"""A run stopped by a limit (the wall, the CPU, memory, a Slurm time limit) or paused
from outside is never taken for a fault of its code: no limit sends it back for new
code, and a run paused longer than its budget is not charged for the pause."""

import os
import signal
import subprocess
import sys
import threading
import time

from reprolab.jobs import limits
from reprolab.jobs.failures import classify_failure
from reprolab.jobs.launch import SimulationJob, run_job
from reprolab.jobs.run_clock import RunClock, charge
from reprolab.jobs.submit import ClusterSettings, Resources, executor_for, submit

BUSY = "while True:\n    pass\n"


def job(tmp_path, code: str, name: str = "sim", **kw) -> SimulationJob:
    script = tmp_path / f"{name}.py"
    script.write_text(code)
    return SimulationJob(script=str(script), workdir=str(tmp_path), python=sys.executable, **kw)


def test_a_stopped_process_is_charged_nothing():
    assert charge(1.0, 0.0, 1, runnable=False, stopped=True) == 0.0
    proc = subprocess.Popen([sys.executable, "-c", BUSY])
    try:
        clock = RunClock(cpu_share=True)
        os.kill(proc.pid, signal.SIGSTOP)
        time.sleep(0.2)  # the kernel marks it stopped
        clock.tick([proc.pid])
        time.sleep(1.0)
        assert clock.tick([proc.pid]) < 0.05, clock.summary()
        assert clock.summary()["stopped_s"] >= 0.9
    finally:
        proc.kill()
        proc.wait()


def _stop_for(pattern: str, seconds: float, log: list) -> threading.Thread:
    """SIGSTOP every process whose command line holds `pattern` once one appears,
    SIGCONT them `seconds` later (what a laptop's sleep or Ctrl-Z does to a run)."""

    def pause() -> None:
        deadline = time.time() + 60
        while time.time() < deadline:
            found = subprocess.run(
                ["pgrep", "-f", pattern], capture_output=True, text=True
            ).stdout.split()
            pids = [int(p) for p in found if int(p) != os.getpid()]
            if pids:
                for pid in pids:
                    os.kill(pid, signal.SIGSTOP)
                log.append(time.time())
                time.sleep(seconds)
                for pid in pids:
                    os.kill(pid, signal.SIGCONT)
                log.append(time.time())
                return
            time.sleep(0.05)

    thread = threading.Thread(target=pause, daemon=True)
    thread.start()
    return thread


def test_a_run_paused_longer_than_its_limit_finishes(tmp_path):
    """Paused 4 s against a 2 s limit, a run needing about a second of CPU ends well;
    on the old clock (wall while not runnable) it was stopped at its limit."""
    marker = "paused_run_marker"
    code = "import time\nt = time.process_time()\n"
    code += "while time.process_time() - t < 1.0:\n    pass\nprint('done')\n"
    log: list = []
    thread = _stop_for(marker, 4.0, log)
    record = run_job(job(tmp_path, code, marker, timeout_s=2.0))
    thread.join()
    assert len(log) == 2 and log[1] - log[0] >= 4.0
    assert record["failure"] is None, record["failure"]
    assert "done" in record["stdout_tail"]
    assert record["time_limit"]["stopped_s"] >= 3.5
    assert record["time_limit"]["charged_s"] < 2.0 < record["time_limit"]["wall_s"]


def test_the_wall_backstop_is_a_busy_machine_resubmitted_not_a_code_error(tmp_path, monkeypatch):
    """A run that gets no CPU for WALL_BACKSTOP limits of wall time (here: stopped from
    outside) is stopped as `machine_busy`, resubmitted with the same code."""
    monkeypatch.setattr(limits, "WALL_BACKSTOP", 4)
    marker = "starved_run_marker"
    log: list = []
    thread = _stop_for(marker, 30.0, log)
    record = run_job(job(tmp_path, BUSY, marker, timeout_s=0.5))
    for pid in subprocess.run(
        ["pgrep", "-f", marker], capture_output=True, text=True
    ).stdout.split():
        os.kill(int(pid), signal.SIGCONT)
    thread.join(timeout=0)
    failure = record["failure"]
    assert (failure["kind"], failure["action"]) == ("machine_busy", "resubmit"), failure
    assert record["time_limit"]["wall_s"] < 15


def test_every_limit_kill_is_kept_from_code_regeneration():
    """The kernel's limit signals, Slurm's states and a worker that left no record
    each name the limit; none asks for new code, whatever the log says."""
    traceback = "Traceback (most recent call last):\n  File x\nKeyboardInterrupt\n"
    base = {"stdout_tail": "", "stderr_tail": traceback}
    cases = [
        ({**base, "exit_code": -signal.SIGXCPU}, None, "timeout"),
        ({**base, "exit_code": 128 + signal.SIGXCPU}, None, "timeout"),  # through bwrap
        (
            {**base, "exit_code": 1, "stderr_tail": "mpirun noticed that ... exited on signal 24"},
            None,
            "timeout",
        ),
        ({**base, "exit_code": -signal.SIGXFSZ}, None, "disk_quota"),
        ({**base, "exit_code": None, "worker_lost": True}, None, "worker_lost"),
        ({**base, "exit_code": None, "worker_lost": True}, {"JobState": "TIMEOUT"}, "timeout"),
        ({**base, "exit_code": None, "worker_lost": True}, {"JobState": "CANCELLED"}, "cancelled"),
    ]
    for record, state, kind in cases:
        got = classify_failure(record, state)
        assert got["kind"] == kind, (record, state, got)
        assert got["action"] != "regenerate_code"


def test_submitits_local_timer_never_fires_before_the_runs_own_clock(tmp_path):
    """submitit's local executor kills on wall time: its limit lies beyond the
    watchdog's wall backstop, so only the CPU-share clock and the backstop decide."""
    res = Resources(ranks=1, mem_mb=512, time_min=3)
    local = executor_for(ClusterSettings(executor="local"), res, tmp_path, 1)
    assert local.parameters["timeout_min"] > res.time_min * limits.WALL_BACKSTOP


def test_a_local_worker_killed_from_outside_is_resubmittable(tmp_path):
    """The worker process killed (as submitit's own timer did on a busy laptop): the
    record says so, and its action is a resubmission of the same code."""
    marker = "killed_worker_marker"
    script = tmp_path / f"{marker}.py"
    script.write_text("import time\ntime.sleep(60)\n")

    def kill_worker() -> None:
        deadline = time.time() + 60
        while time.time() < deadline:
            out = subprocess.run(
                ["pgrep", "-f", "submitit.core._submit"], capture_output=True, text=True
            ).stdout.split()
            running = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True)
            if out and running.stdout.strip():
                for pid in out:
                    os.kill(int(pid), signal.SIGKILL)
                return
            time.sleep(0.1)

    killer = threading.Thread(target=kill_worker, daemon=True)
    killer.start()
    sim = SimulationJob(
        script=str(script), workdir=str(tmp_path / "run"), python=sys.executable, timeout_s=60
    )
    (tmp_path / "run").mkdir()
    record = submit(sim, "local", tmp_path / "submitit")
    killer.join()
    assert record["failure"]["kind"] == "worker_lost", record["failure"]
    assert record["failure"]["action"] == "resubmit"


def test_a_run_stopped_at_its_limit_keeps_what_it_used(tmp_path):
    """Ranks report their use as they run, so a run stopped at a limit (here its
    CPU-share time limit; on Slurm its TIMEOUT, which ends it without an exit) still
    records the CPU it burned, not nothing."""
    record = run_job(job(tmp_path, BUSY, "used_run", timeout_s=7.0))
    assert record["failure"]["kind"] == "timeout"
    (usage,) = record["rank_usage"]
    assert usage["cpu_s"] > 3.0 and usage["peak_mb"] > 5, usage
    from reprolab.jobs.job_size import actual_use

    core_s, mem = actual_use(record)
    assert core_s > 3.0 and mem > 5
