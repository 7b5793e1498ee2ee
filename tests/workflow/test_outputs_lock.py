"""Two runs may not share one outputs folder, even from different working directories.

Snakemake locks a working directory; ReproLab's own lock is on the outputs folder, so
a second run from elsewhere stops at once with the folder named and writes nothing.
"""

import fcntl
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import yaml

from reprolab import fileio
from reprolab.fileio import lock_outputs_dir
from tests.support.pipeline import EXAMPLE, snakemake


def test_a_second_process_cannot_take_a_held_outputs_lock(tmp_path):
    held = lock_outputs_dir(tmp_path / "shared")
    other = subprocess.run(
        [
            sys.executable,
            "-c",
            f"from reprolab.fileio import lock_outputs_dir as l; l({str(tmp_path / 'shared')!r})",
        ],
        capture_output=True,
        text=True,
    )
    assert other.returncode != 0
    assert "another run is writing to the outputs folder" in other.stderr
    assert f"pid {os.getpid()}" in other.stderr  # who holds it
    assert held.name == ".reprolab.lock"


def test_lock_is_released_when_its_process_ends(tmp_path):
    code = f"from reprolab.fileio import lock_outputs_dir as l; l({str(tmp_path / 'o')!r})"
    for _ in range(2):  # the first process ended, so the second takes the lock
        run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        assert run.returncode == 0, run.stderr


@pytest.mark.pipeline
def test_run_from_another_workdir_on_the_same_outputs_stops_before_any_work(tmp_path):
    shared = tmp_path / "shared_outputs"
    workdir = tmp_path / "second_workdir"
    workdir.mkdir()
    config = {
        "outputs_dir": str(shared),
        "papers": [{"paper_dir": str(EXAMPLE)}],
        "provider": {"kind": "replay"},
        "gates": {"auto_approve": ["material_checkpoint"]},
    }
    (workdir / "config.yaml").write_text(yaml.safe_dump(config))
    shared.mkdir()
    # A run elsewhere holds the folder (the lock a running snakemake takes at start).
    fd = os.open(shared / ".reprolab.lock", os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    os.write(fd, b"pid 1 in /elsewhere\n")
    try:
        run = snakemake(workdir, "--until", "adapt_prompts")
        assert run.returncode != 0
        assert "another run is writing to the outputs folder" in run.stdout + run.stderr
        assert sorted(p.name for p in shared.iterdir()) == [".reprolab.lock"]
    finally:
        os.close(fd)
    # The stopped run keeps nothing: the lock is free once the holder lets go...
    fd = os.open(shared / ".reprolab.lock", os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    os.close(fd)
    run = snakemake(workdir, "--until", "adapt_prompts")  # ...and the same command goes on
    assert run.returncode == 0, run.stderr[-2000:]
    assert (shared / EXAMPLE.name / "prompt_adaptations.json").is_file()


@pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("runuser"), reason="needs root to act as two users"
)
def test_a_colleague_takes_the_lock_another_user_left_in_a_shared_folder():
    """A group's shared project folder: the lock file one member's run made is mode 0644
    (umask 022), and the next member's run must still take the lock (and still be
    refused while the first run holds it)."""
    shared = Path(tempfile.mkdtemp(prefix="reprolab-shared-"))
    before = len(fileio._HELD_LOCKS)
    try:
        shared.chmod(0o777)  # the group's folder (everyone here: no common group to use)
        code = f"from reprolab.fileio import lock_outputs_dir as l; l({str(shared)!r})"
        mine = subprocess.run(
            [sys.executable, "-c", f"import os; os.umask(0o022); {code}"], capture_output=True
        )
        assert mine.returncode == 0 and (shared / ".reprolab.lock").stat().st_mode & 0o777 == 0o644
        colleague = ["runuser", "-u", "nobody", "--", sys.executable, "-c", code]
        later = subprocess.run(colleague, capture_output=True, text=True)
        assert later.returncode == 0, later.stderr
        held = lock_outputs_dir(shared)  # a run of mine is going on now
        during = subprocess.run(colleague, capture_output=True, text=True)
        assert during.returncode != 0
        assert "another run is writing to the outputs folder" in during.stderr
        assert held.stat().st_uid == 0
    finally:
        while len(fileio._HELD_LOCKS) > before:  # this test's lock only
            os.close(fileio._HELD_LOCKS.pop())
        shutil.rmtree(shared)
