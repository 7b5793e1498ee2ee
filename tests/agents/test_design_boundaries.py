"""A design says what Meep builds: coordinates (cylindrical with its m), boundaries per
axis, k points, column meanings and the results it measures from Harminv modes. Each
rule is attacked with a design made wrong on purpose; old designs stay valid."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml
from pydantic import ValidationError

from agents.planner import PlanStage
from agents.simulation_designer import SimulationDesign
from reprolab.physics import lint
from reprolab.steps.design import mode_result_problems
from tests.support.builders import minimal_design
from tests.support.planted.modes import bloch_script, ring_script

PAPERS = Path(__file__).parents[2] / "examples/papers"


def test_every_recorded_design_stays_valid():
    found = sorted(PAPERS.glob("*/recordings/*/simulation_designer.a*.yaml"))
    assert len(found) >= 5
    old = 0
    for path in found:
        raw = yaml.safe_load(path.read_text())["output"]
        design = SimulationDesign.model_validate(raw)
        if "boundaries" not in raw and "coordinates" not in raw:  # written before them
            assert design.boundaries == [] and design.coordinates == "cartesian", path
            old += 1
    assert old >= 5  # the designs written before boundaries existed still read the same


def test_bloch_cell_needs_no_pml_thickness():
    _, design = bloch_script()
    ok = SimulationDesign.model_validate(design)
    assert ok.pml_thickness is None and [b.kind for b in ok.boundaries] == ["bloch", "bloch"]
    # without boundaries a design is the old one: PML everywhere, pml_thickness required
    old = {k: v for k, v in design.items() if k not in ("boundaries", "k_points")}
    with pytest.raises(ValidationError, match="true but pml_thickness missing"):
        SimulationDesign.model_validate(old)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"k_points": []}, r"bloch on \['x', 'y'\] needs k_points"),
        (
            {"boundaries": [{"axis": "x", "kind": "bloch", "thickness": 1.0}]},
            "thickness 1 given for kind 'bloch'",
        ),
        ({"boundaries": [{"axis": "x", "kind": "pml"}]}, "pml on x has no thickness"),
        (
            {"boundaries": [{"axis": "x", "kind": "bloch"}, {"axis": "x", "kind": "pml"}]},
            "axis 'x' given 2 times",
        ),
        ({"boundaries": [{"axis": "r", "kind": "bloch"}]}, "axis 'r' is not an axis of cartesian"),
        ({"k_points": [[0.5, 0.0]]}, r"k_points\[0\] = \[0.5, 0.0\]: give \[kx, ky, kz\]"),
        ({"m": [3]}, r"m \[3\] given for cartesian"),
    ],
)
def test_bloch_design_made_wrong_is_refused(change, message):
    _, design = bloch_script()
    with pytest.raises(ValidationError, match=message):
        SimulationDesign.model_validate({**design, **change})


def test_k_points_without_a_bloch_axis_are_refused():
    design = minimal_design(k_points=[[0.5, 0, 0]])
    with pytest.raises(ValidationError, match="k_points given but no bloch boundary"):
        SimulationDesign.model_validate(design)


def test_cylindrical_needs_m_and_its_own_axes():
    _, design = ring_script()
    assert SimulationDesign.model_validate(design).m == [3]
    with pytest.raises(ValidationError, match="cylindrical needs m"):
        SimulationDesign.model_validate({**design, "m": []})
    bad = {**design, "boundaries": [{"axis": "x", "kind": "pml", "thickness": 2.0}]}
    with pytest.raises(ValidationError, match="axis 'x' is not an axis of cylindrical"):
        SimulationDesign.model_validate(bad)


def test_column_meanings_name_columns_of_their_file():
    _, design = bloch_script()
    spec = design["output_specifications"][0]
    wrong = {**spec, "column_meanings": {"kx": "wavevector"}}
    with pytest.raises(ValidationError, match=r"column_meanings of bands.csv: \['kx'\]"):
        SimulationDesign.model_validate({**design, "output_specifications": [wrong]})
    unknown = {**spec, "column_meanings": {"k": "extinction"}}
    with pytest.raises(ValidationError, match="column_meanings"):
        SimulationDesign.model_validate({**design, "output_specifications": [unknown]})


# A paper with a band diagram (fig2), a figure of curves (fig3) and a table (tab1).
PAPER = SimpleNamespace(
    is_table=lambda rid: rid == "tab1",
    band_diagram=lambda rid: {"lattice": "square"} if rid == "fig2" else None,
    figure=lambda rid: SimpleNamespace(curves=[SimpleNamespace(curve_id="bands")], field_map=None),
)


def _stage(*targets: str) -> PlanStage:
    return PlanStage.model_construct(stage_id="stage1_bands", target_figures=list(targets))


def test_mode_results_are_targets_and_target_tables_are_mode_results():
    _, design = bloch_script()
    run = SimpleNamespace(paper=PAPER)
    ok = SimulationDesign.model_validate({**design, "mode_results": ["fig2", "tab1"]})
    assert mode_result_problems(ok, _stage("fig2", "tab1"), run) == []
    (problem,) = mode_result_problems(ok, _stage("fig2"), run)
    assert "'tab1' is not a target of this stage" in problem
    none = SimulationDesign.model_validate(design)
    (problem,) = mode_result_problems(none, _stage("tab1"), run)
    assert "table 'tab1'" in problem and "mode_results" in problem
    curves = SimulationDesign.model_validate({**design, "mode_results": ["fig3"]})
    (problem,) = mode_result_problems(curves, _stage("fig3"), run)
    assert "'fig3' is neither a table nor a figure with a band_diagram" in problem
    # a paper format without tables: nothing to demand
    assert mode_result_problems(none, _stage("fig2"), SimpleNamespace(paper=object())) == []


def test_lint_of_a_design_without_pml():
    code, design = bloch_script()
    design = SimulationDesign.model_validate(design).model_dump()
    names = {f.name: f for f in lint.design_findings(design, [])}
    assert "pml_thickness" not in names and names["resolution_ppw"].status == "pass"
    with_pml = code.replace("resolution=RES,", "resolution=RES, boundary_layers=[mp.PML(1.0)],")
    found = {f.name: f for f in lint.code_findings(with_pml, design)}
    assert found["lint:pml_matches_design"].status == "fail"
    assert "design's no PML" in found["lint:pml_matches_design"].detail
    assert "lint:pml_matches_design" not in {f.name for f in lint.code_findings(code, design)}


def test_results_measured_from_modes_need_no_curve_output():
    from reprolab.steps.design import design_problems

    run = SimpleNamespace(paper=PAPER)
    _, design = bloch_script()
    stage = _stage("fig2", "tab1")
    ok = SimulationDesign.model_validate({**design, "mode_results": ["fig2", "tab1"]})
    assert design_problems(ok, stage, run, []) == []
    # without mode_results the band diagram's curve must come from an output file
    curves = SimulationDesign.model_validate({**design, "mode_results": ["tab1"]})
    assert design_problems(curves, stage, run, []) == ["no output reproduces fig2 curve 'bands'"]
    as_curve = {"figure_id": "tab1", "curve_id": "x", "file": "bands.csv"}
    as_curve |= {"x_column": "k", "y_column": "freq"}
    wrong = SimulationDesign.model_validate(
        {**design, "mode_results": ["fig2", "tab1"], "figure_outputs": [as_curve]}
    )
    (problem,) = design_problems(wrong, stage, run, [])
    assert "'tab1' is a table" in problem and "mode_results" in problem
