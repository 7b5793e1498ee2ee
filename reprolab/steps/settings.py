"""The settings step: a setting that decides what some steps compute, written as a
file whose job reruns only when the setting changes (the rule's params)."""

from __future__ import annotations

from pathlib import Path

from reprolab.fileio import atomic_write_json


def write_setting(value, out: str | Path, log: str | Path | None = None) -> None:
    atomic_write_json(out, value)
    if log is not None:  # what was written and why, beside the other steps' logs
        Path(log).parent.mkdir(parents=True, exist_ok=True)
        Path(log).write_text(f"{out}: rewritten, the setting changed (or was new)\n")
