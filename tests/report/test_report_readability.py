"""What a reader sees: a red line's meaning only where one is drawn, one note per remark
instead of one per feature, units beside positions, who answered the material
checkpoint instead of the supervisor's raw verdict, and each figure's agreement set
against its estimated discretisation error."""

from __future__ import annotations

import json
import math

import pytest

from reprolab.report import comparison_notes, discretisation, markdown, plots, why


def feature(x_paper, x_sim, basis="position", scale=None):
    return {
        "kind": "dip",
        "x_paper": x_paper,
        "x_sim": x_sim,
        "shift_rel": abs(x_sim - x_paper) / x_paper,
        "shift_basis": basis,
        "shift_scale": scale if scale is not None else x_paper,
        "height_rel": 0.01,
    }


def test_one_note_per_figure_not_one_per_feature():
    feats = [feature(0.6 + 0.01 * i, 0.6 + 0.01 * i) for i in range(14)]
    fig = {"curves": [{"curve_id": "R", "x_column": "wavelength_um", "features": feats}]}
    lines = [ln for ln in comparison_notes.scale_lines(fig) if ln]
    assert len(lines) == 1 and "each peak/dip's own position" in lines[0]
    assert "0.6" not in lines[0]  # no bare position without its unit
    two = {"curves": [{**fig["curves"][0], "curve_id": c} for c in ("R", "T")]}
    assert len([ln for ln in comparison_notes.scale_lines(two) if ln]) == 1


def test_a_span_scale_says_its_unit():
    feats = [feature(0.6, 0.61, "span", 0.4), feature(0.7, 0.7, "span", 0.4)]
    fig = {"curves": [{"curve_id": "R", "x_column": "wavelength_um", "features": feats}]}
    (line,) = [ln for ln in comparison_notes.scale_lines(fig) if ln]
    assert line.endswith("the paper's x span (the axis origin lies in the data), 0.4 µm")


def test_why_gives_positions_with_their_unit():
    curve = {
        "curve_id": "R",
        "metrics": {"feature_shift_rel": 0.029},
        "classes": {"feature_shift_rel": "PARTIAL"},
        "features": [feature(689.5, 709.5)],
    }
    fig = {"classification": "PARTIAL", "x_unit": "nm", "curves": [curve]}
    (reason,) = why.figure_reasons(fig)
    assert "x = 689.5 nm in the paper, 709.5 nm reproduced" in reason


def test_the_red_line_label_only_where_a_red_line_is_drawn(tmp_path, monkeypatch):
    drawn = []
    monkeypatch.setattr(plots, "save_figure", lambda fig, out: drawn.append(fig) or str(out))

    def entry(measured):
        value = {"measure": "quality_factor", "stated": 120, "measured": measured, "unit": "1"}
        return {"figure_id": "tab1", "classification": "SUCCESS", "rows": [{"values": [value]}]}

    plots.table_overlay(entry(121), tmp_path / "a.png")
    plots.table_overlay(entry(None), tmp_path / "b.png")
    labels = [f.axes[0].get_ylabel() for f in drawn]
    assert labels == ["run", "run (red dotted line: not measured)"]


def test_the_material_checkpoint_says_who_answered_it():
    verdict = {
        "stage_id": "stage0_materials",
        "status": "completed_success",
        "reason": "materials",
        "supervisor_verdict": "ask_user",
        "supervisor": {"output": {"verdict": "ask_user", "feedback": "Materials look fine."}},
    }
    validated = {"auto_approved": True, "sha256": "0" * 64}
    md = "\n".join(markdown.conclusions_section([verdict], [], validated))
    assert "next: the material checkpoint, AUTO-APPROVED by configuration" in md
    assert "Supervisor (ask_user)" not in md and "ask_user" not in md


def _fig(shift, max_abs):
    curve = {
        "curve_id": "R",
        "metrics": {"feature_shift_rel": shift, "max_abs_rel": max_abs},
        "features": [],
    }
    return {"figure_id": "fig2", "classification": "SUCCESS", "curves": [curve]}


def _conv(tmp_path, position_change):
    quantities = [
        {"variant": "resolution_2x", "name": "fig2/R dip 0 position", "change": position_change},
        {"variant": "resolution_2x", "name": "fig2/R pointwise max change", "change": 0.001},
    ]
    (tmp_path / "convergence.json").write_text(json.dumps({"quantities": quantities}))


def test_each_figure_says_whether_it_agrees_within_the_grid_error(tmp_path):
    """The measured case: a 0.0067 % shift beside a 0.015 % discretisation error is
    within it; a 2.9 % shift beside the same error is beyond it."""
    _conv(tmp_path, 1.5e-4)
    within = "\n".join(discretisation.agreement_lines(_fig(6.7e-5, 0.02), tmp_path))
    assert "peak/dip positions: differ from the paper by up to 0.0067 %, within" in within
    assert (
        "the curves, pointwise (max difference / max): differ from the paper by up to 2 %, "
        "beyond the estimated discretisation error (0.1 %)" in within
    )
    beyond = "\n".join(discretisation.agreement_lines(_fig(0.029, 0.0), tmp_path))
    assert "positions: differ from the paper by up to 2.9 %, beyond" in beyond
    assert "the grid alone does not explain it" in beyond
    unknown = discretisation.agreement_lines(_fig(0.029, 0.0), tmp_path / "none")
    assert "not estimated for this stage" in unknown[0]


def test_a_table_q_is_set_against_the_grid_error_of_q(tmp_path):
    q = {"measure": "quality_factor", "error": 0.0441, "error_kind": "log10_factor"}
    fig = {"figure_id": "tab1", "kind": "table", "rows": [{"values": [q]}]}
    quantities = [{"variant": "resolution_2x", "name": "mode 0 (f = 0.118) Q", "change": 0.02}]
    (tmp_path / "convergence.json").write_text(json.dumps({"quantities": quantities}))
    (line,) = [ln for ln in discretisation.agreement_lines(fig, tmp_path) if "Q" in ln]
    assert "quality factors Q: differ from the paper by up to 11 %, beyond" in line


def test_the_reproduction_is_drawn_on_the_papers_log_axis(monkeypatch):
    """The report's reproduction column sits beside the paper's figure: a log axis there
    is a log axis here (it was drawn linear beside the paper's log one)."""
    from reprolab.paper import Paper
    from tests.support.pipeline import REPO

    drawn = []
    monkeypatch.setattr(plots, "save_figure", lambda fig, out: drawn.append(fig) or str(out))
    paper = Paper(REPO / "examples" / "papers" / "purcell_mirrors_2026")
    assert paper.figure("fig1").y_axes.left.scale == "log"
    plots.reproduction(paper, "fig1", {"purcell": paper.curve_data("fig1", "purcell")}, "r")
    assert drawn[0].axes[0].get_yscale() == "log"


def test_a_polar_reproduction_is_drawn_as_the_paper_plots_it(monkeypatch, tmp_path):
    """A radiation pattern's reproduction column: polar, normalised, in dB like the
    paper's (it was a raw power on Cartesian axes under the paper's dB label)."""
    from reprolab.paper import Paper
    from reprolab.report import markdown
    from tests.support.pipeline import REPO

    drawn = []
    monkeypatch.setattr(plots, "save_figure", lambda fig, out: drawn.append(fig) or str(out))
    paper = Paper(REPO / "examples" / "papers" / "dipole_array_pattern_2026")
    run = tmp_path / "stage1" / "run"
    run.mkdir(parents=True)
    angles = list(range(-180, 180))
    power = [0.003 * (1.1 + math.cos(math.radians(a))) for a in angles]
    rows = "\n".join(f"{a},{p}" for a, p in zip(angles, power, strict=True))
    (run / "pattern.csv").write_text("angle_deg,power\n" + rows + "\n")
    fo = {"figure_id": "fig1", "curve_id": "pattern", "file": "pattern.csv"}
    design = {"figure_outputs": [fo | {"x_column": "angle_deg", "y_column": "power"}]}
    fig = {"figure_id": "fig1", "overlay": str(tmp_path / "stage1" / "overlay_fig1.png")}
    markdown.drawn_reproduction(paper, design, fig, tmp_path)
    (ax,) = drawn[0].axes
    assert ax.name == "polar"
    (line,) = ax.lines
    assert max(line.get_ydata()) == 0.0  # normalised to its maximum, in dB


def test_a_pattern_compared_in_db_says_its_differences_are_db():
    curve = {"curve_id": "P", "y_unit": "1", "compared_as": "db"}
    assert markdown.y_units({"curves": [curve]}) == "dB"
    assert markdown.y_units({"curves": [{**curve, "compared_as": "linear"}]}) == "dimensionless"


def test_a_shift_of_floating_point_noise_reads_zero():
    from reprolab.report.fmt import cell

    assert cell(6.3e-16, "%") == "0 %" and cell(2.4e-5, "%") == "0.0024 %"


def test_a_band_diagrams_legend_covers_no_band(monkeypatch):
    """The legend sits below the axes: inside, it covered band 1 and 2's points."""
    from reprolab.paper import Paper
    from tests.support.pipeline import REPO

    drawn = []
    monkeypatch.setattr(plots, "save_figure", lambda fig, out: drawn.append(fig) or str(out))
    paper = Paper(REPO / "examples" / "papers" / "pc_rods_bands_2026")
    measured = [{"band": 1, "k_path": 0.5, "freq": 0.27}, {"band": 2, "k_path": 1.5, "freq": 0.56}]
    plots.band_overlay(paper, {"figure_id": "fig1", "measured": measured}, "b")
    fig = drawn[0]
    (ax,) = fig.axes
    renderer = fig.canvas.get_renderer()
    legend, box = ax.get_legend().get_window_extent(renderer), ax.get_window_extent(renderer)
    assert legend.y1 <= box.y0


def test_a_drawn_reproduction_is_on_the_papers_x_axis(monkeypatch, tmp_path):
    """The Mie sphere's run writes wavelength_um; its figure's axis is the size parameter
    2πr/λ: the reproduction column draws x in the figure's unit (it drew the wavelengths
    on the size-parameter axis, a falling curve beside the paper's rising one)."""
    from reprolab.paper import Paper
    from reprolab.report import markdown
    from tests.support.pipeline import REPO

    drawn = []
    monkeypatch.setattr(plots, "save_figure", lambda fig, out: drawn.append(fig) or str(out))
    paper = Paper(REPO / "examples" / "papers" / "mie_sphere_2026")
    run = tmp_path / "stage1" / "run"
    run.mkdir(parents=True)
    (run / "q.csv").write_text("wavelength_um,qsca\n" + "".join(f"{w},1\n" for w in (2.0, 4.0)))
    fo = {"figure_id": "fig1", "curve_id": "qsca", "file": "q.csv"}
    design = {"figure_outputs": [fo | {"x_column": "wavelength_um", "y_column": "qsca"}]}
    fig = {"figure_id": "fig1", "overlay": str(tmp_path / "stage1" / "overlay_fig1.png")}
    markdown.drawn_reproduction(paper, design, fig, tmp_path)
    xs = sorted(drawn[0].axes[0].lines[0].get_xdata())
    assert xs == pytest.approx(sorted(2 * math.pi * 0.5 / w for w in (2.0, 4.0)))
