"""A local run's time limit on a busy machine: judged on the CPU it got while it waits
for a core, on the wall while it sleeps (a hung run still stops), so a shared login
node slows a run down instead of stopping it."""

import contextlib
import os
import subprocess
import sys
import time

import pytest

from reprolab.jobs import limits
from reprolab.jobs.failures import timeout_words
from reprolab.jobs.run_clock import RunClock, charge, proc_stat

BUSY = [sys.executable, "-c", "while True: pass"]


def test_charge_per_tick():
    assert charge(1.0, 0.25, 1, runnable=True) == 0.25  # waited for a core 3/4 of the tick
    assert charge(1.0, 1.0, 2, runnable=True) == 0.5  # two ranks sharing one core
    assert charge(1.0, 5.0, 1, runnable=True) == 1.0  # never more than the wall
    assert charge(1.0, 0.0, 1, runnable=False) == 1.0  # asleep or hung: the wall


def watch(cmd, timeout_s, cpu_share, run_s, **popen):
    proc = subprocess.Popen(cmd, start_new_session=True, **popen)
    box = limits.Limits(timeout_s=timeout_s, cpu_share=cpu_share, folder_mb=0)
    dog = limits.Watchdog(proc.pid, box, [], None)
    dog.start()
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=run_s)
    dog.stop()
    dog.join()
    if proc.poll() is None:
        proc.kill()
        proc.wait()
    return dog


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="needs CPU affinity")
def test_a_run_sharing_its_core_is_charged_its_share():
    """Four busy loops on one core: the watched one gets about a quarter of it, so 2 s
    of wall cost about 0.5 s and a 1.2 s limit is not reached; on the wall clock the
    same run is stopped."""
    cpu = sorted(os.sched_getaffinity(0))[0]

    def pin():
        os.sched_setaffinity(0, {cpu})

    # Each in its own session as the watched run is: with autogroup scheduling a
    # session shares a core as one, so rivals in ours would leave the run half of it.
    rivals = [subprocess.Popen(BUSY, preexec_fn=pin, start_new_session=True) for _ in range(3)]
    try:
        dog = watch(BUSY, 1.2, True, 2.0, preexec_fn=pin)
        assert not dog.timed_out, dog.clock.summary()
        # about a quarter of the wall time; well under it on a machine busy elsewhere too
        assert 0.2 < dog.clock.charged_s < 0.75 * dog.clock.wall_s and dog.clock.wall_s > 1.9
        wall = watch(BUSY, 1.2, False, 2.0, preexec_fn=pin)
        assert wall.timed_out and wall.clock.summary()["clock"] == "wall"
    finally:
        for p in rivals:
            p.kill()
            p.wait()


def test_a_hung_run_still_stops_on_the_cpu_share_clock():
    started = time.monotonic()
    dog = watch(["sleep", "30"], 0.5, True, 10.0)
    assert dog.timed_out and time.monotonic() - started < 3
    assert dog.clock.summary()["clock"] == "cpu_share"


def test_proc_stat_reads_a_name_with_spaces_and_a_gone_process():
    proc = subprocess.Popen(["sleep", "5"])
    state, cpu = proc_stat(proc.pid)
    assert state in "SR" and cpu >= 0
    proc.kill()
    proc.wait()
    assert proc_stat(proc.pid) is None
    clock = RunClock(cpu_share=True)
    assert clock.tick([proc.pid]) >= 0  # a process gone between listing and reading


def test_timeout_words_name_the_clock():
    record = {
        "timeout_s": 300,
        "time_limit": {"clock": "cpu_share", "charged_s": 301.0, "wall_s": 2100.0},
    }
    assert timeout_words(record) == (
        "stopped after 300 s (limit), judged on the CPU it got: 301.0 s charged over "
        "2100.0 s of wall time"
    )
    assert timeout_words({"timeout_s": 300}) == "stopped after 300 s (limit)"
