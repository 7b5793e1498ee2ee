"""The OS boundary around generated code: every rank runs inside bubblewrap.

What a sandboxed process gets (`bwrap_command`):
- new user, PID, IPC, UTS, cgroup and mount namespaces, and a new network namespace
  (loopback only) unless the job's ranks must reach srun's PMIx server over TCP;
- the launching user's uid with every capability dropped (bounding set empty, so
  not even root inside the user namespace can mount, unshare or change hostname),
  `--die-with-parent`, `--new-session` (no terminal to inject into);
- read-only: /usr (and the merged-/usr links), the few /etc files Meep, MPI and
  fonts read, /sys (hwloc's topology), the Python environment, and the
  `reprolab` package (the rank entry point needs it; nothing else of the repo);
- writable: the stage's run folder only; /tmp and /dev/shm are folders inside
  it (`.tmp`, `.shm`), so ranks of one job share them (MPI's shared memory and
  Unix sockets work, under mpirun and under srun) and they count against the
  run folder's size cap;
- an environment built from an allowlist (`clean_env`): no secret, no parent's
  variables; /proc shows only the sandbox's own processes.

Under `mpirun` one sandbox holds the launcher and all its ranks; under `srun`
each rank is its own sandbox (srun starts the tasks) over the same folders.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import reprolab
from reprolab import run_files

PACKAGE_DIR = Path(reprolab.__file__).resolve().parent
ETC_FILES = (
    "alternatives",
    "openmpi",
    "pmix",
    "hwloc",
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "hosts",
    "nsswitch.conf",
    "localtime",
    "matplotlibrc",
    "fonts",
    "python3",
    "python3.11",
    "mime.types",
)
# Variables a rank may inherit; everything else is dropped (allowlist, not blocklist).
KEEP_ENV = re.compile(
    r"^(LANG|LANGUAGE|LC_\w+|TZ|OMPI_MCA_\w+|PMIX_MCA_\w+|UCX_\w+|SLURM_\w+|REPROLAB_\w+)$"
)
SECRET_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL|AUTH)", re.IGNORECASE)
UNAVAILABLE_HELP = (
    "Install the Debian package 'bubblewrap' and allow user namespaces "
    "(sysctl user.max_user_namespaces > 0, kernel.unprivileged_userns_clone=1 where it "
    "exists), or, knowing that generated code then runs with your rights, set "
    "simulation.sandbox.isolation: unsafe_none in the config."
)


@functools.cache
def availability() -> tuple[bool, str]:
    """(usable, why not) for bubblewrap with every namespace on this machine."""
    exe = shutil.which("bwrap")
    if not exe:
        return False, "no bwrap command (Debian package 'bubblewrap' is not installed)"
    try:
        proc = subprocess.run(
            [exe, "--unshare-all", "--die-with-parent", "--ro-bind", "/", "/", "true"],
            capture_output=True,
            text=True,
            timeout=20,
            env={"PATH": "/usr/bin:/bin"},
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return False, f"bwrap failed to start: {exc}"
    if proc.returncode < 0:  # killed (a cancelled job), not refused
        return False, f"the bwrap probe was killed by signal {-proc.returncode}"
    if proc.returncode != 0:
        return False, f"bwrap cannot create namespaces here: {proc.stderr.strip()[:300]}"
    return True, ""


def python_roots(python: str) -> list[str]:
    """Folders of the Python environment to bind read-only (system ones are under /usr)."""
    roots = {sys.prefix, str(Path(python).absolute().parent.parent)}
    return sorted(r for r in roots if r and not r.startswith("/usr") and Path(r).is_dir())


def private_dirs(workdir: str | Path) -> tuple[Path, Path]:
    """The job's /tmp and /dev/shm, inside the run folder."""
    return Path(workdir) / ".tmp", Path(workdir) / ".shm"


def _system_binds() -> list[str]:
    args = ["--ro-bind", "/usr", "/usr"]
    for top in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        path = Path("/") / top
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir():
            args += ["--ro-bind", str(path), str(path)]
    for name in ETC_FILES:
        path = Path("/etc") / name
        if path.exists():
            args += ["--ro-bind", str(path), str(path)]
    return args


def bwrap_command(
    cmd: list[str], workdir: str, script: str, python: str, share_net: bool
) -> list[str]:
    """`cmd` (the launcher or one rank) inside the sandbox. Every folder bound
    writable is a real folder reached without a link (a run may have planted one on an
    earlier attempt): UnsafeRunFile otherwise, and nothing is mounted."""
    tmp, shm = private_dirs(workdir)
    for folder in (workdir, tmp, shm):
        run_files.check_real_dir(folder, must_exist=False)
    args = [
        shutil.which("bwrap") or "bwrap",
        "--unshare-user",
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",  # the node's name is kept: MPI session files and records use it
        "--unshare-cgroup-try",
        "--die-with-parent",
        "--new-session",
        # The launching user's ids (PMIx checks them), no capability at all.
        "--uid",
        str(os.getuid()),
        "--gid",
        str(os.getgid()),
        "--cap-drop",
        "ALL",
        *([] if share_net else ["--unshare-net"]),
        *_system_binds(),
        # hwloc reads the CPU topology; the rest of /sys (DMI serials, devices) stays out.
        "--ro-bind-try",
        "/sys/devices/system",
        "/sys/devices/system",
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        # /tmp first: the run folder may itself lie under /tmp.
        "--bind",
        str(tmp),
        "/tmp",
        "--bind",
        str(shm),
        "/dev/shm",
    ]
    for root in python_roots(python):
        args += ["--ro-bind", root, root]
    args += ["--ro-bind", str(PACKAGE_DIR), str(PACKAGE_DIR)]
    args += ["--bind", workdir, workdir]
    if not Path(script).resolve().is_relative_to(Path(workdir).resolve()):
        args += ["--ro-bind", script, script]
    # The sandbox's own root (a tmpfs holding the mount points) is read-only too.
    return [*args, "--remount-ro", "/", "--chdir", workdir, "--", *cmd]


def with_pmix_dir(box: list[str]) -> list[str]:
    """A bwrap command that also binds the step's PMIx directory, read at task start."""
    script = (
        'if [ -n "$PMIX_SERVER_TMPDIR" ] && [ -d "$PMIX_SERVER_TMPDIR" ]; then '
        'exec "$0" --bind "$PMIX_SERVER_TMPDIR" "$PMIX_SERVER_TMPDIR" "$@"; fi; exec "$0" "$@"'
    )
    return ["/bin/sh", "-c", script, box[0], *box[1:]]


def mpl_config_dir(workdir: str | Path) -> str:
    """matplotlib's cache inside the run folder (the run's HOME): writable, its own."""
    return str(Path(workdir) / ".cache" / "matplotlib")


def clean_env(environ: dict[str, str], workdir: str, python: str, extra: dict) -> dict[str, str]:
    """The whole environment of the launcher and the ranks, from an allowlist."""
    env = {
        k: v
        for k, v in environ.items()
        if KEEP_ENV.match(k) and not SECRET_NAME.search(k) and not _mpi_identity(k)
    }
    path = [str(Path(python).absolute().parent), "/usr/local/bin", "/usr/bin", "/bin"]
    env.update(
        PATH=os.pathsep.join(path),
        HOME=workdir,
        TMPDIR="/tmp",
        MPLBACKEND="Agg",
        MPLCONFIGDIR=mpl_config_dir(workdir),
        XDG_CACHE_HOME=str(Path(workdir) / ".cache"),
        PYTHONUNBUFFERED="1",
        PYTHONDONTWRITEBYTECODE="1",
        PYTHONPATH=str(PACKAGE_DIR.parent),
        OMPI_ALLOW_RUN_AS_ROOT="1",
        OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
        OMP_NUM_THREADS="1",
        OPENBLAS_NUM_THREADS="1",
        MKL_NUM_THREADS="1",
    )
    env.setdefault("LANG", "C.UTF-8")
    env.update({k: v for k, v in extra.items() if not SECRET_NAME.search(k)})
    return env


# What an MPI launcher leaves in a process it started (or in one where MPI was
# initialised as a singleton, e.g. after `import meep`): passed on, it makes a
# nested `mpirun` believe it is one rank of that job and exit 1 without a word.
# User tuning such as OMPI_MCA_btl is kept.
MPI_PROCESS_IDENTITY = re.compile(
    r"^(PMIX_|PMI_|OMPI_COMM_WORLD_|OMPI_APP_CTX_|OMPI_MCA_(ess|pmix|orte_|initial_wdir|"
    r"mpi_oversubscribe|shmem_RUNTIME_QUERY_hint)|OMPI_(ARGV|COMMAND|FILE_LOCATION|FIRST_RANKS|"
    r"NUM_APP_CTX|UNIVERSE_SIZE)$)"
)


def _mpi_identity(name: str) -> bool:
    return bool(MPI_PROCESS_IDENTITY.match(name))
