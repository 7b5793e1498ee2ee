import math

import numpy as np
import pytest

from reprolab.physics import compare, convergence
from reprolab.physics import thresholds as th
from reprolab.physics.compare import classify_curve, compare_curve, find_extrema


def test_extrema_found_with_prominence():
    x = np.linspace(0, 10, 401)
    y = np.sin(x) + 0.001 * np.sin(40 * x)  # ripple far below the prominence
    kinds = [k for k, _ in find_extrema(x, y, 0.1)]
    assert kinds == ["peak", "dip", "peak"]


def test_hand_computed_differences():
    # Paper: y = x on [0, 1]; reproduction offset by 0.02 everywhere.
    xp = [0.0, 0.25, 0.5, 0.75, 1.0]
    yp = xp
    xs = [0.0, 1.0]
    ys = [0.02, 1.02]
    res = compare_curve(xp, yp, xs, ys)
    assert res["rms_abs"] == pytest.approx(0.02)
    assert res["max_abs"] == pytest.approx(0.02)
    assert res["metrics"]["rms_rel"] == pytest.approx(0.02)  # normalised by max |y| = 1
    assert res["metrics"]["feature_shift_rel"] is None  # monotonic: no features
    assert classify_curve(res)["rms_rel"] == "SUCCESS"


def test_peak_shift_classified_by_canonical_thresholds():
    x = np.linspace(1, 2, 201)
    paper = np.exp(-(((x - 1.5) / 0.05) ** 2))
    shifted = np.exp(-(((x - 1.5 * 1.02) / 0.05) ** 2))  # 2 % shift
    res = compare_curve(list(x), list(paper), list(x), list(shifted))
    assert res["metrics"]["feature_shift_rel"] == pytest.approx(0.02, rel=0.05)
    band = next(b for b in th.DISCREPANCY_THRESHOLDS if b.metric == "feature_shift_rel")
    assert band.acceptable < 0.02 <= band.investigate
    assert classify_curve(res)["feature_shift_rel"] == "PARTIAL"


def test_no_overlap_is_failure():
    res = compare_curve([0, 1, 2], [0, 1, 0], [5, 6], [0, 1])
    assert all(math.isnan(v) for v in res["metrics"].values())
    assert th.worst(list(classify_curve(res).values())) == "FAILURE"


def test_thresholds_table_lists_every_metric():
    table = th.format_thresholds_table()
    for band in th.DISCREPANCY_THRESHOLDS:
        assert f"`{band.metric}`" in table and f"{band.acceptable:g}" in table


# --- hand-computed values ------------------------------------------------------------


def test_triangle_peak_width_and_prominence_by_hand():
    # y = 1 - |x| on [-2, 2], clipped at 0: prominence 1, half level 0.5 → x = ±0.5.
    x = np.linspace(-2, 2, 41)
    y = np.clip(1 - np.abs(x), 0, None)
    (f,) = compare.find_features(x, y, 0.1)
    assert f["kind"] == "peak"
    assert f["x"] == pytest.approx(0.0, abs=1e-12)
    assert f["prominence"] == pytest.approx(1.0)
    assert f["width"] == pytest.approx(1.0, abs=1e-12)


def test_dip_width_on_a_sloped_side():
    # A dip from 1 to 0.2 with linear sides of slope 4 → half prominence level 0.6,
    # reached 0.1 from the centre on each side: width 0.2.
    x = np.round(np.linspace(0, 2, 201), 10)
    y = np.clip(0.2 + 4 * np.abs(x - 1.0), None, 1.0)
    (f,) = compare.find_features(x, y, 0.1)
    assert f["kind"] == "dip"
    assert f["prominence"] == pytest.approx(0.8)
    assert f["width"] == pytest.approx(0.2, abs=1e-9)


def test_lorentzian_fwhm():
    # L(x) = 1 / (1 + ((x - 1) / g)^2) has FWHM 2g; far tails add a small base: use a
    # wide range so the base (≈ g²/9) changes the half-prominence width by < 1 %.
    g = 0.01
    x = np.linspace(0.7, 1.3, 6001)
    y = 1 / (1 + ((x - 1) / g) ** 2)
    (f,) = compare.find_features(x, y, 0.1)
    assert f["width"] == pytest.approx(2 * g, rel=0.01)


def test_rms_max_and_shift_by_hand():
    # paper y = [0, 1, 0, 1, 0] on x = 1..5; sim = paper + [0.1, -0.1, 0.1, -0.1, 0.1]
    # → RMS 0.1, max 0.1, both normalised by max|y_paper| = 1.
    xp = [1.0, 2.0, 3.0, 4.0, 5.0]
    yp = [0.0, 1.0, 0.0, 1.0, 0.0]
    ys = [0.1, 0.9, 0.1, 0.9, 0.1]
    res = compare.compare_curve(xp, yp, xp, ys)
    assert res["rms_abs"] == pytest.approx(0.1)
    assert res["max_abs"] == pytest.approx(0.1)
    assert res["metrics"]["rms_rel"] == pytest.approx(0.1)
    # the same curve shifted by +0.02 in x: every feature shifts by 0.02/x0
    xs = np.linspace(0, 6, 6001)
    ysim = np.interp(xs - 0.02, xp, yp, left=0, right=0)
    res = compare.compare_curve(xp, yp, list(xs), list(ysim))
    peaks = [f for f in res["features"] if f["kind"] == "peak"]
    assert [f["shift_rel"] for f in peaks] == pytest.approx([0.02 / 2, 0.02 / 4], abs=1e-6)
    assert res["metrics"]["feature_shift_rel"] == pytest.approx(0.02 / 2, abs=1e-6)


def test_resample_does_not_extrapolate():
    out = compare.resample([1, 2, 3], [10, 20, 30], [0.5, 1.5, 2.5, 3.5])
    assert np.isnan(out[0]) and np.isnan(out[-1])
    assert list(out[1:3]) == [15, 25]


def _comparison_for(xp, yp, xs, ys):
    curve = {"curve_id": "T", **compare.compare_curve(xp, yp, xs, ys)}
    curve["classes"] = compare.classify_curve(curve)
    fig = {
        "figure_id": "fig1",
        "curves": [curve],
        "classification": th.worst(list(curve["classes"].values())),
    }
    return {"figures": [fig]}, {("fig1", "T"): (xp, yp, xs, ys)}


def test_recompute_finds_a_tampered_number_and_class():
    x = list(np.linspace(0.5, 1.0, 101))
    yp = list(0.5 + 0.4 * np.sin(20 * np.asarray(x)))
    ys = list(np.asarray(yp) + 0.01)
    comparison, curves = _comparison_for(x, yp, x, ys)
    assert compare.recompute_comparison(comparison, curves) == []
    comparison["figures"][0]["curves"][0]["metrics"]["rms_rel"] = 0.001
    comparison["figures"][0]["classification"] = "PARTIAL"
    found = compare.recompute_comparison(comparison, curves)
    assert any("rms_rel" in m for m in found)
    assert any("classification stored PARTIAL" in m for m in found)


def test_narrative_mismatches():
    x = list(np.linspace(0.5, 1.0, 101))
    yp = list(0.5 + 0.4 * np.sin(20 * np.asarray(x)))
    ys = list(np.asarray(yp) + 0.02)
    comparison, _ = _comparison_for(x, yp, x, ys)
    rms_pct = comparison["figures"][0]["curves"][0]["metrics"]["rms_rel"] * 100
    good = f"The RMS difference is {rms_pct:.1f} % of the peak value."
    assert compare.narrative_mismatches(good, comparison) == []
    bad = "The RMS difference is 7.5 % of the peak value."
    assert len(compare.narrative_mismatches(bad, comparison)) == 1
    # sentences without a metric are not checked
    assert compare.narrative_mismatches("The paper was published in 2026.", comparison) == []
    # structured claims
    assert compare.narrative_mismatches({"fig1/T.rms_abs": 0.02}, comparison) == []
    assert compare.narrative_mismatches({"fig1/T.rms_abs": 0.05}, comparison)


def test_richardson_estimate_by_hand(tmp_path):

    # q(N) = 1.03, q(2N) = 1.0075 → error of N ≈ 0.0225 / 3 = 0.0075 (0.744 % of q(2N))
    err, rel = convergence.richardson(1.03, 1.0075)
    assert err == pytest.approx(0.0075)
    assert rel == pytest.approx(0.0075 / 1.0075)
    # a peak that moves from x = 1.01 to 1.0 between N and 2N
    x = np.linspace(0.5, 1.5, 1001)
    for folder, x0 in (("n", 1.01), ("2n", 1.0)):
        (tmp_path / folder).mkdir()
        y = np.exp(-(((x - x0) / 0.05) ** 2))
        np.savetxt(
            tmp_path / folder / "s.csv",
            np.column_stack([x, y]),
            delimiter=",",
            header="wavelength_um,T",
            comments="",
        )
    fo = {
        "figure_id": "f",
        "curve_id": "T",
        "file": "s.csv",
        "x_column": "wavelength_um",
        "y_column": "T",
    }
    qs = convergence.quantities([fo], tmp_path / "n", tmp_path / "2n")
    pos = next(q for q in qs if q["name"].endswith("position"))
    assert pos["error_estimate"] == pytest.approx(0.01 / 3, rel=1e-3)
    # a 1 % move is twice what convergence accepts (half the shift band's SUCCESS level)
    assert pos["change"] == pytest.approx(0.01, rel=1e-3) and pos["status"] == "fail"


def _lorentz(x, x0, w, h=1.0):
    return h / (1 + ((x - x0) / (w / 2)) ** 2)


def test_peak_height_scaled_is_a_failure_though_positions_agree():
    """A peak scaled by 0.8 keeps its position: only its height says it is wrong."""
    x = np.linspace(0.6, 0.8, 401)
    paper = _lorentz(x, 0.7, 0.01)
    res = compare_curve(list(x), list(paper), list(x), list(0.8 * paper))
    (f,) = res["features"]
    assert f["y_paper"] == pytest.approx(1.0) and f["y_sim"] == pytest.approx(0.8)
    assert res["metrics"]["feature_height_rel"] == pytest.approx(0.2, rel=1e-3)
    assert res["metrics"]["feature_shift_rel"] < 1e-6
    assert classify_curve(res)["feature_height_rel"] == "FAILURE"
    same = compare_curve(list(x), list(paper), list(x), list(paper))
    assert set(classify_curve(same).values()) == {"SUCCESS"}


def test_linewidth_twice_as_wide_fails():
    """A resonance twice as broad (Q halved) at the same position and height."""
    x = np.linspace(0.6, 0.8, 801)
    res = compare_curve(
        list(x), list(_lorentz(x, 0.7, 0.01)), list(x), list(_lorentz(x, 0.7, 0.02))
    )
    assert res["metrics"]["feature_width_rel"] == pytest.approx(1.0, rel=0.05)
    assert classify_curve(res)["feature_width_rel"] == "FAILURE"


@pytest.mark.parametrize(
    ("kv", "expected_sim", "cls"),
    [
        ({"kind": "max_y", "value": 0.5}, 0.5, "SUCCESS"),
        ({"kind": "max_y", "value": 0.6}, 0.5, "FAILURE"),
        ({"kind": "x_of_max", "value": 0.701}, 0.7, "SUCCESS"),
        ({"kind": "y_at_x", "x": 0.7, "value": 0.49}, 0.5, "PARTIAL"),
        ({"kind": "min_y", "value": 0.0}, 0.0, "SUCCESS"),
    ],
)
def test_key_values_read_off_the_reproduced_curve(kv, expected_sim, cls):
    x = np.linspace(0.6, 0.8, 401)
    y = 0.5 * np.exp(-(((x - 0.7) / 0.005) ** 2))
    out = compare.key_value({"quantity": "T max", "unit": "1", **kv}, x, y)
    assert out["sim"] == pytest.approx(expected_sim, abs=1e-3)
    assert out["class"] == cls


def test_recompute_catches_a_key_value_edited_in_the_file():
    x = list(np.linspace(0.6, 0.8, 201))
    y = list(0.5 * np.exp(-(((np.array(x) - 0.7) / 0.01) ** 2)))
    curve = compare_curve(x, y, x, y)
    curve["classes"] = classify_curve(curve)
    curve["curve_id"] = "T"
    curve["key_values"] = [
        compare.key_value({"quantity": "T max", "kind": "max_y", "value": 0.5}, x, y)
    ]
    comparison = {"figures": [{"figure_id": "f", "classification": "SUCCESS", "curves": [curve]}]}
    data = {("f", "T"): (x, y, x, y)}
    assert compare.recompute_comparison(comparison, data) == []
    curve["key_values"][0]["sim"] = 0.6
    assert any("key value" in m for m in compare.recompute_comparison(comparison, data))
