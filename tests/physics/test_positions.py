"""Features wherever they sit: at zero, on log axes, on angles that wrap (polar)."""

import math

import numpy as np
import pytest

from reprolab.physics import convergence, positions
from reprolab.physics.compare import classify_curve, compare_curve, recompute_comparison

ANGLE = {"x_quantity": "angle", "x_unit": "deg", "x_scale": "linear", "y_scale": "linear"}
POLAR = ANGLE | {"polar": {"normalise": "max", "db": False}}


def lobe(theta, centre, width=15.0):
    return np.exp(-(((theta - centre) / width) ** 2))


def test_lobe_near_zero_is_judged_against_the_span_not_its_position():
    theta = np.linspace(-90, 90, 181)
    res = compare_curve(theta, lobe(theta, 0.2), theta, lobe(theta, 0.3), ANGLE)
    (feature,) = res["features"]
    assert feature["shift_basis"] == "span"
    assert feature["shift_scale"] == pytest.approx(180.0)
    assert res["metrics"]["feature_shift_rel"] == pytest.approx(0.1 / 180, rel=0.05)
    assert classify_curve(res)["feature_shift_rel"] == "SUCCESS"


@pytest.mark.parametrize("axis", [None, ANGLE])
def test_a_feature_exactly_at_zero_never_crashes(axis):
    theta = np.linspace(-90, 90, 181)  # the lobe's sample is exactly 0.0
    res = compare_curve(theta, lobe(theta, 0.0), theta, lobe(theta, 0.0), axis)
    (feature,) = res["features"]
    assert feature["x_paper"] == 0.0
    assert math.isfinite(res["metrics"]["feature_shift_rel"])
    moved = compare_curve(theta, lobe(theta, 0.0), theta, lobe(theta, 9.0), axis)
    assert classify_curve(moved)["feature_shift_rel"] != "SUCCESS"  # 9° of 180° is 5 %


def test_convergence_of_a_lobe_at_zero_is_finite():
    theta = np.linspace(-90, 90, 181)
    (pos, _height) = convergence.feature_quantities(
        "p", theta, lobe(theta, 0.0), theta, lobe(theta, 0.1)
    )
    assert math.isfinite(pos["change"]) and pos["change"] < 0.01


def test_a_spectrum_keeps_the_position_scale():
    lam = np.linspace(1.0, 2.0, 201)
    res = compare_curve(lam, lobe(lam, 1.5, 0.05), lam, lobe(lam, 1.515, 0.05))
    (feature,) = res["features"]
    assert feature["shift_basis"] == "position"
    assert feature["shift_rel"] == pytest.approx(0.015 / 1.5, rel=0.05)


def test_a_position_tolerance_puts_one_tolerance_at_the_success_limit():
    theta = np.linspace(-90, 90, 361)
    axis = ANGLE | {"position_tolerance": 2.0}
    res = compare_curve(theta, lobe(theta, 0.0), theta, lobe(theta, 1.0), axis)
    assert res["features"][0]["shift_basis"] == "tolerance"
    assert res["metrics"]["feature_shift_rel"] == pytest.approx(0.005, rel=0.05)
    res = compare_curve(theta, lobe(theta, 0.0), theta, lobe(theta, 4.0), axis)
    assert classify_curve(res)["feature_shift_rel"] != "SUCCESS"


def log_curve():
    x = np.linspace(1.0, 2.0, 101)
    return x, 10 ** (-3 * (x - 1.0))  # three decades


def test_log_axis_sees_a_weak_half_fifty_percent_off():
    x, y = log_curve()
    wrong = np.where(x > 1.5, 1.5 * y, y)
    linear = compare_curve(x, y, x, wrong)
    assert classify_curve(linear)["rms_rel"] == "SUCCESS"  # what a linear comparison says
    log = compare_curve(x, y, x, wrong, {"y_scale": "log"})
    assert log["compared_as"] == "log"
    assert log["metrics"]["rms_rel"] == pytest.approx(math.log(1.5) * math.sqrt(0.5), rel=0.05)
    assert classify_curve(log)["rms_rel"] == "FAILURE"
    right = compare_curve(x, y, x, 1.01 * y, {"y_scale": "log"})
    assert set(classify_curve(right).values()) == {"SUCCESS"}


def test_log_axis_with_paper_values_at_zero_is_an_error_not_a_crash():
    x, y = log_curve()
    y[3] = 0.0
    with pytest.raises(ValueError, match="log-scale y axis needs positive"):
        compare_curve(x, y, x, y, {"y_scale": "log"})


def pattern(theta, rotation=0.0):
    return (
        lobe(theta, rotation, 20)
        + lobe(theta, rotation + 360, 20)
        + 0.4 * lobe(theta, rotation + 180, 20)
    )


def test_polar_pattern_wraps_and_is_normalised():
    paper_theta = np.arange(0.0, 360.0, 2.0)  # main lobe at 0° on the seam
    sim_theta = np.arange(-180.0, 180.0, 1.0)
    paper = pattern(paper_theta)
    sim = 7.5 * pattern(np.mod(sim_theta, 360))  # a power, not normalised
    res = compare_curve(paper_theta, paper, sim_theta, sim, POLAR)
    assert res["coverage"] == 1.0
    kinds = sorted((f["kind"], round(f["x_paper"])) for f in res["features"])
    assert ("peak", 0) in kinds and ("peak", 180) in kinds
    assert all(f["shift_basis"] == "turn" for f in res["features"])
    assert set(classify_curve(res).values()) == {"SUCCESS"}


def test_polar_pattern_rotated_by_ten_degrees_is_not_success():
    paper_theta = np.arange(0.0, 360.0, 2.0)
    sim_theta = np.arange(0.0, 360.0, 1.0)
    rotated = pattern(np.mod(sim_theta - 10.0, 360))
    res = compare_curve(paper_theta, pattern(paper_theta), sim_theta, rotated, POLAR)
    assert res["metrics"]["feature_shift_rel"] == pytest.approx(10 / 360, rel=0.05)
    assert classify_curve(res)["feature_shift_rel"] != "SUCCESS"


def test_polar_pattern_in_db():
    paper_theta = np.arange(0.0, 360.0, 2.0)
    db = 10 * np.log10(np.maximum(pattern(paper_theta), 1e-3))
    sim_theta = np.arange(0.0, 360.0, 1.0)
    axis = POLAR | {"polar": {"normalise": "max", "db": True}}
    res = compare_curve(paper_theta, db, sim_theta, 3.0 * pattern(sim_theta), axis)
    assert res["compared_as"] == "db"
    assert classify_curve(res)["rms_rel"] == "SUCCESS"
    half = np.where(np.cos(np.radians(sim_theta)) < 0, 0.5, 1.0) * pattern(sim_theta)
    res = compare_curve(paper_theta, db, sim_theta, half, axis)
    assert classify_curve(res)["feature_height_rel"] != "SUCCESS"  # back lobe 3 dB low


def test_wrapped_distance_and_scale_never_zero():
    assert positions.distance(359.0, 1.0, 360.0) == pytest.approx(2.0)
    assert positions.distance(1.0, 359.0, None) == pytest.approx(358.0)
    assert positions.position_scale(0.0, 0.0, 0.0, None)[0] > 0


def test_recompute_accepts_the_stored_basis_and_catches_a_changed_one():
    theta = np.linspace(-90, 90, 181)
    data = (list(theta), list(lobe(theta, 0.2)), list(theta), list(lobe(theta, 0.3)), ANGLE)
    curve = {"curve_id": "p", **compare_curve(*data)}
    curve["classes"] = classify_curve(curve)
    fig = {"figure_id": "f", "curves": [curve], "classification": "SUCCESS"}
    assert recompute_comparison({"figures": [fig]}, {("f", "p"): data}) == []
    curve["features"][0]["shift_basis"] = "position"
    assert any(
        "shift_basis" in m for m in recompute_comparison({"figures": [fig]}, {("f", "p"): data})
    )


def test_a_cartesian_angle_axis_over_a_full_turn_wraps_too():
    paper_theta = np.arange(-180.0, 180.0, 2.0)  # main lobe at 0°, back lobe on the seam
    sim_theta = np.arange(0.0, 360.0, 1.0)
    paper = pattern(np.mod(paper_theta, 360))
    res = compare_curve(paper_theta, paper, sim_theta, pattern(sim_theta), ANGLE)
    assert res["coverage"] == 1.0
    assert {round(f["x_paper"]) for f in res["features"] if f["kind"] == "peak"} >= {0, -180}
    assert all(f["shift_basis"] == "turn" for f in res["features"])
    assert set(classify_curve(res).values()) == {"SUCCESS"}
    half = np.arange(-90.0, 90.0, 2.0)  # half a turn: no wrap, the span is the scale
    res = compare_curve(half, pattern(np.mod(half, 360)), sim_theta, pattern(sim_theta), ANGLE)
    assert {f["shift_basis"] for f in res["features"]} == {"span"}
