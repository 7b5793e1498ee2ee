"""The per-paper structured event log (`events.jsonl`): one JSON object a line."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path


def log_event(paper_out: str | Path, kind: str, message: str, **data) -> None:
    path = Path(paper_out) / "events.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    entry = {
        "time": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "kind": kind,
        "message": message,
        **data,
    }
    # One short write per line: O_APPEND keeps concurrent writers' lines whole.
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(entry, sort_keys=True) + "\n")
