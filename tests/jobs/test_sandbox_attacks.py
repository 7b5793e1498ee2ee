"""Hostile simulation scripts against the OS sandbox, through the worker's real launch.

Each script runs as a stage's rank does (`reprolab.jobs.launch.run_job`: bubblewrap,
limits, watchdog) in `outputs/<paper>/stages/<stage>/run` of a paper tree that also
holds gates, recordings and another stage. The Python runtime guard is switched off
(`sandbox=False`): what must stop each attack is the OS boundary alone. Every test
asserts that nothing outside the run folder changed (checksums) and, where the
attack ends the job, which failure kind was recorded.
"""

import hashlib
import os
import socket
import sys
import textwrap
import time
from pathlib import Path

import pytest

from reprolab.jobs import bwrap, limits, sandbox
from reprolab.jobs.launch import SimulationJob, run_job

pytestmark = pytest.mark.skipif(not bwrap.availability()[0], reason=bwrap.availability()[1])
CANARY = "sk-ant-canary-0123456789abcdef"


def tree_sums(root: Path, skip: Path) -> dict[str, str]:
    sums = {}
    for path in sorted(root.rglob("*")):
        if skip in path.parents or path == skip or path.name == "__pycache__":
            continue
        if "__pycache__" in path.parts:
            continue
        key = str(path.relative_to(root))
        sums[key] = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "dir"
    return sums


@pytest.fixture
def paper(tmp_path):
    """outputs/<paper>/ with gates, recordings, another stage and this stage's run folder."""
    out = tmp_path / "outputs" / "p1"
    (out / "gates").mkdir(parents=True)
    (out / "gates" / "material_checkpoint.request.json").write_text('{"sha256": "abc"}')
    (out / "recordings" / "stage0").mkdir(parents=True)
    (out / "recordings" / "stage0" / "planner.a1.yaml").write_text("secret plan\n")
    (out / "stages" / "stage1").mkdir(parents=True)
    (out / "stages" / "stage1" / "result.json").write_text('{"exit_code": 0}')
    (out / "validated_materials.json").write_text("{}")
    run = out / "stages" / "stage0" / "run"
    run.mkdir(parents=True)
    before = tree_sums(tmp_path, run)
    return tmp_path, run, before


def attack(paper, code: str, **kw) -> dict:
    root, run, before = paper
    script = run / "simulation.py"
    script.write_text(textwrap.dedent(code))
    isolate = sandbox.network_plan("auto", launcher_uses_srun=False)[0]  # as run_stage does
    job = SimulationJob(
        script=str(script),
        workdir=str(run),
        python=sys.executable,
        sandbox=False,
        isolate_network=isolate,
        **kw,
    )
    package = tree_sums(bwrap.PACKAGE_DIR, skip=bwrap.PACKAGE_DIR / "__pycache__")
    record = run_job(job)
    assert tree_sums(root, run) == before, "something outside the run folder changed"
    assert tree_sums(bwrap.PACKAGE_DIR, skip=bwrap.PACKAGE_DIR / "__pycache__") == package
    return record


GATE = "os.path.join(os.getcwd(), '..', '..', '..', 'gates', 'material_checkpoint.json')"
WRITES = {
    "forged_gate_answer": f"""
        import hashlib, json, os
        gate = {GATE}
        req = json.load(open(gate.replace('.json', '.request.json')))
        json.dump({{"action": "approve", "sha256": req["sha256"]}}, open(gate, "w"))
    """,
    "dir_fd_write": """
        import os
        up = os.open('../../..', os.O_RDONLY)
        fd = os.open('gates/material_checkpoint.json', os.O_WRONLY | os.O_CREAT, dir_fd=up)
        os.write(fd, b'{"action": "approve"}')
    """,
    "rename_and_link_out": """
        import os
        open('x.txt', 'w').write('x')
        for move in (os.link, os.rename):
            try:
                move('x.txt', '../../../gates/material_checkpoint.json')
            except OSError as exc:
                print(move.__name__, exc)
        os.rename('../../stage1/result.json', 'stolen.json')
    """,
    "mkdir_and_remove": """
        import os
        for step in (lambda: os.mkdir('../../stage9'),
                     lambda: os.remove('../../stage1/result.json'),
                     lambda: os.rmdir('../../../recordings/stage0')):
            try:
                step()
            except OSError as exc:
                print(exc)
        os.remove('../../../validated_materials.json')
    """,
    "sqlite_write_out": """
        import sqlite3
        db = sqlite3.connect('../../../gates/material_checkpoint.json')
        db.execute('create table t (x)')
        db.commit()
    """,
    "h5py_write_out": """
        import h5py
        with h5py.File('../../stage1/fields.h5', 'w') as f:
            f['x'] = [1, 2, 3]
    """,
    "runtime_built_paths": """
        import os
        base = os.path.dirname(os.path.dirname(os.path.dirname(os.getcwd())))
        target = os.path.join(base, 'rec' + 'ordings', 'stage0', 'planner.a1.yaml')
        open(target, 'a').write('tampered')
    """,
    "fork_exec_shell": """
        import _posixsubprocess, os
        _posixsubprocess.fork_exec(
            ['/bin/sh', '-c', 'echo pwned > ../../../gates/material_checkpoint.json; '
             'echo pwned > REPRO/pwned.py'],
            [b'/bin/sh'], True, (), None, None, -1, -1, -1, -1, -1, -1, -1, -1,
            False, False, None, None, None, -1, None, False)
        os.wait()
    """.replace("REPRO", str(bwrap.PACKAGE_DIR)),
    "forkpty_child": """
        import os, time
        pid, fd = os.forkpty()
        if pid == 0:
            open('../../../gates/material_checkpoint.json', 'w').write('pwned')
            os._exit(0)
        time.sleep(0.5)
    """,
    "write_into_the_sandbox_root": """
        import os
        os.makedirs('/work/anything', exist_ok=True)
    """,
    "write_into_the_package": f"""
        open({str(bwrap.PACKAGE_DIR / "pwned.py")!r}, 'w').write('print(1)')
    """,
}


CHILD_ATTACKS = {"forkpty_child", "fork_exec_shell"}


@pytest.mark.parametrize("name", sorted(WRITES))
def test_write_outside_the_run_folder_is_stopped(paper, name):
    record = attack(paper, WRITES[name])
    if name not in CHILD_ATTACKS:  # a child's failed write does not fail its parent
        assert record["exit_code"] != 0 and record["failure"] is not None, record
    assert record["sandbox"]["isolation"] == "bwrap"


def test_reads_see_no_gate_recording_secret_or_parent_environment(paper, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", CANARY)
    monkeypatch.setenv("MY_SERVICE_TOKEN", CANARY)
    code = """
        import glob, os
        seen = []
        for pattern in ('/proc/*/environ', '/proc/*/cmdline'):
            for path in glob.glob(pattern):
                try:
                    seen.append(open(path, 'rb').read().decode('latin-1'))
                except OSError:
                    pass
        seen.append(repr(dict(os.environ)))
        for path in ('../../../recordings/stage0/planner.a1.yaml', '/etc/shadow',
                     '../../../gates/material_checkpoint.request.json', '/root/.bashrc'):
            try:
                seen.append(open(path).read())
            except OSError as exc:
                print('refused', exc.strerror)
        print('processes', len(glob.glob('/proc/[0-9]*')))
        open('seen.txt', 'w').write('\\n'.join(seen))
    """
    record = attack(paper, code)
    assert record["exit_code"] == 0, record["stderr_tail"]
    seen = (paper[1] / "seen.txt").read_text()
    assert CANARY not in seen and "secret plan" not in seen and "abc" not in seen
    assert record["stdout_tail"].count("refused") == 4
    assert int(record["stdout_tail"].split("processes")[1].split()[0]) <= 3
    assert CANARY not in str(record)


def test_no_network_and_no_way_back_into_the_host_namespace(paper):
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    port = server.getsockname()[1]
    code = f"""
        import ctypes, os, socket
        libc = ctypes.CDLL(None, use_errno=True)
        for target in ('/proc/1/ns/net', '/proc/{os.getpid()}/ns/net'):
            try:
                fd = os.open(target, os.O_RDONLY)
                print('setns', libc.setns(fd, 0), ctypes.get_errno())
            except OSError as exc:
                print('open', exc.strerror)
        try:
            socket.create_connection(('127.0.0.1', {port}), timeout=2)
            print('CONNECTED')
        except OSError as exc:
            print('connect refused', exc)
    """
    record = attack(paper, code)
    server.close()
    assert "CONNECTED" not in record["stdout_tail"]
    assert "connect refused" in record["stdout_tail"]
    assert "setns 0" not in record["stdout_tail"]


def test_survivor_process_dies_with_the_job(paper, tmp_path):
    marker = "reprolab-survivor-" + os.urandom(4).hex()
    code = f"""
        import ctypes, os, signal, time
        libc = ctypes.CDLL(None)
        if libc.fork() == 0:
            os.setsid()
            signal.signal(signal.SIGHUP, signal.SIG_IGN)
            if libc.fork() == 0:
                import sys
                sys.argv[0] = '{marker}'
                time.sleep(2)
                open('late.txt', 'w').write('survived')
                os._exit(0)
            os._exit(0)
        time.sleep(0.3)
        print('parent done')
    """
    record = attack(paper, code, timeout_s=30)
    assert record["exit_code"] == 0, record["stderr_tail"]
    time.sleep(2.5)
    assert not (paper[1] / "late.txt").exists(), "a process outlived its job"


def test_timeout_kills_the_whole_tree(paper):
    code = """
        import ctypes, os, signal, time
        libc = ctypes.CDLL(None)
        for _ in range(3):
            if libc.fork() == 0:
                os.setsid()
                signal.signal(signal.SIGHUP, signal.SIG_IGN)
                signal.signal(signal.SIGTERM, signal.SIG_IGN)
                time.sleep(2.5)
                open('late.txt', 'a').write('survived')
                os._exit(0)
        time.sleep(60)
    """
    record = attack(paper, code, timeout_s=1)
    assert record["timed_out"] and record["failure"]["kind"] == "timeout"
    time.sleep(2.5)
    assert not (paper[1] / "late.txt").exists()


def test_fork_bomb_is_stopped(paper):
    code = """
        import ctypes, time
        libc = ctypes.CDLL(None)
        while True:
            libc.fork()
    """
    record = attack(paper, code, timeout_s=30)
    assert record["failure"]["kind"] == "process_limit", record["failure"]
    assert record["runtime_seconds"] < 10


BALLOON = """
        import ctypes, time
        libc = ctypes.CDLL(None)
        for _ in range(6):
            if libc.fork() == 0:
                break
        block = bytearray(150 * 1024 * 1024)
        for i in range(0, len(block), 4096):
            block[i] = 1
        time.sleep(20)
    """


def test_memory_balloon_across_processes_is_stopped(paper):
    code = BALLOON
    record = attack(paper, code, timeout_s=30, memory_mb=400)
    assert record["failure"]["kind"] == "memory_limit", record["failure"]
    assert record["runtime_seconds"] < 15


def test_disk_fill_is_stopped(paper):
    code = """
        import os
        with open('fill.bin', 'wb') as fh:
            while True:
                fh.write(os.urandom(1 << 20))
    """
    record = attack(paper, code, timeout_s=30, folder_mb=20)
    assert record["failure"]["kind"] == "disk_quota", record["failure"]
    assert (paper[1] / "fill.bin").stat().st_size <= 20 * 2**20


def test_fork_bomb_and_balloon_stopped_by_the_watchdog_where_no_cgroup_can_be_made(
    paper, monkeypatch
):
    monkeypatch.setattr(limits, "PIDS_ROOTS", ())  # a site without a writable pids cgroup
    record = attack(
        paper, "import ctypes\nlibc = ctypes.CDLL(None)\nwhile True:\n    libc.fork()\n"
    )
    assert record["sandbox"]["pids_cgroup"] is False
    assert record["failure"]["kind"] == "process_limit", record["failure"]
    # When the record comes back, not one forked child is still alive (reparented
    # children are out of the launcher's tree, but not out of its pid namespace).
    script = str(paper[1] / "simulation.py").encode()
    assert not [pid for pid in os.listdir("/proc") if pid.isdigit() and _runs(pid, script)]
    record = attack(paper, BALLOON, timeout_s=30, memory_mb=400)
    assert record["failure"]["kind"] == "memory_limit", record["failure"]


def _runs(pid: str, script: bytes) -> bool:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return script in fh.read()
    except OSError:
        return False
