"""The clock a local run's time limit is judged on.

On a shared machine a local simulation waits for a core as often as it runs: judged on
wall time, a login node at load 14 stops a run that used a fraction of its budget. The
`cpu_share` clock charges, each watchdog tick, the wall time while the run's processes
sleep (a hung run still stops) and only the CPU time they got, per rank, while they
are runnable and waiting for a core (a busy machine slows a run down instead of
stopping it), and nothing while any of them is stopped from outside (SIGSTOP, a
suspended terminal, a debugger): a paused run has not used its time. A Slurm job has
its cores to itself: its clock is the wall.
"""

from __future__ import annotations

import os
import time

TICK_S = os.sysconf("SC_CLK_TCK")


def proc_stat(pid: int) -> tuple[str, float] | None:
    """(state letter, user + system CPU seconds) of a process; None once it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            text = fh.read().decode(errors="replace")
    except OSError:
        return None
    fields = text.rsplit(")", 1)[-1].split()  # after the command name, which may hold spaces
    try:
        return fields[0], (int(fields[11]) + int(fields[12])) / TICK_S
    except (IndexError, ValueError):
        return None


STOPPED_STATES = {"T", "t"}  # stopped by a signal, or by a tracer


def charge(dt: float, cpu_delta: float, ranks: int, runnable: bool, stopped: bool = False) -> float:
    """The time one tick of `dt` wall seconds costs a run: nothing while it is stopped
    from outside, the CPU it got per rank while it waits to run (never more than the
    wall), the wall while it sleeps."""
    if stopped:
        return 0.0
    if not runnable:
        return dt
    return max(0.0, min(dt, cpu_delta / max(1, ranks)))


class RunClock:
    """Seconds charged to a run since it started: the wall (`cpu_share=False`) or the
    CPU-share clock above. `tick(pids)` once per watchdog poll."""

    def __init__(self, ranks: int = 1, cpu_share: bool = True):
        self.ranks, self.cpu_share = ranks, cpu_share
        self.started = self.last = time.monotonic()
        self.charged_s = 0.0
        self.cpu_s = 0.0
        self.stopped_s = 0.0
        self._seen: dict[int, float] = {}  # each process's CPU seconds, kept once it ends

    @property
    def wall_s(self) -> float:
        return time.monotonic() - self.started

    def tick(self, pids: list[int]) -> float:
        now = time.monotonic()
        dt, self.last = now - self.last, now
        # CPU is read on either clock: the run record's core-seconds (job sizing).
        runnable = stopped = False
        for pid in pids:
            stat = proc_stat(pid)
            if stat is None:
                continue
            runnable = runnable or stat[0] == "R"
            stopped = stopped or stat[0] in STOPPED_STATES
            self._seen[pid] = max(self._seen.get(pid, 0.0), stat[1])
        cpu = sum(self._seen.values())
        if stopped:
            self.stopped_s += dt
        if self.cpu_share:
            self.charged_s += charge(dt, cpu - self.cpu_s, self.ranks, runnable, stopped)
        else:
            self.charged_s += dt
        self.cpu_s = cpu
        return self.charged_s

    def summary(self) -> dict:
        kind = "cpu_share" if self.cpu_share else "wall"
        return {
            "clock": kind,
            "charged_s": round(self.charged_s, 1),
            "wall_s": round(self.wall_s, 1),
            "cpu_s": round(self.cpu_s, 2),
            "stopped_s": round(self.stopped_s, 1),
        }


def local_run() -> bool:
    """This worker is not a Slurm job (a local executor): judge its limit on CPU share."""
    return "SLURM_JOB_ID" not in os.environ
