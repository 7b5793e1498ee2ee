"""The checks step: run-time physics checks plus the static lint, one checks.json."""

from __future__ import annotations

from pathlib import Path

from agents.code_generator import GeneratedCode
from agents.simulation_designer import SimulationDesign
from reprolab.artifacts import code_that_ran
from reprolab.fileio import (
    atomic_write_json,
    read_json,
)
from reprolab.physics import checks as checks_mod
from reprolab.steps import eligibility
from reprolab.steps.static import static_findings


def checks_for(run, record: dict, design_art: dict, code: GeneratedCode, workdir: Path) -> dict:
    """The run-time checks plus the static lint of one run (what checks.json holds)."""
    design = SimulationDesign.model_validate(design_art["output"])
    by_id = {m["material_id"]: m for m in design_art["materials"]}
    lossless = all(by_id.get(m, {}).get("lossless", True) for m in design.materials)
    return checks_mod.run_checks(
        record,
        workdir,
        code.expected_outputs,
        lossless,
        design=design_art["output"],
        static=static_findings(design, design_art["materials"], code.code, run),
    )


def run_checks(run, result_path, code_json, design_path, out_checks) -> None:
    """Run-time checks plus the static lint, one checks.json; a diagnosis page on failure."""
    blocked = eligibility.blocked_in(result_path)
    if blocked:
        atomic_write_json(out_checks, {**blocked, "verdict": "blocked", "checks": []})
        return
    record = read_json(result_path)
    design_art = read_json(design_path)
    code_art = read_json(code_that_ran(record, code_json))
    code = GeneratedCode.model_validate(code_art["output"])
    workdir = Path(result_path).parent / "run"
    result = checks_for(run, record, design_art, code, workdir)
    result["stage_id"] = design_art["output"]["stage_id"]
    result["code_artifact"] = str(code_that_ran(record, code_json))
    if result["verdict"] == "fail":
        page = checks_mod.write_diagnosis(result, record, workdir, Path(out_checks).parent)
        if page:
            result["diagnosis"] = str(page)
    atomic_write_json(out_checks, result)
