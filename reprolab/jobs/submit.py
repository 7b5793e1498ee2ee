"""Sends a stage's job (or a job array for a sweep) through submitit and waits.

`submit_all` sends one job, or a job array for a sweep, and waits for every
record. It reads job state with `scontrol` (no accounting database needed): a
job Slurm killed (TIMEOUT, out of memory, cancelled, node failure, preemption)
leaves no submitit result, so its record is built from the job state and the
script's own log files. A job Slurm refuses at submission, one pending for a
reason that can never be satisfied (`UNSCHEDULABLE_REASONS`), and one pending
longer than `simulation.queue_wait_minutes` are cancelled and recorded as
failures instead of hanging the pipeline."""

from __future__ import annotations

import hashlib
import json
import math
import os
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import submitit
from submitit.core.utils import FailedJobError, FailedSubmissionError

from reprolab import secret_env
from reprolab.fileio import atomic_write_json, sha256_file
from reprolab.jobs.failures import classify_failure, failure, pending_verdict
from reprolab.jobs.launch import (
    SimulationJob,
    collect_outputs,
    command_for,
    rank_usage,
    read_json_or_none,
    run_job,
    tail_text,
)
from reprolab.jobs.limits import WALL_BACKSTOP

STATE_POLL_S = 2.0
LOCAL_POLL_S = 0.1


ACTIVE_STATES = {
    "PENDING",
    "CONFIGURING",
    "RUNNING",
    "COMPLETING",
    "REQUEUED",
    "REQUEUE_HOLD",
    "REQUEUE_FED",
    "RESIZING",
    "SUSPENDED",
    "STAGE_OUT",
    "SIGNALING",
}


@dataclass(frozen=True)
class ClusterSettings:
    """How jobs are submitted; from `simulation:` in the config."""

    executor: str = "local"
    partition: str | None = None
    account: str | None = None
    qos: str | None = None
    extra_sbatch: dict = field(default_factory=dict)
    max_concurrent: int = 8
    poll_s: float = 0.5
    """Longest pause between looks at running jobs (reprolab.jobs.submit.poll_pause)."""
    job_name: str = "reprolab-sim"
    """Slurm's job name; the simulate step sets reprolab-<paper>-<stage>-<outputs id>
    (`job_name`)."""
    queue_wait_min: float = 30.0
    """Most minutes a job may pend in the Slurm queue before it is cancelled (0: no limit).
    Time a sweep point waits behind the array's own throttle does not count."""
    round: int = 0
    """The stage's round (how often it was invalidated): a job a waiter of an earlier
    round left is cancelled, never counted in this round (`reattach`)."""
    max_job_min: float = 0.0
    """Most minutes one Slurm job may ask for (0: no limit): a packed sweep then uses
    more workers, so that each worker's points fit (reprolab.jobs.packed)."""

    @classmethod
    def from_config(cls, sim_cfg: dict) -> ClusterSettings:
        slurm = dict(sim_cfg.get("slurm") or {})
        queue_wait = float(sim_cfg.get("queue_wait_minutes", 30))
        if queue_wait < 0:
            raise ValueError(
                f"simulation.queue_wait_minutes is {queue_wait:g}; valid: 0 (no limit) or more"
            )
        executor = sim_cfg.get("executor", "local")
        return cls(
            queue_wait_min=queue_wait,
            executor=executor,
            # A local job's look is a waitpid: cheap enough every 0.1 s, so a finished
            # simulation is noticed within 0.1 s, not 0.5 (on Slurm, files on shared disk).
            poll_s=LOCAL_POLL_S if executor in ("local", "debug") else 0.5,
            partition=slurm.get("partition"),
            account=slurm.get("account"),
            qos=slurm.get("qos"),
            extra_sbatch=dict(slurm.get("extra_sbatch") or {}),
            max_concurrent=int(sim_cfg.get("max_concurrent_jobs", 8)),
            job_name=str(sim_cfg.get("job_name") or "reprolab-sim"),
            max_job_min=float(slurm.get("max_job_minutes") or 0),
            round=int(sim_cfg.get("stage_round", 0)),
        )


NAME_WIDTH = 80
SQUEUE_COMMAND = f'squeue --me --format "%.12i %.{NAME_WIDTH}j %.9T %.10M %.6D %R"'
"""Plain `squeue` cuts job names to 8 characters (every job reads `reprolab`): this
shows them whole (docs/slurm.md)."""


def job_name(paper_id: str, stage_id: str, out_dir: str | Path) -> str:
    """reprolab-<paper>-<stage>-<id>: the id, six hex digits of the paper's outputs
    folder's absolute path, tells apart in `squeue` the runs of one paper in
    different outputs folders (two checkouts, a campaign beside a single run)."""
    where = str(Path(out_dir).resolve()).encode()
    return f"reprolab-{paper_id}-{stage_id}-{hashlib.sha256(where).hexdigest()[:6]}"


def named_config(sim_cfg: dict, paper_id: str, run_id: str, out_dir: str | Path) -> dict:
    """`simulation` config with its Slurm name (`job_name`) set: a stage's convergence
    rerun is named `<stage>-<folder>`, its own in `squeue`, never the stage's."""
    return {**sim_cfg, "job_name": job_name(paper_id, run_id, out_dir)}


@dataclass(frozen=True)
class Resources:
    """What one job asks the scheduler for."""

    ranks: int
    mem_mb: int
    """Memory for the whole job (all ranks)."""
    time_min: int
    """Scheduler time limit; a minute above the run's own timeout."""


def slurm_state(job_id: str) -> dict:
    """`scontrol show job` fields (works without accounting); {} once Slurm forgot it."""
    return slurm_states([str(job_id)]).get(str(job_id), {})


SCONTROL_CALLS = [0]
"""How many times this process asked Slurm for job states (one call per poll)."""


def slurm_states(job_ids: list[str]) -> dict[str, dict]:
    """Every job's `scontrol show job` fields with one call per submission (an array's
    tasks all come with the array's id; a single job with its own), keyed by job id
    (`<array>_<task>` for a task; pending tasks Slurm has not split off yet get the
    fields of the record whose ArrayTaskId range holds them)."""
    roots = sorted({j.split("_")[0] for j in job_ids})
    if not roots:
        return {}
    SCONTROL_CALLS[0] += 1
    try:
        proc = subprocess.run(
            ["scontrol", "show", "job", "-o", ",".join(roots)],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired):
        return {}
    records = [_fields(line) for line in proc.stdout.splitlines() if line.strip()]
    states = {}
    for job_id in job_ids:
        for rec in records:
            if _matches(rec, job_id):
                states[job_id] = rec
                break
    return states


def _fields(line: str) -> dict:
    fields = {}
    for token in line.split():
        key, sep, value = token.partition("=")
        if sep and key not in fields:
            fields[key] = value
    return fields


def _matches(rec: dict, job_id: str) -> bool:
    root, _, task = job_id.partition("_")
    if not task:
        return rec.get("JobId") == root and "ArrayTaskId" not in rec
    if rec.get("ArrayJobId") != root:
        return False
    return int(task) in _task_range(rec.get("ArrayTaskId", ""))


def _task_range(spec: str) -> set[int]:
    """ArrayTaskId as Slurm writes it: 3, 2-7%2, 1,4-5."""
    found = set()
    for part in spec.split("%")[0].split(","):
        lo, _, hi = part.partition("-")
        if lo.isdigit():
            found |= set(range(int(lo), int(hi if hi.isdigit() else lo) + 1))
    return found


def executor_for(settings: ClusterSettings, resources: Resources, folder: Path, n: int):
    ex = submitit.AutoExecutor(folder=str(folder), cluster=settings.executor)
    # A local job's time is judged by its own watchdog on the CPU it gets
    # (reprolab.jobs.run_clock); submitit's local timer counts wall time and would kill a
    # run on a busy machine first, so it is set beyond the watchdog's own wall backstop.
    slurm = settings.executor == "slurm"
    params: dict = {"timeout_min": resources.time_min * (1 if slurm else WALL_BACKSTOP + 1)}
    if settings.executor == "slurm":
        # submitit asks Slurm for USR2 90 s before the time limit (its checkpoint and
        # requeue, which these jobs do not use). Slurm sends it to the job's steps, the
        # srun ranks, which it kills (exit 140, taken for the code's fault): seen on a
        # loaded node. URG's default action is to ignore it; Slurm's TERM at the limit
        # still stops the job, classified timeout.
        extra = {"ntasks": resources.ranks, "signal": "URG@90", **settings.extra_sbatch}
        params.update(
            slurm_job_name=settings.job_name,
            slurm_cpus_per_task=1,
            slurm_mem=f"{resources.mem_mb}M",
            # The job function runs once in the batch step and starts the ranks
            # with the MPI launcher (srun --mpi=pmix), so no srun around it.
            slurm_use_srun=False,
            slurm_additional_parameters=extra,
            slurm_array_parallelism=max(1, min(settings.max_concurrent, n)),
        )
        for key in ("partition", "account", "qos"):
            if getattr(settings, key):
                params[f"slurm_{key}"] = getattr(settings, key)
    ex.update_parameters(**params)
    return ex


@dataclass
class Outcome:
    """How one submitted job ended, as seen by the submitting side."""

    record: dict | None = None
    """The worker's record (None when the worker returned none)."""
    state: dict = field(default_factory=dict)
    """The last `scontrol show job` fields seen."""
    error: str = ""
    failure: dict | None = None
    """Set when this side stopped the job (never schedulable, queue wait over)."""


def collect_outcome(job, state: dict) -> Outcome:
    try:
        return Outcome(job.result(), state)
    except Exception as exc:  # submitit re-raises the worker's failure
        return Outcome(None, state, f"{type(exc).__name__}: {exc}")


def _cancel(job_id: str) -> str:
    """scancel the job; '' or what went wrong."""
    try:
        proc = subprocess.run(["scancel", job_id], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"; scancel {job_id} failed: {exc}"
    return f"; scancel {job_id} failed: {proc.stderr.strip()}" if proc.returncode else ""


def wait_slurm(submitted: list, settings: ClusterSettings) -> list[Outcome]:
    """Wait for every job of one submission (a job or an array's tasks) together.

    A task pending for a reason that never clears is cancelled at once; one that
    pends longer than `queue_wait_min` is cancelled then. Queue time is counted
    per task, from its submission, leaving out time held back by the array's own
    throttle (Reason JobArrayTaskLimit): that wait is this pipeline's choice.
    """
    n = len(submitted)
    done: list[Outcome | None] = [None] * n
    states: list[dict] = [{} for _ in submitted]
    queued = [0.0] * n
    ended_at: dict[int, float] = {}
    last_poll = time.time()
    driver = os.getppid()
    wait = FIRST_POLL_S
    while True:
        if os.getppid() != driver:
            # Snakemake (the driver) died: stop waiting without writing anything; the
            # jobs go on and the next run of the same command reattaches to them.
            raise SystemExit("[reprolab] the driver died; Slurm jobs left to the next run")
        finished = [
            i
            for i, job in enumerate(submitted)
            if done[i] is None and job.paths.result_pickle.exists()
        ]
        if finished:
            # The final state: a job cancelled, preempted or timed out still
            # returns a record (its ranks were killed); Slurm says which.
            final = slurm_states([str(submitted[i].job_id) for i in finished])
            for i in finished:
                done[i] = collect_outcome(
                    submitted[i], final.get(str(submitted[i].job_id)) or states[i]
                )
        if all(d is not None for d in done):
            return done  # type: ignore[return-value]
        now = time.time()
        if now - last_poll >= STATE_POLL_S:
            elapsed, last_poll = now - last_poll, now
            waiting = [str(job.job_id) for i, job in enumerate(submitted) if done[i] is None]
            seen = slurm_states(waiting)  # one call for every job still waited on
            for i, job in enumerate(submitted):
                if done[i] is None:
                    states[i] = seen.get(str(job.job_id)) or states[i]
                    done[i] = _poll(job, states, queued, ended_at, i, elapsed, settings)
        wait = poll_pause(wait, settings)


def _poll(job, states, queued, ended_at, i, elapsed, settings) -> Outcome | None:
    state = states[i]
    name = state.get("JobState", "")
    if name == "PENDING":
        if state.get("Reason") != "JobArrayTaskLimit":
            queued[i] += elapsed
        verdict = pending_verdict(state, queued[i], settings.queue_wait_min)
        if verdict is not None:
            verdict["summary"] += _cancel(job.job_id)
            return Outcome(None, state, "", verdict)
        return None
    if state and name in ACTIVE_STATES:
        return None
    # Over (or forgotten by Slurm): give the worker a moment to write its result.
    ended_at.setdefault(i, time.time())
    if job.paths.result_pickle.exists():
        return collect_outcome(job, state)  # state is already the final one
    if time.time() - ended_at[i] > 10:
        return Outcome(None, state, f"job ended in Slurm state {name or 'unknown'}")
    return None


def finish_record(
    sim: SimulationJob,
    job,
    outcome: Outcome,
    settings: ClusterSettings,
    resources: Resources,
    array_id: str | None,
) -> dict:
    workdir = Path(sim.workdir)
    record, state, error = outcome.record, outcome.state, outcome.error
    if record is None:
        submit_log = tail_text(Path(str(job.paths.stderr)), 2000) if job is not None else ""
        record = {
            "command": command_for(sim),
            "exit_code": _exit_code(state),
            "timed_out": state.get("JobState") == "TIMEOUT",
            "runtime_seconds": None,
            "hostname": state.get("NodeList"),
            "stdout_tail": tail_text(workdir / "stdout.txt"),
            "stderr_tail": tail_text(workdir / "stderr.txt")
            or submit_log + (f"\n{error}" if error else ""),
            "output_files": collect_outputs(workdir, Path(sim.script).name)
            if workdir.is_dir()
            else [],
            "mpi": read_json_or_none(workdir / ".mpi.json"),
            # What its ranks had used when they were stopped (they write it as they run).
            "rank_usage": rank_usage(workdir) if workdir.is_dir() else [],
            "slurm_env": {},
            "network_isolated": sim.isolate_network,
            # The worker, not the script, left no record: killed from outside (a time
            # limit, a cancel, a kill), never a fault of the code.
            "worker_lost": True,
        }
    record.update(
        {
            "executor": settings.executor,
            "job_id": str(job.job_id) if job is not None else None,
            "array_job_id": array_id,
            "label": sim.label,
            "mpi_ranks": sim.mpi_ranks,
            "timeout_s": sim.timeout_s,
            "resources": asdict(resources),
            "script_sha256": sha256_file(sim.script),
            "job": asdict(sim),
        }
    )
    if state:
        record["slurm_state"] = {
            k: state.get(k)
            for k in ("JobState", "Reason", "ExitCode", "Restarts", "NodeList", "TimeLimit")
        }
    record["failure"] = outcome.failure or classify_failure(record, state)
    return record


def _exit_code(state: dict) -> int | None:
    code = state.get("ExitCode", "")
    try:
        status, signal_number = (int(x) for x in code.split(":"))
    except ValueError:
        return None
    return status if status else (-signal_number if signal_number else None)


SUBMISSION = "submission.json"
"""Written in the submitit folder before waiting: the jobs a waiter is waiting on."""


def record_submission(
    folder: Path, jobs: list[SimulationJob], submitted, resources, workers=None, round=0
) -> None:
    """Before waiting: which Slurm jobs run which SimulationJob, so a rerun after the
    driver died waits on them (reattach) instead of submitting them again. A packed
    sweep (`workers`: how many points each job runs, in order) has fewer jobs than
    points."""
    atomic_write_json(
        folder / SUBMISSION,
        {
            "job_ids": [str(job.job_id) for job in submitted],
            "jobs": [asdict(sim) for sim in jobs],
            "scripts_sha256": [sha256_file(sim.script) for sim in jobs],
            "resources": asdict(resources),
            "workers": workers,
            "round": round,
        },
    )


def reattach(folder: Path, script_sha256: str, round: int = 0) -> tuple:
    """The jobs a waiter that died left behind: (points, Slurm jobs, resources, points
    per job for a packed sweep or None); ([], [], None, None) when there are none.

    Only jobs of the same script and the same round of the stage are waited on; others
    are cancelled (their code was replaced, or the stage was invalidated since) and
    forgotten."""
    path = Path(folder) / SUBMISSION
    try:
        rec = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return [], [], None, None
    same_round = int(rec.get("round") or 0) == round
    if set(rec.get("scripts_sha256") or []) != {script_sha256} or not same_round:
        for job_id in rec.get("job_ids") or []:
            _cancel(job_id)
        path.unlink()
        return [], [], None, None
    # The record stays until the jobs are collected (wait_and_finish): a waiter that
    # dies again leaves them to the next run as well.
    sims = [
        SimulationJob(**{**d, "env": tuple(tuple(kv) for kv in d.get("env") or ())})
        for d in rec["jobs"]
    ]
    jobs = [submitit.SlurmJob(folder=folder, job_id=j) for j in rec["job_ids"]]
    return sims, jobs, Resources(**rec["resources"]), rec.get("workers")


def wait_and_finish(jobs, submitted, settings, resources, folder: Path) -> list[dict]:
    """Wait for submitted jobs (job ids printed first), then build their records."""
    outcomes, array_id = wait_submitted(submitted, settings, folder, resources)
    return [
        finish_record(sim, job, out, settings, resources, array_id)
        for sim, job, out in zip(jobs, submitted, outcomes, strict=True)
    ]


def wait_submitted(
    submitted, settings, folder: Path, resources: Resources | None = None
) -> tuple[list[Outcome], str | None]:
    """Print the job ids, wait for every job, forget the submission record; (each
    job's outcome, the array's id or None)."""
    print(waiting_line(submitted, settings, resources), file=sys.__stderr__, flush=True)
    array_id = submitted[0].job_id.split("_")[0] if "_" in str(submitted[0].job_id) else None
    outcomes = wait_slurm(submitted, settings)
    (Path(folder) / SUBMISSION).unlink(missing_ok=True)
    return outcomes, array_id


def waiting_line(submitted, settings: ClusterSettings, resources: Resources | None) -> str:
    """What the console says while it waits: the job (or array), its MPI ranks (an
    array's per task) and its name."""
    ids = sorted({str(j.job_id).split("_")[0] for j in submitted})
    ranks = f"{resources.ranks} rank(s)" if resources else "ranks as asked"
    size = (
        ranks
        if "_" not in str(submitted[0].job_id)
        else (f"array of {len(submitted)} task(s), {ranks} each")
    )
    return f"[reprolab] waiting on Slurm job {', '.join(ids)} ({size}, name {settings.job_name})"


def submit_all(
    jobs: list[SimulationJob],
    settings: ClusterSettings,
    resources: Resources,
    log_folder: str | Path,
) -> list[dict]:
    """Submit the jobs (a job array when more than one) and wait for every record."""
    folder = Path(log_folder)
    ex = executor_for(settings, resources, folder, len(jobs))
    if settings.executor == "slurm":
        try:
            with secret_env.withheld():  # sbatch passes its environment to the job
                submitted = (
                    [ex.submit(run_job, jobs[0])] if len(jobs) == 1 else ex.map_array(run_job, jobs)
                )
        except (FailedJobError, FailedSubmissionError, OSError) as exc:
            # sbatch's own words, e.g. "Memory specification can not be satisfied".
            words = " ".join(str(exc).replace("sbatch: error:", "").split())
            refused = Outcome(None, {}, "", failure("submission_refused", words, str(exc)))
            return [finish_record(sim, None, refused, settings, resources, None) for sim in jobs]
        record_submission(folder, jobs, submitted, resources, round=settings.round)
        return wait_and_finish(jobs, submitted, settings, resources, folder)
    # Local executors have no array throttle: keep at most max_concurrent running.
    results: list[dict | None] = [None] * len(jobs)
    running: dict[int, object] = {}
    pending = list(range(len(jobs)))
    wait = FIRST_POLL_S
    while pending or running:
        while pending and len(running) < max(1, settings.max_concurrent):
            i = pending.pop(0)
            with secret_env.withheld():  # the worker process reads the run's files
                running[i] = ex.submit(run_job, jobs[i])
            wait = FIRST_POLL_S
        for i, job in list(running.items()):
            if job.done():
                results[i] = finish_record(
                    jobs[i], job, collect_outcome(job, {}), settings, resources, None
                )
                del running[i]
        wait = poll_pause(wait, settings)
    return [r for r in results if r is not None]


FIRST_POLL_S = 0.02
"""First look at a job just started; then each wait 1.5 times longer, up to poll_s:
a short job is noticed within a few tens of ms, a long one costs a look every poll_s."""


def poll_pause(wait: float, settings: ClusterSettings) -> float:
    time.sleep(wait)
    return min(max(settings.poll_s, FIRST_POLL_S), wait * 1.5)


def submit(
    job: SimulationJob,
    executor: str,
    log_folder: str | Path,
    settings: ClusterSettings | None = None,
    resources: Resources | None = None,
) -> dict:
    """One job through submitit (`local`, `debug` or `slurm`); waits for its record."""
    settings = settings or ClusterSettings(executor=executor)
    resources = resources or Resources(
        ranks=job.mpi_ranks, mem_mb=1024, time_min=math.ceil(job.timeout_s / 60) + 1
    )
    return submit_all([job], settings, resources, log_folder)[0]
