"""Steps forked from a warm server (reprolab.steps.warm, issue #19): through real
Snakemake, each step still gets its own process, the job's stdio, place,
environment and umask, its exit status, and a cancelled job's step really ends;
stale code never runs; a simulation's sandbox cannot reach the server."""

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from reprolab.jobs.launch import SimulationJob, run_job
from reprolab.steps import warm

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = str(Path(sys.executable).with_name("snakemake"))

PROBE = """
from reprolab.steps.warm import hand_over

hand_over()

import json, os, sys, time
from reprolab.smk import CLIENT_PARENT_ENV
from reprolab.steps import warm

print("HELLO from", snakemake.rule)
if snakemake.rule == "fails":
    raise RuntimeError("boom on purpose")
if snakemake.rule == "exits":
    import atexit
    atexit.register(lambda: open("exits.atexit", "w").write(f"ran {warm._CHILD}"))
    sys.exit(3)
if snakemake.rule == "stubborn":  # a step that swallows the user's Ctrl-C
    import signal
    signal.signal(signal.SIGINT, signal.SIG_IGN)
if snakemake.rule in ("sleeps", "stubborn"):
    open(snakemake.output[0] + ".pid", "w").write(
        f"{os.getpid()} {sys.argv[0]} {warm._CHILD}"
    )
    time.sleep(120)
with open(snakemake.output[0], "w") as fh:
    json.dump({
        "child": warm._CHILD,
        "pid": os.getpid(),
        "cwd": os.getcwd(),
        "probe": os.environ.get("PROBE"),
        "parent_env": os.environ.get(CLIENT_PARENT_ENV),
    }, fh)
"""

SNAKEFILE = """
rule all:
    input: "c.json"

rule a:
    output: "a.json"
    script: "probe.py"

rule b:
    input: "a.json"
    output: "b.json"
    script: "probe.py"

rule c:
    input: "b.json"
    output: "c.json"
    script: "probe.py"

rule fails:
    output: "fails.json"
    script: "probe.py"

rule exits:
    output: "exits.json"
    script: "probe.py"

rule sleeps:
    output: "sleeps.json"
    script: "probe.py"

rule stubborn:
    output: "stubborn.json"
    script: "probe.py"
"""


@pytest.fixture
def flow(tmp_path, request):
    """A three-step workflow whose steps report where they ran; its own socket folder."""
    wd = tmp_path / "wd"
    wd.mkdir()
    (wd / "Snakefile").write_text(SNAKEFILE)
    (wd / "probe.py").write_text(PROBE)
    # Short, as a real XDG_RUNTIME_DIR (/run/user/<uid>): a Unix socket's name is short.
    runtime = Path(tempfile.mkdtemp(prefix="ws", dir="/tmp"))
    request.addfinalizer(lambda: shutil.rmtree(runtime, ignore_errors=True))
    env = {**os.environ, "XDG_RUNTIME_DIR": str(runtime), "PROBE": "kept"}
    env["PYTHONPATH"] = str(REPO)
    env.pop("REPROLAB_WARM_STEPS", None)
    return wd, env


def snakemake(wd: Path, env: dict, *args: str, **kw) -> subprocess.CompletedProcess:
    cmd = [SNAKEMAKE, "-d", str(wd), "-s", str(wd / "Snakefile"), "-c1", *args]
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300, **kw)


def sockets(env: dict) -> list[Path]:
    return list(Path(env["XDG_RUNTIME_DIR"]).glob(f"reprolab-steps-{os.getuid()}/*.sock"))


def warm_up(wd: Path, env: dict) -> None:
    """A first run: its second step starts the server; wait until it listens."""
    done = snakemake(wd, env)
    assert done.returncode == 0, done.stderr
    deadline = time.time() + 90
    while not sockets(env):
        assert time.time() < deadline, "no server started"
        time.sleep(0.2)


def outputs(wd: Path) -> list[dict]:
    return [json.loads((wd / f"{n}.json").read_text()) for n in "abc"]


def test_steps_run_in_fresh_children_of_a_warm_server_as_their_own_job(flow):
    wd, env = flow
    first = snakemake(wd, env)
    assert first.returncode == 0, first.stderr
    assert not any(o["child"] for o in outputs(wd))  # nothing warm before a server is up
    warm_up(wd, env)
    umask = lambda: os.umask(0o077)  # noqa: E731 - a careful user's umask
    again = snakemake(wd, env, "--forceall", preexec_fn=umask)
    assert again.returncode == 0, again.stderr
    runs = outputs(wd)
    assert all(o["child"] for o in runs), runs
    assert len({o["pid"] for o in runs}) == 3  # one process per step, never reused
    assert all(o["cwd"] == str(wd) and o["probe"] == "kept" for o in runs)
    assert all(int(o["parent_env"]) > 1 for o in runs)
    for name in "abc":
        assert (wd / f"{name}.json").stat().st_mode & 0o077 == 0  # the job's umask
    # The step's stdout is the job's own (Snakemake's console here).
    assert all(f"HELLO from {n}" in again.stdout + again.stderr for n in "abc")


def test_a_failing_step_fails_its_job_with_its_own_status_and_traceback(flow):
    wd, env = flow
    warm_up(wd, env)
    failed = snakemake(wd, env, "fails")
    assert failed.returncode != 0
    assert "RuntimeError: boom on purpose" in failed.stderr
    assert not (wd / "fails.json").exists()
    exited = snakemake(wd, env, "exits")
    assert exited.returncode != 0
    assert "exit status 3" in exited.stderr or "returned non-zero exit status 3" in exited.stderr
    # Forked by the server, and its exit handlers run as at any exit.
    assert (wd / "exits.atexit").read_text() == "ran True"


def test_a_cancelled_job_ends_its_step_and_a_dead_client_ends_it_too(flow):
    wd, env = flow
    warm_up(wd, env)
    for how in ("cancel", "kill_client"):
        run, (step, script, child) = _start_sleeping_step(wd, env, "sleeps")
        step = int(step)
        assert child == "True"  # forked by the server, not Snakemake's own process
        # Only the step's main thread may take the job's signals (_other_threads_block).
        assert _other_threads_block(step, signal.SIGINT, signal.SIGTERM)
        assert script.startswith(f"{wd}/.snakemake/scripts/")  # the job's own script
        if how == "cancel":
            # The user's Ctrl-C: the terminal signals Snakemake's whole process group,
            # the job's process with it (Snakemake itself waits for local jobs).
            os.killpg(run.pid, signal.SIGINT)
        else:
            client = _client_of(step, script)
            os.kill(client, signal.SIGKILL)  # the job's own process dies without a word
            os.killpg(run.pid, signal.SIGINT)
        try:
            run.wait(timeout=60)
        except subprocess.TimeoutExpired:
            # Say which case and where everything stood (a rare hang here once; seen
            # only in a whole-suite run).
            ps = subprocess.run(["ps", "-eo", "pid,ppid,pgid,stat,args"], capture_output=True)
            os.killpg(run.pid, signal.SIGKILL)
            with contextlib.suppress(ProcessLookupError):
                os.killpg(step, signal.SIGKILL)  # it holds the job's stdio: the pipes' ends
            _out, err = run.communicate(timeout=30)
            pytest.fail(
                f"{how}: snakemake still ran 60 s after the signal (step {step}); its "
                f"stderr:\n{err.decode()[-3000:]}\nprocesses:\n{ps.stdout.decode()[-4000:]}"
            )
        deadline = time.time() + 15
        while _alive(step):
            assert time.time() < deadline, f"{how}: the step {step} outlived its job"
            time.sleep(0.1)
        assert not (wd / "sleeps.json").exists()


def _start_sleeping_step(wd: Path, env: dict, rule: str) -> tuple[subprocess.Popen, list[str]]:
    """Snakemake running `rule` (a step that writes its pid file, then sleeps) in a
    session of its own, as a terminal would; once the step is asleep: the run and the
    pid file's fields (pid, script, forked)."""
    pid_file = wd / f"{rule}.json.pid"
    pid_file.unlink(missing_ok=True)
    cmd = [SNAKEMAKE, "-d", str(wd), "-s", str(wd / "Snakefile"), "-c1", rule]
    run = subprocess.Popen(
        cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True
    )
    deadline = time.time() + 60
    while not pid_file.exists() or not pid_file.read_text():
        assert time.time() < deadline and run.poll() is None, run.stderr.read()
        time.sleep(0.1)
    return run, pid_file.read_text().split()


def _other_threads_block(pid: int, *signals: signal.Signals) -> bool:
    """Every thread of `pid` but its main one blocks `signals` (from /proc's SigBlk): a
    process's signal then always wakes the main thread, where Python handles it."""
    bits = sum(1 << (s - 1) for s in signals)
    others = [t for t in Path(f"/proc/{pid}/task").iterdir() if int(t.name) != pid]
    assert others, "the step has no watcher thread"
    for task in others:
        status = (task / "status").read_text()
        blocked = int(status.split("SigBlk:")[1].split()[0], 16)
        if blocked & bits != bits:
            return False
    return True


def _client_of(step: int, script: str) -> int:
    """The script's own process: the one Snakemake started, running the same file."""
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != step:
            try:
                args = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if os.fsencode(script) in args:
                return int(entry.name)
    raise AssertionError("no client process found")


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


def test_edited_code_gets_a_new_server_never_a_stale_one(tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "mod.py").write_text("X = 1\n")
    before = warm.run_key([str(package)])
    assert warm.run_key([str(package)]) == before
    time.sleep(0.01)
    (package / "mod.py").write_text("X = 2\n")
    assert warm.run_key([str(package)]) != before
    (package / "new.py").write_text("")
    assert len({before, warm.run_key([str(package)])}) == 2


def test_a_socket_folder_others_can_enter_is_never_used(flow, tmp_path):
    wd, env = flow
    folder = Path(env["XDG_RUNTIME_DIR"]) / f"reprolab-steps-{os.getuid()}"
    folder.mkdir(mode=0o755)
    folder.chmod(0o755)  # a careless (or hostile) setup: group and others can enter
    for _ in range(2):
        done = snakemake(wd, env, "--forceall")
        assert done.returncode == 0, done.stderr
    assert not any(o["child"] for o in outputs(wd))
    assert list(folder.iterdir()) == []  # no marker, no server, no socket


def test_switched_off_it_starts_nothing(flow):
    wd, env = flow
    env["REPROLAB_WARM_STEPS"] = "0"
    for _ in range(2):
        done = snakemake(wd, env, "--forceall")
        assert done.returncode == 0, done.stderr
    assert not (Path(env["XDG_RUNTIME_DIR"]) / f"reprolab-steps-{os.getuid()}").exists()


def test_a_sandboxed_simulation_cannot_reach_the_server(tmp_path, monkeypatch):
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    folder = Path(warm.socket_dir())  # where real servers listen
    path = folder / f"attack-test-{os.getpid()}.sock"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(1)
    try:
        run = tmp_path / "run"
        run.mkdir()
        (run / "simulation.py").write_text(
            "import os, socket\n"
            f"path = {str(path)!r}\n"
            "try:\n"
            "    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)\n"
            "    s.connect(path)\n"
            "    print('REACHED')\n"
            "except OSError as exc:\n"
            "    print('REFUSED', type(exc).__name__)\n"
            f"print('LISTED', os.path.exists({str(folder)!r}))\n"
        )
        job = SimulationJob(
            script=str(run / "simulation.py"), workdir=str(run), python=sys.executable
        )
        record = run_job(job)
        assert record["exit_code"] == 0, record["stderr_tail"]
        assert "REFUSED" in record["stdout_tail"] and "REACHED" not in record["stdout_tail"]
        assert "LISTED False" in record["stdout_tail"]
    finally:
        listener.close()
        path.unlink(missing_ok=True)


def test_a_dead_servers_socket_is_cleared_and_a_missing_one_left_alone(tmp_path):
    path = tmp_path / "dead.sock"
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(str(path))
    dead.close()  # its file stays, nobody listens
    with pytest.raises(ConnectionRefusedError):
        warm._connect(str(path))
    assert not path.exists()  # the next step starts a fresh server
    with pytest.raises(FileNotFoundError):
        warm._connect(str(path))
    assert not path.exists()


CLIENT = """
import socket, sys
from reprolab.steps import warm
warm.PID_WAIT_S = float(sys.argv[2])
conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
conn.connect(sys.argv[1])
code = warm._delegate(conn)
if code is None:
    print("RUN HERE")
sys.exit(code)
"""

VICTIM = """
import signal, sys, time
def on_int(*_):
    open(sys.argv[1], "w").write("SIGINT")
    sys.exit(0)
signal.signal(signal.SIGINT, on_int)
open(sys.argv[1] + ".ready", "w").write("")
time.sleep(60)
"""


def _fake_server(tmp_path: Path):
    path = tmp_path / "s.sock"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(1)
    return path, listener


def test_a_ctrl_c_before_the_step_has_started_is_held_and_reaches_it(tmp_path):
    # The window a loaded machine opens: the user's Ctrl-C reaches the job's process
    # after it has handed over but before the server's child has said who it is. The
    # signal must neither be lost (the step would run on under a cancelled job) nor
    # end the job's process alone.
    path, listener = _fake_server(tmp_path)
    mark = tmp_path / "victim.txt"
    victim = subprocess.Popen([sys.executable, "-c", VICTIM, str(mark)], start_new_session=True)
    client = subprocess.Popen(
        [sys.executable, "-c", CLIENT, str(path), "30"], env={**os.environ, "PYTHONPATH": str(REPO)}
    )
    try:
        conn, _ = listener.accept()
        _msg, fds, _flags, _addr = socket.recv_fds(conn, 1 << 16, 3)
        for fd in fds:
            os.close(fd)
        deadline = time.time() + 30
        while not Path(f"{mark}.ready").exists():
            assert time.time() < deadline
            time.sleep(0.05)
        client.send_signal(signal.SIGINT)  # before the step's pid has reached it
        time.sleep(1.0)
        assert client.poll() is None, "the job's process ended on a signal meant for its step"
        conn.sendall(f"PID {victim.pid}\n".encode())
        assert victim.wait(timeout=30) == 0 and mark.read_text() == "SIGINT"
        conn.sendall(b"EXIT 130\n")
        assert client.wait(timeout=30) == 130
    finally:
        for proc in (client, victim):
            proc.kill()
        listener.close()


def test_a_server_that_never_starts_the_step_fails_the_job_instead_of_hanging(tmp_path):
    path, listener = _fake_server(tmp_path)
    err = tmp_path / "stderr.txt"
    with open(err, "w") as fh:  # a file: the stdio sent to the silent server stays open
        client = subprocess.Popen(
            [sys.executable, "-c", CLIENT, str(path), "1"],
            env={**os.environ, "PYTHONPATH": str(REPO)},
            stderr=fh,
        )
        try:
            assert client.wait(timeout=60) == 1
        finally:
            client.kill()
            listener.close()
    assert "did not start the step" in err.read_text()


def test_a_server_that_closes_before_starting_the_step_leaves_it_to_run_here(tmp_path):
    # A server whose idle time runs out as a step connects: no child ran the script, so
    # the step runs in its own process, as where there is no server at all.
    path, listener = _fake_server(tmp_path)
    out = tmp_path / "stdout.txt"
    with open(out, "w") as fh:
        client = subprocess.Popen(
            [sys.executable, "-c", CLIENT, str(path), "30"],
            env={**os.environ, "PYTHONPATH": str(REPO)},
            stdout=fh,
        )
        try:
            conn, _ = listener.accept()
            _msg, fds, _flags, _addr = socket.recv_fds(conn, 1 << 16, 3)
            for fd in fds:
                os.close(fd)
            conn.close()  # gone without a word, as a server that ends
            assert client.wait(timeout=30) == 0
        finally:
            client.kill()
            listener.close()
    assert out.read_text().strip() == "RUN HERE"


def test_a_step_that_ignores_the_ctrl_c_is_ended_after_a_grace(flow):
    # The user's Ctrl-C must end the run even where the step does not act on it.
    wd, env = flow
    warm_up(wd, env)
    run, (step, *_) = _start_sleeping_step(wd, env, "stubborn")
    step = int(step)
    try:
        os.killpg(run.pid, signal.SIGINT)
        assert run.wait(timeout=warm.STOP_GRACE_S + 45) != 0
        assert not _alive(step)
        assert not (wd / "stubborn.json").exists()
    finally:
        for group in (run.pid, step):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(group, signal.SIGKILL)
