"""`reprolab unlock`: release the Snakemake lock a killed run left on this run's
outputs folder, and only that one.

`snakemake --unlock` removes every lock of the working directory, so after a killed
driver it also releases a colleague's run going on in the same checkout with another
outputs folder (two runs then write the same working directory's records). This
removes only the lock pairs (`.snakemake/locks/<n>.input.lock`, `<n>.output.lock`)
whose outputs lie in this config's outputs folder, and refuses while a run still
writes to that folder (its own lock, `reprolab.fileio.lock_outputs_dir`, is held).
"""

from __future__ import annotations

import fcntl
import os
import sys
from pathlib import Path


def add_command(sub) -> None:
    cmd = sub.add_parser(
        "unlock",
        help="release the lock a killed run left on this config's outputs folder only",
    )
    cmd.add_argument("--configfile", default="config/config.yaml", help="the run's config file")
    cmd.add_argument(
        "--directory",
        default=".",
        help="Snakemake's working directory of the run (its --directory; default: here)",
    )


def run(args, config: dict) -> int:
    workdir = Path(args.directory)
    outputs = workdir / config.get("outputs_dir", "outputs")
    holder = live_run(outputs)
    if holder is not None:
        print(
            f"reprolab: not unlocked: a run is still writing to {outputs.resolve()} "
            f"(held by: {holder}); wait for it to end or stop it first",
            file=sys.stderr,
        )
        return 1
    removed, others = release(workdir, outputs)
    where = outputs.resolve()
    if removed:
        print(f"reprolab: released the lock of the run on {where} ({', '.join(removed)})")
    else:
        print(f"reprolab: no lock held on {where}; nothing to release")
    if others:
        print(
            f"reprolab: left {len(others)} lock(s) of other runs in {workdir.resolve()} "
            f"({', '.join(others)}): their outputs lie elsewhere"
        )
    return 0


def live_run(outputs: Path) -> str | None:
    """Who holds the outputs folder's run lock (reprolab.fileio.lock_outputs_dir), or
    None when no live run does: tried without waiting, and let go at once."""
    path = outputs / ".reprolab.lock"
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None  # never locked: no run has written there
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return path.read_text(encoding="utf-8", errors="replace").strip() or "unknown"
    finally:
        os.close(fd)  # closing lets go of a lock taken here
    return None


def release(workdir: Path, outputs: Path) -> tuple[list[str], list[str]]:
    """Remove the lock pairs whose output files lie in `outputs`; (removed, left) as
    lock file names."""
    locks = workdir / ".snakemake" / "locks"
    removed, others = [], []
    for out_lock in sorted(locks.glob("*.output.lock")):
        number = out_lock.name.split(".")[0]
        pair = [out_lock, locks / f"{number}.input.lock"]
        names = [p.name for p in pair if p.is_file()]
        if owns(out_lock, workdir, outputs):
            for path in pair:
                path.unlink(missing_ok=True)
            removed += names
        else:
            others += names
    return removed, others


def owns(out_lock: Path, workdir: Path, outputs: Path) -> bool:
    """Whether any output the lock lists lies in `outputs` (paths relative to the
    working directory, as Snakemake writes them, or absolute)."""
    root = outputs.resolve()
    for line in out_lock.read_text(encoding="utf-8", errors="replace").splitlines():
        if not line.strip():
            continue
        path = (workdir / line.strip()).resolve()
        if path == root or root in path.parents:
            return True
    return False
