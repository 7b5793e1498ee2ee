"""Runs a stage's generated script as a (possibly MPI) job through submitit.

`run_job` runs on the worker (a Slurm batch step, or a local subprocess): it
starts the script's ranks in the stage's run directory through the MPI
launcher and the sandbox entry point (`reprolab.sandbox_run`), with an
environment scrubbed of secrets, captures stdout/stderr to files, and returns
the raw result record. `submit_all` sends one job, or a job array for a sweep,
through submitit and waits for every record. It reads job state with
`scontrol` (no accounting database needed): a job Slurm killed (TIMEOUT, out
of memory, cancelled, node failure, preemption) leaves no submitit result, so
its record is built from the job state and the script's own log files. A job
Slurm refuses at submission, one pending for a reason that can never be
satisfied (`UNSCHEDULABLE_REASONS`), and one pending longer than
`simulation.queue_wait_minutes` are cancelled and recorded as failures instead
of hanging the pipeline.

`classify_failure` tells failures apart in words a user understands; every
failure record carries `kind`, `summary`, `action` (`FAILURES`) and `log_tail`,
and the execution check decides from `action` whether to regenerate code,
resubmit, or ask the user (docs/slurm.md lists them).
"""

from __future__ import annotations

import json
import math
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import submitit
from submitit.core.utils import FailedJobError, FailedSubmissionError

import reprolab
from reprolab.fileio import sha256_file
from reprolab.sandbox import SECRET_NAME, isolate_network

TAIL_CHARS = 4000
STATE_POLL_S = 2.0
REPO_ROOT = str(Path(reprolab.__file__).resolve().parents[1])
SLURM_ENV = (
    "SLURM_JOB_ID",
    "SLURM_ARRAY_JOB_ID",
    "SLURM_ARRAY_TASK_ID",
    "SLURM_NTASKS",
    "SLURM_CPUS_ON_NODE",
    "SLURM_MEM_PER_NODE",
    "SLURM_JOB_PARTITION",
    "SLURM_JOB_NODELIST",
    "SLURM_JOB_ACCOUNT",
    "SLURM_JOB_QOS",
)
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
class SimulationJob:
    script: str
    """Absolute path of the script to run."""
    workdir: str
    """Absolute path of the run directory (the script's cwd; it may write only here)."""
    mpi_ranks: int = 1
    timeout_s: float = 600.0
    mpi_launcher: str = "mpirun --oversubscribe -np {ranks}"
    """Prefix that starts `{ranks}` ranks; on Slurm `srun --mpi=pmix -n {ranks}`."""
    python: str = sys.executable
    memory_mb: int = 0
    """Address-space limit per rank in MB (0: none)."""
    sandbox: bool = True
    """Run through `reprolab.sandbox_run` (MPI record, runtime guard)."""
    isolate_network: bool = False
    """Wrap the launch in `unshare -n` (see reprolab.sandbox.network_plan)."""
    env: tuple[tuple[str, str], ...] = ()
    """Extra environment, e.g. the sweep point (REPROLAB_SWEEP_*)."""
    label: str = ""
    """How reports name this job ("point 3 (num_pairs=4)")."""


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
    queue_wait_min: float = 30.0
    """Most minutes a job may pend in the Slurm queue before it is cancelled (0: no limit).
    Time a sweep point waits behind the array's own throttle does not count."""

    @classmethod
    def from_config(cls, sim_cfg: dict) -> ClusterSettings:
        slurm = dict(sim_cfg.get("slurm") or {})
        queue_wait = float(sim_cfg.get("queue_wait_minutes", 30))
        if queue_wait < 0:
            raise ValueError(
                f"simulation.queue_wait_minutes is {queue_wait:g}; valid: 0 (no limit) or more"
            )
        return cls(
            queue_wait_min=queue_wait,
            executor=sim_cfg.get("executor", "local"),
            partition=slurm.get("partition"),
            account=slurm.get("account"),
            qos=slurm.get("qos"),
            extra_sbatch=dict(slurm.get("extra_sbatch") or {}),
            max_concurrent=int(sim_cfg.get("max_concurrent_jobs", 8)),
        )


@dataclass(frozen=True)
class Resources:
    """What one job asks the scheduler for."""

    ranks: int
    mem_mb: int
    """Memory for the whole job (all ranks)."""
    time_min: int
    """Scheduler time limit; a minute above the run's own timeout."""


# What an MPI launcher leaves in a process it started (or in one where MPI was
# initialised as a singleton, e.g. after `import meep`): passed on, it makes a
# nested `mpirun` believe it is one rank of that job and exit 1 without a word.
# User tuning such as OMPI_MCA_btl is kept.
MPI_PROCESS_IDENTITY = re.compile(
    r"^(PMIX_|PMI_|OMPI_COMM_WORLD_|OMPI_APP_CTX_|OMPI_MCA_(ess|pmix|orte_|initial_wdir|"
    r"mpi_oversubscribe|shmem_RUNTIME_QUERY_hint)|OMPI_(ARGV|COMMAND|FILE_LOCATION|FIRST_RANKS|"
    r"NUM_APP_CTX|UNIVERSE_SIZE)$)"
)


def scrubbed_env(environ: dict[str, str] | None = None) -> dict[str, str]:
    """The environment a job gets: no secrets, no inherited MPI rank identity."""
    environ = dict(os.environ if environ is None else environ)
    env = {
        k: v
        for k, v in environ.items()
        if not SECRET_NAME.search(k) and not MPI_PROCESS_IDENTITY.match(k)
    }
    # OpenMPI refuses root without these; harmless otherwise.
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    env["MPLBACKEND"] = "Agg"
    env["PYTHONUNBUFFERED"] = "1"
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[var] = "1"  # one core per rank: MPI is the parallelism
    return env


def sandbox_env(job: SimulationJob) -> dict[str, str]:
    """Scrubbed environment whose home, caches and temp files live in the run directory."""
    env = scrubbed_env()
    env.update(dict(job.env))
    env.update(
        HOME=job.workdir,
        TMPDIR=str(Path(job.workdir) / ".tmp"),
        MPLCONFIGDIR=str(Path(job.workdir) / ".cache" / "matplotlib"),
        XDG_CACHE_HOME=str(Path(job.workdir) / ".cache"),
        PYTHONPATH=os.pathsep.join(p for p in (REPO_ROOT, env.get("PYTHONPATH")) if p),
    )
    return env


def command_for(job: SimulationJob) -> list[str]:
    cmd = [job.python, job.script]
    if job.sandbox:
        cmd = [job.python, "-m", "reprolab.sandbox_run"]
        if job.memory_mb:
            cmd += ["--memory-mb", str(job.memory_mb)]
        cmd.append(job.script)
    if job.mpi_ranks > 1:
        cmd = shlex.split(job.mpi_launcher.format(ranks=job.mpi_ranks)) + cmd
    if job.isolate_network:
        cmd = isolate_network(cmd)
    return cmd


def _tail(path: Path, chars: int = TAIL_CHARS) -> str:
    if not path.is_file():
        return ""
    return path.read_text(encoding="utf-8", errors="replace")[-chars:]


def collect_outputs(workdir: Path, script_name: str) -> list[dict]:
    names = sorted(
        p.name
        for p in workdir.iterdir()
        if p.is_file()
        and p.name not in {"stdout.txt", "stderr.txt", script_name}
        and not p.name.startswith(".")
    )
    return [
        {"name": n, "bytes": (workdir / n).stat().st_size, "sha256": sha256_file(workdir / n)}
        for n in names
    ]


def run_job(job: SimulationJob) -> dict:
    """Executed on the worker: run the script and return the raw record."""
    workdir = Path(job.workdir)
    (workdir / ".tmp").mkdir(parents=True, exist_ok=True)
    (workdir / ".mpi.json").unlink(missing_ok=True)
    stdout_path, stderr_path = workdir / "stdout.txt", workdir / "stderr.txt"
    cmd = command_for(job)
    started = time.time()
    timed_out = False
    with open(stdout_path, "wb") as out, open(stderr_path, "wb") as err:
        proc = subprocess.Popen(
            cmd, cwd=workdir, stdout=out, stderr=err, env=sandbox_env(job), start_new_session=True
        )
        try:
            exit_code = proc.wait(timeout=job.timeout_s)
        except subprocess.TimeoutExpired:
            timed_out = True
            os.killpg(proc.pid, signal.SIGKILL)
            exit_code = proc.wait()
    record = {
        "command": cmd,
        "exit_code": exit_code,
        "timed_out": timed_out,
        "timeout_s": job.timeout_s,
        "runtime_seconds": round(time.time() - started, 3),
        "hostname": os.uname().nodename,
        "stdout_tail": _tail(stdout_path),
        "stderr_tail": _tail(stderr_path),
        "output_files": collect_outputs(workdir, Path(job.script).name),
        "mpi": _read_json(workdir / ".mpi.json"),
        "slurm_env": {k: os.environ[k] for k in SLURM_ENV if k in os.environ},
        "network_isolated": job.isolate_network,
        "disk_free_bytes": shutil.disk_usage(workdir).free,
    }
    record["failure"] = classify_failure(record)
    return record


def _read_json(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


# ---------------------------------------------------------------------------
# Failure classification: one kind, plain words, what to do next.

FAILURES = {
    "sandbox_refused": ("regenerate_code", "The sandbox refused the script before it ran"),
    "sandbox_violation": ("regenerate_code", "The script tried something the sandbox forbids"),
    "timeout": ("ask_user", "The simulation ran out of its time limit"),
    "out_of_memory": ("ask_user", "The simulation ran out of memory"),
    "meep_nan": ("regenerate_code", "Meep's fields blew up to NaN/Inf (numerical instability)"),
    "python_exception": ("regenerate_code", "The script stopped with a Python error"),
    "nonzero_exit": ("regenerate_code", "The script exited with a non-zero exit code"),
    "cancelled": ("resubmit", "The job was cancelled (by a user or an administrator)"),
    "node_failure": ("resubmit", "The compute node failed while running the job"),
    "preempted": ("resubmit", "The job was preempted by higher-priority work"),
    "job_error": ("ask_user", "The job could not be run (submission or worker error)"),
    "disk_full": ("ask_user", "The disk the simulation writes to is full (or over quota)"),
    "submission_refused": ("ask_user", "Slurm refused the job at submission"),
    "unschedulable": (
        "ask_user",
        "Slurm can never start the job as requested, so it was cancelled",
    ),
    "queue_timeout": (
        "ask_user",
        "The job waited in the Slurm queue longer than simulation.queue_wait_minutes "
        "and was cancelled",
    ),
}
ACTIONS = ("regenerate_code", "resubmit", "ask_user")
"""What `failure.action` can be: regenerate the code (the script is at fault),
resubmit it unchanged (the cluster was), or ask the user (limits, resources,
site configuration)."""

# Pending reasons the request itself causes: waiting cannot help, the request
# (time, nodes, partition, account, QOS, constraints) must change. Reasons such
# as Resources, Priority, ReqNodeNotAvail, NodeDown, PartitionDown or BeginTime
# can clear on their own; queue_wait_minutes bounds those.
UNSCHEDULABLE_REASONS = {
    "PartitionTimeLimit": "the time limit is above the partition's MaxTime",
    "PartitionNodeLimit": "the node count is outside the partition's limits",
    "PartitionConfig": "the partition cannot give what the job asks for",
    "BadConstraints": "the constraints can never be satisfied",
    "InvalidAccount": "the account is invalid",
    "InvalidQOS": "the QOS is invalid",
    "AccountNotAllowed": "the account may not use the partition",
    "QOSNotAllowed": "the QOS may not be used in the partition",
    "DependencyNeverSatisfied": "a dependency can never be satisfied",
}
PER_JOB_LIMIT = re.compile(r"^(QOS|Assoc)Max\w*PerJob\w*$")
"""QOS/association per-job maxima (e.g. QOSMaxWallDurationPerJobLimit): the job
itself is too big for them, so it never starts."""
MEMORY_PATTERNS = re.compile(
    r"MemoryError|std::bad_alloc|Cannot allocate memory|out of memory|oom-kill|"
    r"Exceeded (job|step) memory limit",
    re.IGNORECASE,
)
NAN_PATTERNS = re.compile(r"fields are NaN or Inf|NaN or Inf", re.IGNORECASE)
EXCEPTION_LINE = re.compile(r"^(\w+(\.\w+)*(Error|Exception|Exit|Interrupt)\b.*)$", re.MULTILINE)


def failure(kind: str, detail: str, log_tail: str = "") -> dict:
    action, words = FAILURES[kind]
    return {
        "kind": kind,
        "summary": f"{words}: {detail}" if detail else words,
        "action": action,
        "log_tail": log_tail[-1500:],
    }


def classify_failure(record: dict, slurm_state: dict | None = None) -> dict | None:
    """None when the run succeeded; otherwise what went wrong, in plain words."""
    state = (slurm_state or {}).get("JobState", "")
    restarts = int((slurm_state or {}).get("Restarts", "0") or 0)
    out, err = record.get("stdout_tail", ""), record.get("stderr_tail", "")
    log = out + "\n" + err
    tail = err or out
    code = record.get("exit_code")
    if state == "TIMEOUT":
        limit = slurm_state.get("TimeLimit", "?")
        return failure("timeout", f"Slurm stopped it at the job's time limit ({limit})", tail)
    if record.get("timed_out"):
        return failure("timeout", f"stopped after {record.get('timeout_s', '?')} s (limit)", tail)
    if state == "OUT_OF_MEMORY" or (code not in (0, None) and MEMORY_PATTERNS.search(log)):
        return failure("out_of_memory", "reduce resolution or cell size, or ask for more", tail)
    if state == "NODE_FAIL":
        return failure("node_failure", f"node {slurm_state.get('NodeList', '?')}", tail)
    if state == "PREEMPTED" or (state.startswith("REQUEUE") and restarts):
        return failure("preempted", f"requeued {restarts} time(s)", tail)
    if state in {"CANCELLED", "DEADLINE"} or state.startswith("CANCELLED"):
        return failure("cancelled", f"Slurm state {state}", tail)
    if code not in (0, None) and (
        DISK_FULL_PATTERNS.search(log)
        or record.get("disk_free_bytes", DISK_LOW_BYTES) < DISK_LOW_BYTES
    ):
        # Not the code's fault, and its own error message may not have fitted on the disk.
        free = record.get("disk_free_bytes")
        where = f"{free} bytes left in the run directory" if free is not None else "see the log"
        return failure("disk_full", f"{where}; free space or move outputs_dir", tail)
    killed = outside_signal(code, log)
    if killed:
        # The code did nothing wrong: resubmit, as for a Slurm cancellation.
        return failure(
            "cancelled",
            f"killed by {killed} from outside the job (or by the kernel's out-of-memory killer)",
            tail,
        )
    if code == 0 and not state.startswith(("FAILED", "BOOT_FAIL")):
        if NAN_PATTERNS.search(log):
            return failure("meep_nan", "the log reports NaN/Inf fields", tail)
        return None
    if "sandbox: " in err and "PermissionError" in err:
        line = next((ln for ln in err.splitlines() if "sandbox: " in ln), "")
        return failure("sandbox_violation", line.split("sandbox: ", 1)[-1], tail)
    if NAN_PATTERNS.search(log):
        return failure("meep_nan", "the log reports NaN/Inf fields", tail)
    if "Traceback (most recent call last)" in err:
        lines = EXCEPTION_LINE.findall(err)
        last = lines[-1][0] if lines else err.strip().splitlines()[-1]
        return failure("python_exception", last.strip()[:300], tail)
    if code is None:
        return failure("job_error", f"Slurm state {state or 'unknown'}", tail)
    return failure("nonzero_exit", f"exit code {code}", tail)


DISK_FULL_PATTERNS = re.compile(r"No space left on device|Disk quota exceeded")
DISK_LOW_BYTES = 1 << 20  # less than this free after a failed run: the disk filled up

# Signals that stop a job from outside (kill, Ctrl-C, a closed terminal, shutdown);
# a crash (SIGSEGV, SIGABRT, SIGFPE) stays a failure of the code.
OUTSIDE_SIGNALS = {signal.SIGKILL, signal.SIGTERM, signal.SIGINT, signal.SIGHUP}
MPIRUN_SIGNAL = re.compile(r"exited on signal (\d+)")


def outside_signal(code: int | None, log: str) -> str | None:
    """The signal's name when the script (or one MPI rank, as mpirun reports it) was
    stopped from outside; None otherwise."""
    if code in (0, None):
        return None
    found = MPIRUN_SIGNAL.search(log)
    signum = int(found.group(1)) if found else (-code if code < 0 else None)
    if signum not in OUTSIDE_SIGNALS:
        return None
    return signal.Signals(signum).name


def unschedulable_reason(reason: str) -> str | None:
    """Plain words when a pending job's Slurm reason can never clear, else None."""
    if reason in UNSCHEDULABLE_REASONS:
        return UNSCHEDULABLE_REASONS[reason]
    if PER_JOB_LIMIT.match(reason):
        return "the job is larger than a per-job limit of its QOS or association"
    return None


def pending_verdict(state: dict, queued_s: float, queue_wait_min: float) -> dict | None:
    """A failure for a pending job that must not wait any longer, else None."""
    reason = state.get("Reason", "") or "None"
    why = unschedulable_reason(reason)
    if why:
        return failure("unschedulable", f"Slurm's reason {reason}: {why}")
    if queue_wait_min and queued_s > queue_wait_min * 60:
        return failure(
            "queue_timeout",
            f"pending {queued_s / 60:.1f} min (limit {queue_wait_min:g} min), "
            f"Slurm's reason {reason}",
        )
    return None


# ---------------------------------------------------------------------------
# Submission and waiting.


def slurm_state(job_id: str) -> dict:
    """`scontrol show job` fields (works without accounting); {} once Slurm forgot it."""
    try:
        proc = subprocess.run(
            ["scontrol", "show", "job", "-o", str(job_id)],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired):
        return {}
    if proc.returncode != 0:
        return {}
    fields = {}
    for token in proc.stdout.split():
        key, sep, value = token.partition("=")
        if sep and key not in fields:
            fields[key] = value
    return fields


def executor_for(settings: ClusterSettings, resources: Resources, folder: Path, n: int):
    ex = submitit.AutoExecutor(folder=str(folder), cluster=settings.executor)
    params: dict = {"timeout_min": resources.time_min}
    if settings.executor == "slurm":
        extra = {"ntasks": resources.ranks, **settings.extra_sbatch}
        params.update(
            slurm_job_name="reprolab-sim",
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


def _collect(job, state: dict) -> Outcome:
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
    while True:
        for i, job in enumerate(submitted):
            if done[i] is None and job.paths.result_pickle.exists():
                # The final state: a job cancelled, preempted or timed out still
                # returns a record (its ranks were killed); Slurm says which.
                done[i] = _collect(job, slurm_state(job.job_id) or states[i])
        if all(d is not None for d in done):
            return done  # type: ignore[return-value]
        now = time.time()
        if now - last_poll >= STATE_POLL_S:
            elapsed, last_poll = now - last_poll, now
            for i, job in enumerate(submitted):
                if done[i] is None:
                    done[i] = _poll(job, states, queued, ended_at, i, elapsed, settings)
        time.sleep(settings.poll_s)


def _poll(job, states, queued, ended_at, i, elapsed, settings) -> Outcome | None:
    states[i] = slurm_state(job.job_id) or states[i]
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
        return _collect(job, state)  # state is already the final one
    if time.time() - ended_at[i] > 10:
        return Outcome(None, state, f"job ended in Slurm state {name or 'unknown'}")
    return None


def _finish(
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
        submit_log = _tail(Path(str(job.paths.stderr)), 2000) if job is not None else ""
        record = {
            "command": command_for(sim),
            "exit_code": _exit_code(state),
            "timed_out": state.get("JobState") == "TIMEOUT",
            "runtime_seconds": None,
            "hostname": state.get("NodeList"),
            "stdout_tail": _tail(workdir / "stdout.txt"),
            "stderr_tail": _tail(workdir / "stderr.txt")
            or submit_log + (f"\n{error}" if error else ""),
            "output_files": collect_outputs(workdir, Path(sim.script).name)
            if workdir.is_dir()
            else [],
            "mpi": _read_json(workdir / ".mpi.json"),
            "slurm_env": {},
            "network_isolated": sim.isolate_network,
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
            submitted = (
                [ex.submit(run_job, jobs[0])] if len(jobs) == 1 else ex.map_array(run_job, jobs)
            )
        except (FailedJobError, FailedSubmissionError, OSError) as exc:
            # sbatch's own words, e.g. "Memory specification can not be satisfied".
            words = " ".join(str(exc).replace("sbatch: error:", "").split())
            refused = Outcome(None, {}, "", failure("submission_refused", words, str(exc)))
            return [_finish(sim, None, refused, settings, resources, None) for sim in jobs]
        array_id = submitted[0].job_id.split("_")[0] if len(jobs) > 1 else None
        outcomes = wait_slurm(submitted, settings)
        return [
            _finish(sim, job, out, settings, resources, array_id)
            for sim, job, out in zip(jobs, submitted, outcomes, strict=True)
        ]
    # Local executors have no array throttle: keep at most max_concurrent running.
    results: list[dict | None] = [None] * len(jobs)
    running: dict[int, object] = {}
    pending = list(range(len(jobs)))
    while pending or running:
        while pending and len(running) < max(1, settings.max_concurrent):
            i = pending.pop(0)
            running[i] = ex.submit(run_job, jobs[i])
        for i, job in list(running.items()):
            if job.done():
                results[i] = _finish(jobs[i], job, _collect(job, {}), settings, resources, None)
                del running[i]
        time.sleep(settings.poll_s)
    return [r for r in results if r is not None]


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
