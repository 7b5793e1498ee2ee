"""The material gate step: approve writes validated_materials.json; a change
invalidates stage 0; the demo's configured auto-approval is marked as such."""

from __future__ import annotations

from pathlib import Path

from reprolab.artifacts import load_plan
from reprolab.errors import GateError
from reprolab.events import log_event
from reprolab.fileio import (
    atomic_write_json,
)
from reprolab.gates.consent import invalidate_stage, log_interaction
from reprolab.gates.material import (
    MATERIAL_GATE,
    material_checkpoint,
    material_payload,
    request_path,
)
from reprolab.gates.protocol import Decision, open_gate, resolve_gate


def stage0_materials(plan_path, stage0_verdict) -> dict:
    """The material checkpoint's payload: the plan's materials with stage 0's data."""
    planned = [m.model_dump() for m in load_plan(plan_path).planned_materials]
    return material_payload(planned, stage0_verdict)


def auto_approve(paper_id, plan_path, stage0_verdict, out_decision) -> None:
    """The configured auto-approval: the request is opened first, so that the answer is
    bound to its paper, gate and nonce like any other; marked auto so the report says so
    (and honoured only while config lists the gate, see `material_gate`)."""
    payload = stage0_materials(plan_path, stage0_verdict)
    paper_out = Path(out_decision).parents[1]
    checkpoint = material_checkpoint(paper_out, paper_id, payload)
    checkpoint.auto_approve = True
    open_gate(paper_out, checkpoint)
    decision = Decision(
        paper_id=paper_id,
        gate_id=MATERIAL_GATE,
        action="approve",
        verdict="approve",
        sha256=payload["sha256"],
        note="auto-approved because config gates.auto_approve lists material_checkpoint",
        answered_by="config",
        auto=True,
        nonce=checkpoint.nonce,
    )
    atomic_write_json(out_decision, decision)
    log_event(paper_out, "gate", "material checkpoint AUTO-APPROVED by config")


def material_gate(
    paper_id,
    plan_path,
    stage0_verdict,
    decision_file,
    out_validated,
    wait_s: float = 0.0,
    auto_approve: bool = False,
) -> None:
    """`auto_approve`: config gates.auto_approve lists the material checkpoint (an
    answer marked auto is refused otherwise)."""
    paper_out = Path(out_validated).parent
    payload = stage0_materials(plan_path, stage0_verdict)
    checkpoint = material_checkpoint(paper_out, paper_id, payload)
    checkpoint.auto_approve = auto_approve
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
            paper_out,
            checkpoint.question,
            decision,
            f"stage 0 invalidated ({verdict})",
            checkpoint.kind,
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
        log_interaction(
            paper_out, checkpoint.question, decision, "waiting: user needs help", checkpoint.kind
        )
        raise GateError(
            f"{answer}: need_help recorded (note: {decision.note!r}). Stage 0's materials "
            f"are in {request_path(paper_out)}; answer with approve, change_database or "
            "change_material when ready."
        )
    log_interaction(
        paper_out,
        checkpoint.question,
        decision,
        "validated_materials written; stage 1+ may run",
        checkpoint.kind,
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
