"""The consent log (`user_interactions.jsonl`) and invalidations a person or the
supervisor decided: what was decided, by whom, with what effect."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from pathlib import Path

from reprolab.errors import GateError
from reprolab.events import log_event
from reprolab.fileio import (
    atomic_write_json,
    read_json,
)
from reprolab.gates.protocol import Decision, GateKind, check_id, gate_kind


def log_interaction(
    paper_out: Path,
    question: str,
    decision: Decision,
    impact: str,
    kind: GateKind,
    *,
    context: dict | None = None,
    options: list[str] | None = None,
) -> None:
    """Append to user_interactions.jsonl, the log of every answer the user gave.

    Only real decisions: a rerun that reads the same answer file again (same
    decision, same question, same effect) logs nothing new."""
    kind = gate_kind(kind)  # a closed set: an unknown kind is refused, naming the valid ones
    path = Path(paper_out) / "user_interactions.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines() if path.is_file() else []
    key = _decision_key(kind, question, decision, impact)
    for line in lines:
        try:
            if json.loads(line).get("decision_key") == key:
                return
        except ValueError:
            continue
    n = len(lines)
    entry = {
        "id": f"U{n + 1}",
        "timestamp": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "interaction_type": kind,
        "question": question,
        "user_response": decision.model_dump(),
        "impact": impact,
        "decision_key": key,
    }
    if context is not None:
        entry["context"] = context
    if options is not None:  # what was offered, and so what else was considered
        entry["options"] = options
        chosen = decision.option or decision.action
        entry["alternatives"] = [o for o in options if o.split(":")[0] != chosen]
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(entry) + "\n")
    chosen = decision.option or decision.action
    log_event(paper_out, "gate_answer", f"{kind}: {chosen} ({impact})", level="normal")


def _decision_key(kind: str, question: str, decision: Decision, impact: str) -> str:
    data = {"kind": kind, "question": question, "impact": impact, **decision.model_dump()}
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()


def invalidate_stage(paper_out: Path, stage_id: str, reason: str, source: str) -> Path:
    """Mark a stage invalid: its first rule reads this file, so the next run of the same
    command reruns the stage and everything that depends on it (and nothing else)."""
    if not reason.strip():
        raise GateError(f"invalidating {stage_id}: a reason is required (it is logged)")
    check_id("stage id", stage_id)
    path = Path(paper_out) / "stages" / stage_id / "invalidation.json"
    records = read_json(path)["records"] if path.is_file() else []
    records.append(
        {
            "reason": reason,
            "source": source,
            "timestamp": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        }
    )
    atomic_write_json(path, {"stage_id": stage_id, "records": records})
    log_event(Path(paper_out), "invalidate", f"{stage_id}: {reason} (by {source})")
    return path
