"""The report reads like physics, on the bundled examples: the feature table in the
figure's own x unit with the unit in its header, no Python value in a cell, "no
features to compare" instead of 0 of 0 with vacuous feature classes, the summary
saying when a PARTIAL comes only from figures compared by eye, a right-hand axis drawn
on the right, a sweep's points drawn as points, and a rerun described by what changed."""

import pytest

from reprolab.paper import Paper
from reprolab.report import markdown, plots, wording
from tests.support.pipeline import AG_EXAMPLE, EXAMPLE

FEATURE = {"kind": "peak", "x_paper": 0.68952, "x_sim": 0.68977, "shift_rel": 3.6e-4}
FEATURE |= {"width_paper": 0.0399, "width_sim": 0.0397}
CLASSES = {m: "SUCCESS" for m in (*wording.FEATURE_METRICS, "rms_rel", "max_abs_rel")}


def curve(cid, features, **extra):
    metrics = {"feature_shift_rel": None if not features else 3.6e-4}
    return {
        "curve_id": cid,
        "x_column": "wavelength_um",
        "rms_abs": 1e-3,
        "max_abs": 4e-3,
        "metrics": metrics,
        "features": features,
        "classes": dict(CLASSES),
        **extra,
    }


def test_feature_table_in_the_figures_unit_with_units_in_every_header():
    fig = {"figure_id": "fig2", "classification": "SUCCESS", "curves": [curve("T", [FEATURE])]}
    fig = wording.in_axis_units(Paper(AG_EXAMPLE), fig)
    (f,) = fig["curves"][0]["features"]
    assert f["x_paper"] == pytest.approx(689.52) and f["width_sim"] == pytest.approx(39.7)
    table = markdown.feature_table(fig)
    assert table[1] == (
        "| curve | feature | x paper (nm) | x reproduced (nm) | shift (rel.) | "
        "width paper (nm) | width reproduced (nm) |"
    )
    assert "| T | peak | 689.52 | 689.77 |" in table[3]
    metrics = markdown.curve_metrics_table(fig)
    assert metrics[0].startswith(
        "| curve | RMS diff (dimensionless) | max abs diff (dimensionless)"
    )


def test_a_curve_without_features_and_a_qualitative_one_in_words():
    fig = wording.in_axis_units(
        Paper(AG_EXAMPLE),
        {"figure_id": "fig1", "classification": "SUCCESS", "curves": [curve("eps_re", [])]},
    )
    row = markdown.curve_metrics_table(fig)[2]
    assert "no features to compare" in row and "0/0" not in row
    assert "feature_shift_rel" not in row and "rms_rel: SUCCESS, max_abs_rel: SUCCESS" in row
    by_eye = {"curve_id": "A", "qualitative": True, "classes": {"visual": "PARTIAL"}}
    row = markdown.curve_metrics_table({"curves": [by_eye]})[2]
    assert "visual: PARTIAL (qualitative, by eye)" in row and "{" not in row
    rows = markdown.materials_table(
        [
            {"name": "Ag", "model": "Ag", "source": "meep", "lossless": False, "max_k": 5.73},
            {
                "name": "SiO2",
                "model": "constant_index",
                "index": 1.45,
                "source": "paper",
                "lossless": True,
                "max_k": 0,
            },
        ]
    )
    assert "| no | 5.73 |" in rows[2] and "| yes | 0 |" in rows[3]
    assert not any(v in " ".join(rows) for v in ("True", "False", "None"))


def test_summary_says_a_partial_comes_from_figures_compared_by_eye():
    ok = {"classification": "SUCCESS"}
    eye = {"classification": "PARTIAL", "qualitative": True}
    rows = [("fig1", "s0", ok), ("fig2", "s1", ok), ("fig3", "s1", eye), ("fig4", "s1", eye)]
    why = wording.partial_reason(rows)
    assert why == (
        "fig3, fig4 have no digitized data and were compared by eye, which gives PARTIAL at "
        "most; every figure with digitized data (fig1, fig2) is SUCCESS"
    )
    validated = {"auto_approved": True, "sha256": "0" * 64}
    summary = markdown.executive_summary(rows, 4, [], {}, validated, "")
    assert f"| Why PARTIAL | {why} |" in summary
    # a PARTIAL earned by numbers, or a FAILURE, is not explained away
    numbers = [("fig1", "s0", {"classification": "PARTIAL"}), ("fig3", "s1", eye)]
    assert wording.partial_reason(numbers) is None
    assert wording.partial_reason([*rows, ("fig5", "s2", {"classification": "FAILURE"})]) is None


def drawn(monkeypatch, draw):
    kept = {}
    monkeypatch.setattr(plots, "save_figure", lambda fig, out: kept.setdefault("fig", fig))
    draw()
    return kept["fig"]


def test_a_right_hand_axis_is_drawn_on_the_right(monkeypatch):
    paper = Paper(AG_EXAMPLE)
    curves = {c: paper.curve_data("fig1", c) for c in ("eps_re", "eps_im")}
    fig = drawn(monkeypatch, lambda: plots.reproduction(paper, "fig1", curves, "x.png"))
    left, right = fig.axes
    meta = paper.figure("fig1")
    assert left.get_ylabel() == meta.y_axes.left.label
    assert (
        right.get_ylabel() == meta.y_axes.right.label
        and right.yaxis.get_label_position() == "right"
    )
    assert [ln.get_label() for ln in left.lines] == ["eps_re"]
    assert [ln.get_label() for ln in right.lines] == ["eps_im"]


def test_sweep_points_are_drawn_as_points(monkeypatch):
    paper = Paper(EXAMPLE)
    xs, ys = paper.curve_data("fig4", "Rpeak")
    result = {
        "figure_id": "fig4",
        "classification": "SUCCESS",
        "curves": [{"curve_id": "Rpeak", "sim": {"x": xs, "y": ys}}],
    }
    fig = drawn(monkeypatch, lambda: plots.overlay(paper, result, "x.png"))
    (ax,) = fig.axes
    reproduced = [ln for ln in ax.lines if ln.get_label().startswith("reproduced")]
    assert len(xs) < 30 and reproduced[0].get_marker() == "o"
    assert reproduced[0].get_linestyle() == "-"
    many = {"Rpeak": ([float(i) for i in range(100)], [0.5] * 100)}
    fig = drawn(monkeypatch, lambda: plots.reproduction(paper, "fig4", many, "x.png"))
    assert fig.axes[0].lines[0].get_marker() in ("None", None, "")


def test_rerun_wording_says_what_changed(tmp_path):
    failed = tmp_path / "failed_runs" / "f1"
    failed.mkdir(parents=True)
    (failed / "simulation.py").write_text("print('run')\n")
    same, changed = tmp_path / "simulation.fix1.py", tmp_path / "other.py"
    same.write_text("print('run')\n")
    changed.write_text("print('run', 2)\n")
    repair = {"failed_run": str(failed), "kind": "execution"}
    assert "run again with the same code (byte-identical" in wording.repair_line(
        "s1", repair, same, "failed_runs/f1"
    )
    line = wording.repair_line("s1", repair, changed, "failed_runs/f1")
    assert "the code was regenerated with the error" in line and "same code" not in line
