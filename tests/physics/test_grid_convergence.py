"""Resolution evidence from coarser runs: the Richardson estimate recovers a known error
and order, an unsolvable order falls back conservatively and is reported, the estimate is
judged against the same limits as the 2x rerun's change, and only a converged estimate
excuses an under-resolved run."""

from __future__ import annotations

import math

import numpy as np
import pytest

from reprolab.physics import convergence as conv
from reprolab.physics import grid_convergence as gc
from reprolab.physics import thresholds as th
from reprolab.steps import grid_convergence as step

SCALES = gc.DEFAULT_SCALES


def changes(q, scales=SCALES):
    """Signed changes of the coarser runs from the run for q(h), h = 1 at the run."""
    return q(1 / scales[0]) - q(1), q(1 / scales[1]) - q(1)


@pytest.mark.parametrize("order", [1.0, 2.0, 2.7])
@pytest.mark.parametrize("scales", [(0.8, 0.6), (0.7, 0.5)])
def test_estimate_recovers_error_and_order(order, scales):
    err_true = 0.013
    est = gc.estimate(*changes(lambda h: 0.5 + err_true * h**order, scales), scales)
    assert est["order"] == pytest.approx(order, rel=1e-6)
    assert est["error"] == pytest.approx(err_true, rel=1e-6)
    assert est["gci"] == pytest.approx(gc.GCI_SAFETY * err_true, rel=1e-6)
    assert est["note"] == ""


def test_order_far_from_second_is_reported():
    est = gc.estimate(*changes(lambda h: 0.01 * h**4.5))
    assert est["order"] == pytest.approx(4.5, rel=1e-6)
    assert "observed order 4.50, far from the scheme's second order" in est["note"]


@pytest.mark.parametrize(
    ("s2", "s3", "used"),
    [(0.01, -0.012, 1), (0.01, 0.0105, 1), (0.0, 0.01, 1), (1e-4, 0.05, 2)],
)
def test_unsolved_order_falls_back_and_says_so(s2, s3, used):
    """Oscillating or flat changes: first order (at least the coarsest run's change
    extrapolated); a mid run that barely moved while the coarsest jumped: second order."""
    est = gc.estimate(s2, s3)
    assert est["order"] is None and f"estimated with order {used}" in est["note"]
    h2, h3 = 1 / SCALES[0], 1 / SCALES[1]
    if used == 1:
        assert est["error"] == pytest.approx(max(abs(s2) / (h2 - 1), abs(s3) / (h3 - 1)))
        assert est["error"] >= abs(s2) and est["error"] >= abs(s3)
    else:
        assert est["error"] == pytest.approx(abs(s2) / (h2**2 - 1))


def test_nan_change_is_not_compared():
    assert math.isnan(gc.estimate(math.nan, 0.1)["error"])


def test_cost_follows_the_run():
    """0.8x and 0.6x: 1.0x the run in 1D, under 0.8x in 2D and 0.6x in 3D (2x: 4, 8, 16)."""
    assert gc.cost_ratio(SCALES, 1) == pytest.approx(1.0)
    assert gc.cost_ratio(SCALES, 2) <= 0.8 and gc.cost_ratio(SCALES, 3) <= 0.6
    assert gc.cost_ratio((2,), 3) == 16


def test_parse_limit_refuses_other_text():
    assert gc.parse_limit("fail > 0.04, warn > 0.02") == (0.04, 0.02)
    with pytest.raises(ValueError, match="is not 'fail > X, warn > Y'"):
        gc.parse_limit("below 0.04")


def curve(h, err):
    """A reproduced curve whose discretisation error is err * h^2 * shape(x)."""
    x = np.linspace(0.4, 0.9, 201)
    y = 0.5 + 0.4 * np.sin(20 * x) + err * h**2 * np.cos(7 * x)
    return x, y


def write_run(folder, h, err):
    folder.mkdir(parents=True)
    x, y = curve(h, err)
    rows = ["wavelength_um,T", *(f"{a:.12g},{b:.12g}" for a, b in zip(x, y, strict=True))]
    (folder / "spectrum.csv").write_text("\n".join(rows) + "\n")
    return folder


FO = [
    {
        "figure_id": "fig1",
        "curve_id": "T",
        "file": "spectrum.csv",
        "x_column": "wavelength_um",
        "y_column": "T",
    }
]


def coarse_rows(tmp_path, err):
    runs = [write_run(tmp_path / f"r{s}", 1 / s, err) for s in (1.0, *SCALES)]
    return gc.compare_coarse(FO, *runs, SCALES)


def test_curve_estimate_matches_the_planted_error(tmp_path):
    """Pointwise: the estimate at the run is the planted error's max |.| / max |y|."""
    rows = coarse_rows(tmp_path, 0.004)
    point = next(r for r in rows if r["name"].endswith("pointwise max change"))
    x, y = curve(1, 0.004)
    truth = 0.004 * np.max(np.abs(np.cos(7 * x))) / np.max(np.abs(y))
    assert point["error_estimate"] == pytest.approx(truth, rel=0.05)
    assert point["order"] == pytest.approx(2, abs=0.05)
    assert point["status"] == "pass" and point["variant"] == gc.COARSE
    assert len(point["changes_coarse"]) == 2
    for r in rows:  # every row judged by its own estimate, named after the run's features
        assert r["change"] == r["error_estimate"] and "values_coarse" in r


@pytest.mark.parametrize(("err", "status"), [(0.05, "warn"), (0.1, "fail")])
def test_estimate_beyond_the_band_fails(tmp_path, err, status):
    """Attack: the same curves with a larger error at the run. Above the SUCCESS level of
    max_abs_rel (0.08) the stage cannot be SUCCESS by that curve: it fails; above half of
    it, a warn."""
    band = th.CONVERGENCE_POINTWISE.fail / th.CONVERGENCE_FRACTION
    rows = coarse_rows(tmp_path, err)
    point = next(r for r in rows if r["name"].endswith("pointwise max change"))
    assert point["limit"] == f"fail > {band:g}, warn > {th.CONVERGENCE_POINTWISE.fail:g}"
    assert (point["error_estimate"] > band) is (status == "fail")
    assert point["status"] == status
    if status == "fail":
        assert conv.verdict(rows) == "not_converged"


def test_only_a_converged_estimate_excuses_under_resolution(tmp_path):
    under = {
        "name": "built:resolution_ppw",
        "status": "fail",
        "value": 10.0,
        "detail": "10 pixels per wavelength",
    }
    checks = {"checks": [under], "verdict": "fail"}
    for err, excused in ((0.001, True), (0.1, False)):
        rows = coarse_rows(tmp_path / str(err), err)
        variant = {"id": gc.COARSE, "ran": True, "quantities": rows, "note": ""}
        record = {"variants": [variant], "status": conv.verdict(rows)}
        judged, note = conv.with_convergence(checks, record)
        by_name = {c["name"]: c for c in judged["checks"]}
        assert (by_name["built:resolution_ppw"]["status"] == "warn") is excused
        assert by_name[f"convergence:{gc.COARSE}"]["status"] == ("pass" if excused else "fail")
        assert ("estimated error of" in note) is excused
        assert judged["verdict"] == ("warn" if excused else "fail")


def test_a_feature_missing_from_a_coarser_run_warns():
    mid = [
        conv.quantity(gc.COARSE, "fig1/T peak 0 position", 0.5, 0.51, 0.02, th.CONVERGENCE_POSITION)
    ]
    rows = gc.combine(mid, [], SCALES)
    assert rows[0]["status"] == "fail"  # its own change already failed: kept
    mid[0].update(change=0.0001, status="pass")
    rows = gc.combine(mid, [], SCALES)
    assert rows[0]["status"] == "warn" and "not found in the 0.6x run" in rows[0]["note"]


def test_method_and_scales_settings():
    assert step.method({}) == "refine_2x"  # the default until coarse judges as it does
    assert step.resolution_variants({}, [conv.RESOLUTION]) == ([conv.RESOLUTION], 2)
    cfg = {"checks": {"convergence_method": "coarse"}}
    assert step.resolution_variants(cfg, [conv.RESOLUTION, conv.PML]) == (
        [gc.COARSE, conv.PML],
        [0.8, 0.6],
    )
    with pytest.raises(ValueError, match="checks.convergence_method is 'twice'"):
        step.method({"checks": {"convergence_method": "twice"}})
    for bad in ([0.6, 0.8], [0.8], [1.2, 0.6], "0.8,0.6"):
        with pytest.raises(ValueError, match="checks.convergence_scales"):
            step.scales({"checks": {"convergence_scales": bad}})
    assert step.scales({"checks": {"convergence_scales": [0.7, 0.5]}}) == (0.7, 0.5)
