"""What runs on the worker (a Slurm batch step, or a local subprocess).

`run_job` starts the script's ranks in the stage's run directory through the MPI
launcher and the sandbox entry point (`reprolab.jobs.sandbox_run`), with an
environment scrubbed of secrets, captures stdout/stderr to files, and returns
the raw result record."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import reprolab
from reprolab.fileio import sha256_file
from reprolab.jobs.failures import classify_failure
from reprolab.jobs.sandbox import SECRET_NAME, isolate_network

TAIL_CHARS = 4000
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


REPO_ROOT = str(Path(reprolab.__file__).resolve().parents[1])


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
    """Run through `reprolab.jobs.sandbox_run` (MPI record, runtime guard)."""
    isolate_network: bool = False
    """Wrap the launch in `unshare -n` (see reprolab.jobs.sandbox.network_plan)."""
    env: tuple[tuple[str, str], ...] = ()
    """Extra environment, e.g. the sweep point (REPROLAB_SWEEP_*)."""
    label: str = ""
    """How reports name this job ("point 3 (num_pairs=4)")."""


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
        cmd = [job.python, "-m", "reprolab.jobs.sandbox_run"]
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
