"""Narrow lines judged in their own linewidths (reprolab/physics/lines.py)."""

import math

import numpy as np
import pytest

from reprolab.physics import compare, lines
from reprolab.physics import thresholds as th

F0, W = 0.25, 5e-4  # a line of Q 500 at 0.25 c/a: 1 % of its position is 5 linewidths
CTX = {
    "x_quantity": "frequency",
    "x_unit": "c/a",
    "x_scale": "linear",
    "y_scale": "linear",
    "position_tolerance": None,
    "polar": None,
}


def fano_curve(x, x0, q=1.0, width=W):
    y = lines.fano(x, x0, width, q, 0.1, 0.4)
    return y / np.max(y)


def lorentzian(x, x0, width):
    return 1.0 - 0.8 / (1.0 + (2.0 * (np.asarray(x) - x0) / width) ** 2)


def fano_pair(shift_linewidths: float, ctx=CTX):
    xp = np.linspace(0.24, 0.26, 801)
    xs = np.linspace(0.24, 0.26, 2001)
    res = compare.compare_curve(
        xp, fano_curve(xp, F0), xs, fano_curve(xs, F0 + shift_linewidths * W), ctx
    )
    return res, compare.classify_curve(res)


def test_fano_three_linewidths_off_is_not_success_and_says_why():
    res, classes = fano_pair(3.0)
    # the ordinary rule alone passes it: 3 linewidths are 0.6 % of the position
    assert classes["feature_shift_rel"] == "SUCCESS"
    assert classes["line_shift_linewidths"] == "FAILURE"
    assert th.worst(list(classes.values())) != "SUCCESS"
    (line,) = res["lines"]
    assert line["kind"] == "fano" and line["narrow"]
    assert line["shift_linewidths"] == pytest.approx(3.0, rel=0.02)
    (reason,) = lines.line_reasons(res)
    assert "fano line 0 at x = 0.25" in reason and "linewidths" in reason


def test_fano_a_fifth_of_a_linewidth_off_is_success():
    res, classes = fano_pair(0.2)
    assert res["metrics"]["line_shift_linewidths"] == pytest.approx(0.2, rel=0.02)
    assert classes["line_shift_linewidths"] == "SUCCESS"
    assert classes["line_width_linewidths"] == "SUCCESS"
    assert lines.line_reasons(res) == []
    # the flanks do not fail it either: differences near the line allow its slack
    assert th.worst(list(classes.values())) == "SUCCESS"


def test_slack_keeps_a_wrong_height():
    xp = np.linspace(0.24, 0.26, 801)
    xs = np.linspace(0.24, 0.26, 2001)
    low = 0.1 + 0.7 * (fano_curve(xs, F0 + 0.2 * W) - 0.1)  # the line 30 % too weak
    res = compare.compare_curve(xp, fano_curve(xp, F0), xs, low, CTX)
    assert res["metrics"]["max_abs_rel"] > th.DISCREPANCY_THRESHOLDS[-1].investigate
    assert compare.classify_curve(res)["max_abs_rel"] == "FAILURE"


def test_one_linewidth_off_is_partial():
    _, classes = fano_pair(1.0)
    assert classes["line_shift_linewidths"] == "PARTIAL"


def test_fano_fit_finds_the_resonance_not_the_midpoint():
    # q = 2: peak and dip sit asymmetrically about x0 (midpoint 0.375 linewidth off)
    x = np.linspace(0.24, 0.26, 1601)
    feats = compare.find_features(x, fano_curve(x, F0, q=2.0), 0.05)
    (line,) = lines.find_lines(x, fano_curve(x, F0, q=2.0), feats)
    assert line["kind"] == "fano" and line["shape"] == "fano fit"
    assert abs(line["x"] - F0) < 0.01 * W
    assert line["width"] == pytest.approx(W, rel=0.01)
    midpoint = 0.5 * sum(f["x"] for f in feats)
    assert abs(midpoint - F0) > 0.3 * W  # what the fit corrects


def test_fringes_are_not_fano_lines():
    # evenly spaced peaks and dips (a Fabry-Perot slab): each is its own line
    x = np.linspace(1.0, 1.1, 2001)
    y = np.cos(2 * np.pi * x / 0.004)
    found = lines.find_lines(x, y, compare.find_features(x, y, 0.1))
    assert found and all(line["kind"] in ("peak", "dip") for line in found)


@pytest.mark.parametrize("q", [0.3, 1.0, 3.0, -2.0])
def test_fano_lines_of_any_asymmetry_are_found(q):
    x = np.linspace(0.24, 0.26, 4001)
    y = fano_curve(x, F0, q=q)
    (line,) = lines.find_lines(x, y, compare.find_features(x, y, 0.05))
    assert line["kind"] == "fano"
    assert abs(line["x"] - F0) < 0.01 * W and line["width"] == pytest.approx(W, rel=0.01)


def test_a_narrow_dip_on_a_broad_shoulder_is_its_own_line():
    x = np.linspace(0.20, 0.30, 8001)
    y = np.exp(-(((x - 0.2475) / 0.01) ** 2)) - 0.5 / (1 + (2 * (x - 0.2505) / W) ** 2)
    found = lines.find_lines(x, y, compare.find_features(x, y, 0.05))
    # the dip splits the band (a local maximum past it): no Fano pair of unequal widths
    assert [line["kind"] for line in found] == ["peak", "dip", "peak"]
    assert found[1]["width"] < 2 * W


def test_broad_feature_keeps_the_ordinary_rule():
    x = np.linspace(1, 2, 201)
    paper = np.exp(-(((x - 1.5) / 0.05) ** 2))
    shifted = np.exp(-(((x - 1.5 * 1.02) / 0.05) ** 2))
    res = compare.compare_curve(list(x), list(paper), list(x), list(shifted))
    classes = compare.classify_curve(res)
    assert "lines" not in res
    assert set(res["metrics"]) == {b.metric for b in th.DISCREPANCY_THRESHOLDS}
    assert set(classes) == {b.metric for b in th.DISCREPANCY_THRESHOLDS}
    assert classes["feature_shift_rel"] == "PARTIAL"


def stated(q_sim: float, shift=0.0, q_paper=500.0):
    xp = np.linspace(0.245, 0.255, 401)
    xs = np.linspace(0.245, 0.255, 2001)
    ctx = CTX | {"lines": [{"x": F0, "q": q_paper}]}
    res = compare.compare_curve(
        xp, lorentzian(xp, F0, F0 / q_paper), xs, lorentzian(xs, F0 + shift, F0 / q_sim), ctx
    )
    return res, compare.classify_curve(res)


def test_lorentzian_with_stated_q_is_compared_as_q():
    res, classes = stated(q_sim=250.0)  # half the stated Q: log10 2 = 0.301
    (line,) = res["lines"]
    assert line["linewidth_from"] == "stated Q"
    assert line["q_paper"] == 500.0
    assert line["q_sim"] == pytest.approx(250.0, rel=0.02)
    assert line["q_log10"] == pytest.approx(math.log10(2), abs=0.01)
    assert classes["line_q_log10"] == "FAILURE"
    assert "line_width_linewidths" not in res["metrics"]  # Q replaces the width
    assert any("reproduced, 500 stated" in r for r in lines.line_reasons(res))
    res, classes = stated(q_sim=520.0)
    assert classes["line_q_log10"] == "SUCCESS"


def test_stated_q_sets_the_linewidth_of_the_shift():
    res, classes = stated(q_sim=500.0, shift=2 * F0 / 500)
    assert res["lines"][0]["shift_linewidths"] == pytest.approx(2.0, rel=0.02)
    assert classes["line_shift_linewidths"] == "FAILURE"


def test_stated_line_where_the_data_has_none_is_refused():
    xp = np.linspace(0.245, 0.255, 401)
    ctx = CTX | {"lines": [{"x": 0.2535, "q": 500.0}]}
    with pytest.raises(ValueError, match="states a line at x = 0.2535.*no peak, dip or Fano"):
        compare.compare_curve(xp, lorentzian(xp, F0, W), xp, lorentzian(xp, F0, W), ctx)


def test_unmatched_narrow_line_fails():
    xp = np.linspace(0.24, 0.26, 801)
    res = compare.compare_curve(xp, fano_curve(xp, F0), xp, lorentzian(xp, F0, W), CTX)
    assert math.isnan(res["metrics"]["line_shift_linewidths"])
    assert compare.classify_curve(res)["line_shift_linewidths"] == "FAILURE"
    assert "no reproduced fano line" in lines.line_reasons(res)[0]


def test_recompute_catches_an_edited_line():
    xp = np.linspace(0.24, 0.26, 801)
    xs = np.linspace(0.24, 0.26, 2001)
    data = (xp, fano_curve(xp, F0), xs, fano_curve(xs, F0 + 3 * W), CTX)
    res = compare.compare_curve(*data)
    curve = {"curve_id": "T", **res, "classes": compare.classify_curve(res)}
    fig = {"figure_id": "f", "curves": [curve], "classification": "FAILURE"}
    curves = {("f", "T"): data}
    assert compare.recompute_comparison({"figures": [fig]}, curves) == []
    curve["lines"][0]["shift_linewidths"] = 0.3
    out = compare.recompute_comparison({"figures": [fig]}, curves)
    assert any("line 0 shift_linewidths" in m for m in out)
    numbers = compare.comparison_numbers({"figures": [fig]})
    assert "f/T.line0.fano.shift_linewidths" in numbers


@pytest.mark.parametrize("points_per_linewidth", [2, 4, 8])
def test_digitized_line_is_located_within_a_tenth_of_a_linewidth(points_per_linewidth):
    # what LINE_SHIFT's SUCCESS limit (0.5) must leave room for: a sampled line with 2 %
    # noise, located by the comparison's own feature finder
    rng = np.random.default_rng(1)
    step = W / points_per_linewidth
    errors = []
    for _ in range(200):
        x = np.arange(0.245 + rng.uniform(0, step), 0.255, step)
        y = 1 / (1 + (2 * (x - F0) / W) ** 2) + rng.normal(0, 0.02, x.size)
        peaks = [f for f in compare.find_features(x, y, 0.05) if f["kind"] == "peak"]
        errors.append(min(abs(f["x"] - F0) for f in peaks) / W)
    assert np.percentile(errors, 95) < 0.1 < th.LINE_SHIFT.acceptable


def figure_with_lines(x_axis: dict):
    from reprolab.paper_format import Figure

    return Figure.model_validate(
        {
            "figure_id": "fig1",
            "title": "t",
            "image": "f.png",
            "x_axis": x_axis,
            "y_axes": {"left": {"label": "T", "quantity": "dimensionless"}},
            "curves": [
                {"curve_id": "T", "label": "T", "lines": [{"x": 1550.0, "q": 2000}]},
            ],
        }
    )


def test_stated_lines_reach_the_comparison_in_the_column_unit():
    from reprolab.physics import positions

    fig = figure_with_lines({"label": "λ", "quantity": "wavelength", "unit": "nm"})
    ctx = positions.axis_context(fig, "T", "wavelength_um")
    assert ctx["lines"] == [{"x": pytest.approx(1.55), "q": 2000}]
    ctx = positions.axis_context(fig, "T", "frequency_c/a", unit_length_m=1e-6)
    assert ctx["lines"][0]["x"] == pytest.approx(1 / 1.55)
    with pytest.raises(ValueError, match="unit_length"):
        positions.axis_context(fig, "T", "frequency_c/a")


def test_stated_lines_need_a_spectral_axis():
    with pytest.raises(ValueError, match="states lines with a Q, but the x_axis is angle"):
        figure_with_lines({"label": "θ", "quantity": "angle", "unit": "deg"})
