"""Packed sweeps: a sweep's points run in a few long-lived workers instead of one
process tree each.

`plan_workers` deals the points to workers: locally one per core the job was given,
on Slurm `worker_count` of them (from the points' runtime estimate and the limits),
each one task of a job array (`submit_packed`, `wait_packed`; a waiter that died is
reattached to by `reattached`). `run_packed` is what one worker's submitit job
runs: one sandbox (bubblewrap, the limits and the watchdog of `reprolab.jobs.launch`)
around one `reprolab.jobs.sweep_worker` process that runs the worker's points one after
another, importing Meep once. Each point gets the record a single run gets
(`launch.run_job`: exit status, time limit, tails of its own stdout/stderr, its
outputs, its MPI record). A point that takes the worker down (a crash, a limit
the watchdog enforces) is recorded with the worker's end, and the points after
it run in a fresh worker, so one failing point never takes others with it. A worker
whose job Slurm cancels or times out starts no further point; the points it finished
keep their records, the others are recorded as Slurm ended the job (`points_of`)."""

from __future__ import annotations

import contextlib
import math
import os
import shutil
import signal
import time
from dataclasses import replace
from pathlib import Path

from submitit.core.utils import FailedJobError, FailedSubmissionError

from reprolab import run_files, secret_env
from reprolab.fileio import atomic_write_json
from reprolab.jobs import bwrap, font_cache, launch, limits, record_channel, run_clock, submit
from reprolab.jobs.failures import classify_failure, failure
from reprolab.jobs.launch import SimulationJob
from reprolab.jobs.sweep_worker import CURRENT_FILE, EXIT_FILE


def plan_workers(jobs: list, workers: int) -> list[list]:
    """Deal the points in snake order (workers 0 1 1 0 0 1 ...): neighbouring values cost
    alike and a sweep's cost often grows with its value (more layers, a longer cavity),
    so each worker gets a like share of cheap and dear points; round-robin gave the last
    worker the dearer point of every round."""
    n = max(1, min(workers, len(jobs)))
    dealt: list[list] = [[] for _ in range(n)]
    for i, job in enumerate(jobs):
        rnd, k = divmod(i, n)
        dealt[k if rnd % 2 == 0 else n - 1 - k].append(job)
    return dealt


def packable(jobs: list[SimulationJob]) -> bool:
    """Points of one rank each, in the OS sandbox with the runtime guard (what the
    worker reproduces); others run one job per point."""
    return all(j.mpi_ranks == 1 and j.sandbox and j.isolation == "bwrap" for j in jobs)


def worker_command(job: SimulationJob, roots: list[str], plan: Path) -> list[str]:
    """The worker's command in its sandbox; it writes only under `roots` (bound writable,
    each a real folder): its points' folders (`writable_roots`)."""
    cmd = [job.python, "-m", "reprolab.jobs.sweep_worker"]
    if job.memory_mb:
        cmd += ["--memory-mb", str(job.memory_mb)]
    cmd += [arg for root in roots[1:] for arg in ("--writable", root)]
    box = bwrap.bwrap_command(
        [*cmd, roots[0], str(plan)], job.workdir, job.script, job.python, not job.isolate_network
    )
    binds = []
    for root in roots:
        run_files.check_real_dir(root)
        binds += ["--bind", root, root]
    at = box.index("--remount-ro")
    return [*box[:at], *binds, *box[at:]]


def writable_roots(points: list[SimulationJob], worker_dir: str) -> list[str]:
    """The folders a worker may write in: its points' common folder when they are its
    siblings and the worker's own folder lies in it (a sweep's points folder), else the
    worker's folder and each point's own (a stage's coarser runs, each beside the
    stage's other files, which stay out of reach)."""
    parents = {str(Path(p.workdir).parent) for p in points}
    if len(parents) == 1 and Path(worker_dir).parent == Path(next(iter(parents))):
        return [next(iter(parents))]
    return [worker_dir, *dict.fromkeys(p.workdir for p in points)]


STOPPED_CODES = (-signal.SIGTERM, 128 + signal.SIGTERM)
WORKER_MIN_SECONDS = 10.0
"""Estimated work below which another Slurm worker is not worth its start-up (a job's
submit-to-result overhead, 1.3-2.6 s in benchmarks/results/slurm.md, and `import meep`,
~0.9 s): a worker gets at least this much."""


def worker_count(points: int, est_s: float, timeout_s: float, settings: submit.ClusterSettings):
    """How many Slurm workers (array tasks) a sweep of `points` gets: no more than run
    at once (max_concurrent_jobs) nor than the points; fewer while the points'
    estimated runtime (`est_s` each) gives a worker under WORKER_MIN_SECONDS of work;
    more (up to one per point) while a worker's points, each allowed `timeout_s`,
    would ask for more than simulation.slurm.max_job_minutes."""
    top = max(1, min(settings.max_concurrent, points))
    n = max(1, min(top, math.ceil(points * max(0.0, est_s) / WORKER_MIN_SECONDS)))
    while (
        settings.max_job_min
        and n < points
        and _minutes(math.ceil(points / n), timeout_s) > settings.max_job_min
    ):
        n += 1
    return n


def _minutes(points: int, timeout_s: float) -> int:
    """A worker's time limit: its points one after another, a minute above."""
    return math.ceil(points * timeout_s / 60) + 1


def submit_packed(
    workers: list[list[SimulationJob]],
    worker_dirs: list[str],
    settings: submit.ClusterSettings,
    resources: submit.Resources,
    log_folder: str | Path,
) -> list[list[dict]]:
    """One job per worker, all at once (locally) or one job array with a task per
    worker (Slurm), each running its points one after another; every point's record,
    per worker."""
    folder = Path(log_folder)
    # The scheduler's limit covers the worker's points together, not one point's.
    longest = max(len(pts) for pts in workers)
    whole = replace(
        resources, time_min=_minutes(longest, max(p.timeout_s for w in workers for p in w))
    )
    ex = submit.executor_for(settings, whole, folder, len(workers))
    if settings.executor == "slurm":
        try:
            with secret_env.withheld():  # sbatch passes its environment to the job
                running = ex.map_array(run_packed, workers, worker_dirs)
        except (FailedJobError, FailedSubmissionError, OSError) as exc:
            words = " ".join(str(exc).replace("sbatch: error:", "").split())
            refused = submit.Outcome(None, {}, "", failure("submission_refused", words, str(exc)))
            return [
                [submit.finish_record(p, None, refused, settings, whole, None) for p in pts]
                for pts in workers
            ]
        points = [p for pts in workers for p in pts]
        sizes = [len(pts) for pts in workers]
        submit.record_submission(
            folder, points, running, whole, workers=sizes, round=settings.round
        )
        return wait_packed(workers, running, settings, whole, folder)
    with secret_env.withheld():  # the worker processes read the runs' files
        running = [
            ex.submit(run_packed, pts, d) for pts, d in zip(workers, worker_dirs, strict=True)
        ]
    wait = submit.FIRST_POLL_S
    while not all(job.done() for job in running):
        wait = submit.poll_pause(wait, settings)
    outcomes = [submit.collect_outcome(job, {}) for job in running]
    return [
        points_of(pts, job, out, settings, whole, None)
        for pts, job, out in zip(workers, running, outcomes, strict=True)
    ]


def wait_packed(workers, running, settings, resources, folder: Path) -> list[list[dict]]:
    """Wait for the workers' Slurm jobs (a fresh submission, or one a waiter that died
    left behind); every point's record, per worker."""
    outcomes, array_id = submit.wait_submitted(running, settings, folder, resources)
    return [
        points_of(pts, job, out, settings, resources, array_id)
        for pts, job, out in zip(workers, running, outcomes, strict=True)
    ]


def reattached(sims, jobs, sizes, settings, resources, folder: Path) -> list[tuple]:
    """(point, record) for each point of a packed submission a waiter that died left
    behind (`sizes`: how many points each job runs, in order)."""
    cuts = [sum(sizes[:k]) for k in range(len(sizes) + 1)]
    workers = [sims[a:b] for a, b in zip(cuts, cuts[1:], strict=False)]
    found = wait_packed(workers, jobs, settings, resources, folder)
    return [
        (sim, {**rec, "sandbox": {**(rec.get("sandbox") or {}), "worker": k}})
        for k, (pts, recs) in enumerate(zip(workers, found, strict=True))
        for sim, rec in zip(pts, recs, strict=True)
    ]


def points_of(points, job, outcome: submit.Outcome, settings, resources, array_id) -> list:
    """Each point's record from its worker's outcome. A point the worker ran to its end
    is judged on its own run; the others (the point the worker's job was stopped on,
    those it never began, all of them when the job left no result) by how Slurm ended
    the job: a cancelled or timed-out worker's unfinished points are recorded so."""
    found = outcome.record if isinstance(outcome.record, list) else [None] * len(points)
    records = []
    for sim, rec in zip(points, found, strict=True):
        own = rec is not None and rec.get("packed_point_ended")
        out = submit.Outcome(
            rec,
            {} if own else outcome.state,
            outcome.error,
            None if own else outcome.failure,
        )
        records.append(submit.finish_record(sim, job, out, settings, resources, array_id))
    return records


def run_packed(points: list[SimulationJob], worker_dir: str) -> list[dict]:
    """Executed by the worker's job: every point's raw record, in order. Once the job is
    told to stop (SIGTERM: Slurm's cancel or time limit; SIGUSR2: the preemption
    warning submitit's own jobs use) no further point begins; those left are recorded
    as not run."""
    ok, why = bwrap.availability()
    if not ok:
        return [launch.unavailable_record(p, why) for p in points]
    roots = writable_roots(points, worker_dir)
    records: dict[int, dict] = {}
    todo = list(range(len(points)))
    with _stop_signals() as stopped:
        while todo and not stopped:
            done = _one_worker([points[i] for i in todo], worker_dir, roots)
            last = done[-1]
            if "SLURM_JOB_ID" in os.environ and last.get("exit_code") in STOPPED_CODES:
                # Slurm's SIGTERM reached the worker before this process.
                stopped += [] if last["packed_point_ended"] else ["SIGTERM"]
            for i, rec in zip(todo, done, strict=False):
                records[i] = rec
            todo = todo[len(done) :]
        for i in todo:
            records[i] = _not_run(points[i], stopped[0] if stopped else "")
    return [records[i] for i in range(len(points))]


@contextlib.contextmanager
def _stop_signals():
    """A list that holds the signal's name once the job is told to stop (main thread
    only: elsewhere, as in submitit's debug executor, nothing is installed)."""
    stopped: list[str] = []
    saved = {}
    try:
        for sig in (signal.SIGTERM, signal.SIGUSR2):
            saved[sig] = signal.signal(sig, lambda n, _f: stopped.append(signal.Signals(n).name))
    except ValueError:
        pass
    try:
        yield stopped
    finally:
        for sig, handler in saved.items():
            signal.signal(sig, handler)


def _not_run(p: SimulationJob, why: str) -> dict:
    text = f"reprolab: not run: the worker's job was told to stop ({why}) before this point began"
    return {
        "command": [],
        "exit_code": None,
        "timed_out": False,
        "timeout_s": p.timeout_s,
        "runtime_seconds": None,
        "hostname": os.uname().nodename,
        "stdout_tail": "",
        "stderr_tail": text,
        "output_files": [],
        "mpi": None,
        "slurm_env": {k: os.environ[k] for k in launch.SLURM_ENV if k in os.environ},
        "sandbox": {"packed_worker": True, "not_run": why},
        "failure": None,
    }


def _one_worker(points: list[SimulationJob], worker_dir: str, roots: list[str]) -> list[dict]:
    """Start one worker on `points`; the records of the points it got to (the first
    at least: a worker that ends on a point ends that point)."""
    wdir = Path(worker_dir)
    # Its points share the writable folders, and a worker may start again on the
    # points left: nothing is made, removed or written through a link one planted.
    if wdir == Path(roots[0]):
        run_files.check_real_dir(wdir)  # made by the caller, beside the points
    else:
        run_files.make_real_dir(roots[0], wdir.relative_to(roots[0]).as_posix())
    for p in points:
        run_files.check_real_dir(p.workdir)
    launch.fresh_private_dirs(wdir)
    font_cache.seed(Path(bwrap.mpl_config_dir(wdir)), points[0].python, root=wdir)
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
    # The worker's limits hold its largest point (a stage's coarser runs differ in size).
    head = replace(
        points[0],
        workdir=str(wdir),
        env=(),
        memory_mb=max(p.memory_mb for p in points),
        resident_mb=max(p.resident_mb for p in points),
    )
    cmd = worker_command(head, roots, plan)
    box = limits.Limits(
        memory_mb=head.memory_mb,
        resident_mb=head.resident_mb,
        ranks=1,
        cpu_seconds=int(sum(p.timeout_s for p in points)) + 30,
        max_processes=head.max_processes,
        folder_mb=head.folder_mb * len(points),
        timeout_s=sum(p.timeout_s for p in points) + 30,
        cpu_share=run_clock.local_run(),  # as a single run's (launch.job_limits)
    )
    # The cap counts every folder the worker writes: its own and each point's.
    folders = [wdir, *(Path(p.workdir) for p in points)]
    # Each point's record comes over one channel, its folder named by the worker.
    channel = record_channel.RecordChannel([p.workdir for p in points])
    cmd = record_channel.through(cmd, channel)
    try:
        with launch.captured_logs(wdir) as (out, err):
            exit_code, dog, group = launch.launch_limited(
                record_channel.job_with(head, channel), cmd, box, out, err, folders
            )
    finally:
        channel.close()
    shutil.rmtree(bwrap.private_dirs(wdir)[0], ignore_errors=True)
    shutil.rmtree(bwrap.private_dirs(wdir)[1], ignore_errors=True)
    records = []
    for p in points:
        ended = launch.read_json_or_none(Path(p.workdir) / EXIT_FILE)
        if ended is None:
            started = launch.read_json_or_none(Path(p.workdir) / CURRENT_FILE)
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
    if ended.get("cpu_s") is not None:  # the point's own use, measured by the worker
        record["rank_usage"] = [
            {"rank": 0, "cpu_s": float(ended["cpu_s"]), "peak_mb": float(ended["peak_mb"])}
        ]
    record["packed_point_ended"] = True  # the worker recorded this point's own end
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
        "time_limit": dog.clock.summary(),  # the worker's: this point's own was lost
    }
    record = _point_record(p, cmd, ended, group, box, dog)
    record["packed_point_ended"] = False  # the worker ended (or was ended) on it
    worker_err = launch.tail_text(wdir / "stderr.txt", 2000)
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
