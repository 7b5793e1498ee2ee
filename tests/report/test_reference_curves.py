"""A paper's own reference curve (its theory): never simulated, drawn in the overlay,
compared with the reproduction and with the paper's data, and the report says which
the reproduction agrees with.

Reads the session's finished example run (conftest.offline_example_run); re-judges a
copy of its slab stage with a paper whose fig2 gained two reference curves: one equal
to the paper's data, one 30 % low (the paper's data then disagrees with it)."""

import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from agents.planner import PlanStage
from agents.simulation_designer import SimulationDesign
from reprolab.fileio import read_json
from reprolab.paper import Paper
from reprolab.physics import compare
from reprolab.report import markdown
from reprolab.steps.analyze import raw_curves
from reprolab.steps.compare import compare_stage
from reprolab.steps.design import design_problems
from tests.support.builders import copy_paper

STAGE = "stage1_single_slab"


@pytest.fixture(scope="module")
def judged(offline_example_run, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("references")
    paper_dir = tmp / "paper"
    copy_paper(paper_dir)
    rows = (paper_dir / "data" / "fig2_T.csv").read_text().splitlines()
    low = [rows[0]] + [f"{r.split(',')[0]},{0.7 * float(r.split(',')[1]):.4f}" for r in rows[1:]]
    (paper_dir / "data" / "fig2_T_low.csv").write_text("\n".join(low) + "\n")
    meta = yaml.safe_load((paper_dir / "metadata.yaml").read_text())
    meta["figures"][1]["curves"] += [
        {"curve_id": "theory", "label": "TMM", "digitized": "data/fig2_T.csv"}
        | {"reference": True, "reference_for": ["T"]},
        {"curve_id": "low", "label": "TMM, wrong", "digitized": "data/fig2_T_low.csv"}
        | {"reference": True, "reference_for": ["T"]},
    ]
    (paper_dir / "metadata.yaml").write_text(yaml.safe_dump(meta, allow_unicode=True))
    run = SimpleNamespace(paper=Paper(paper_dir))
    src = offline_example_run / "outputs" / "silica_bragg_2026" / "stages" / STAGE
    stage_dir = tmp / STAGE
    shutil.copytree(src, stage_dir)
    compare_stage(run, stage_dir / "design.json", stage_dir / "checks.json", stage_dir / "c.json")
    design = SimulationDesign.model_validate(read_json(stage_dir / "design.json")["output"])
    return run, design, read_json(stage_dir / "c.json"), raw_curves(run, design, stage_dir / "run")


def test_a_reference_curve_needs_no_simulation_output(judged):
    run, design, _, _ = judged
    stage = PlanStage.model_construct(stage_id=STAGE, target_figures=["fig2"])
    assert not [p for p in design_problems(design, stage, run, []) if "reproduces" in p]


def test_reproduction_is_compared_with_each_reference(judged):
    _, _, comparison, curves = judged
    (fig,) = comparison["figures"]
    assert {c["curve_id"] for c in fig["curves"]} == {"T", "R"}  # references are not results
    by_id = {c["curve_id"]: c for c in fig["curves"]}
    assert by_id["R"]["references"] == []  # the references name T only
    refs = {r["reference_id"]: r for r in by_id["T"]["references"]}
    same, low = refs["theory"], refs["low"]
    assert same["agrees_with"] == "both" and same["paper_agrees_with_reference"] is True
    assert same["paper_vs_reference"]["metrics"]["rms_rel"] == 0.0
    assert low["agrees_with"] == "paper data"
    assert low["paper_agrees_with_reference"] is False
    assert low["sim_vs_reference"]["classification"] == "FAILURE"
    assert "differs from its reference" in low["summary"]
    # the figure is still judged against the paper's data, and recomputes
    assert compare.recompute_comparison(comparison, curves) == []
    assert Path(fig["overlay"]).stat().st_size > 5_000


def test_report_says_which_the_reproduction_agrees_with(judged):
    _, _, comparison, _ = judged
    (fig,) = comparison["figures"]
    text = "\n".join(markdown.figure_section("fig2", "slab", STAGE, fig, [], ""))
    assert "Against the paper's own reference curves" in text
    assert "| T | low (TMM, wrong) | FAILURE" in text
    assert "agrees with the paper's data, not its reference" in text


def test_a_tampered_reference_verdict_is_caught(judged):
    import copy

    from reprolab.steps.analyze import analysis_problems

    _, _, comparison, curves = judged
    assert not [p for p in analysis_problems({}, comparison, [], curves) if "reference" in p]
    forged = copy.deepcopy(comparison)
    (fig,) = forged["figures"]
    t = next(c for c in fig["curves"] if c["curve_id"] == "T")
    low = next(r for r in t["references"] if r["reference_id"] == "low")
    low["agrees_with"] = "both"
    low["sim_vs_reference"]["classification"] = "SUCCESS"
    problems = analysis_problems({}, forged, [], curves)
    assert any("against reference low: agrees_with stored both" in p for p in problems)
    assert any("reproduction stored SUCCESS, recomputed FAILURE" in p for p in problems)
