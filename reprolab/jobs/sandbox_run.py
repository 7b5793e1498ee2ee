"""Entry point of one MPI rank: `python -m reprolab.jobs.sandbox_run [options] SCRIPT`.

Started by the MPI launcher (or alone for one rank) in the stage's run
directory. It records which MPI ranks saw each other (rank 0 writes
`.mpi.json`: size, and rank/host/pid of every rank, gathered over MPI), registers
the write of its own CPU seconds and peak memory at exit (`.usage.<rank>.json`: the
run's actual use, measured where the rank runs, also under srun), opens the
run-time record's channel to the launcher (`reprolab.physics.as_built`), installs
the sandbox's runtime guard (`reprolab.jobs.sandbox.runtime_guard`) and runs the
script as `__main__`.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import json
import os
import resource
import runpy
import socket
import sys
import threading

from reprolab.physics.as_built import install_as_built_recorder

MPI_INFO_FILE = ".mpi.json"


def record_mpi(workdir: str) -> None:
    try:
        from mpi4py import MPI  # initialises MPI before Meep does; Meep reuses it
    except ImportError:
        info = {"size": 1, "ranks": [{"rank": 0, "host": socket.gethostname()}], "mpi": None}
    else:
        comm = MPI.COMM_WORLD
        me = {
            "rank": comm.Get_rank(),
            "host": socket.gethostname(),
            "pid": os.getpid(),
            # srun ranks are separate sandboxes: each may be pid 2 in its own namespace.
            "pid_ns": _pid_namespace(),
            "slurm_procid": os.environ.get("SLURM_PROCID"),
            "slurm_step_id": os.environ.get("SLURM_STEP_ID"),
        }
        ranks = comm.allgather(me)
        info = {"size": comm.Get_size(), "ranks": ranks, "mpi": MPI.Get_library_version()[:80]}
        if comm.Get_rank() != 0:
            return
    with open(os.path.join(workdir, MPI_INFO_FILE), "w", encoding="utf-8") as fh:
        json.dump(info, fh)


USAGE_PREFIX = ".usage."
RANK_ENVS = ("OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID")


USAGE_EVERY_S = 5.0


def record_usage(workdir: str) -> None:
    """Every USAGE_EVERY_S and at exit: this rank's user + system CPU seconds and peak
    resident MB (itself and what it waited on), as the rank reports them, in
    `.usage.<rank>.json` (created anew under the umask, never written through a link).
    The periodic writes keep what a run used when it is killed (a Slurm time limit
    ends it without an exit), to within USAGE_EVERY_S."""
    rank = next((os.environ[k] for k in RANK_ENVS if os.environ.get(k, "").isdigit()), "0")
    path = os.path.join(workdir, f"{USAGE_PREFIX}{rank}.json")

    def write() -> None:
        me, kids = (
            resource.getrusage(resource.RUSAGE_SELF),
            resource.getrusage(resource.RUSAGE_CHILDREN),
        )
        usage = {
            "rank": int(rank),
            "cpu_s": round(me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime, 3),
            "peak_mb": round(max(me.ru_maxrss, kids.ru_maxrss) / 1024, 1),
        }
        try:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)  # whatever the script left there, a link included
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o666)
        except OSError:
            return  # the figures are a report; the run's own outcome stands
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(usage, fh)

    def every() -> None:
        while not stop.wait(USAGE_EVERY_S):
            write()

    stop = threading.Event()
    threading.Thread(target=every, name="reprolab-usage", daemon=True).start()
    atexit.register(write)
    atexit.register(stop.set)  # runs first: no periodic write races the last one


def _pid_namespace() -> str | None:
    try:
        return os.readlink("/proc/self/ns/pid")
    except OSError:
        return None


def per_run_records(workdir: str) -> None:
    """What every run records in its folder, also each point of a packed sweep worker
    (reprolab.jobs.sweep_worker): the MPI record, and what Meep built."""
    record_mpi(workdir)
    install_as_built_recorder(workdir)  # the simulation Meep built, streamed to the launcher


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m reprolab.jobs.sandbox_run")
    parser.add_argument("--memory-mb", type=int, default=0, help="address-space limit per rank")
    parser.add_argument("--cpu-seconds", type=int, default=0, help="CPU-time limit per rank")
    parser.add_argument("--no-guard", action="store_true", help="skip the audit hook")
    parser.add_argument("script")
    args = parser.parse_args(argv)
    workdir = os.getcwd()
    record_usage(workdir)
    per_run_records(workdir)
    if not args.no_guard:
        from reprolab.jobs.sandbox import runtime_guard

        runtime_guard(workdir, args.memory_mb or None, args.cpu_seconds or None)
    sys.argv = [args.script]
    sys.path.insert(0, workdir)
    runpy.run_path(args.script, run_name="__main__")


if __name__ == "__main__":
    main()
