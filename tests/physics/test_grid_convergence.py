"""Resolution evidence from coarser runs: the Richardson estimate recovers a known error
and order, an unsolvable order falls back conservatively and is reported, the estimate is
judged against the same limits as the 2x rerun's change, and only a converged estimate
excuses an under-resolved run."""

from __future__ import annotations

import math
from pathlib import Path

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


@pytest.mark.parametrize("order", [1.0, 1.6, 2.0])
@pytest.mark.parametrize("scales", [(0.8, 0.6), (0.7, 0.5)])
def test_estimate_recovers_error_and_order(order, scales):
    err_true = 0.013
    est = gc.estimate(*changes(lambda h: 0.5 + err_true * h**order, scales), scales)
    assert est["order"] == pytest.approx(order, rel=1e-6)
    assert est["error"] == pytest.approx(err_true, rel=1e-6)
    # the bound: Xing & Stern's factor for the observed order (1.6 at 2, 2.025 at 1)
    fs = 2.45 - 0.85 * order / 2
    assert est["safety_factor"] == pytest.approx(fs, rel=1e-5)
    assert est["gci"] == pytest.approx(fs * err_true, rel=1e-5)
    assert est["note"] == ""


def test_an_order_above_the_schemes_is_assumed_second_with_the_factor_3():
    """Attack: order 2.7 observed (the coarser runs pre-asymptotic). A higher order would
    shrink the estimate: it assumes 2 (larger than the true error here) and the bound
    takes the factor of an assumed order, 3."""
    est = gc.estimate(*changes(lambda h: 0.013 * h**2.7))
    assert est["order"] == pytest.approx(2.7) and est["order_used"] == 2.0
    assert est["error"] > 0.013 and est["safety_factor"] == gc.GCI_SAFETY == 3.0
    # continuous through 2: Xing & Stern's 16.4 P - 14.8 just above it
    assert gc.safety_factor(2.03) == pytest.approx(16.4 * 1.015 - 14.8)
    assert gc.safety_factor(2.0) == pytest.approx(1.6) and gc.safety_factor(2.2) == 3.0
    assert "estimated with order 2.00" in est["note"]


@pytest.mark.parametrize(("s2", "s3"), [(0.01, -0.012), (0.01, 0.0105), (1e-4, 0.05)])
def test_no_observed_order_gets_roaches_factor_for_an_assumed_one(s2, s3):
    """Oscillating or unsolved changes: the bound is 3x the estimate."""
    est = gc.estimate(s2, s3)
    assert est["order"] is None and est["safety_factor"] == gc.GCI_SAFETY == 3.0
    assert est["gci"] == pytest.approx(3.0 * est["error"])


def test_order_far_from_second_is_reported_and_not_used():
    """Attack: a quantity whose coarser runs suggest order 4.5. The order is reported, and
    the error assumes second order (4.5 would shrink it below what the scheme promises)."""
    s2, s3 = changes(lambda h: 0.01 * h**4.5)
    est = gc.estimate(s2, s3)
    assert est["order"] == pytest.approx(4.5, rel=1e-6)
    assert "observed order 4.50, far from the scheme's second order" in est["note"]
    assert "estimated with order 2.00" in est["note"]
    h2 = 1 / SCALES[0]
    assert est["error"] == pytest.approx(abs(s2) / (h2**2 - 1))
    assert est["error"] > 0.01  # the true error at the run, under-estimated at order 4.5
    slow = gc.estimate(*changes(lambda h: 0.01 * h**0.7))  # slow: reported, used as it is
    assert slow["order"] == pytest.approx(0.7, rel=1e-6) and "0.70, far from" in slow["note"]
    assert slow["error"] == pytest.approx(0.01, rel=1e-6)


@pytest.mark.parametrize(("s2", "s3"), [(0.01, -0.012), (-0.02, -0.005), (0.003, -0.003)])
def test_oscillating_changes_are_bounded_by_half_their_range(s2, s3):
    """Values not monotone in h (a staircased interface, a pre-asymptotic coarsest run):
    no order is fitted; the run's error is half the range of the three values."""
    est = gc.estimate(s2, s3)
    assert est["order"] is None and "changes oscillate" in est["note"]
    assert est["error"] == pytest.approx((max(0, s2, s3) - min(0, s2, s3)) / 2)


@pytest.mark.parametrize(("s2", "s3", "used"), [(0.01, 0.0105, 1), (0.0, 0.01, 1), (1e-4, 0.05, 2)])
def test_unsolved_order_falls_back_and_says_so(s2, s3, used):
    """Flat changes: first order (at least the coarsest run's change extrapolated); a mid
    run that barely moved while the coarsest jumped: second order."""
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
    """0.75x and 0.55x: under 0.6x the run in 2D and 0.45x in 3D (2x: 4, 8, 16); the PML
    doubled at 0.55x adds 0.09x in 3D."""
    assert gc.cost_ratio(SCALES, 2) <= 0.6 and gc.cost_ratio(SCALES, 3) <= 0.45
    assert gc.cost_ratio(SCALES[1:], 3) < 0.1
    assert gc.cost_ratio((2,), 3) == 16


BANDS_CELL = [{"resolution": 32.0, "cell": [1.0, 1.0, 0.0]}]


def test_scales_move_to_whole_pixels_of_the_cell():
    """Attack: a unit Bloch cell at 32 px/a. At 0.55x (17.6 px) Meep would round the cell
    to 18 px and simulate a lattice period of 1.023 a, shifting every band by 2 %: the
    scale moves to 18/32; 0.75 (24 px) stays. A cell of two sides moves to a scale that
    makes both whole; no cell in the record: the scales stand."""
    sc, misfit = gc.grid_scales((0.75, 0.55), BANDS_CELL)
    assert sc == [0.75, 18 / 32] and misfit == 0
    sc, misfit = gc.grid_scales((0.8, 0.6), BANDS_CELL)
    assert sc == [26 / 32, 19 / 32] and misfit == 0
    # a 9 x 9 ring cell (90 px) and a 4.5 one (45 px) at 10 px/a: 34/45 and 25/45
    two = [{"resolution": 10.0, "cell": [9.0, 9.0, 0.0]}, {"resolution": 10.0, "cell": [4.5]}]
    sc, misfit = gc.grid_scales((0.75, 0.55), two)
    for s in sc:
        assert all(abs(s * 10 * c - round(s * 10 * c)) < 1e-9 for c in (9.0, 4.5))
    assert misfit < 1e-9 and all(
        abs(s - t) <= gc.SNAP_WINDOW for s, t in zip(sc, SCALES, strict=True)
    )
    assert gc.grid_scales((0.75, 0.55), [{"resolution": None, "cell": [1.0]}]) == (
        [0.75, 0.55],
        0.0,
    )


def test_a_mode_the_coarsest_run_missed_warns_and_does_not_fail():
    """A mode found in the run and at 0.75x but not at 0.55x (Harminv): a warn naming the
    run that missed it, never a NaN estimate that fails."""
    lim = th.CONVERGENCE_FREQUENCY
    mid = [conv.quantity(gc.COARSE, "mode 3 (f = 0.5) frequency", 0.5, 0.501, 0.002, lim)]
    low = conv.quantity(gc.COARSE, "mode 3 (f = 0.5) frequency", 0.5, None, math.inf, lim)
    low.update(status="warn", note="no mode of the rerun near it (Harminv)")
    (row,) = gc.combine(mid, [low], SCALES)
    assert row["status"] == "warn" and "no mode of the 0.55x run near it" in row["note"]
    assert conv.verdict([row]) == "converged"


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
    assert point["richardson_error"] == pytest.approx(truth, rel=0.05)
    assert point["order"] == pytest.approx(2, abs=0.05)
    assert point["safety_factor"] == pytest.approx(gc.safety_factor(point["order"]))
    assert point["error_estimate"] == pytest.approx(point["gci"])
    assert point["gci"] == pytest.approx(point["safety_factor"] * point["richardson_error"])
    assert point["status"] == "pass" and point["variant"] == gc.COARSE
    assert len(point["changes_coarse"]) == 2
    for r in rows:  # every row judged by its own bound, named after the run's features
        assert r["change"] == r["error_estimate"] == r["gci"] and "values_coarse" in r


@pytest.mark.parametrize(("err", "status"), [(0.015, "warn"), (0.03, "fail")])
def test_bound_beyond_the_2x_reruns_limit_fails(tmp_path, err, status):
    """Attack: the same curves with a larger error at the run. The bound on it (1.6x the
    estimate: second order observed) is judged against the 2x rerun's own limits (half
    the SUCCESS level of max_abs_rel: 0.04): above them it fails, above half a warn."""
    lim = th.CONVERGENCE_POINTWISE
    rows = coarse_rows(tmp_path, err)
    point = next(r for r in rows if r["name"].endswith("pointwise max change"))
    assert point["limit"] == f"fail > {lim.fail:g}, warn > {lim.warn:g}"
    assert (point["error_estimate"] > lim.fail) is (status == "fail")
    assert point["status"] == status, point
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
    assert rows[0]["status"] == "warn" and "not found in the 0.55x run" in rows[0]["note"]


def test_method_and_scales_settings():
    """auto (the default) starts with the coarser runs in 2D and 3D, escalating to the 2x
    rerun in 2D only; its PML evidence is the PML doubled at the coarsest scale."""
    assert step.method({}) == "auto"
    assert [step.method({}, d) for d in (1, 2, 3)] == ["refine_2x", "coarse", "coarse"]
    assert [step.escalates({}, d) for d in (1, 2, 3)] == [False, True, False]
    assert not step.escalates({"checks": {"convergence_method": "coarse"}}, 2)
    both = [conv.RESOLUTION, conv.PML]
    assert step.resolution_variants({}, both, 1) == (both, 2)
    assert step.resolution_variants({}, both, 2) == ([gc.COARSE, step.PML_COARSE], [0.75, 0.55])
    assert step.resolution_variants({}, both, 3) == ([gc.COARSE, step.PML_COARSE], [0.75, 0.55])
    cfg = {"checks": {"convergence_method": "coarse"}}
    assert step.method(cfg, 1) == "coarse"
    assert step.resolution_variants(cfg, both, 2) == ([gc.COARSE, step.PML_COARSE], [0.75, 0.55])
    refine = {"checks": {"convergence_method": "refine_2x"}}
    assert step.resolution_variants(refine, both, 3) == (both, 2)
    with pytest.raises(ValueError, match="checks.convergence_method is 'twice'"):
        step.method({"checks": {"convergence_method": "twice"}})
    for bad in ([0.6, 0.8], [0.8], [1.2, 0.6], "0.8,0.6"):
        with pytest.raises(ValueError, match="checks.convergence_scales"):
            step.scales({"checks": {"convergence_scales": bad}})
    assert step.scales({"checks": {"convergence_scales": [0.7, 0.5]}}) == (0.7, 0.5)


def test_report_says_when_the_order_was_not_used(tmp_path):
    """The figure's error table reports an order far from 2 as such (and that 2 was used),
    and oscillating changes as bounded by half their range, never a bare number."""
    from reprolab.fileio import atomic_write_json
    from reprolab.report import discretisation

    lim = th.CONVERGENCE_POSITION
    h2, h3 = 1 / SCALES[0], 1 / SCALES[1]
    # peak positions 0.5 + C h^p: order 4.5, order 2, and one that oscillates
    shifts = [(1e-4 * (h2**p - 1), 1e-4 * (h3**p - 1)) for p in (4.5, 2.0)] + [(4e-4, -5e-4)]
    mid, low = [], []
    for i, (d2, d3) in enumerate(shifts):
        name = f"fig1/T peak {i} position"
        mid.append(conv.quantity(gc.COARSE, name, 0.5, 0.5 + d2, abs(d2) / 0.5, lim))
        low.append(conv.quantity(gc.COARSE, name, 0.5, 0.5 + d3, abs(d3) / 0.5, lim))
    rows = gc.combine(mid, low, SCALES)
    atomic_write_json(tmp_path / "convergence.json", {"quantities": rows})
    md = "\n".join(discretisation.error_lines("fig1", tmp_path))
    far, plain, osc = (r for r in md.splitlines() if r.startswith("| T peak"))
    assert "far from 2: estimated with 2" in far, far
    assert "(far from" not in plain and "oscillates" not in plain, plain
    assert "oscillates: half the range" in osc, osc


def test_defaults_agree_auto_and_the_scales():
    """The schema's defaults, config/config.yaml and the code name the same method and
    scales: a 3D stage of a default config gets the coarser runs and the PML doubled at
    the coarsest scale."""
    import yaml

    repo = Path(__file__).parents[2]
    schema = yaml.safe_load((repo / "workflow/schemas/config.schema.yaml").read_text())
    keys = schema["properties"]["checks"]["properties"]
    config = yaml.safe_load((repo / "config/config.yaml").read_text())["checks"]
    assert keys["convergence_method"]["default"] == config["convergence_method"] == "auto"
    assert keys["convergence_scales"]["default"] == config["convergence_scales"]
    assert tuple(config["convergence_scales"]) == gc.DEFAULT_SCALES
    names = [conv.RESOLUTION, conv.PML]
    assert step.resolution_variants({"checks": config}, names, 3)[0] == [
        gc.COARSE,
        step.PML_COARSE,
    ]


def _position_rows(pairs):
    """The coarser runs' rows of peak positions 0.5 moved by (d at 0.75x, d at 0.55x)."""
    lim = th.CONVERGENCE_POSITION
    mid, low = [], []
    for i, (d2, d3) in enumerate(pairs):
        name = f"fig1/T peak {i} position"
        mid.append(conv.quantity(gc.COARSE, name, 0.5, 0.5 + d2, abs(d2) / 0.5, lim))
        low.append(conv.quantity(gc.COARSE, name, 0.5, 0.5 + d3, abs(d3) / 0.5, lim))
    return mid, low


def test_escalation_only_where_the_2x_rerun_could_change_the_verdict():
    """What escalates `auto` in 2D: a bound that fails (the coarser runs may be
    pre-asymptotic), a quantity with no estimate (a mode a coarser run missed), a variant
    not run. Noise far under the limit whose order cannot be determined (changes of 3e-5
    against a 5e-3 limit) does not: its bound, 3x a first-order estimate, still passes;
    nor does a bound that only warns. Each reason names its quantity."""
    noise = [(1.5e-5, 1.0e-5), (-1.5e-5, 1.5e-5), (1.5e-5, 1.6e-5)]  # oscillate, unsolved
    rows = gc.combine(*_position_rows(noise), SCALES)
    assert all(r["safety_factor"] == gc.GCI_SAFETY for r in rows)  # no order: 3
    assert all(r["status"] == "pass" for r in rows), rows
    ok = {"id": gc.COARSE, "ran": True, "quantities": rows}
    assert step.unconvincing([ok]) == []
    # a bound between half the limit and the limit: a warn, which cannot fail the stage
    (warned,) = gc.combine(*_position_rows([changes(lambda h: 1e-3 * h**2)]), SCALES)
    assert warned["status"] == "warn", warned
    assert step.unconvincing([{**ok, "quantities": [*rows, warned]}]) == []
    # order 4 observed (pre-asymptotic coarser runs): the estimate alone would pass, its
    # bound fails; the 2x rerun decides
    (failed,) = gc.combine(*_position_rows([changes(lambda h: 3.5e-4 * h**4)]), SCALES)
    assert failed["status"] == "fail" and failed["richardson_error"] < 0.0025, failed
    lim = th.CONVERGENCE_Q
    mode = conv.quantity(gc.COARSE, "mode 0 Q", 500.0, 501.0, 0.002, lim)
    (missed,) = gc.combine([mode], [], SCALES)
    for bad, why in [
        (failed, "fig1/T peak 0 position: fail"),
        (missed, "mode 0 Q: warn (not found"),
    ]:
        (found,) = step.unconvincing([{**ok, "quantities": [*rows, bad]}])
        assert found.startswith(why), found
    skipped = {"id": conv.PML, "ran": False, "quantities": [], "note": "the script ignores X"}
    assert step.unconvincing([ok, skipped]) == ["pml_2x: the script ignores X"]
    assert step.unconvincing([{**ok, "quantities": []}]) == ["resolution_coarse: nothing compared"]


@pytest.mark.parametrize(
    "change, order, true_error",
    [
        (0.0458, None, 0.0681),  # the dipole pattern, pointwise (coarser runs oscillate)
        (0.0054, 2.03, 0.0072),  # the rod cell's band at 22 px/a (order from 17, 12 px/a)
    ],
)
def test_a_2x_reruns_bound_covers_the_runs_error(change, order, true_error):
    """A 2x rerun's change is 1 - 2^-p of the run's error, so it understates it (the
    dipole pattern 0.046 against 0.068, the band 0.54 % against 0.72 %, measured): the
    bound is Richardson at the run's resolution times the safety factor of the order the
    coarser runs observed (3 where none was), and covers both."""
    bound = gc.refine_bound(change, order)
    assert change < true_error <= bound["error_bound"]
    p = 2.0 if order is None else min(order, 2.0)
    assert bound["error_bound_from"]["richardson_error"] == pytest.approx(
        change * 2**p / (2**p - 1)
    )
    assert bound["error_bound_from"]["safety_factor"] == gc.safety_factor(order)
    # an observed order earns a smaller factor than an assumed one, never under 1.6
    assert (
        gc.refine_bound(change, 2.0)["error_bound"] < gc.refine_bound(change, None)["error_bound"]
    )
    assert gc.refine_bound(change, 2.0)["error_bound"] == pytest.approx(1.6 * change * 4 / 3)


def test_the_2x_reruns_rows_take_the_order_their_coarser_runs_observed():
    """After an escalation each 2x row is bounded with the order the coarser runs found
    for the quantity of the same name; its change and status stay as judged, and the
    report's comparison beside the figure reads the bound."""
    from reprolab.report.discretisation import comparisons_with_grid
    from reprolab.steps import convergence as conv_step

    lim = th.CONVERGENCE_POINTWISE
    row = conv.quantity(conv.RESOLUTION, "fig1/T pointwise max change", None, None, 0.01, lim)
    seen = {"name": row["name"], "order": 2.0}
    result = {
        "variants": [{"id": conv.RESOLUTION, "quantities": [row]}],
        "escalation": {"coarse_variants": [{"id": gc.COARSE, "quantities": [seen]}]},
    }
    conv_step.with_bounds(result)
    (got,) = result["variants"][0]["quantities"]
    assert got["change"] == 0.01 and got["status"] == row["status"]
    assert got["error_bound"] == pytest.approx(1.6 * 0.01 * 4 / 3)
    result["quantities"] = [got]
    fig = {"figure_id": "fig1", "curves": [{"metrics": {"max_abs_rel": 0.015}}]}
    pointwise = [r for r in comparisons_with_grid(fig, result) if "pointwise" in r[0]]
    assert pointwise == [(pointwise[0][0], 0.015, got["error_bound"])]
    # without coarser runs (refine_2x alone) the order is assumed: factor 3
    result = {"variants": [{"id": conv.RESOLUTION, "quantities": [row]}]}
    conv_step.with_bounds(result)
    assert result["variants"][0]["quantities"][0]["error_bound"] == pytest.approx(3 * 0.01 * 4 / 3)
