"""Step jobs forked from a warm process instead of importing everything afresh.

A step's own work takes tens of milliseconds; importing what it needs (pydantic and
the agents' models, numpy, snakemake's script support) takes 0.2-0.3 s in every new
interpreter (issue #19). So a workflow script starts with `hand_over()`:

- the first step of a run imports and runs in its own process, as before, and marks
  the run's key; the second starts a server beside it (`python -m
  reprolab.steps.warm`), which imports everything once and then forks one fresh
  child per step. Every step that finds it listening hands over: the script's process
  (the one Snakemake started and waits for) passes the child its stdin/stdout/stderr,
  working directory, environment, umask, argv and sys.path, waits, and exits with the
  child's status. The child runs the same script file from its first line (its
  `hand_over()` returns at once), so a step behaves as it would in its own process.

What keeps it honest:
- one clean process per step still: the server itself never runs a step, so every
  child starts from the state right after the imports;
- a server is specific to one key: the Python, the working directory, the whole
  environment (Snakemake's per-job thread variables included) and the (mtime, size)
  of every source file of `reprolab` and `agents`. Code edited during a run, or a
  job with other variables, gets a server of its own (or runs in-process);
- the socket lives in a folder only this user can enter ($XDG_RUNTIME_DIR or /tmp,
  `reprolab-steps-<uid>`, 0700, checked before each use), the server answers only
  its own uid (SO_PEERCRED), and sandboxed simulations see neither (bubblewrap shows
  them their run folder, not /tmp or /run);
- a signal to the script's process (a Ctrl-C, a kill of the job) goes to the child's
  whole process group; the script's process dying unannounced (SIGKILL) ends the
  child's group too (the child watches the connection);
- any failure to reach a server means the step runs in-process, as it always did; a
  server's own errors go to `<key>.log` beside its socket. `REPROLAB_WARM_STEPS=0`
  turns it off. A server exits after IDLE_S seconds without a step.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import signal
import socket
import sys
import threading
import time

IDLE_S = 60.0
"""A server with no step for this long exits (a run's steps come seconds apart; a
long simulation in between just costs one more start)."""
SEEN_S = 120.0
"""A first step marks its key; a second within this long starts the server. A
Snakemake invocation that runs a single step (a gate answered, one rerun) never
pays for a server."""
PACKAGES = ("reprolab", "agents")
PRELOAD = (
    "snakemake.iocontainers",
    "snakemake.logging",
    "reprolab.smk",
    "reprolab.settings",
    "reprolab.steps.plan",
    "reprolab.steps.design",
    "reprolab.steps.code",
    "reprolab.steps.checks",
    "reprolab.steps.validate",
    "reprolab.steps.compare",
    "reprolab.steps.analyze",
    "reprolab.steps.verdict",
    "reprolab.steps.material",
    "reprolab.steps.settings",
    "reprolab.steps.report",
    "reprolab.steps.campaign",
    "reprolab.steps.debug",
    "numpy",
    "scipy.signal",
    "matplotlib.pyplot",
)
"""What the server imports once: everything the steps it serves import."""
MAX_SOCKET_PATH = 90
"""Bytes; a Unix socket's name holds 107, and the server binds at `<path>.<pid>` first."""
_CHILD = False
"""True in a server's child: the script's own `hand_over()` lets it run."""


def hand_over() -> None:
    """In a workflow script, first: run the rest of the script in a warm server's
    child and exit with its status; return where there is none (run it here)."""
    if _CHILD or os.environ.get("REPROLAB_WARM_STEPS", "1") == "0":
        return
    try:
        folder = socket_dir()
        key = run_key()
    except OSError:
        return
    path = os.path.join(folder, key + ".sock")
    if len(os.fsencode(path)) > MAX_SOCKET_PATH:
        return  # too deep for a Unix socket's name: run here
    try:
        conn = _connect(path)
    except OSError:
        _maybe_start_server(folder, key, path)
        return
    with conn:
        code = _delegate(conn)
    if code is None:
        return  # the server went away before starting the step: run it here
    sys.exit(code)


def socket_dir() -> str:
    """This user's private folder for the servers' sockets (created 0700; refused
    unless it is a real folder of this user that nobody else can enter)."""
    base = os.environ.get("XDG_RUNTIME_DIR") or "/tmp"
    folder = os.path.join(base, f"reprolab-steps-{os.getuid()}")
    with contextlib.suppress(FileExistsError):
        os.mkdir(folder, 0o700)
    st = os.lstat(folder)
    if not (
        os.path.isdir(folder)
        and not os.path.islink(folder)
        and st.st_uid == os.getuid()
        and st.st_mode & 0o077 == 0
    ):
        raise PermissionError(f"{folder} is not a private folder of this user")
    return folder


def run_key(roots: list[str] | None = None) -> str:
    """What a server's imports depend on: Python, working directory, environment, and
    every source file of the packages it imports (`roots`, default ours)."""
    h = hashlib.sha256()
    h.update(json.dumps([sys.executable, os.getcwd(), sorted(os.environ.items())]).encode())
    parent = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for root in roots or [os.path.join(parent, package) for package in PACKAGES]:
        for folder, dirs, files in os.walk(root):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(files):
                if name.endswith(".py"):
                    st = os.stat(os.path.join(folder, name))
                    h.update(f"{folder}/{name}:{st.st_mtime_ns}:{st.st_size};".encode())
    return h.hexdigest()[:24]


def _connect(path: str) -> socket.socket:
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(path)
    except ConnectionRefusedError:
        conn.close()
        # Nobody listens (a server renames its socket into place only once it does):
        # one that died left it.
        with contextlib.suppress(OSError):
            os.unlink(path)
        raise
    except OSError:
        conn.close()
        raise
    return conn


def _maybe_start_server(folder: str, key: str, path: str) -> None:
    """Start a server for this key when a step ran under it recently (the second
    step of a run), at most one at a time."""
    seen = os.path.join(folder, key + ".seen")
    starting = os.path.join(folder, key + ".starting")
    now = time.time()
    try:
        recent = now - os.stat(seen).st_mtime < SEEN_S
    except OSError:
        recent = False
    with contextlib.suppress(OSError), open(seen, "w"):
        pass
    if not recent:
        _prune(folder, now)
        return
    try:
        fd = os.open(starting, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    except FileExistsError:
        with contextlib.suppress(OSError):
            if now - os.stat(starting).st_mtime > 30:  # a start that never finished
                os.unlink(starting)
        return
    os.close(fd)
    import subprocess

    # Its own errors (it never runs a step) go to a log beside its socket.
    with open(os.path.join(folder, key + ".log"), "ab") as log:
        subprocess.Popen(
            [sys.executable, "-m", "reprolab.steps.warm", path, starting],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            start_new_session=True,
            close_fds=True,
        )


def _prune(folder: str, now: float) -> None:
    """Markers and logs of keys no step has used for a day (old code, finished runs'
    folders), and empty logs after an hour: the folder stays small over years."""
    with contextlib.suppress(OSError), os.scandir(folder) as entries:
        for entry in entries:
            if entry.name.endswith((".seen", ".log")):
                with contextlib.suppress(OSError):
                    st = entry.stat(follow_symlinks=False)
                    age = now - st.st_mtime
                    empty_log = entry.name.endswith(".log") and not st.st_size
                    if age > 86400 or (empty_log and age > 3600):
                        os.unlink(entry.path)


FORWARDED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1)
STOPPING = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT)
STOP_GRACE_S = 10.0
"""After a stopping signal is passed on, how long the step has to end on its own before
its group gets SIGTERM, then SIGKILL 5 s later: a cancelled job never waits on a step
that caught, or never saw, the signal."""


def _stop_after_grace(group: int) -> None:
    for sig, wait in ((signal.SIGTERM, STOP_GRACE_S), (signal.SIGKILL, 5.0)):
        time.sleep(wait)
        try:
            os.killpg(group, sig)
        except (ProcessLookupError, PermissionError):
            return  # the step has ended


PID_WAIT_S = 30.0
"""How long a step waits for the server's child to say it started (signals that land
meanwhile are held for it): past this the server is taken for stuck and the job fails."""


def _delegate(conn: socket.socket) -> int | None:
    """Send this process's stdio, place and environment; forward signals to the
    child's group; return the child's exit status, or None where the server went away
    before starting a child (nothing ran: the step runs here)."""
    umask = os.umask(0)
    os.umask(umask)
    request = {
        "argv": sys.argv,
        "path": sys.path,
        "cwd": os.getcwd(),
        "env": dict(os.environ),
        "umask": umask,
        "parent": os.getppid(),
    }
    payload = json.dumps(request).encode()
    # Forwarding is in place before the child exists: a Ctrl-C that lands while its pid
    # is still on the way is held and passed on, never lost nor turned into our own end.
    child: list[int] = []
    held: list[int] = []
    stopping: list[int] = []

    def forward(signum, _frame):
        if not child:
            held.append(signum)
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(child[0], signum)
        if signum in STOPPING and not stopping:  # a cancel always ends the step
            stopping.append(signum)
            threading.Thread(target=_stop_after_grace, args=(child[0],), daemon=True).start()

    saved = {sig: signal.signal(sig, forward) for sig in FORWARDED}
    reader = conn.makefile("r", encoding="utf-8")
    try:
        socket.send_fds(conn, [len(payload).to_bytes(8, "big") + payload], [0, 1, 2])
        conn.settimeout(PID_WAIT_S)  # a live server answers in milliseconds
        first = reader.readline()
    except TimeoutError:
        print("reprolab: the warm step server did not start the step", file=sys.stderr)
        return 128 + held[0] if held else 1
    except OSError:  # the server closed as we came (its idle time ran out)
        first = ""
    if not first:  # no child ran the script: it starts only after saying its pid
        for sig, handler in saved.items():
            signal.signal(sig, handler)
        return 128 + held[0] if held else None
    if not first.startswith("PID "):
        print("reprolab: the warm step server did not start the step", file=sys.stderr)
        return 1
    conn.settimeout(None)  # the step itself may run for hours
    child.append(int(first.split()[1]))
    for signum in held:
        forward(signum, None)
    last = reader.readline()
    if last.startswith("EXIT "):
        return int(last.split()[1])
    print(
        f"reprolab: the step's process ({child[0]}) ended without an exit status", file=sys.stderr
    )
    return 1


# ---------------------------------------------------------------- the server


def serve(path: str, starting: str) -> None:
    """Import everything, then listen at `path` and fork a child per step."""
    import importlib

    for name in PRELOAD:
        importlib.import_module(name)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    temp = f"{path}.{os.getpid()}"
    listener.bind(temp)
    listener.listen(16)
    os.rename(temp, path)  # ready: only now can a step reach it
    with contextlib.suppress(OSError):
        os.unlink(starting)
    mine = os.stat(path).st_ino
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped by the kernel
    listener.settimeout(IDLE_S)
    while True:
        try:
            conn, _ = listener.accept()
        except TimeoutError:
            break
        with conn:
            uid = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12)
            if int.from_bytes(uid[4:8], sys.byteorder) != os.getuid():
                continue
            conn.settimeout(None)
            if os.fork() == 0:
                listener.close()
                _child(conn)  # never returns
    with contextlib.suppress(OSError):
        if os.stat(path).st_ino == mine:
            os.unlink(path)


def _child(conn: socket.socket) -> None:
    global _CHILD
    code = 1
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        os.setpgid(0, 0)
        msg, fds, _flags, _addr = socket.recv_fds(conn, 1 << 16, 3)
        size, data = int.from_bytes(msg[:8], "big"), msg[8:]
        while len(data) < size:
            more = conn.recv(size - len(data))
            if not more:
                raise EOFError("the script's process went away")
            data += more
        request = json.loads(data)
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        # The script's process's parent (Snakemake or its job shell), from where
        # reprolab.smk.driver_command finds the snakemake command line to print.
        from reprolab.smk import CLIENT_PARENT_ENV

        os.environ[CLIENT_PARENT_ENV] = str(request["parent"])
        os.umask(request["umask"])
        sys.argv = list(request["argv"])
        sys.path[:] = request["path"]
        conn.sendall(f"PID {os.getpid()}\n".encode())
        # The watcher thread never takes a signal meant for the step: the kernel may hand
        # a process's signal to any thread that does not block it, and Python acts on it
        # only once the main thread wakes, which a step asleep in a call may not do soon.
        mask = signal.pthread_sigmask(signal.SIG_BLOCK, FORWARDED)
        threading.Thread(target=_end_with_client, args=(conn,), daemon=True).start()
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        _CHILD = True
        code = _run_script(sys.argv[0])
    finally:
        # What the interpreter does at exit and os._exit skips: exit handlers (the
        # as-built record's writer, logging's flush), then the streams.
        import atexit

        with contextlib.suppress(Exception):
            atexit._run_exitfuncs()
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        with contextlib.suppress(OSError):
            conn.sendall(f"EXIT {code}\n".encode())
        os._exit(code)


def _run_script(script: str) -> int:
    import runpy
    import traceback

    from reprolab.jobs.sweep_worker import exit_status  # a packed point ends the same way

    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit as exc:
        return exit_status(exc)
    except BaseException:  # noqa: BLE001 - what Python itself would print and exit with
        traceback.print_exc()
        return 1
    return 0


def _end_with_client(conn: socket.socket) -> None:
    """The script's process went away (it would have sent nothing more): end this
    step's whole group, as a cancelled job's."""
    with contextlib.suppress(OSError):
        while conn.recv(1):
            pass
    with contextlib.suppress(ProcessLookupError):
        os.killpg(0, signal.SIGTERM)
    time.sleep(5)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(0, signal.SIGKILL)


if __name__ == "__main__":
    # Through the package's module, not this `__main__` copy: the child's `_CHILD` must
    # be the one the script's own `hand_over()` reads.
    from reprolab.steps import warm

    warm.serve(sys.argv[1], sys.argv[2])
