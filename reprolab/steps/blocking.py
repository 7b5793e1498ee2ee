"""Blocked artifacts: a stage that may not run writes one through every step."""

from __future__ import annotations

from reprolab.events import log_event
from reprolab.fileio import (
    atomic_write_json,
)
from reprolab.steps import eligibility


def block(run, out_path, stage_id: str, reason: str) -> None:
    """Write this step's blocked artifact (the stage does not run; the report says why)."""
    atomic_write_json(out_path, eligibility.blocked_artifact(stage_id, reason))
    log_event(run.out_dir, "blocked", f"{stage_id}: {reason}", file=str(out_path))


def passed_on_block(run, out_path, *inputs) -> bool:
    """True (and the blocked artifact written) when an input of this step is blocked."""
    blocked = eligibility.blocked_in(*inputs)
    if blocked:
        atomic_write_json(out_path, blocked)
    return blocked is not None
