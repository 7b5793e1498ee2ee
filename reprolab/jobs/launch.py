"""What runs on the worker (a Slurm batch step, or a local subprocess).

`run_job` starts the script's ranks in the stage's run directory through the MPI
launcher and the sandbox entry point (`reprolab.jobs.sandbox_run`), inside the OS
sandbox (`reprolab.jobs.bwrap`) with an allowlisted environment and the limits of
`reprolab.jobs.limits` watched over the whole process tree, captures stdout/stderr
to files, and returns the raw result record. Where bubblewrap cannot run, the
script is not run at all (failure kind `sandbox_unavailable`) unless the config
says `simulation.sandbox.isolation: unsafe_none`."""

from __future__ import annotations

import contextlib
import hashlib
import os
import shlex
import shutil
import stat
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import reprolab
from reprolab import run_files
from reprolab.errors import InputFileError
from reprolab.jobs import bwrap, font_cache, limits, record_channel, run_clock
from reprolab.jobs.bwrap import MPI_PROCESS_IDENTITY
from reprolab.jobs.failures import classify_failure, failure
from reprolab.jobs.sandbox import SECRET_NAME, isolate_network

TAIL_CHARS = 4000
USAGE_PREFIX = ".usage."  # each rank's own use at exit (reprolab.jobs.sandbox_run)
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
    resident_mb: int = 0
    """Resident memory per rank the watchdog allows, the sized request (0: memory_mb).
    The address space needs headroom over it (virtual_memory_overhead_mb); use does not."""
    sandbox: bool = True
    """Run through `reprolab.jobs.sandbox_run` (MPI record, runtime guard)."""
    isolate_network: bool = False
    """Wrap the launch in `unshare -n` (see reprolab.jobs.sandbox.network_plan)."""
    env: tuple[tuple[str, str], ...] = ()
    """Extra environment, e.g. the sweep point (REPROLAB_SWEEP_*)."""
    label: str = ""
    """How reports name this job ("point 3 (num_pairs=4)")."""
    isolation: str = "bwrap"
    """`bwrap` (the OS sandbox, reprolab.jobs.bwrap) or `unsafe_none` (no OS boundary)."""
    folder_mb: int = 4096
    """Cap on the run folder's disk use, and on any one file (0: none)."""
    max_processes: int = 0
    """Cap on the tree's tasks (0: 64 + 32 per rank)."""


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


def rank_command(job: SimulationJob) -> list[str]:
    """What one rank runs: the sandbox entry point (or the bare script)."""
    if not job.sandbox:
        return [job.python, job.script]
    cmd = [job.python, "-m", "reprolab.jobs.sandbox_run"]
    if job.memory_mb:
        cmd += ["--memory-mb", str(job.memory_mb)]
    return [*cmd, job.script]


def command_for(job: SimulationJob) -> list[str]:
    """The launch: mpirun inside one sandbox, or srun starting one sandbox per rank."""
    rank = rank_command(job)
    launcher = (
        shlex.split(job.mpi_launcher.format(ranks=job.mpi_ranks)) if job.mpi_ranks > 1 else []
    )
    if job.isolation == "unsafe_none":
        cmd = launcher + rank
        return isolate_network(cmd) if job.isolate_network else cmd
    if _srun_ranks(job):
        # srun starts the tasks itself, so each rank is its own sandbox; it reaches
        # slurmstepd's PMIx server over TCP on the node (host network) and its
        # shared-memory store in $PMIX_SERVER_TMPDIR, known only in the task.
        box = bwrap.bwrap_command(rank, job.workdir, job.script, job.python, share_net=True)
        return launcher + bwrap.with_pmix_dir(box)
    return bwrap.bwrap_command(
        launcher + rank, job.workdir, job.script, job.python, share_net=not job.isolate_network
    )


def job_env(job: SimulationJob) -> dict[str, str]:
    env = bwrap.clean_env(dict(os.environ), job.workdir, job.python, dict(job.env))
    if job.mpi_ranks == 1:
        # One rank, no launcher: `import meep` initialises MPI as a singleton, which by
        # default forks an Open MPI daemon (orted) for the process's lifetime, ~0.1 s
        # of every single-rank run and packed worker. Nothing spawns ranks from there.
        env["OMPI_MCA_ess_singleton_isolated"] = "1"
    if job.isolation == "unsafe_none":
        env["TMPDIR"] = str(bwrap.private_dirs(job.workdir)[0])
    elif _srun_ranks(job):
        # Each srun rank is its own PID namespace, so both are pid 2 there and Open MPI's
        # shared-memory transport takes its peer's segment for its own (segfault): TCP.
        env.setdefault("OMPI_MCA_btl", "self,tcp")
    if job.mpi_ranks > 1 and run_clock.local_run():
        # A rank waiting for its peer yields its core instead of spinning on it: on a
        # busy machine a spinning 2-rank run used 2.2x the CPU of a yielding one.
        env.setdefault("OMPI_MCA_mpi_yield_when_idle", "1")
    return env


def _srun_ranks(job: SimulationJob) -> bool:
    launcher = job.mpi_launcher.split()
    return job.mpi_ranks > 1 and bool(launcher) and Path(launcher[0]).name == "srun"


def job_limits(job: SimulationJob) -> limits.Limits:
    return limits.Limits(
        memory_mb=job.memory_mb,
        resident_mb=job.resident_mb,
        ranks=job.mpi_ranks,
        cpu_seconds=int(job.timeout_s * max(1, job.mpi_ranks)) + 30,
        max_processes=job.max_processes,
        folder_mb=job.folder_mb,
        timeout_s=job.timeout_s,
        cpu_share=run_clock.local_run(),
    )


def tail_text(path: Path, chars: int = TAIL_CHARS) -> str:
    """The end of a log a run left, never read through a link (the refusal instead)."""
    try:
        return run_files.read_run_tail(path.parent, path.name, chars * 4)[-chars:]
    except InputFileError as exc:
        return f"[reprolab] {exc}"


def collect_outputs(workdir: Path, script_name: str) -> list[dict]:
    """The regular files the run left at the top of its folder (links, FIFOs and the
    like are never opened; the checks name them: physics.checks.unsafe_file_checks)."""
    found = []
    for name in run_files.regular_files(workdir):
        if name in {"stdout.txt", "stderr.txt", script_name} or name.startswith("."):
            continue
        try:
            with run_files.open_run_file(workdir, name, 1 << 62) as fh:
                size = os.fstat(fh.fileno()).st_size
                digest = hashlib.file_digest(fh, "sha256").hexdigest()
        except (OSError, InputFileError):
            continue  # replaced by a link or a hard link meanwhile
        found.append({"name": name, "bytes": size, "sha256": digest})
    return found


def unavailable_record(job: SimulationJob, why: str) -> dict:
    text = f"reprolab sandbox: generated code was not run: {why}. {bwrap.UNAVAILABLE_HELP}"
    record = {
        "command": [],
        "exit_code": None,
        "timed_out": False,
        "timeout_s": job.timeout_s,
        "runtime_seconds": 0.0,
        "hostname": os.uname().nodename,
        "stdout_tail": "",
        "stderr_tail": text,
        "output_files": [],
        "mpi": None,
        "slurm_env": {k: os.environ[k] for k in SLURM_ENV if k in os.environ},
        "sandbox": {"isolation": "refused", "reason": why},
        "sandbox_failure": limits.limit_failure("sandbox_unavailable", why, text),
    }
    record["failure"] = record["sandbox_failure"]
    return record


def refused_folder_record(job: SimulationJob, exc: InputFileError) -> dict:
    """Not run: a folder the sandbox would bind writable is a link or not a folder."""
    record = unavailable_record(job, str(exc))
    record["sandbox"] = {"isolation": job.isolation, "refused": str(exc)}
    record["sandbox_failure"] = failure("sandbox_refused", str(exc), record["stderr_tail"])
    record["failure"] = record["sandbox_failure"]
    return record


def fresh_private_dirs(workdir: Path) -> None:
    for folder in bwrap.private_dirs(workdir):
        if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
            folder.unlink()  # a run's link is removed, never followed
        shutil.rmtree(folder, ignore_errors=True)
        run_files.make_real_dir(workdir, folder.name)


def launch_limited(job: SimulationJob, cmd: list[str], box: limits.Limits, out, err, folders=None):
    """Start the launcher under the limits; (exit code, watchdog, cgroup). The disk cap
    counts `folders` (default: the job's run folder)."""
    group = limits.make_pids_cgroup(limits.max_tasks(box))

    def before_exec() -> None:
        limits.set_rlimits(box)
        limits.join_cgroup(group)

    proc = subprocess.Popen(
        cmd,
        cwd=job.workdir,
        stdout=out,
        stderr=err,
        env=job_env(job),
        start_new_session=True,
        preexec_fn=before_exec,
    )
    dog = limits.Watchdog(proc.pid, box, folders or [Path(job.workdir)], group)
    dog.start()
    exit_code = proc.wait()
    dog.stop()
    dog.join()
    limits.kill_group(group)  # nothing started by the job outlives it
    limits.wait_namespaces_gone(dog.killed_namespaces)  # nor where no cgroup could be made
    limits.remove_cgroup(group)
    return exit_code, dog, group


def run_job(job: SimulationJob) -> dict:
    """Executed on the worker: run the script and return the raw record."""
    workdir = Path(job.workdir)
    try:  # nothing is written, removed or mounted where a run's link points
        run_files.check_real_dir(workdir)
    except InputFileError as exc:
        return refused_folder_record(job, exc)
    (workdir / ".mpi.json").unlink(missing_ok=True)
    for name in run_files.regular_files(workdir):
        if name.startswith(USAGE_PREFIX):
            (workdir / name).unlink(missing_ok=True)
    if job.isolation != "unsafe_none":
        ok, why = bwrap.availability()
        if not ok:
            return unavailable_record(job, why)
    try:
        fresh_private_dirs(workdir)
        cmd, box = command_for(job), job_limits(job)
    except InputFileError as exc:  # a folder to bind is a link: nothing is mounted
        return refused_folder_record(job, exc)
    font_cache.seed(Path(bwrap.mpl_config_dir(workdir)), job.python, root=workdir)
    stdout_path, stderr_path = workdir / "stdout.txt", workdir / "stderr.txt"
    started = time.time()
    with captured_logs(workdir) as (out, err):
        exit_code, dog, group, cmd = recorded_launch(job, cmd, box, out, err)
    runtime = round(time.time() - started, 3)
    record = {
        "command": cmd,
        "exit_code": exit_code,
        "timed_out": dog.timed_out,
        "timeout_s": job.timeout_s,
        "runtime_seconds": runtime,
        "started_at": round(started, 3),  # epoch s: when its ranks started (cores in use)
        "time_limit": dog.clock.summary(),  # the clock the timeout was judged on
        **what_the_run_left(job, workdir, (stdout_path, stderr_path), box, dog, group),
    }
    _clear_private_dirs(workdir)
    if dog.violation is None and exit_code != 0:
        hit = limits.file_cap_hit([workdir], box)
        if hit:
            dog.violation = {"kind": "disk_quota", "detail": hit}
    if dog.violation:
        # The plain words of failures.classify_failure's patterns, for any reader of the log.
        plain = {"memory_limit": " (out of memory)", "disk_quota": " (Disk quota exceeded)"}
        words = (
            f"reprolab sandbox: {dog.violation['detail']}"
            f"{plain.get(dog.violation['kind'], '')}; the whole process tree was killed"
        )
        record["stderr_tail"] = (record["stderr_tail"] + "\n" + words)[-TAIL_CHARS:]
        record["sandbox_failure"] = limits.limit_failure(
            dog.violation["kind"], dog.violation["detail"], record["stderr_tail"]
        )
    record["failure"] = record.get("sandbox_failure") or classify_failure(record)
    return record


@contextlib.contextmanager
def captured_logs(workdir: Path):
    """stdout.txt and stderr.txt, opened here: after the run, a name the script
    replaced (by a link to /proc/self/environ, a forged log) is put back from what
    this process captured through its own descriptors, so the host only ever reads
    the launcher's logs."""
    fds = []
    try:
        for name in ("stdout.txt", "stderr.txt"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(workdir / name)  # a link is removed, never opened
            flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
            fds.append(os.open(workdir / name, flags, 0o666))  # the umask decides
        yield fds[0], fds[1]
        for name, fd in zip(("stdout.txt", "stderr.txt"), fds, strict=True):
            _put_back_log(workdir / name, fd)
    finally:
        for fd in fds:
            os.close(fd)


def _put_back_log(path: Path, fd: int) -> None:
    """Replace whatever stands at `path` by the captured log when it is not the
    file the launcher opened (same device and inode)."""
    mine = os.fstat(fd)
    try:
        there = os.lstat(path)
        if (there.st_dev, there.st_ino) == (mine.st_dev, mine.st_ino):
            return
        if stat.S_ISDIR(there.st_mode):
            shutil.rmtree(path)  # links inside are removed, not followed
    except FileNotFoundError:
        pass
    tmp = path.with_name(f".{path.name}.{os.getpid()}.restore")
    with contextlib.suppress(FileNotFoundError):
        os.unlink(tmp)
    out = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666)
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        while os.sendfile(out, fd, None, 1 << 24):
            pass
    finally:
        os.close(out)
    os.replace(tmp, path)  # replaces a link itself, never its target


def recorded_launch(job: SimulationJob, cmd: list[str], box, out, err):
    """`launch_limited` with the run-time record's channel open (reprolab.jobs.
    record_channel): the record is written beside the run folder once the job ended.
    (exit code, watchdog, cgroup, the command as started)."""
    channel = record_channel.RecordChannel([job.workdir])
    cmd = record_channel.through(cmd, channel)
    try:
        found = launch_limited(record_channel.job_with(job, channel), cmd, box, out, err)
    finally:
        channel.close()
    return (*found, cmd)


def _clear_private_dirs(workdir: Path) -> None:
    """The job's /tmp and /dev/shm hold sockets and MPI segments, never results."""
    for folder in bwrap.private_dirs(workdir):
        shutil.rmtree(folder, ignore_errors=True)


def read_json_or_none(path: Path) -> dict | None:
    """A small JSON record a run left (never through a link, within the cap)."""
    try:
        return run_files.read_run_json(path.parent, path.name)
    except (OSError, ValueError, InputFileError):
        return None


def rank_usage(workdir: Path) -> list[dict]:
    """Each rank's CPU seconds and peak MB as it reported them at exit
    (reprolab.jobs.sandbox_run.record_usage); read without following links, numbers only."""
    found = []
    for name in run_files.regular_files(workdir):
        if not name.startswith(USAGE_PREFIX):
            continue
        try:
            data = run_files.read_run_json(workdir, name, 4096)
            usage = {k: float(data[k]) for k in ("cpu_s", "peak_mb")}
            found.append({"rank": int(data["rank"]), **usage})
        except (OSError, ValueError, TypeError, KeyError, InputFileError):
            continue
    return sorted(found, key=lambda u: u["rank"])


def what_the_run_left(job, workdir: Path, logs: tuple[Path, Path], box, dog, group) -> dict:
    """The fields of a run record beyond its command, exit and times: where it ran, what
    it printed and wrote, and its sandbox; the same for a job of its own and a packed
    sweep point."""
    return {
        "hostname": os.uname().nodename,
        "stdout_tail": tail_text(logs[0]),
        "stderr_tail": tail_text(logs[1]),
        "output_files": collect_outputs(workdir, Path(job.script).name),
        "mpi": read_json_or_none(workdir / ".mpi.json"),
        "rank_usage": rank_usage(workdir),
        "slurm_env": {k: os.environ[k] for k in SLURM_ENV if k in os.environ},
        "network_isolated": job.isolate_network,
        "disk_free_bytes": shutil.disk_usage(workdir).free,
        "sandbox": {
            "isolation": job.isolation,
            "network": "isolated" if job.isolate_network else "host",
            "pids_cgroup": group is not None,
            "limits": {**box.__dict__, "max_processes": limits.max_tasks(box)},
            "peak_resident_mb": round(dog.peak_mb, 1),
            "peak_processes": dog.peak_processes,
        },
    }
