"""What the test session changed in the checkout: no test may write a tracked file
(the suite's own time goes to .pytest_cache/ unless a folder is named for it)."""

import subprocess
from pathlib import Path


def status(repo: Path) -> set[str] | None:
    """`git status --porcelain` of `repo`, one entry per changed or new file (None
    outside a git checkout)."""
    done = subprocess.run(
        ["git", "-C", str(repo), "status", "--porcelain", "--untracked-files=all"],
        capture_output=True,
        text=True,
    )
    return set(done.stdout.splitlines()) if done.returncode == 0 else None


def written(before: set[str] | None, after: set[str] | None) -> list[str]:
    """The entries that appeared between two `status` calls (none when either is unknown)."""
    if before is None or after is None:
        return []
    return sorted(after - before)
