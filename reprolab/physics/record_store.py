"""Where the run-time record lives on the host, and how the streamed events become it.

The sandboxed rank never writes the record: its wrapper (`reprolab.physics.as_built`)
streams one event per finished run and per measured value to the launcher
(`reprolab.jobs.record_channel`), which assembles them here (`assemble`) and writes
`as_built.json` under `record_home(workdir)`, a folder beside the run folder that the
sandbox has no mount of. A file of that name the script leaves in its run folder is
never read.

Layout: a run folder `<stage>/run` has its record in `<stage>/run.record/`; a sweep
point `<stage>/run/points/p003` in `<stage>/run.record/points/p003/` (a packed worker
may write the whole points folder, so nothing of the record lies under it).

Events (one JSON object per line):
- `{"event": "begin", "workdir": PATH}`: what follows belongs to that run folder;
- `{"event": "run", "sim": KEY, "fields": {...}, "runs": [...]}`: a simulation's
  fields (its structure, as built) and the runs it finished since the last event;
- `{"event": "measured", "sim": KEY, "values": [...]}`: values its monitors measured;
- `{"event": "error", "text": ...}`: the recorder's own failure (the run went on).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from reprolab.fileio import atomic_write_json

RECORD_FILE = "as_built.json"
CHANNEL_ENV = "REPROLAB_RECORD_CHANNEL"
"""The channel's path as the rank sees it (set by the launcher)."""
RECORD_SUFFIX = ".record"
MAX_EVENT_BYTES = 16 * 1024 * 1024
"""One event above this is refused (a record's run is a few KB, its spectra a few
hundred KB)."""


def record_home(workdir: str | Path) -> Path:
    """The host-only folder of a run folder's record (see the module's layout)."""
    w = Path(workdir).absolute()
    if w.parent.name == "points" and w.name.startswith("p"):
        return record_home(w.parent.parent) / "points" / w.name
    return w.parent / f"{w.name}{RECORD_SUFFIX}"


def record_path(workdir: str | Path) -> Path:
    return record_home(workdir) / RECORD_FILE


class Assembler:
    """Turns the events of one channel into one record per run folder."""

    def __init__(self, allowed: list[str]):
        self.allowed = [str(Path(a).absolute()) for a in allowed]
        # The rank names its folder as getcwd() gives it (links resolved); the record
        # is written under the launcher's own spelling, never through a link.
        self.real = {os.path.realpath(a): a for a in self.allowed}
        self.records: dict[str, dict] = {}
        self.current = self.allowed[0] if self.allowed else None
        self.refused: list[str] = []

    def _record(self) -> dict | None:
        if self.current is None:
            return None
        return self.records.setdefault(self.current, {"version": 1, "simulations": []})

    def feed(self, line: bytes) -> None:
        """One event; a malformed one is noted, never raised."""
        if len(line) > MAX_EVENT_BYTES:
            self.refused.append(f"event of {len(line)} bytes over {MAX_EVENT_BYTES}")
            return
        try:
            event = json.loads(line)
            kind = event["event"]
        except (ValueError, KeyError, TypeError) as exc:
            self.refused.append(f"unreadable event ({type(exc).__name__})")
            return
        if kind == "begin":
            where = str(Path(str(event.get("workdir", ""))).absolute())
            if where in self.allowed or os.path.realpath(where) in self.real:
                self.current = (
                    where if where in self.allowed else self.real[os.path.realpath(where)]
                )
            else:
                self.refused.append(f"begin for a folder not of this job: {where}")
                self.current = None
            return
        record = self._record()
        if record is None:
            return
        if kind == "error":
            record.setdefault("errors", []).append(str(event.get("text", ""))[:2000])
        elif kind in ("run", "measured"):
            self._sim_event(record, kind, event)

    def _sim_event(self, record: dict, kind: str, event: dict) -> None:
        sims = record["simulations"]
        key = event.get("sim")
        entry = next((s for s in sims if s.get("_id") == key), None)
        if kind == "run":
            if entry is None:
                entry = {"_id": key, "index": len(sims), "runs": []}
                sims.append(entry)
            fields = event.get("fields") or {}
            entry.update({k: v for k, v in fields.items() if k not in ("runs", "measured")})
            entry["_id"], entry["index"] = key, sims.index(entry)
            entry["runs"] += list(event.get("runs") or [])
        elif entry is not None:  # values of a simulation that never ran measure nothing
            entry.setdefault("measured", []).extend(event.get("values") or [])

    def write(self) -> list[Path]:
        """Each folder's record into its home (all allowed folders' stale ones removed)."""
        written = []
        for folder in self.allowed:
            path = record_path(folder)
            record = self.records.get(folder)
            if record is None or not record["simulations"]:
                path.unlink(missing_ok=True)
                continue
            if self.refused:
                record["channel_refused"] = self.refused[:20]
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_json(path, record)
            written.append(path)
        return written


def clear(workdirs: list[str | Path]) -> None:
    """Before a run: no record of an earlier attempt may stand for this one."""
    for w in workdirs:
        record_path(w).unlink(missing_ok=True)
