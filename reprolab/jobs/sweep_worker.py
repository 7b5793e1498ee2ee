"""Entry point of one packed sweep worker, inside its sandbox:
`python -m reprolab.jobs.sweep_worker [--memory-mb N] [--writable DIR ...] ROOT PLAN`.

One process runs its points one after another (Meep and MPI start once, not once
per point), each in its own point folder as `__main__`, with the point's
environment (a sweep's REPROLAB_SWEEP_*, a coarser run's scale variables: each point
names every variable it sets, so nothing leaks from the point before), its
stdout/stderr in the point's stdout.txt and
stderr.txt, its MPI record and as-built record (the per-run hooks of
`reprolab.jobs.sandbox_run`), and its own time limit. A point that fails (an
exception, sys.exit, its time limit) is recorded in `.point_exit.json` and the
worker goes on with the next; one that takes the process down is told by the
host (`reprolab.jobs.packed`) from `.current_point`, and the points after it run
in a new worker. The runtime guard allows writing under ROOT only (the sweep's
points folder) and the --writable folders (the points' own folders where they share
no parent: a stage's coarser runs).

Each point's record says what it used: its own CPU seconds, its own peak resident
memory (sampled while it runs, after the previous point's objects were collected) and
the worker's CPU so far (`worker_cpu_s`: the interpreter's start and imports
included, so that a stage's packed runs can be charged in full)."""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import gc
import json
import os
import resource
import runpy
import signal
import sys
import threading
import time
import traceback

from reprolab.jobs.run_clock import RunClock, local_run
from reprolab.jobs.sandbox_run import per_run_records
from reprolab.physics.as_built import open_channel

EXIT_FILE = ".point_exit.json"
CURRENT_FILE = ".current_point"
TIMEOUT_EXIT = -signal.SIGALRM


class PointTimeout(BaseException):
    """Raised in the point's code when its time limit is over (not an Exception, so
    that a script's `except Exception` does not swallow it)."""


def _on_alarm(_signum, _frame):
    raise PointTimeout


@contextlib.contextmanager
def _output_to(folder: str):
    """fd 1 and 2 (Python's and C's: Meep prints from C++) into the point's files."""
    libc = _LIBC
    saved = os.dup(1), os.dup(2)
    sys.stdout.flush(), sys.stderr.flush()
    libc.fflush(None)
    with (
        open(os.path.join(folder, "stdout.txt"), "wb") as out,
        open(os.path.join(folder, "stderr.txt"), "wb") as err,
    ):
        os.dup2(out.fileno(), 1), os.dup2(err.fileno(), 2)
        try:
            yield
        finally:
            sys.stdout.flush(), sys.stderr.flush()
            libc.fflush(None)
            os.dup2(saved[0], 1), os.dup2(saved[1], 2)
            os.close(saved[0]), os.close(saved[1])


_LIBC = ctypes.CDLL(None, use_errno=True)


def _chdir(folder: str) -> None:
    """Into the next point's folder. Not os.chdir: the runtime guard refuses that
    (the script must not leave its folder); the worker moves between its points, all
    under the guard's root, and the OS sandbox bounds it either way."""
    if _LIBC.chdir(os.fsencode(folder)) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err), folder)


def exit_status(exc: SystemExit) -> int:
    """The status a process ending with `exc` exits with, as Python itself gives it
    (a non-integer code printed to stderr, status 1)."""
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code
    print(exc.code, file=sys.stderr)
    return 1


def run_point(point: dict) -> dict:
    """Run one point's script in its folder; how it ended."""
    folder, script = point["workdir"], point["script"]
    _chdir(folder)
    os.environ.update(point.get("env") or {})
    sys.argv, sys.path[0:0] = [script], [folder]
    code, timed_out = 0, False
    gc.collect()  # the point before's Meep objects, so that this point's peak is its own
    started, used_before = time.time(), _cpu_s()
    with _output_to(folder), _point_clock(float(point["timeout_s"])) as use:
        per_run_records(folder)  # the same records a single run makes
        try:
            runpy.run_path(script, run_name="__main__")
        except SystemExit as exc:
            code = exit_status(exc)
        except PointTimeout:
            code, timed_out = TIMEOUT_EXIT, True
            print(f"reprolab: stopped after {point['timeout_s']} s (limit)", file=sys.stderr)
        except BaseException:  # the script's own failure, recorded as its exit status 1
            traceback.print_exc()
            code = 1
    sys.path.remove(folder)
    own_peak = max(use["peak_mb"], _resident_mb())
    own_cpu = round(_cpu_s() - used_before, 3)
    return {
        "exit_code": code,
        "timed_out": timed_out,
        "started_at": round(started, 3),
        "runtime_seconds": round(time.time() - started, 3),
        # This point's own use: its CPU and its sampled peak; the worker's CPU so far
        # and its peak so far (an upper bound on any one point's).
        "cpu_s": own_cpu,
        "peak_mb": round(own_peak, 1),
        # the clock the point's limit was judged on, as a single run's record has it
        "time_limit": {**use["clock"].summary(), "cpu_s": own_cpu},
        "worker_cpu_s": round(_cpu_s(), 3),
        "worker_peak_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


@contextlib.contextmanager
def _point_clock(timeout_s: float):
    """The point's time limit on the clock a single run is judged on
    (reprolab.jobs.run_clock): on Slurm the wall, on a local machine the CPU the point
    got while it waits for a core and the wall while it sleeps, nothing while it is
    stopped from outside. Over the limit, SIGALRM ends the point (PointTimeout).
    Yields the point's use: its clock and its sampled resident peak."""
    clock = RunClock(1, cpu_share=local_run())
    # the point's resident peak, sampled with the clock
    use = {"peak_mb": _resident_mb(), "clock": clock}
    halt = threading.Event()

    def watch() -> None:
        while not halt.wait(0.1):
            use["peak_mb"] = max(use["peak_mb"], _resident_mb())
            if clock.tick([os.getpid()]) > timeout_s:
                signal.setitimer(signal.ITIMER_REAL, 0.001)  # the main thread raises
                return

    watcher = threading.Thread(target=watch, name="reprolab-point-clock", daemon=True)
    watcher.start()
    try:
        yield use
    finally:
        halt.set()
        watcher.join()
        signal.setitimer(signal.ITIMER_REAL, 0)


def _resident_mb() -> float:
    """This process's resident memory now (MB), from /proc/self/statm."""
    try:
        with open("/proc/self/statm", encoding="ascii") as fh:
            pages = int(fh.read().split()[1])
    except (OSError, ValueError, IndexError):
        return 0.0
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def _cpu_s() -> float:
    me = resource.getrusage(resource.RUSAGE_SELF)
    return me.ru_utime + me.ru_stime


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m reprolab.jobs.sweep_worker")
    parser.add_argument("--memory-mb", type=int, default=0, help="address-space limit")
    parser.add_argument("--no-guard", action="store_true", help="skip the audit hook")
    parser.add_argument(
        "--writable", action="append", default=[], help="another folder it may write in"
    )
    parser.add_argument("root", help="the sweep's points folder (the only writable place)")
    parser.add_argument("plan", help="JSON: the points to run, in order")
    args = parser.parse_args(argv)
    with open(args.plan, encoding="utf-8") as fh:
        points = json.load(fh)["points"]
    open_channel()  # the record's channel, opened while the guard still allows it
    if not args.no_guard:
        from reprolab.jobs.sandbox import runtime_guard

        runtime_guard([args.root, *args.writable], args.memory_mb or None, None)
    signal.signal(signal.SIGALRM, _on_alarm)
    for point in points:
        with open(os.path.join(point["workdir"], CURRENT_FILE), "w", encoding="utf-8") as fh:
            json.dump({"started_at": time.time()}, fh)
        ended = run_point(point)
        with open(os.path.join(point["workdir"], EXIT_FILE), "w", encoding="utf-8") as fh:
            json.dump(ended, fh)


if __name__ == "__main__":
    main()
