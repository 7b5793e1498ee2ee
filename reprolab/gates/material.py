"""The material checkpoint after stage 0: what it asks about (the optical constants
stage 0 computed, bound by their sha256) and the request it writes.

The plan's materials are given by the step that asks (it reads the plan): a gate never
reads the pipeline's artifacts itself."""

from __future__ import annotations

from pathlib import Path

from reprolab.errors import GateError
from reprolab.fileio import (
    read_json,
    sha256_bytes,
    sha256_file,
)
from reprolab.gates.protocol import (
    Checkpoint,
    GateKind,
    gate_decision_path,
    gate_request_path,
)
from reprolab.physics import thresholds as th
from reprolab.physics.checks import read_numeric_csv

MATERIAL_GATE = "material_checkpoint"


MATERIAL_OPTIONS = ("approve", "change_database", "change_material", "need_help")


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


def material_payload(planned_materials: list[dict], stage0_verdict: str | Path) -> dict:
    """What the checkpoint asks about: the plan's materials (each a dict with at least
    `material_id` and `model`, as the plan holds them) with stage 0's optical constants."""
    run_dir = Path(stage0_verdict).parent / "run"
    dispersive = [m["material_id"] for m in planned_materials if m["model"] != "constant_index"]
    files = material_files(run_dir, dispersive)
    digest_lines = [f"{mid}:{sha256_file(p)}" for mid, p in sorted(files.items())]
    sha = sha256_bytes("\n".join(digest_lines).encode())
    materials = []
    for m in planned_materials:
        entry = dict(m)
        mid = m["material_id"]
        if mid in files:
            cols = read_numeric_csv(files[mid])
            entry["data"] = str(files[mid])
            entry["max_k"] = max(cols["k"])
            entry["lossless"] = entry["max_k"] < th.LOSSLESS_MAX_K
            entry["wavelength_range_um"] = [min(cols["wavelength_um"]), max(cols["wavelength_um"])]
            plot = files[mid].with_suffix(".png")
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
        kind=GateKind.MATERIAL_CHECKPOINT,
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
