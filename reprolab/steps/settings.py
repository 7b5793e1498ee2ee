"""The settings step: a setting that decides what some steps compute, written as a
file whose job reruns only when the setting changes (the rule's params)."""

from __future__ import annotations

from pathlib import Path

from reprolab.fileio import atomic_write_json


def write_setting(value, out: str | Path) -> None:
    atomic_write_json(out, value)
