"""Every piece of agent prose in the report is checked or marked, and never contradicts
the code unmarked (unit level: no pipeline).

Discrepancy rows are held to their figure's class (severity) and comparison (the
direction of the shift); supervisor lines to the stage's verdict and, for a sentence
about the whole paper, to the overall class; labels and the set-up's own numbers carry
no mark; the HTML strikes what the markdown strikes; a figure that is not SUCCESS says
which metric and feature made it so; a failed check's row says what failed.
"""

from __future__ import annotations

import re
from pathlib import Path

from reprolab.physics import claims
from reprolab.report import markdown, prose, why
from reprolab.report.html import markdown_to_html

S1, S2 = "stage1_slab", "stage2_mirror"


def feature(x_paper: float, x_sim: float, kind: str = "peak") -> dict:
    return {
        "kind": kind,
        "x_paper": x_paper,
        "x_sim": x_sim,
        "shift_rel": abs(x_sim - x_paper) / x_paper,
        "y_paper": 0.9,
        "y_sim": 0.9,
        "height_rel": 0.0,
        "width_paper": 0.02,
        "width_sim": 0.02,
        "width_rel": 0.0,
    }


def figure(cls: str, x_sim: float = 0.60024, fig_id: str = "fig3") -> dict:
    shift = abs(x_sim - 0.6) / 0.6
    curve = {
        "curve_id": "R",
        "x_column": "wavelength_um",
        "rms_abs": 0.001,
        "max_abs": 0.004,
        "metrics": {"feature_shift_rel": shift, "feature_height_rel": 0.0},
        "classes": {"feature_shift_rel": cls, "feature_height_rel": "SUCCESS"},
        "features": [feature(0.55, 0.55, "dip"), feature(0.6, x_sim)],
    }
    return {"figure_id": fig_id, "classification": cls, "curves": [curve]}


def analysis(description: str, severity: str = "minor", **extra) -> dict:
    row = {
        "figure_id": "fig3",
        "quantity": "peak position",
        "description": description,
        "likely_cause": "the finite grid",
        "severity": severity,
        **extra,
    }
    return {"summary": "", "per_figure": [], "discrepancies": [row], "claims": []}


def standing(md: str) -> str:
    return re.sub(r"~~.*?~~", "", md, flags=re.S)


RED = "The reproduced peak lies slightly to the red of the paper's."


def test_a_discrepancy_row_true_to_the_comparison_stands():
    md = "\n".join(
        markdown.discrepancies_section({S2: analysis(RED)}, {S2: {"figures": [figure("SUCCESS")]}})
    )
    assert RED in standing(md) and "Contradicted" not in md


def test_a_minor_row_under_a_failure_is_struck():
    """The measured case: '... minor' for a figure the code calls FAILURE."""
    comp = {"figures": [figure("FAILURE", x_sim=0.62)]}
    md = "\n".join(markdown.discrepancies_section({S2: analysis(RED)}, {S2: comp}))
    assert RED not in standing(md) and f"~~{RED}" in md
    assert "calls it minor, the code classifies fig3 FAILURE" in md
    # the severity that fits the class stands
    md = "\n".join(markdown.discrepancies_section({S2: analysis(RED, "critical")}, {S2: comp}))
    assert RED in standing(md)


def test_a_row_with_the_wrong_direction_is_struck():
    """'to the red' when the reproduced peak lies 21 nm to the blue."""
    comp = {"figures": [figure("PARTIAL", x_sim=0.579)]}
    md = "\n".join(markdown.discrepancies_section({S2: analysis(RED, "significant")}, {S2: comp}))
    assert RED not in standing(md)
    assert "says the reproduction lies to the red; the peak that moved most lies to the blue" in md
    blue = RED.replace("red", "blue")
    md = "\n".join(markdown.discrepancies_section({S2: analysis(blue, "significant")}, {S2: comp}))
    assert blue in standing(md)
    # the structured direction is judged the same way, whatever the prose
    said = analysis("The peak moved.", "significant", direction="red")
    assert claims.audit_analysis(said, comp)["sections"][-1]["status"] == "contradicted"


def test_an_energy_axis_turns_the_colours_round():
    fig = figure("PARTIAL", x_sim=0.579)
    fig["curves"][0]["x_column"] = "energy_eV"
    assert claims.spectral_shift(fig)[0] == "red"  # a lower energy is redder


def test_labels_and_the_set_ups_numbers_carry_no_mark():
    audit = claims.audit_text("A 2D run, the 1st mode, n = 2.10, 12 s.", [], None, set(), (2.1,))
    by_text = {n["text"]: n["status"] for n in audit["numbers"]}
    assert by_text == {"2.10": "given", "12": "unchecked"}
    rendered = prose.render("A 2D run, the 1st mode, n = 2.10, 12 s.", audit)
    assert "2D" in rendered and "2.10 [" not in rendered and "12 [unchecked]" in rendered
    assert claims.given_numbers({"a": [0.8, "from 0.45 to 0.95 um"], "b": True}) == (
        0.45,
        0.8,
        0.95,
    )


def conclusions(feedback: str, figure_rows: list[tuple]) -> str:
    verdict = {
        "stage_id": S2,
        "status": "completed_success",
        "reason": "fig3: SUCCESS",
        "supervisor_verdict": "ok_continue",
        "supervisor": {"output": {"feedback": feedback, "claims": []}},
    }
    return "\n".join(markdown.conclusions_section([verdict], figure_rows))


def test_a_sentence_about_the_whole_paper_is_held_to_the_overall_class():
    """'All four figures are reproduced' under an overall FAILURE is struck, though its
    own stage succeeded."""
    said = "All four figures are reproduced."
    rows = [("fig3", S2, figure("SUCCESS")), ("fig2", S1, figure("FAILURE", fig_id="fig2"))]
    md = conclusions(said, rows)
    assert said not in standing(md)
    assert "the code's overall classification is FAILURE" in md
    md = conclusions(said, [("fig3", S2, figure("SUCCESS"))])
    assert said in standing(md) and "Contradicted" not in md


def test_a_partial_stage_whose_feedback_owns_the_class_has_no_note():
    comp = {"figures": [figure("PARTIAL")]}
    text = "T and R reproduce; the absorptance has no data, so the stage is partial."
    section = prose.supervisor_section({"feedback": text}, comp, "completed_partial")
    assert section["status"] == "ok" and section["details"] == []
    section = prose.supervisor_section(
        {"feedback": "T and R reproduce."}, comp, "completed_partial"
    )
    assert section["details"] == [
        "gives no classification to check; the code's verdict is completed_partial"
    ]


def test_the_html_strikes_what_the_markdown_strikes():
    md = "\n".join(
        markdown.discrepancies_section(
            {S2: analysis(RED)}, {S2: {"figures": [figure("FAILURE", 0.62)]}}
        )
    )
    page = markdown_to_html(md, Path("."), "t")
    assert "~~" not in page and "<s>" in page and "</s>" in page


def test_no_python_value_in_a_table_cell():
    curve = {"curve_id": "A", "qualitative": True, "classes": {"visual": "PARTIAL"}}
    row = markdown._curve_metrics_row(curve)
    assert "{" not in row and "visual: PARTIAL (qualitative, by eye)" in row


def test_a_failed_checks_row_says_what_failed():
    failed = {
        "name": "built:geometry_as_declared",
        "status": "fail",
        "detail": "SiO2 spacer 0.18 a declared, 0.2 built (nearest object)",
        "value": 1,
        "threshold": "fail when a declared dimension matches no built object within 1 %",
    }
    md = "\n".join(
        markdown.checks_section({S1: {"verdict": "fail", "checks": [failed]}}, Path("."))
    )
    assert "SiO2 spacer 0.18 a declared, 0.2 built" in md
    assert "limit fail when a declared dimension" in md


def test_a_figure_not_success_names_its_metric_and_feature():
    fig = figure("PARTIAL", x_sim=0.615)
    lines = "\n".join(why.why_lines(fig))
    assert "Why PARTIAL" in lines
    assert "`R` feature_shift_rel = 2.5 %: PARTIAL (SUCCESS up to 1 %, PARTIAL up to 3 %)" in lines
    assert "set by peak 1 (x = 0.6 in the paper, 0.615 reproduced)" in lines
    assert why.why_lines(figure("SUCCESS")) == []
