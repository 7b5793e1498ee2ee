"""Human gates that bind to content: a request file, and a decision the user writes.

The material checkpoint after stage 0 is mandatory. Its request names the sha256
of the material data being approved; a decision for other data is refused.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from reprolab import thresholds as th
from reprolab.checks import read_numeric_csv
from reprolab.errors import GateError
from reprolab.events import log_event
from reprolab.fileio import atomic_write_json, read_json, read_model, sha256_bytes, sha256_file
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
    return paper_out / "gates" / f"{MATERIAL_GATE}.request.json"


def decision_path(paper_out: Path) -> Path:
    return paper_out / "gates" / f"{MATERIAL_GATE}.json"


def write_request(paper_out: Path, paper_id: str, payload: dict) -> dict:
    answer = decision_path(paper_out)
    example = {"action": "approve", "verdict": "approve", "sha256": payload["sha256"], "note": ""}
    request = {
        "kind": MATERIAL_GATE,
        "paper_id": paper_id,
        "sha256": payload["sha256"],
        "question": (
            "Stage 0 computed the optical constants below. Are these the right materials and "
            "data sources for this paper? Look at the plots before answering."
        ),
        "options": list(MATERIAL_OPTIONS),
        "payload": {
            "materials": payload["materials"],
            "stage0_status": payload["stage0"]["status"],
        },
        "answer_file": str(answer),
        "answer_example": example,
    }
    atomic_write_json(request_path(paper_out), request)
    return request


def log_interaction(paper_out: Path, question: str, decision: Decision, impact: str) -> None:
    path = paper_out / "user_interactions.jsonl"
    n = len(path.read_text(encoding="utf-8").splitlines()) if path.is_file() else 0
    entry = {
        "id": f"U{n + 1}",
        "timestamp": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "interaction_type": MATERIAL_GATE,
        "question": question,
        "user_response": decision.model_dump(),
        "impact": impact,
    }
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(entry) + "\n")


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


def material_gate(paper_id, plan_path, stage0_verdict, decision_file, out_validated) -> None:
    paper_out = Path(out_validated).parent
    payload = material_payload(plan_path, stage0_verdict)
    request = write_request(paper_out, paper_id, payload)
    answer = Path(decision_file) if decision_file else decision_path(paper_out)
    if not answer.is_file():
        raise GateError(
            f"WAITING FOR YOU: material checkpoint of paper '{paper_id}'.\n"
            f"  Read {request_path(paper_out)} and look at the material plots it lists.\n"
            f"  To approve, write {answer} containing:\n"
            f"    {json.dumps(request['answer_example'])}\n"
            "  then run the same snakemake command again. Other papers are not held up."
        )
    decision = read_model(answer, Decision)
    if decision.sha256 != payload["sha256"]:
        raise GateError(
            f"{answer}: field 'sha256' is {decision.sha256}, but the material data now has "
            f"sha256 {payload['sha256']}: the decision answers an earlier stage-0 result. "
            f"Read {request_path(paper_out)} again and answer with the current sha256."
        )
    verdict = decision.verdict or ("approve" if decision.action == "approve" else None)
    if decision.action != "approve" or verdict != "approve":
        log_interaction(paper_out, request["question"], decision, "not applied: needs issue #5")
        raise GateError(
            f"{answer}: action={decision.action!r}, verdict={verdict!r}. Only approval is "
            "handled so far; change_database / change_material / need_help and edits "
            "(backtracking stage 0) are tracked in issue #5."
        )
    log_interaction(
        paper_out, request["question"], decision, "validated_materials written; stage 1+ may run"
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
