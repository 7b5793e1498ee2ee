"""One verdict per figure, the same everywhere: a figure made by a stage the code failed
(here by a check) counts as FAILURE in the executive summary, the figure's section, the
summary table, the conclusions and the campaign's index, with its curves' own class
said beside it; and a supervisor that says so is not struck for it."""

from __future__ import annotations

import re

from reprolab.artifacts import Comparison, Verdict, write_comparison, write_verdict
from reprolab.report import index, markdown

STAGE = "stage3_sweep"
FAILED = {
    "stage_id": STAGE,
    "status": "completed_failed",
    "reason": "checks failed: built:field_decay",
    "supervisor_verdict": "ok_continue",
    "supervisor": {
        "output": {
            "verdict": "ok_continue",
            "classification": "FAILURE",
            "feedback": "fig4 FAILURE: the fields had not decayed, so its curve cannot stand.",
        }
    },
}


def fig4() -> dict:
    curve = {
        "curve_id": "R",
        "x_column": "wavelength_um",
        "rms_abs": 0.001,
        "max_abs": 0.002,
        "metrics": {"feature_shift_rel": 0.001},
        "classes": {"feature_shift_rel": "SUCCESS"},
        "features": [],
    }
    return {"figure_id": "fig4", "classification": "SUCCESS", "curves": [curve]}


def test_a_failed_stage_cannot_count_its_figure_success():
    from reprolab.report import verdicts

    comparison = verdicts.capped_comparison({"figures": [fig4()]}, FAILED)
    (fig,) = comparison["figures"]
    assert fig["classification"] == "FAILURE" and fig["comparison_class"] == "SUCCESS"
    rows = [("fig4", STAGE, fig)]
    validated = {"auto_approved": True, "sha256": "0" * 64}
    summary = "\n".join(markdown.executive_summary(rows, 1, [FAILED], {}, validated, ""))
    assert "| Overall classification | **FAILURE** |" in summary
    assert "| SUCCESS / PARTIAL / FAILURE | 0 / 0 / 1 |" in summary
    section = "\n".join(markdown.figure_section("fig4", "t", STAGE, fig, [], ""))
    assert "classification **FAILURE** (its curves alone compare as SUCCESS" in section
    assert "built:field_decay" in section
    table = "\n".join(markdown.summary_table(rows))
    assert re.search(r"\| fig4 \| stage3_sweep \| \*\*FAILURE\*\*", table)
    conclusions = "\n".join(markdown.conclusions_section([FAILED], rows, validated))
    assert "0 of 1 simulated target figures reproduced" in conclusions
    assert "overall classification **FAILURE**" in conclusions
    # the supervisor says what the code says: nothing of it is struck
    assert "~~" not in conclusions and "Contradicted" not in conclusions


def test_the_index_counts_it_as_the_report_does(tmp_path):
    out = tmp_path / "paper_x"
    stage_dir = out / "stages" / STAGE
    stage_dir.mkdir(parents=True)
    write_comparison(stage_dir / "comparison.json", Comparison(stage_id=STAGE, figures=[fig4()]))
    write_verdict(stage_dir / "verdict.json", Verdict(**FAILED))
    row = index.paper_row(out)
    assert row["overall"] == "FAILURE" and row["counts"]["SUCCESS"] == 0


def test_a_passed_stage_keeps_its_figures_class():
    from reprolab.report import verdicts

    passed = {**FAILED, "status": "completed_success", "reason": "fig4: SUCCESS"}
    (fig,) = verdicts.capped_comparison({"figures": [fig4()]}, passed)["figures"]
    assert fig["classification"] == "SUCCESS" and "comparison_class" not in fig
    assert verdicts.capped_note(fig) == ""


def test_no_plot_title_names_a_class(monkeypatch, tmp_path):
    """Overlays are drawn when the curves are compared, before the stage's verdict may
    cap the figure (SUCCESS curves of a failed stage count FAILURE): a title that named
    the comparison's class would contradict the text beside it, so none names one."""
    from reprolab.paper import Paper
    from reprolab.report import plots, polar_plot
    from tests.support.pipeline import EXAMPLE, REPO

    titles = []
    monkeypatch.setattr(
        plots,
        "save_figure",
        lambda fig, out: titles.extend(ax.get_title() for ax in fig.axes) or str(out),
    )
    papers = REPO / "examples" / "papers"
    bragg, pattern = Paper(EXAMPLE), Paper(papers / "dipole_array_pattern_2026")
    xs, ys = bragg.curve_data("fig4", "Rpeak")
    sweep = {"curve_id": "Rpeak", "sim": {"x": xs, "y": ys}}
    plots.overlay(bragg, {"figure_id": "fig4", "classification": "SUCCESS", "curves": [sweep]}, "o")
    xp, yp = pattern.curve_data("fig1", "pattern")
    lobe = {"curve_id": "pattern", "x_column": "angle_deg", "sim": {"x": xp, "y": yp}}
    polar_plot.polar_overlay(
        pattern, {"figure_id": "fig1", "classification": "SUCCESS", "curves": [lobe]}, "p"
    )
    bands = Paper(papers / "pc_rods_bands_2026")
    plots.band_overlay(bands, {"figure_id": "fig1", "classification": "SUCCESS"}, "b")
    value = {"measure": "quality_factor", "stated": 120, "measured": 121, "unit": "1"}
    table = {"figure_id": "tab1", "classification": "SUCCESS", "rows": [{"values": [value]}]}
    plots.table_overlay(table, "t")
    drawn = [t for t in titles if t]
    assert len(drawn) == 4, titles
    assert not [t for t in drawn if re.search(r"SUCCESS|PARTIAL|FAILURE", t)], drawn
