"""Resource limits that hold for a job's whole process tree.

Three layers, all outside the sandbox, so generated code cannot lift them:

1. Per-process rlimits set before the launcher starts (inherited by bwrap, mpirun,
   every rank and every child; srun propagates them to its tasks): address space,
   CPU time, file size.
2. A pids cgroup (v1 `pids` or v2 `unified`) where this machine lets us create one:
   the kernel refuses the fork past `max_processes`, so a fork bomb cannot outrun
   the watchdog.
3. `Watchdog`: polls the launcher's process tree (sum of resident memory, process
   count) and the run folder's disk use, and kills the whole tree at the first
   limit crossed or at the timeout. Killing bwrap ends its PID namespace, so no
   process started inside (setsid, SIGHUP ignored, double fork) survives; the
   launch returns only once the namespace is empty (`wait_namespaces_gone`).

A limit crossed is recorded as its own failure kind (`LIMIT_FAILURES`).
"""

from __future__ import annotations

import contextlib
import os
import resource
import signal
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from reprolab.jobs.run_clock import RunClock

# kind: (action, words); the same shape as reprolab.jobs.failures.FAILURES.
LIMIT_FAILURES = {
    "memory_limit": ("ask_user", "The job's processes together used more memory than allowed"),
    "process_limit": ("regenerate_code", "The job started more processes than allowed"),
    "disk_quota": ("ask_user", "The run folder grew past its size cap"),
    "machine_busy": (
        "resubmit",
        "The machine was too busy to give the run its time: stopped at the wall-clock "
        "backstop, not for anything the script did",
    ),
    "sandbox_unavailable": (
        "ask_user",
        "Generated code was not run: the OS sandbox (bubblewrap) cannot run here",
    ),
}
PAGE = os.sysconf("SC_PAGE_SIZE")
# A local run stops at this many timeouts of wall time, however busy: a run starved of
# CPU (load 30 on 2 cores gives it a fifteenth) still ends one day. Not the script's
# fault, so it is resubmitted (`machine_busy`), never sent back for new code.
WALL_BACKSTOP = 20


@dataclass(frozen=True)
class Limits:
    memory_mb: int = 0
    """Address space per process and, times the ranks, resident memory of the tree (0: none)."""
    resident_mb: int = 0
    """Resident memory per rank when it is not memory_mb (the sized request, without the
    address space's headroom); times the ranks, the tree's cap."""
    ranks: int = 1
    cpu_seconds: int = 0
    max_processes: int = 0
    """Tasks (threads count: MPI and OpenBLAS start some) of the tree; 0: 64 + 32 per rank."""
    folder_mb: int = 4096
    """Cap on the run folder's disk use (and on any one file's size)."""
    timeout_s: float = 600.0
    cpu_share: bool = False
    """Judge the timeout on the CPU-share clock (a local run: reprolab.jobs.run_clock)."""


def limit_failure(kind: str, detail: str, log_tail: str = "") -> dict:
    action, words = LIMIT_FAILURES[kind]
    return {
        "kind": kind,
        "summary": f"{words}: {detail}",
        "action": action,
        "log_tail": log_tail[-1500:],
    }


def set_rlimits(limits: Limits) -> None:
    """In the launcher's child before exec (Popen preexec_fn)."""
    if limits.memory_mb:
        size = limits.memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (size, size))
    if limits.cpu_seconds:
        resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_seconds, limits.cpu_seconds + 5))
    if limits.folder_mb:
        size = limits.folder_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


PIDS_ROOTS = ("/sys/fs/cgroup/pids", "/sys/fs/cgroup/unified", "/sys/fs/cgroup")


def make_pids_cgroup(max_processes: int) -> Path | None:
    """A fresh cgroup with pids.max, or None where none can be made (then the watchdog counts)."""
    for root in PIDS_ROOTS:
        base = Path(root)
        if not (base / "cgroup.procs").exists():
            continue
        group = base / f"reprolab-{uuid.uuid4().hex[:12]}"
        try:
            group.mkdir()
            (group / "pids.max").write_text(str(max_processes))
            return group
        except OSError:
            with contextlib.suppress(OSError):
                group.rmdir()
    return None


def join_cgroup(group: Path | None) -> None:
    if group is not None:
        (group / "cgroup.procs").write_text(str(os.getpid()))


def kill_group(group: Path | None) -> None:
    """SIGKILL every process left in the job's cgroup (daemons, setsid, ignored SIGHUP)."""
    if group is None:
        return
    for _ in range(20):
        try:
            pids = [int(p) for p in (group / "cgroup.procs").read_text().split()]
        except (OSError, ValueError):
            return
        if not pids:
            return
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.05)


def remove_cgroup(group: Path | None) -> None:
    if group is None:
        return
    for _ in range(50):
        try:
            group.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.1)  # the killed tree is still being reaped


def _children_map() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        ppid = int(stat[stat.rfind(b")") + 2 :].split()[1])
        kids.setdefault(ppid, []).append(int(entry.name))
    return kids


def process_tree(root: int) -> list[int]:
    """root and every descendant (processes, not threads)."""
    kids, tree, todo = _children_map(), [], [root]
    while todo:
        pid = todo.pop()
        tree.append(pid)
        todo += kids.get(pid, [])
    return tree


def resident_mb(pids: list[int]) -> float:
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/statm", "rb") as fh:
                total += int(fh.read().split()[1])
        except (OSError, IndexError, ValueError):
            continue
    return total * PAGE / 2**20


def disk_use_mb(folders: list[Path]) -> float:
    """Blocks actually used (a sparse file counts what it occupies; RLIMIT_FSIZE caps the rest)."""
    total = 0
    for folder in folders:
        for dirpath, _dirs, files in os.walk(folder):
            for name in files:
                try:
                    total += os.lstat(os.path.join(dirpath, name)).st_blocks * 512
                except OSError:
                    continue
    return total / 2**20


def file_cap_hit(folders: list[Path], limits: Limits) -> str | None:
    """A file that reached RLIMIT_FSIZE (the writer got EFBIG, or SIGXFSZ), or None."""
    if not limits.folder_mb:
        return None
    cap = limits.folder_mb * 2**20
    for folder in folders:
        for dirpath, _dirs, files in os.walk(folder):
            for name in files:
                path = os.path.join(dirpath, name)
                with contextlib.suppress(OSError):
                    if os.lstat(path).st_size >= cap:
                        return (
                            f"{os.path.relpath(path, folder)} reached the {limits.folder_mb} MB cap"
                        )
    return None


def _pid_namespace(pid: int | str) -> str | None:
    try:
        return os.readlink(f"/proc/{pid}/ns/pid")
    except OSError:
        return None


def kill_tree(root: int) -> set[str]:
    """SIGKILL the launcher's process group and every descendant seen now; returns the
    pid namespaces (bubblewrap's) the tree ran in, other than ours, for
    `wait_namespaces_gone`."""
    pids = process_tree(root)
    ours = _pid_namespace("self")
    spaces = {ns for ns in map(_pid_namespace, pids) if ns and ns != ours}
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(root, signal.SIGKILL)
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    return spaces


def _alive(pid: str) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2 : stat.rfind(b")") + 3] not in (b"Z", b"X")


def wait_namespaces_gone(spaces: set[str], timeout_s: float = 30.0) -> list[int]:
    """Wait until no live process is left in the killed pid namespaces, killing any found.

    Killing the launcher returns at once while the kernel is still tearing down the
    namespace; a fork bomb's children, reparented away from the launcher, are out of
    `process_tree`'s reach but not out of their namespace. Returns the survivors at the
    deadline (empty when the namespaces are gone)."""
    deadline, left = time.time() + timeout_s, []
    while spaces:
        left = [
            int(e.name)
            for e in os.scandir("/proc")
            if e.name.isdigit() and _pid_namespace(e.name) in spaces and _alive(e.name)
        ]
        if not left or time.time() > deadline:
            return left
        for pid in left:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.05)
    return left


def max_tasks(limits: Limits) -> int:
    return limits.max_processes or 64 + 32 * max(1, limits.ranks)


def _forks_refused(group: Path | None) -> int:
    """How often the pids cgroup refused a fork ('max N' in pids.events)."""
    if group is None:
        return 0
    try:
        return int((group / "pids.events").read_text().split()[1])
    except (OSError, IndexError, ValueError):
        return 0


class Watchdog(threading.Thread):
    """Watches one launched process tree; `violation` says which limit ended it."""

    def __init__(self, root: int, limits: Limits, folders: list[Path], group: Path | None):
        super().__init__(daemon=True)
        self.root, self.limits, self.folders, self.group = root, limits, folders, group
        self.violation: dict | None = None
        self.timed_out = False
        self.peak_mb = 0.0
        self.peak_processes = 0
        self.killed_namespaces: set[str] = set()
        self.clock = RunClock(limits.ranks, limits.cpu_share)
        self._halt = threading.Event()

    def stop(self) -> None:
        self._halt.set()

    def processes(self) -> list[int]:
        """The tree's processes: the cgroup's list where there is one (cheap), else a
        walk of /proc from the launcher."""
        if self.group is not None:
            try:
                return [int(p) for p in (self.group / "cgroup.procs").read_text().split()]
            except (OSError, ValueError):
                pass
        return process_tree(self.root)

    def run(self) -> None:
        last_disk = 0.0
        per_rank = self.limits.resident_mb or self.limits.memory_mb
        mem_cap = per_rank * max(1, self.limits.ranks)
        while not self._halt.wait(0.1):
            tree = self.processes()
            if self.out_of_time(tree):
                self.timed_out = True
                self.killed_namespaces = kill_tree(self.root)
                if self.clock.charged_s <= self.limits.timeout_s:
                    wall = f"{self.clock.wall_s:.0f} s of wall time"
                    got = f"{self.clock.cpu_s:.1f} CPU-s"
                    self.violation = {
                        "kind": "machine_busy",
                        "detail": f"{wall} ({WALL_BACKSTOP}x its {self.limits.timeout_s:g} s "
                        f"limit) gave it {got}; run it again when the machine is quieter",
                    }
                return
            self.peak_processes = max(self.peak_processes, len(tree))
            mem = resident_mb(tree)
            self.peak_mb = max(self.peak_mb, mem)
            if mem_cap and mem > mem_cap:
                return self._end("memory_limit", f"{mem:.0f} MB resident, limit {mem_cap} MB")
            refused = _forks_refused(self.group)
            if refused or (self.group is None and len(tree) > max_tasks(self.limits)):
                seen = f"{refused} fork(s) refused" if refused else f"{len(tree)} processes"
                return self._end("process_limit", f"{seen}, limit {max_tasks(self.limits)}")
            if self.limits.folder_mb and time.time() - last_disk > 0.5:
                last_disk = time.time()
                used = disk_use_mb(self.folders)
                if used >= self.limits.folder_mb:
                    return self._end(
                        "disk_quota", f"{used:.0f} MB used, cap {self.limits.folder_mb} MB"
                    )

    def out_of_time(self, tree: list[int]) -> bool:
        """The run's clock past its timeout; on the CPU-share clock, also a wall time
        of WALL_BACKSTOP timeouts (a machine too busy to ever finish it)."""
        charged = self.clock.tick(tree)
        return charged > self.limits.timeout_s or (
            self.clock.wall_s > WALL_BACKSTOP * self.limits.timeout_s
        )

    def _end(self, kind: str, detail: str) -> None:
        self.killed_namespaces = kill_tree(self.root)
        self.violation = {"kind": kind, "detail": detail}
