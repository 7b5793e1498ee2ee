"""Duplicate attempts: a design, script or fix that is the same (after normalization)
as an earlier attempt of the same stage, failed or successful, is not submitted
again. The author is re-asked once with that said; the failure log
(`run_failures.jsonl`) counts it as a duplicate, never as a run failure.

Normalization: code is compared by its syntax tree (comments, blank lines and
formatting do not make it new); other outputs by their canonical JSON with
whitespace collapsed.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

from pydantic import BaseModel

from reprolab.artifacts import AgentArtifact, load_agent_artifact, write_agent_artifact
from reprolab.errors import InputFileError
from reprolab.events import log_event


def _squash(value):
    if isinstance(value, str):
        return " ".join(value.split())
    if isinstance(value, dict):
        return {k: _squash(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_squash(v) for v in value]
    return value


def normalized(output: dict) -> str:
    code = output.get("code") if isinstance(output, dict) else None
    if isinstance(code, str):
        try:
            return "code:" + ast.dump(ast.parse(code))
        except SyntaxError:
            return "code:" + " ".join(code.split())
    return json.dumps(_squash(output), sort_keys=True)


def attempt_of(path: Path) -> int | None:
    match = re.fullmatch(r".+\.r(\d+)\.json", path.name)
    return int(match.group(1)) if match else None


def earlier_same(stage_dir: Path, name: str, output: BaseModel, attempt: int) -> Path | None:
    """The earlier attempt of this stage that this output repeats, if any."""
    key = normalized(output.model_dump(mode="json"))
    model = AgentArtifact[type(output)]
    for path in sorted(Path(stage_dir).glob(f"{name}.r*.json")):
        n = attempt_of(path)
        if n is None or n >= attempt:
            continue
        try:
            earlier = load_agent_artifact(path, model).output
        except InputFileError:
            continue
        if normalized(earlier.model_dump(mode="json")) == key:
            return path
    return None


def refuse(
    run, stage_id: str, stage_dir: Path, name: str, artifact: AgentArtifact, attempt: int, same
):
    """Keep the duplicate for the record (not as an attempt), log it, and return the
    feedback that re-asks the author."""
    write_agent_artifact(Path(stage_dir) / f"{name}.r{attempt}.duplicate.json", artifact)
    with open(run.out_dir / "run_failures.jsonl", "a", encoding="utf-8") as fh:
        entry = {"stage_id": stage_id, "kind": "duplicate", "what": name, "attempt": attempt}
        fh.write(json.dumps({**entry, "same_as": same.name}) + "\n")
    log_event(
        run.out_dir,
        name,
        f"{stage_id}: {name} attempt {attempt} repeats {same.name}; not submitted, re-asked",
    )
    return (
        f"Your {name} is identical (after normalization) to an earlier attempt of this "
        f"stage ({same.name}), which was already tried. It was not submitted. Make the "
        "changes the feedback asks for; do not send the same version again."
    )
