"""Stage 0 as a material check: a design that runs no simulation gives no resolution, PML
or source, only stage 0 may do so, and code and run are held to it (the
code builds no mp.Simulation, the run's record shows none). No Meep is run."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from pydantic import ValidationError

from agents.common import StageType
from agents.planner import PlanStage
from agents.simulation_designer import FDTD_PARAMETERS, SimulationDesign
from reprolab.physics import checks, lint, record_checks
from reprolab.report import markdown
from reprolab.steps.design import design_problems

REC = Path(__file__).parents[2] / "examples/papers/silica_bragg_2026/recordings"
STAGE0 = REC / "stage0_material_validation"


def recorded(agent: str) -> dict:
    return yaml.safe_load((STAGE0 / f"{agent}.a1.yaml").read_text())["output"]


def material_only() -> dict:
    design = recorded("simulation_designer")
    for key in FDTD_PARAMETERS:
        del design[key]
    design["runs_simulation"] = False
    design["figure_outputs"] = []
    return design


def test_material_evaluation_needs_no_fdtd_parameters():
    design = SimulationDesign.model_validate(material_only())
    assert design.runs_simulation is False and design.resolution is None
    # the recorded stage-0 design (with them) stays valid: runs_simulation defaults to true
    assert SimulationDesign.model_validate(recorded("simulation_designer")).runs_simulation


def test_simulation_without_fdtd_parameters_is_refused_naming_them():
    design = material_only()
    design["runs_simulation"] = True
    with pytest.raises(ValidationError, match="resolution, pml_thickness, source_fcen"):
        SimulationDesign.model_validate(design)
    full = recorded("simulation_designer")
    del full["pml_thickness"]
    with pytest.raises(ValidationError, match="true but pml_thickness missing"):
        SimulationDesign.model_validate(full)


def test_no_simulation_with_fdtd_parameters_is_refused():
    design = material_only()
    design["resolution"] = 50
    with pytest.raises(ValidationError, match="false but resolution given"):
        SimulationDesign.model_validate(design)


def _stage(stage_type: StageType, stage_id: str) -> PlanStage:
    return PlanStage(
        stage_id=stage_id,
        stage_type=stage_type,
        name="n",
        description="d",
        runtime_budget_minutes=1,
    )


def test_only_a_material_stage_may_run_no_simulation():
    mats = [{"material_id": "fused_silica"}]
    design = material_only()
    ok = SimulationDesign.model_validate(design)
    stage0 = _stage(StageType.MATERIAL_VALIDATION, "stage0_material_validation")
    assert design_problems(ok, stage0, None, mats) == []
    design["stage_id"] = "stage1_single_slab"
    slab = SimulationDesign.model_validate(design)
    (problem,) = design_problems(
        slab, _stage(StageType.SINGLE_STRUCTURE, slab.stage_id), None, mats
    )
    assert problem.startswith("runs_simulation: false is only for a MATERIAL_VALIDATION stage")
    assert "stage1_single_slab' is SINGLE_STRUCTURE" in problem


def test_lint_holds_the_code_to_no_simulation():
    design = SimulationDesign.model_validate(material_only()).model_dump()
    assert lint.design_findings(design, [], None) == []  # nothing to judge, no KeyError
    code = recorded("code_generator")["code"]
    (ok,) = lint.code_findings(code, design, need_resolution_env=True)
    assert (ok.name, ok.status) == ("lint:no_simulation", "pass")
    sneaky = code + "\nsim = mp.Simulation(cell_size=mp.Vector3(1), resolution=10)\n"
    (bad,) = lint.code_findings(sneaky, design)
    assert bad.status == "fail" and "runs_simulation: false" in bad.detail
    # a simulating design's lint is unchanged (no such finding)
    full = SimulationDesign.model_validate(recorded("simulation_designer")).model_dump()
    assert not any(f.name == "lint:no_simulation" for f in lint.code_findings(sneaky, full))


def test_run_record_with_a_simulation_fails_a_material_only_design():
    design = SimulationDesign.model_validate(material_only()).model_dump()
    sim = {"index": 0, "runs": [], "monitors": [], "geometry": [], "sources": []}
    sim["default_material"] = {}
    found = {c.name: c for c in record_checks.record_checks([sim], design)}
    assert found["built:no_simulation"].status == "fail"
    assert "built 1 simulation" in found["built:no_simulation"].detail
    assert record_checks.no_simulation_check([], design).status == "pass"
    full = SimulationDesign.model_validate(recorded("simulation_designer")).model_dump()
    assert "built:no_simulation" not in {c.name for c in record_checks.record_checks([sim], full)}


def test_outputs_and_report_of_a_material_only_stage():
    design = SimulationDesign.model_validate(material_only()).model_dump()
    design["figure_outputs"] = recorded("simulation_designer")["figure_outputs"]
    cols = {"wavelength_um": [0.4, 1.0], "n": [1.47, 1.45], "k": [0.0, 0.0]}
    assert checks.output_checks("material_fused_silica.csv", cols, design, []) == []
    rows = markdown.numerical_parameters_table(
        [("stage0_material_validation", design, {"mpi_ranks": 1, "runtime_seconds": 1.2})]
    )
    assert "no simulation (material models evaluated)" in rows[-1]
    assert "None" not in rows[-1]
