"""A figure without digitized data: compared by eye (the reproduction drawn alone on
the paper's axes, beside the paper's image), classified at most PARTIAL and marked
qualitative in comparison.json, the report's figure section and its summary table;
code's recomputation accepts it and an analysis calling it SUCCESS is refused.

Reads the session's finished example run (conftest.offline_example_run); re-judges a
copy of two of its stages with a paper whose curves lost their data."""

import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from agents.simulation_designer import SimulationDesign
from reprolab.fileio import read_json
from reprolab.paper import Paper
from reprolab.physics import compare
from reprolab.report import markdown
from reprolab.steps.analyze import analysis_problems, raw_curves
from reprolab.steps.compare import compare_stage
from tests.support.builders import copy_paper

EXAMPLE = Path(__file__).parents[2] / "examples" / "papers" / "silica_bragg_2026"
STAGES = {"fig2": "stage1_single_slab", "fig3": "stage2_bragg_mirror"}


@pytest.fixture(scope="module")
def judged(offline_example_run, tmp_path_factory):
    """fig3's only curve and fig2's R curve without data; both stages compared again."""
    tmp = tmp_path_factory.mktemp("qualitative")
    paper_dir = tmp / "paper"
    copy_paper(paper_dir)
    meta = yaml.safe_load((paper_dir / "metadata.yaml").read_text())
    del meta["figures"][2]["curves"][0]["digitized"]  # fig3 R
    del meta["figures"][1]["curves"][1]["digitized"]  # fig2 R (T keeps its data)
    (paper_dir / "metadata.yaml").write_text(yaml.safe_dump(meta, allow_unicode=True))
    run = SimpleNamespace(paper=Paper(paper_dir))
    out = {}
    for fig_id, stage in STAGES.items():
        src = offline_example_run / "outputs" / "silica_bragg_2026" / "stages" / stage
        stage_dir = tmp / stage
        shutil.copytree(src, stage_dir)
        compare_stage(
            run, stage_dir / "design.json", stage_dir / "checks.json", stage_dir / "c.json"
        )
        comparison = read_json(stage_dir / "c.json")
        design = SimulationDesign.model_validate(read_json(stage_dir / "design.json")["output"])
        out[fig_id] = (comparison, raw_curves(run, design, stage_dir / "run"))
    return out


def test_figure_without_data_is_qualitative_at_most_partial(judged):
    comparison, curves = judged["fig3"]
    (fig,) = comparison["figures"]
    assert fig["qualitative"] is True and fig["classification"] == "PARTIAL"
    (curve,) = fig["curves"]
    assert curve["qualitative"] and curve["classes"] == {"visual": "PARTIAL"}
    assert "metrics" not in curve and "sim" not in curve  # no number code cannot stand by
    assert Path(fig["overlay"]).stat().st_size > 5_000  # the reproduction, drawn alone
    assert compare.recompute_comparison(comparison, curves) == []
    problems = analysis_problems(
        {"summary": "", "per_figure": [{"figure_id": "fig3", "narrative": "A SUCCESS."}]},
        comparison,
        ["fig3"],
        curves,
    )
    assert problems == ["fig3: the narrative calls it ['SUCCESS'], but the thresholds give PARTIAL"]


def test_mixed_figure_keeps_numbers_for_the_curve_with_data(judged):
    comparison, curves = judged["fig2"]
    (fig,) = comparison["figures"]
    by_id = {c["curve_id"]: c for c in fig["curves"]}
    assert by_id["T"]["metrics"]["rms_rel"] < 0.02 and "qualitative" not in by_id["T"]
    assert by_id["R"]["qualitative"] and fig["qualitative"]
    assert fig["classification"] == "PARTIAL"  # T alone is SUCCESS in the example run
    assert set(curves) == {("fig2", "T")}
    assert compare.recompute_comparison(comparison, curves) == []


def test_report_marks_qualitative_figures(judged):
    fig = judged["fig3"][0]["figures"][0]
    table = "\n".join(markdown.summary_table([("fig3", "stage2_bragg_mirror", fig)]))
    assert (
        "| fig3 | stage2_bragg_mirror | **PARTIAL** (qualitative: compared visually, "
        "no digitized data) | – | – | – |" in table
    )
    section = "\n".join(markdown.figure_section("fig3", "R", "stage2", fig, [], ""))
    assert "classification **PARTIAL** (qualitative: no digitized data" in section
    assert "| R | – | – | – | – | visual: PARTIAL (qualitative, by eye) |" in section
