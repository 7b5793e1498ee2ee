"""The per-paper structured event log (`events.jsonl`): one JSON object a line.

Every event carries a level, the least console verbosity that shows it
(config `verbosity`, `reprolab run --verbosity`): quiet shows finished steps,
errors, waits and the report; normal adds what the pipeline decided; verbose
adds every agent call with its tokens and cost."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

VERBOSITY = ("quiet", "normal", "verbose")
KIND_LEVELS = {
    "verdict": "quiet",
    "gate": "quiet",
    "gate_answer": "normal",
    "agent_call": "verbose",
    "agent_cache_hit": "verbose",
}
"""The level of each event kind; a kind not listed is `normal`."""


def shown(level: str, verbosity: str) -> bool:
    """Whether an event of `level` is printed at console `verbosity`."""
    return VERBOSITY.index(level) <= VERBOSITY.index(verbosity)


def log_event(
    paper_out: str | Path, kind: str, message: str, level: str | None = None, **data
) -> None:
    path = Path(paper_out) / "events.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    entry = {
        "time": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "kind": kind,
        "level": level or KIND_LEVELS.get(kind, "normal"),
        "message": message,
        **data,
    }
    # One short write per line: O_APPEND keeps concurrent writers' lines whole.
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(entry, sort_keys=True) + "\n")
