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

Lines: the first is the recorder's key, `{"event": "key", "key": HEX}`, sent before the
script runs; every later one is an event signed with it, `<HMAC-SHA256 hex> <JSON>`
(`signed_line`). An unsigned line, a rewrite of a simulation's fields, a malformed event
or one past the record's cap is refused and named in the record's `channel_refused`
(the check `record:channel`).

Events:
- `{"event": "begin", "workdir": PATH}`: what follows belongs to that run folder;
- `{"event": "run", "sim": KEY, "fields": {...}, "runs": [...]}`: a simulation's
  fields (its structure, as built: with its first run only, written once) and the runs
  it finished since the last event;
- `{"event": "measured", "sim": KEY, "values": [...]}`: values its monitors measured;
- `{"event": "error", "text": ...}`: the recorder's own failure (the run went on).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
from pathlib import Path

from reprolab.fileio import atomic_write_json

RECORD_FILE = "as_built.json"
CHANNEL_ENV = "REPROLAB_RECORD_CHANNEL"
"""The channel's path as the rank sees it (set by the launcher)."""
RECORD_SUFFIX = ".record"


def record_home(workdir: str | Path) -> Path:
    """The host-only folder of a run folder's record (see the module's layout)."""
    w = Path(workdir).absolute()
    if w.parent.name == "points" and w.name.startswith("p"):
        return record_home(w.parent.parent) / "points" / w.name
    return w.parent / f"{w.name}{RECORD_SUFFIX}"


def record_path(workdir: str | Path) -> Path:
    return record_home(workdir) / RECORD_FILE


STRUCTURE_FIELDS = {
    "dimensions": (int, float),
    "resolution": (int, float),
    "cell": list,
    "sources": list,
    "monitors": list,
    "geometry": list,
    "boundary_layers": list,
    "boundaries": dict,
    "symmetries": list,
    "default_material": dict,
}
"""What every simulation's fields hold (`as_built.structure`), and of which JSON type:
an event without one is refused, so no check meets a half-written simulation."""
MAX_RECORD_BYTES = 12 * 1024 * 1024
"""Events accepted per run folder (a record is read back under the 16 MiB JSON cap of
`reprolab.run_files`); what comes after is refused, and the refusal is named."""
MAX_EVENT_BYTES = MAX_RECORD_BYTES
"""One event above this is refused (a record's run is a few KB, its spectra a few
hundred KB)."""
EVENTS_FILE = "events.jsonl"
READ_CAP = 2 * MAX_RECORD_BYTES + (1 << 20)
"""A record file above this was not written by `Assembler` and is not read."""


class Assembler:
    """Turns the events of one channel into one record per run folder.

    Each accepted event is appended to `events.jsonl` in its folder's record home as it
    comes (at most `MAX_RECORD_BYTES` a folder), so the launcher holds only each
    simulation's fingerprint in memory; `write()` builds the records from those files.
    Events are append-only: a simulation's fields are written once (a later `run` event
    that changes them is refused), runs and measured values are only ever added."""

    def __init__(self, allowed: list[str]):
        self.allowed = [str(Path(a).absolute()) for a in allowed]
        # The rank names its folder as getcwd() gives it (links resolved); the record
        # is written under the launcher's own spelling, never through a link.
        self.real = {os.path.realpath(a): a for a in self.allowed}
        self.current = self.allowed[0] if self.allowed else None
        self.refused: dict[str | None, list[str]] = {}
        self.accepted: dict[str, int] = {}
        self.fields: dict[str, dict] = {}  # folder -> sim key -> its fields' digest
        self.files: dict[str, object] = {}
        self.key: bytes | None = None

    def _refuse(self, why: str) -> None:
        notes = self.refused.setdefault(self.current, [])
        if len(notes) < 20:
            notes.append(why)
        elif len(notes) == 20:
            notes.append("... further refusals not listed")

    def feed(self, line: bytes) -> None:
        """One event; a malformed, oversized or rewriting one is refused and named."""
        if len(line) > MAX_EVENT_BYTES:
            self._refuse(f"event of {len(line)} bytes over {MAX_EVENT_BYTES}")
            return
        if len(line) > 4096 and self.accepted.get(self.current, 0) + len(line) > MAX_RECORD_BYTES:
            # refused before parsing: a flood costs the launcher no JSON decoding
            self._refuse(f"events over the record's cap of {MAX_RECORD_BYTES} bytes")
            return
        body = self._authentic(line.strip())
        if body is None:
            return
        try:
            event = json.loads(body)
            kind = event["event"]
        except (ValueError, KeyError, TypeError) as exc:
            self._refuse(f"unreadable event ({type(exc).__name__})")
            return
        if kind == "begin":
            where = str(Path(str(event.get("workdir", ""))).absolute())
            if where in self.allowed or os.path.realpath(where) in self.real:
                self.current = (
                    where if where in self.allowed else self.real[os.path.realpath(where)]
                )
            else:
                self.current = None
                self._refuse(f"begin for a folder not of this job: {where}")
            return
        if self.current is None:
            return
        why = self._why_refused(kind, event)
        if why:
            self._refuse(why)
            return
        used = self.accepted.get(self.current, 0) + len(line) + 1
        if used > MAX_RECORD_BYTES:
            self._refuse(f"events over the record's cap of {MAX_RECORD_BYTES} bytes")
            return
        self.accepted[self.current] = used
        if kind == "run" and event.get("fields") is not None:
            self.fields.setdefault(self.current, {})[event["sim"]] = _digest(event["fields"])
        self._file().write(body + b"\n")

    def _authentic(self, line: bytes) -> bytes | None:
        """The event's JSON if the recorder signed it (the first line of a channel is
        the recorder's key, sent before the script runs); None, refused, if not."""
        if self.key is None:
            try:
                self.key = bytes.fromhex(json.loads(line)["key"])
            except (ValueError, KeyError, TypeError):
                self._refuse("an event before the recorder's key")
            return None
        mac, _, body = line.partition(b" ")
        good = hmac.new(self.key, body, hashlib.sha256).hexdigest().encode()
        if not hmac.compare_digest(mac, good):
            self._refuse("an event the recorder did not sign (written into its channel)")
            return None
        return body

    def _why_refused(self, kind: str, event: dict) -> str | None:
        """Why an event may not enter the record (None: it may)."""
        if kind == "error":
            return None if isinstance(event.get("text"), str) else "error event without text"
        if kind not in ("run", "measured"):
            return f"unknown event kind {str(kind)[:40]!r}"
        key = event.get("sim")
        if not isinstance(key, int) or isinstance(key, bool):
            return f"{kind} event without an integer simulation key"
        known = self.fields.get(self.current, {})
        items = event.get("runs" if kind == "run" else "values")
        if not isinstance(items, list) or not all(isinstance(x, dict) for x in items):
            return f"{kind} event of simulation {key}: not a list of objects"
        if kind == "measured":
            return None if key in known else f"measured values of simulation {key}, never run"
        fields = event.get("fields")
        if fields is None:
            return None if key in known else f"run event of simulation {key} without its fields"
        if key in known:
            if _digest(fields) != known[key]:
                return (
                    f"run event rewriting simulation {key}'s fields (a simulation's fields "
                    "are written once)"
                )
            return None
        return malformed_fields(fields, key)

    def _file(self):
        fh = self.files.get(self.current)
        if fh is None:
            home = record_home(self.current)
            home.mkdir(parents=True, exist_ok=True)
            fh = self.files[self.current] = open(home / EVENTS_FILE, "wb")  # noqa: SIM115
        return fh

    def write(self) -> list[Path]:
        """Each folder's record into its home (all allowed folders' stale ones removed);
        a folder with refused events gets a record naming them."""
        for fh in self.files.values():
            fh.close()
        self.files = {}
        written = []
        for folder in self.allowed:
            path = record_path(folder)
            events = record_home(folder) / EVENTS_FILE
            record = assemble(events) if events.is_file() else new_record()
            events.unlink(missing_ok=True)
            refused = self.refused.get(folder, []) + self.refused.get(None, [])
            if refused:
                record["channel_refused"] = refused
            elif not record["simulations"]:
                path.unlink(missing_ok=True)
                continue
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_json(path, record)
            written.append(path)
        return written


def key_line(key: bytes) -> bytes:
    """The recorder's first line on a channel: the key its later events are signed with."""
    return json.dumps({"event": "key", "key": key.hex()}).encode() + b"\n"


def signed_line(key: bytes, event: dict) -> bytes:
    """One event as the recorder sends it: its HMAC-SHA256 under the key, a space, the JSON."""
    body = json.dumps(event, default=str).encode()
    return hmac.new(key, body, hashlib.sha256).hexdigest().encode() + b" " + body + b"\n"


def new_record() -> dict:
    return {"version": 1, "simulations": []}


def malformed_fields(fields, key) -> str | None:
    """Why a simulation's fields are not what the recorder writes (None: they are)."""
    if not isinstance(fields, dict):
        return f"run event of simulation {key}: fields not an object"
    for name, kind in STRUCTURE_FIELDS.items():
        if name not in fields:
            return f"run event of simulation {key}: no '{name}' in its fields"
        if not isinstance(fields[name], kind) or isinstance(fields[name], bool):
            return f"run event of simulation {key}: '{name}' is not a {_type_name(kind)}"
    return None


def _type_name(kind) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join(
        {int: "number", float: "number", list: "list", dict: "object"}[k] for k in kinds
    )


def _digest(fields) -> str:
    return hashlib.sha256(json.dumps(fields, sort_keys=True, default=str).encode()).hexdigest()


def assemble(events: Path) -> dict:
    """The record of one folder from its accepted events, in order."""
    record = new_record()
    sims = record["simulations"]
    by_key: dict[int, dict] = {}
    with open(events, "rb") as fh:
        for line in fh:
            event = json.loads(line)
            if event["event"] == "error":
                record.setdefault("errors", []).append(event["text"][:2000])
                continue
            key = event["sim"]
            entry = by_key.get(key)
            if event["event"] == "run":
                if entry is None:
                    fields = {
                        k: v for k, v in event["fields"].items() if k not in ("runs", "measured")
                    }
                    entry = by_key[key] = {**fields, "_id": key, "index": len(sims), "runs": []}
                    sims.append(entry)
                entry["runs"] += event["runs"]
            else:
                entry.setdefault("measured", []).extend(event["values"])
    return record


def clear(workdirs: list[str | Path]) -> None:
    """Before a run: no record of an earlier attempt may stand for this one."""
    for w in workdirs:
        record_path(w).unlink(missing_ok=True)
        (record_home(w) / EVENTS_FILE).unlink(missing_ok=True)


def refusals(workdir: str | Path) -> list[str]:
    """What the launcher refused of a run's events (its record's and its points')."""
    home = record_home(workdir)
    out = []
    for path in [home / RECORD_FILE, *sorted(home.glob(f"points/*/{RECORD_FILE}"))]:
        if path.is_file() and not path.is_symlink() and path.stat().st_size <= READ_CAP:
            try:
                out += [str(x) for x in json.loads(path.read_bytes()).get("channel_refused", [])]
            except (OSError, ValueError, AttributeError):
                out.append(f"{path.name}: unreadable")
    return out


def channel_check(workdir: str | Path):
    """`record:channel` fails when the launcher refused any event of the run: a
    malformed or oversized one, one past the record's cap, or one rewriting a
    simulation's fields (what a script writing into the channel itself would send)."""
    from reprolab.physics.check import Check

    refused = refusals(workdir)
    if not refused:
        return None
    return Check(
        "record:channel",
        "fail",
        f"the launcher refused {len(refused)} event(s) of the run-time record: "
        + "; ".join(refused[:5]),
        len(refused),
        "every event of the record as the recorder writes it, each simulation's fields "
        "once, within the record's cap",
    )
