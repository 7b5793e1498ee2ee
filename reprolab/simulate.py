"""Runs a stage's generated script as a (possibly MPI) job through submitit.

`run_job` runs on the worker (a Slurm batch step, or a local subprocess): it
starts the script's ranks in the stage's run directory through the MPI
launcher and the sandbox entry point (`reprolab.sandbox_run`), with an
environment scrubbed of secrets, captures stdout/stderr to files, and returns
the raw result record. `submit_all` sends one job, or a job array for a sweep,
through submitit and waits for every record. It reads job state with
`scontrol` (no accounting database needed): a job Slurm killed (TIMEOUT, out
of memory, cancelled, node failure, preemption) leaves no submitit result, so
its record is built from the job state and the script's own log files.

`classify_failure` tells failures apart in words a user understands; the
execution check decides from `failure.action` whether to regenerate code,
resubmit, or ask the user.
"""

from __future__ import annotations

import json
import math
import os
import re
import shlex
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import submitit

import reprolab
from reprolab.fileio import sha256_file
from reprolab.sandbox import SECRET_NAME, isolate_network

TAIL_CHARS = 4000
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

    @classmethod
    def from_config(cls, sim_cfg: dict) -> ClusterSettings:
        slurm = dict(sim_cfg.get("slurm") or {})
        return cls(
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
            os.killpg(proc.pid, 9)
            exit_code = proc.wait()
    record = {
        "command": cmd,
        "exit_code": exit_code,
        "timed_out": timed_out,
        "runtime_seconds": round(time.time() - started, 3),
        "hostname": os.uname().nodename,
        "stdout_tail": _tail(stdout_path),
        "stderr_tail": _tail(stderr_path),
        "output_files": collect_outputs(workdir, Path(job.script).name),
        "mpi": _read_json(workdir / ".mpi.json"),
        "slurm_env": {k: os.environ[k] for k in SLURM_ENV if k in os.environ},
        "network_isolated": job.isolate_network,
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
}
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
    if state == "TIMEOUT" or record.get("timed_out"):
        limit = record.get("timeout_s") or (slurm_state or {}).get("TimeLimit", "?")
        return failure("timeout", f"stopped after {limit} s (limit)", tail)
    if state == "OUT_OF_MEMORY" or (code not in (0, None) and MEMORY_PATTERNS.search(log)):
        return failure("out_of_memory", "reduce resolution or cell size, or ask for more", tail)
    if state == "NODE_FAIL":
        return failure("node_failure", f"node {slurm_state.get('NodeList', '?')}", tail)
    if state == "PREEMPTED" or (state.startswith("REQUEUE") and restarts):
        return failure("preempted", f"requeued {restarts} time(s)", tail)
    if state in {"CANCELLED", "DEADLINE"} or state.startswith("CANCELLED"):
        return failure("cancelled", f"Slurm state {state}", tail)
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


def _wait(job, settings: ClusterSettings, sim: SimulationJob) -> tuple[dict | None, dict, str]:
    """(record or None, last Slurm state, error text) once the job is over."""
    state: dict = {}
    last_check = 0.0
    while True:
        if job.paths.result_pickle.exists() or (settings.executor != "slurm" and job.done()):
            try:
                return job.result(), state, ""
            except Exception as exc:  # submitit re-raises the worker's failure
                return None, state, f"{type(exc).__name__}: {exc}"
        if settings.executor == "slurm" and time.time() - last_check > 2:
            last_check = time.time()
            state = slurm_state(job.job_id) or state
            name = state.get("JobState", "")
            if not state or (name and name not in ACTIVE_STATES):
                # Give the worker a moment to finish writing its result file.
                for _ in range(20):
                    if job.paths.result_pickle.exists():
                        break
                    time.sleep(0.5)
                else:
                    return None, state, f"job ended in Slurm state {name or 'unknown'}"
        time.sleep(settings.poll_s)


def _finish(
    sim: SimulationJob, job, record, state, error, settings, resources, array_id: str | None
) -> dict:
    workdir = Path(sim.workdir)
    if record is None:
        record = {
            "command": command_for(sim),
            "exit_code": _exit_code(state),
            "timed_out": state.get("JobState") == "TIMEOUT",
            "runtime_seconds": None,
            "hostname": state.get("NodeList"),
            "stdout_tail": _tail(workdir / "stdout.txt"),
            "stderr_tail": _tail(workdir / "stderr.txt")
            or _tail(Path(str(job.paths.stderr)), 2000) + (f"\n{error}" if error else ""),
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
            "job_id": str(job.job_id),
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
    record["failure"] = classify_failure(record, state)
    return record


def _exit_code(state: dict) -> int | None:
    code = state.get("ExitCode", "")
    try:
        status, signal = (int(x) for x in code.split(":"))
    except ValueError:
        return None
    return status if status else (-signal if signal else None)


def submit_all(
    jobs: list[SimulationJob],
    settings: ClusterSettings,
    resources: Resources,
    log_folder: str | Path,
) -> list[dict]:
    """Submit the jobs (a job array when more than one) and wait for every record."""
    folder = Path(log_folder)
    ex = executor_for(settings, resources, folder, len(jobs))
    if settings.executor == "slurm" or len(jobs) == 1:
        submitted = [ex.submit(run_job, jobs[0])] if len(jobs) == 1 else None
        if submitted is None:
            submitted = ex.map_array(run_job, jobs)
        array_id = submitted[0].job_id.split("_")[0] if len(jobs) > 1 else None
        done = [_wait(job, settings, sim) for job, sim in zip(submitted, jobs, strict=True)]
        return [
            _finish(sim, job, *res, settings, resources, array_id)
            for sim, job, res in zip(jobs, submitted, done, strict=True)
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
                results[i] = _finish(
                    jobs[i], job, *_wait(job, settings, jobs[i]), settings, resources, None
                )
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
