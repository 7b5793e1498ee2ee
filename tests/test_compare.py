import math

import numpy as np
import pytest

from reprolab import thresholds as th
from reprolab.compare import classify_curve, compare_curve, find_extrema


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
