"""Runs a stage's generated script as a (possibly MPI) job through submitit.

The job function runs on the worker (a Slurm node, or a local subprocess): it
starts the script in the stage's run directory with an environment scrubbed of
secrets, captures stdout/stderr to files, and returns the raw result record.
Interpreting failures is the checks' job, not this module's.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import submitit

from reprolab.fileio import sha256_file

# Variables whose names match this never reach generated code.
SECRET_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL|AUTH)", re.IGNORECASE)
TAIL_CHARS = 4000


@dataclass(frozen=True)
class SimulationJob:
    script: str
    """Absolute path of the script to run."""
    workdir: str
    """Absolute path of the stage's run directory (the script's cwd)."""
    mpi_ranks: int = 1
    timeout_s: float = 600.0
    mpi_launcher: str = "mpirun --oversubscribe -np {ranks}"
    python: str = sys.executable


def scrubbed_env(environ: dict[str, str] | None = None) -> dict[str, str]:
    environ = dict(os.environ if environ is None else environ)
    env = {k: v for k, v in environ.items() if not SECRET_NAME.search(k)}
    # OpenMPI refuses root without these; harmless otherwise.
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    env["MPLBACKEND"] = "Agg"
    env["PYTHONUNBUFFERED"] = "1"
    return env


def command_for(job: SimulationJob) -> list[str]:
    cmd = [job.python, job.script]
    if job.mpi_ranks > 1:
        cmd = shlex.split(job.mpi_launcher.format(ranks=job.mpi_ranks)) + cmd
    return cmd


def _tail(path: Path) -> str:
    text = path.read_text(encoding="utf-8", errors="replace")
    return text[-TAIL_CHARS:]


def run_job(job: SimulationJob) -> dict:
    """Executed on the worker: run the script and return the raw record."""
    workdir = Path(job.workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    stdout_path, stderr_path = workdir / "stdout.txt", workdir / "stderr.txt"
    cmd = command_for(job)
    started = time.time()
    timed_out = False
    with open(stdout_path, "wb") as out, open(stderr_path, "wb") as err:
        proc = subprocess.Popen(
            cmd, cwd=workdir, stdout=out, stderr=err, env=scrubbed_env(), start_new_session=True
        )
        try:
            exit_code = proc.wait(timeout=job.timeout_s)
        except subprocess.TimeoutExpired:
            timed_out = True
            os.killpg(proc.pid, 9)
            exit_code = proc.wait()
    runtime = time.time() - started
    produced = sorted(
        p.name
        for p in workdir.iterdir()
        if p.is_file() and p.name not in {"stdout.txt", "stderr.txt"} and not p.name.startswith(".")
    )
    return {
        "command": cmd,
        "exit_code": exit_code,
        "timed_out": timed_out,
        "runtime_seconds": round(runtime, 3),
        "hostname": os.uname().nodename,
        "stdout_tail": _tail(stdout_path),
        "stderr_tail": _tail(stderr_path),
        "output_files": [
            {
                "name": name,
                "bytes": (workdir / name).stat().st_size,
                "sha256": sha256_file(workdir / name),
            }
            for name in produced
            if name != Path(job.script).name
        ],
    }


def submit(job: SimulationJob, executor: str, log_folder: str | Path, slurm: dict | None = None):
    """Submit through submitit (`local`, `debug` or `slurm`) and wait for the record."""
    ex = submitit.AutoExecutor(folder=str(log_folder), cluster=executor)
    params = {"timeout_min": max(1, int(job.timeout_s // 60) + 1)}
    if executor == "slurm":
        params.update(slurm or {})
    ex.update_parameters(**params)
    submitted = ex.submit(run_job, job)
    record = submitted.result()
    record.update(
        {
            "executor": executor,
            "job_id": str(submitted.job_id),
            "mpi_ranks": job.mpi_ranks,
            "timeout_s": job.timeout_s,
            "script_sha256": sha256_file(job.script),
            "job": asdict(job),
        }
    )
    return record
