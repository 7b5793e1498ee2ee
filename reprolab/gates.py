"""Human gates that bind to content: a request file, and a decision the user writes.

One protocol (seed 004) for every gate: a `Checkpoint` request at
`gates/<gate_id>.request.json` names the sha256 of what it asks about; the user
answers with a `Decision` at `gates/<gate_id>.json` (by hand or with
`reprolab approve|reject|edit`). A decision for other content is refused. While
a gate waits, the step that opened it fails with instructions, so only that
branch stops; running the same command again picks the answer up.

The material checkpoint after stage 0 is mandatory. Revision limits of the
design and code loops, and supervisor `ask_user` verdicts, are gates too.
"""

from __future__ import annotations

import datetime as dt
import json
import time
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from reprolab import thresholds as th
from reprolab.checks import read_numeric_csv
from reprolab.errors import GateError, ReproLabError
from reprolab.events import log_event
from reprolab.fileio import (
    atomic_write_json,
    read_json,
    read_model,
    sha256_bytes,
    sha256_file,
)
from reprolab.planning import load_plan

MATERIAL_GATE = "material_checkpoint"
MATERIAL_OPTIONS = ("approve", "change_database", "change_material", "need_help")


class Decision(BaseModel):
    """The user's answer to a gate (seed 004's Decision)."""

    model_config = ConfigDict(extra="forbid")

    action: Literal["approve", "edit", "reject"]
    """approve accepts what was asked about; edit replaces it; reject sends it back."""
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    """sha256 of the artifact being answered, copied from the request file."""
    verdict: Literal["approve", "change_database", "change_material", "need_help"] | None = None
    """Material checkpoint only: the seed's material verdicts."""
    revised_data: dict | None = None
    note: str = ""
    answered_by: str = "user"
    auto: bool = False
    """True when config auto-approved the gate (demo only); the report says so."""


class Checkpoint(BaseModel):
    """A question the pipeline cannot answer itself (seed 004's Checkpoint)."""

    model_config = ConfigDict(extra="forbid")

    gate_id: str
    """Names the request and decision files: gates/<gate_id>[.request].json."""
    kind: str
    """material_checkpoint, revision_limit or supervisor_ask_user."""
    paper_id: str
    stage_id: str | None = None
    question: str
    options: list[str]
    """The choices offered (for the material checkpoint: the seed's four verdicts)."""
    actions: list[str] = Field(default_factory=lambda: ["approve", "edit", "reject"])
    """Valid `action` values of the answer."""
    sha256: str
    """sha256 of what is asked about; the answer must repeat it."""
    payload: dict = Field(default_factory=dict)
    answer_file: str
    answer_example: dict
    created_at: str = ""


def content_sha256(data) -> str:
    """sha256 of a JSON-able value in canonical form (what a gate binds to)."""
    return sha256_bytes(json.dumps(data, sort_keys=True, default=str).encode())


def gate_request_path(paper_out: Path, gate_id: str) -> Path:
    return Path(paper_out) / "gates" / f"{gate_id}.request.json"


def gate_decision_path(paper_out: Path, gate_id: str) -> Path:
    return Path(paper_out) / "gates" / f"{gate_id}.json"


def open_gate(paper_out: Path, checkpoint: Checkpoint) -> None:
    """Write (or refresh) the request; the question stays until it is answered."""
    if not checkpoint.created_at:
        checkpoint.created_at = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    atomic_write_json(gate_request_path(paper_out, checkpoint.gate_id), checkpoint)


def waiting_message(checkpoint: Checkpoint) -> str:
    request = gate_request_path(Path(checkpoint.answer_file).parents[1], checkpoint.gate_id)
    return (
        f"WAITING FOR YOU: {checkpoint.kind.replace('_', ' ')} '{checkpoint.gate_id}' of paper "
        f"'{checkpoint.paper_id}'.\n  {checkpoint.question}\n"
        f"  Details: {request}\n"
        f"  Answer with `reprolab approve {checkpoint.paper_id} {checkpoint.gate_id}` "
        f"(or {'/'.join(a for a in checkpoint.actions if a != 'approve')}; options: "
        f"{', '.join(checkpoint.options)}), or write "
        f"{checkpoint.answer_file} containing:\n"
        f"    {json.dumps(checkpoint.answer_example)}\n"
        "  then run the same snakemake command again. Other branches and papers go on."
    )


def read_decision(checkpoint: Checkpoint) -> Decision | None:
    """The user's valid answer, None while there is none; a stale or malformed one
    is refused with the file and field named (and nothing is overwritten)."""
    answer = Path(checkpoint.answer_file)
    if not answer.is_file():
        return None
    decision = read_model(answer, Decision)
    if decision.sha256 != checkpoint.sha256:
        raise GateError(
            f"{answer}: field 'sha256' is {decision.sha256}, but what gate "
            f"'{checkpoint.gate_id}' asks about now has sha256 {checkpoint.sha256}: the "
            "decision answers an earlier version. Read "
            f"{gate_request_path(answer.parents[1], checkpoint.gate_id)} again and answer "
            "with the current sha256."
        )
    if decision.action not in checkpoint.actions:
        raise GateError(
            f"{answer}: field 'action' is {decision.action!r}; gate '{checkpoint.gate_id}' "
            f"accepts {checkpoint.actions}"
        )
    return decision


def resolve_gate(paper_out: Path, checkpoint: Checkpoint, wait_s: float = 0.0) -> Decision:
    """Open the gate and return its answer; without one, wait up to `wait_s` (config
    gates.wait_timeout_s), then stop this branch with instructions."""
    open_gate(paper_out, checkpoint)
    deadline = time.monotonic() + wait_s
    while True:
        decision = read_decision(checkpoint)
        if decision is not None:
            return decision
        if time.monotonic() >= deadline:
            log_event(paper_out, "gate", f"waiting: {checkpoint.gate_id}")
            raise GateError(waiting_message(checkpoint))
        time.sleep(min(5.0, max(0.1, deadline - time.monotonic())))


def pending_gates(paper_out: Path) -> list[Checkpoint]:
    """Requests without an answer that matches them (what `reprolab status` lists)."""
    pending = []
    for path in sorted((Path(paper_out) / "gates").glob("*.request.json")):
        try:
            checkpoint = read_model(path, Checkpoint)
        except Exception:  # noqa: BLE001 - older request formats are not gates to answer
            continue
        try:
            answered = read_decision(checkpoint) is not None
        except (GateError, ReproLabError):
            answered = False  # stale or malformed: still waiting for a valid answer
        if not answered:
            pending.append(checkpoint)
    return pending


def material_files(run_dir: Path, material_ids: list[str]) -> dict[str, Path]:
    files = {}
    for mid in material_ids:
        path = run_dir / f"material_{mid}.csv"
        if not path.is_file():
            raise GateError(
                f"stage 0 did not write {path} for material '{mid}'; the material "
                "checkpoint needs one `material_<material_id>.csv` (wavelength_um,n,k) per "
                "dispersive material"
            )
        files[mid] = path
    return files


def material_payload(plan_path: str | Path, stage0_verdict: str | Path) -> dict:
    plan = load_plan(plan_path)
    stage_dir = Path(stage0_verdict).parent
    run_dir = stage_dir / "run"
    dispersive = [m for m in plan.planned_materials if m.model != "constant_index"]
    files = material_files(run_dir, [m.material_id for m in dispersive])
    digest_lines = [f"{mid}:{sha256_file(p)}" for mid, p in sorted(files.items())]
    sha = sha256_bytes("\n".join(digest_lines).encode())
    materials = []
    for m in plan.planned_materials:
        entry = m.model_dump()
        if m.material_id in files:
            cols = read_numeric_csv(files[m.material_id])
            entry["data"] = str(files[m.material_id])
            entry["max_k"] = max(cols["k"])
            entry["lossless"] = entry["max_k"] < th.LOSSLESS_MAX_K
            entry["wavelength_range_um"] = [min(cols["wavelength_um"]), max(cols["wavelength_um"])]
            plot = files[m.material_id].with_suffix(".png")
            entry["plot"] = str(plot) if plot.is_file() else None
        else:
            entry.update(data=None, max_k=0.0, lossless=True, plot=None)
        materials.append(entry)
    return {"sha256": sha, "materials": materials, "stage0": read_json(stage0_verdict)}


def request_path(paper_out: Path) -> Path:
    return gate_request_path(paper_out, MATERIAL_GATE)


def decision_path(paper_out: Path) -> Path:
    return gate_decision_path(paper_out, MATERIAL_GATE)


def material_checkpoint(paper_out: Path, paper_id: str, payload: dict) -> Checkpoint:
    return Checkpoint(
        gate_id=MATERIAL_GATE,
        kind=MATERIAL_GATE,
        paper_id=paper_id,
        stage_id=payload["stage0"]["stage_id"],
        sha256=payload["sha256"],
        question=(
            "Stage 0 computed the optical constants below. Are these the right materials "
            "and data sources for this paper? Look at the plots before answering. "
            f"`verdict` is one of {list(MATERIAL_OPTIONS)}; change_database and "
            "change_material rerun stage 0 with your note."
        ),
        options=list(MATERIAL_OPTIONS),
        actions=["approve", "reject"],
        payload={
            "materials": payload["materials"],
            "stage0_status": payload["stage0"]["status"],
        },
        answer_file=str(decision_path(paper_out)),
        answer_example={
            "action": "approve",
            "verdict": "approve",
            "sha256": payload["sha256"],
            "note": "",
        },
    )


def log_interaction(
    paper_out: Path, question: str, decision: Decision, impact: str, kind: str = MATERIAL_GATE
) -> None:
    """Append to user_interactions.jsonl (the seed's user_interactions log)."""
    path = Path(paper_out) / "user_interactions.jsonl"
    n = len(path.read_text(encoding="utf-8").splitlines()) if path.is_file() else 0
    entry = {
        "id": f"U{n + 1}",
        "timestamp": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "interaction_type": kind,
        "question": question,
        "user_response": decision.model_dump(),
        "impact": impact,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(entry) + "\n")


def invalidate_stage(paper_out: Path, stage_id: str, reason: str, source: str) -> Path:
    """Mark a stage invalid: its first rule reads this file, so the next run of the same
    command reruns the stage and everything that depends on it (and nothing else)."""
    if not reason.strip():
        raise GateError(f"invalidating {stage_id}: a reason is required (it is logged)")
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


def auto_approve(plan_path, stage0_verdict, out_decision) -> None:
    payload = material_payload(plan_path, stage0_verdict)
    decision = Decision(
        action="approve",
        verdict="approve",
        sha256=payload["sha256"],
        note="auto-approved because config gates.auto_approve lists material_checkpoint",
        answered_by="config",
        auto=True,
    )
    atomic_write_json(out_decision, decision)
    log_event(Path(out_decision).parents[1], "gate", "material checkpoint AUTO-APPROVED by config")


def material_gate(
    paper_id, plan_path, stage0_verdict, decision_file, out_validated, wait_s: float = 0.0
) -> None:
    paper_out = Path(out_validated).parent
    payload = material_payload(plan_path, stage0_verdict)
    checkpoint = material_checkpoint(paper_out, paper_id, payload)
    if decision_file:
        checkpoint.answer_file = str(decision_file)
    decision = resolve_gate(paper_out, checkpoint, wait_s)
    answer = checkpoint.answer_file
    verdict = decision.verdict or ("approve" if decision.action == "approve" else "need_help")
    if (decision.action == "approve") != (verdict == "approve"):
        raise GateError(
            f"{answer}: action={decision.action!r} with verdict={verdict!r}: approve goes "
            "with verdict approve; reject with change_database, change_material or need_help"
        )
    if verdict in ("change_database", "change_material"):
        what = "database" if verdict == "change_database" else "material choice"
        invalidate_stage(
            paper_out,
            payload["stage0"]["stage_id"],
            f"user asked to change the {what}: {decision.note or '(no note)'}",
            source=f"{MATERIAL_GATE} ({answer})",
        )
        log_interaction(
            paper_out, checkpoint.question, decision, f"stage 0 invalidated ({verdict})"
        )
        # Consumed: the rerun of stage 0 asks again rather than re-reading this answer.
        answered = Path(answer)
        n = len(list(answered.parent.glob(f"{MATERIAL_GATE}.answered-*.json"))) + 1
        answered.rename(answered.with_name(f"{MATERIAL_GATE}.answered-{n}.json"))
        raise GateError(
            f"{answer}: {verdict} recorded. Stage 0 reruns with your note on the next run "
            "of the same command, and the material checkpoint asks again."
        )
    if verdict == "need_help":
        log_interaction(paper_out, checkpoint.question, decision, "waiting: user needs help")
        raise GateError(
            f"{answer}: need_help recorded (note: {decision.note!r}). Stage 0's materials "
            f"are in {request_path(paper_out)}; answer with approve, change_database or "
            "change_material when ready."
        )
    log_interaction(
        paper_out, checkpoint.question, decision, "validated_materials written; stage 1+ may run"
    )
    atomic_write_json(
        out_validated,
        {
            "materials": payload["materials"],
            "sha256": payload["sha256"],
            "approved_by": decision.answered_by,
            "auto_approved": decision.auto,
            "note": decision.note,
        },
    )
