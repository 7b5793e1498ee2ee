"""matplotlib's font list for sandboxed runs: built by trusted code, copied in.

Every sandboxed run and packed worker has its own writable `.cache/matplotlib` (its
HOME is its folder), so matplotlib scanned the system's fonts again in each one:
about 0.2 s per process on this lean image, seconds on a cluster node with a large font
tree. `seed` copies the list from the user's own matplotlib cache (where the report's
plots already put it; built there in a plain subprocess when missing, never by the
generated script) into the run's cache before the run starts. Best effort: without
it, or where a listed font is missing on the node, matplotlib builds its own list
inside the run's cache, as before.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from reprolab import run_files
from reprolab.errors import InputFileError

FONT_LISTS = "fontlist-v*.json"
BUILD_TIMEOUT_S = 300


def user_cache_dir() -> Path:
    """Where matplotlib keeps its cache for this user outside any sandbox."""
    if os.environ.get("MPLCONFIGDIR"):
        return Path(os.environ["MPLCONFIGDIR"])
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(xdg) / "matplotlib"


def seed(run_cache: Path, python: str, root: Path | None = None) -> list[str]:
    """Copy the user's font list(s) into `run_cache` (the run's MPLCONFIGDIR); the
    names copied, [] where there was nothing to copy or copying failed. With `root`
    (the run folder holding `run_cache`) nothing is written through a link a run
    planted: each folder is made without following links and each list is a new
    file (reprolab.run_files), so a planted link is refused, never written through."""
    try:
        lists = font_lists(python)
        if root is None:
            run_cache.mkdir(parents=True, exist_ok=True)
        copied = []
        for src in lists:
            if root is not None:
                rel = f"{run_cache.relative_to(root).as_posix()}/{src.name}"
                if run_files.refusal(root, rel) or run_files.size_of(root, rel) is not None:
                    continue  # there already (or a run's link: never written through)
                run_files.create_run_file(root, rel, src.read_bytes())
                mtime = src.stat().st_mtime_ns  # its mtime too: not rebuilt
                os.utime(Path(root, rel), ns=(mtime, mtime), follow_symlinks=False)
            elif not (run_cache / src.name).exists():
                shutil.copy2(src, run_cache / src.name)  # its mtime too: not rebuilt
            else:
                continue
            copied.append(src.name)
        return copied
    except (OSError, subprocess.SubprocessError, InputFileError):
        return []


def font_lists(python: str) -> list[Path]:
    """The user's font lists, built first (once, atomically) when there are none."""
    cache = user_cache_dir()
    found = sorted(cache.glob(FONT_LISTS))
    if found:
        return found
    cache.mkdir(parents=True, exist_ok=True)
    build = Path(tempfile.mkdtemp(prefix=".reprolab-fontlist-", dir=cache))
    try:
        env = {**os.environ, "MPLCONFIGDIR": str(build), "MPLBACKEND": "Agg"}
        subprocess.run(
            [python, "-c", "import matplotlib.font_manager"],
            env=env,
            capture_output=True,
            timeout=BUILD_TIMEOUT_S,
            check=True,
        )
        for made in build.glob(FONT_LISTS):
            os.replace(made, cache / made.name)  # a concurrent builder's list is as good
    finally:
        shutil.rmtree(build, ignore_errors=True)
    return sorted(cache.glob(FONT_LISTS))
