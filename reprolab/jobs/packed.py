"""Packed sweeps: a sweep's points run in a few long-lived workers instead of one
process tree each.

`plan_workers` deals the points to workers (one per core the job was given);
`run_packed` is what one worker's submitit job runs: one sandbox (bubblewrap,
the limits and the watchdog of `reprolab.jobs.launch`) around one
`reprolab.jobs.sweep_worker` process that runs the worker's points one after
another, importing Meep once. Each point gets the record a single run gets
(`launch.run_job`: exit status, time limit, tails of its own stdout/stderr, its
outputs, its MPI record). A point that takes the worker down (a crash, a limit
the watchdog enforces) is recorded with the worker's end, and the points after
it run in a fresh worker, so one failing point never takes others with it."""

from __future__ import annotations

import math
import shutil
import time
from dataclasses import replace
from pathlib import Path

from reprolab.fileio import atomic_write_json
from reprolab.jobs import bwrap, launch, limits, submit
from reprolab.jobs.failures import classify_failure
from reprolab.jobs.launch import SimulationJob
from reprolab.jobs.sweep_worker import CURRENT_FILE, EXIT_FILE


def plan_workers(jobs: list, workers: int) -> list[list]:
    """Deal the points round-robin (neighbouring values cost alike, so each worker
    gets a share of the cheap and the dear ones)."""
    n = max(1, min(workers, len(jobs)))
    return [jobs[k::n] for k in range(n)]


def packable(jobs: list[SimulationJob]) -> bool:
    """Points of one rank each, in the OS sandbox with the runtime guard (what the
    worker reproduces); others run one job per point."""
    return all(j.mpi_ranks == 1 and j.sandbox and j.isolation == "bwrap" for j in jobs)


def worker_command(job: SimulationJob, root: str, plan: Path) -> list[str]:
    cmd = [job.python, "-m", "reprolab.jobs.sweep_worker"]
    if job.memory_mb:
        cmd += ["--memory-mb", str(job.memory_mb)]
    box = bwrap.bwrap_command(
        [*cmd, root, str(plan)], job.workdir, job.script, job.python, not job.isolate_network
    )
    # The worker writes only its points: the sweep's points folder, bound writable.
    at = box.index("--remount-ro")
    return [*box[:at], "--bind", root, root, *box[at:]]


def submit_packed(
    workers: list[list[SimulationJob]],
    worker_dirs: list[str],
    settings: submit.ClusterSettings,
    resources: submit.Resources,
    log_folder: str | Path,
) -> list[list[dict]]:
    """Local executors: one job per worker, all at once (reprolab.jobs.packed), each
    running its points one after another; every point's record, per worker."""
    longest = max(sum(p.timeout_s for p in pts) for pts in workers)
    # submitit's own limit covers the worker's points together, not one point's.
    whole = replace(resources, time_min=math.ceil(longest / 60) + 1)
    ex = submit.executor_for(settings, whole, Path(log_folder), len(workers))
    running = [ex.submit(run_packed, pts, d) for pts, d in zip(workers, worker_dirs, strict=True)]
    wait = submit.FIRST_POLL_S
    while not all(job.done() for job in running):
        wait = submit._pause(wait, settings)
    found = []
    for pts, job in zip(workers, running, strict=True):
        outcome = submit._collect(job, {})
        recs = outcome.record or [None] * len(pts)
        found.append(
            [
                submit._finish(
                    sim, job, submit.Outcome(rec, {}, outcome.error), settings, whole, None
                )
                for sim, rec in zip(pts, recs, strict=True)
            ]
        )
    return found


def run_packed(points: list[SimulationJob], worker_dir: str) -> list[dict]:
    """Executed by the worker's job: every point's raw record, in order."""
    ok, why = bwrap.availability()
    if not ok:
        return [launch.unavailable_record(p, why) for p in points]
    root = str(Path(points[0].workdir).parent)
    records: dict[int, dict] = {}
    todo = list(range(len(points)))
    while todo:
        done = _one_worker([points[i] for i in todo], worker_dir, root)
        for i, rec in zip(todo, done, strict=False):
            records[i] = rec
        todo = todo[len(done) :]
    return [records[i] for i in range(len(points))]


def _one_worker(points: list[SimulationJob], worker_dir: str, root: str) -> list[dict]:
    """Start one worker on `points`; the records of the points it got to (the first
    at least: a worker that ends on a point ends that point)."""
    wdir = Path(worker_dir)
    wdir.mkdir(parents=True, exist_ok=True)
    for folder in bwrap.private_dirs(wdir):
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
    for p in points:
        for name in (EXIT_FILE, CURRENT_FILE, ".mpi.json"):
            (Path(p.workdir) / name).unlink(missing_ok=True)
    plan = wdir / "plan.json"
    atomic_write_json(
        plan,
        {
            "points": [
                {
                    "workdir": p.workdir,
                    "script": p.script,
                    "env": dict(p.env),
                    "timeout_s": p.timeout_s,
                }
                for p in points
            ]
        },
    )
    head = replace(points[0], workdir=str(wdir), env=())
    cmd = worker_command(head, root, plan)
    box = limits.Limits(
        memory_mb=head.memory_mb,
        ranks=1,
        cpu_seconds=int(sum(p.timeout_s for p in points)) + 30,
        max_processes=head.max_processes,
        folder_mb=head.folder_mb * len(points),
        timeout_s=sum(p.timeout_s for p in points) + 30,
    )
    with open(wdir / "stdout.txt", "wb") as out, open(wdir / "stderr.txt", "wb") as err:
        exit_code, dog, group = launch._launch(head, cmd, box, out, err)
    shutil.rmtree(bwrap.private_dirs(wdir)[0], ignore_errors=True)
    shutil.rmtree(bwrap.private_dirs(wdir)[1], ignore_errors=True)
    records = []
    for p in points:
        ended = launch._read_json(Path(p.workdir) / EXIT_FILE)
        if ended is None:
            started = launch._read_json(Path(p.workdir) / CURRENT_FILE)
            if started is None and records:
                break  # not begun: a fresh worker runs it
            records.append(_worker_ended(p, cmd, (exit_code, dog, group, box), wdir, started or {}))
            break
        records.append(_point_record(p, cmd, ended, group, box, dog))
    return records


def _point_record(p: SimulationJob, cmd, ended: dict, group, box, dog) -> dict:
    folder = Path(p.workdir)
    record = {
        "command": cmd,
        **ended,
        "timeout_s": p.timeout_s,
        **launch.what_the_run_left(
            p, folder, (folder / "stdout.txt", folder / "stderr.txt"), box, dog, group
        ),
    }
    record["sandbox"]["packed_worker"] = True
    record["failure"] = classify_failure(record)
    return record


def _worker_ended(p: SimulationJob, cmd, how, wdir: Path, started) -> dict:
    """The point the worker was on when it ended (or could not start): the worker's
    exit and what the watchdog saw are this point's."""
    exit_code, dog, group, box = how
    at = started.get("started_at") or time.time()
    ended = {
        # It ended without recording this point: never a success, even on status 0.
        "exit_code": exit_code or 1,
        "timed_out": dog.timed_out,
        "started_at": round(at, 3),
        "runtime_seconds": round(time.time() - at, 3),
    }
    record = _point_record(p, cmd, ended, group, box, dog)
    worker_err = launch._tail(wdir / "stderr.txt", 2000)
    record["stderr_tail"] = (record["stderr_tail"] + "\n" + worker_err)[-launch.TAIL_CHARS :]
    if dog.violation:
        plain = {"memory_limit": " (out of memory)", "disk_quota": " (Disk quota exceeded)"}
        words = (
            f"reprolab sandbox: {dog.violation['detail']}"
            f"{plain.get(dog.violation['kind'], '')}; the whole process tree was killed"
        )
        record["stderr_tail"] = (record["stderr_tail"] + "\n" + words)[-launch.TAIL_CHARS :]
        record["sandbox_failure"] = limits.limit_failure(
            dog.violation["kind"], dog.violation["detail"], record["stderr_tail"]
        )
    record["failure"] = record.get("sandbox_failure") or classify_failure(record)
    return record
