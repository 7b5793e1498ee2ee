"""Convergence that fails, and reaches the verdict (no Meep here: the reruns' numbers are
made by hand; tests/physics/test_planted_failures.py runs real ones, tests/steps/test_convergence.py
the pipeline's).

Each guarantee is attacked: a curve, key value or Q moved on purpose must fail; an
under-resolved run is excused only by a rerun that ran and converged; a policy that
needs no rerun, or a script that cannot be rerun, says so and excuses nothing.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from agents.planner import PlanStage
from reprolab.physics import convergence as conv
from reprolab.physics import lint
from reprolab.physics import thresholds as th
from reprolab.steps import convergence as step
from reprolab.steps.verdict import stage_status

X = np.linspace(0.45, 0.9, 181)
Y = 0.5 + 0.4 * np.sin(25 * X)


def test_limits_are_half_the_classification_success_levels():
    bands = {b.metric: b for b in th.DISCREPANCY_THRESHOLDS}
    assert th.CONVERGENCE_POINTWISE.fail == pytest.approx(0.5 * bands["max_abs_rel"].acceptable)
    assert th.CONVERGENCE_POSITION.fail == pytest.approx(
        0.5 * bands["feature_shift_rel"].acceptable
    )
    assert th.CONVERGENCE_HEIGHT.fail == pytest.approx(0.5 * bands["feature_height_rel"].acceptable)
    assert th.CONVERGENCE_Q.fail == pytest.approx(0.5 * bands["feature_width_rel"].acceptable)
    assert th.CONVERGENCE_KEY_VALUE.fail == pytest.approx(0.5 * th.KEY_VALUE.acceptable)


def _by_name(qs, end):
    return next(q for q in qs if q["name"].endswith(end))


def test_pointwise_on_the_figures_x_grid():
    """A change outside the figure's x range is not the figure's; inside it fails."""
    moved = Y + 0.2 * (X > 0.85)  # the last 0.05 µm moved by 0.2
    everywhere = conv.curve_quantities("f/T", (X, Y), (X, moved))
    assert _by_name(everywhere, "pointwise max change")["status"] == "fail"
    paper_x = np.linspace(0.5, 0.8, 31)
    on_figure = conv.curve_quantities("f/T", (X, Y), (X, moved), x_grid=paper_x)
    point = _by_name(on_figure, "pointwise max change")
    assert point["status"] == "pass" and point["points"] == 31


def test_peak_height_and_key_value_changes_fail():
    """Peaks at the same place, 5 % lower: their heights and the key value fail, the
    positions pass."""
    lower = 0.95 * Y
    kv = {"quantity": "T max", "kind": "max_y", "value": 0.9, "figure": "f", "curve": "T"}
    qs = conv.curve_quantities("f/T", (X, Y), (X, lower), key_values=[kv])
    heights = [q for q in qs if "peak" in q["name"] and q["name"].endswith("height")]
    positions = [q for q in qs if q["name"].endswith("position")]
    assert heights and all(q["status"] == "fail" for q in heights)
    assert positions and all(q["status"] == "pass" for q in positions)
    key = _by_name(qs, "key value T max")
    assert key["change"] == pytest.approx(0.05 / 0.95, rel=1e-6) and key["status"] == "fail"
    # unchanged: everything passes
    same = conv.curve_quantities("f/T", (X, Y), (X, Y.copy()), key_values=[kv])
    assert all(q["status"] == "pass" for q in same)


MODES = [{"freq": 0.118, "Q": 77.3}, {"freq": 0.1472, "Q": 335.4}, {"freq": 0.1753, "Q": 1293.0}]


@pytest.mark.parametrize(
    ("q_factor", "variant", "status"),
    [
        (1.01, "resolution_2x", "pass"),
        (1.06, "resolution_2x", "warn"),
        (1.10, "resolution_2x", "fail"),
        (1.01, "pml_2x", "pass"),
        (1.03, "pml_2x", "warn"),
        # a PML doubling is judged on twice its change: 6 % leaves the run up to 12 % off
        (1.06, "pml_2x", "fail"),
    ],
)
def test_harminv_q_that_moves_fails(q_factor, variant, status):
    varied = [{**m, "Q": m["Q"] * (q_factor if m["freq"] > 0.17 else 1.0)} for m in MODES]
    qs = conv.mode_quantities(MODES, varied, variant)
    assert [q["variant"] for q in qs] == [variant] * 6
    assert _by_name(qs, "Q")["status"] == "pass"  # the first mode did not move
    assert qs[-1]["name"].endswith("Q") and qs[-1]["status"] == status


def test_q_budget_adds_both_reruns():
    """Each rerun alone warns; both together (resolution and the PML bound, independent
    errors in quadrature) fail."""
    res = conv.mode_quantities(MODES, [{**m, "Q": m["Q"] * 1.06} for m in MODES], conv.RESOLUTION)
    pml = conv.mode_quantities(MODES, [{**m, "Q": m["Q"] * 1.025} for m in MODES], conv.PML)
    assert {q["status"] for q in res + pml if q["name"].endswith("Q")} == {"warn"}
    record = {
        "variants": [
            {"id": conv.RESOLUTION, "ran": True, "quantities": res},
            {"id": conv.PML, "ran": True, "quantities": pml},
        ]
    }
    budget = conv.q_budget(record)
    assert budget.name == "convergence:q_budget" and budget.status == "fail"
    res_q, pml_q = res[-1]["change"], pml[-1]["error_estimate"]
    assert budget.value == pytest.approx((res_q**2 + pml_q**2) ** 0.5, rel=1e-3)
    assert budget.value < res_q + pml_q  # not the worst case of both at once
    assert conv.q_budget({"variants": record["variants"][:1]}) is None  # one rerun: none


def test_a_resolution_excuse_needs_the_local_change_bounded():
    """A rerun that moved the curve 2 % of its max but 20 % where it is a tenth of it
    converges, yet excuses no under-resolved run."""
    x = np.linspace(1.0, 2.0, 101)
    y = 0.02 + np.exp(-(((x - 1.5) / 0.1) ** 2))
    moved = y + 0.02 * (x < 1.2)
    qs = conv.curve_quantities("f/R", (x, y), (x, moved))
    local = next(q for q in qs if q.get("excuse_only"))
    assert local["status"] == "fail" and conv.verdict(qs) == "converged"
    failed = {"name": "built:resolution_ppw", "status": "fail", "value": 10.0, "detail": "d"}
    conv_record = {"variants": [{"id": conv.RESOLUTION, "ran": True, "quantities": qs}]}
    checks, note = conv.excuse_resolution([failed], conv_record)
    assert checks[0]["status"] == "fail" and "not excused by convergence" in note
    same = conv.curve_quantities("f/R", (x, y), (x, y + 0.001))
    ok_record = {"variants": [{"id": conv.RESOLUTION, "ran": True, "quantities": same}]}
    checks, note = conv.excuse_resolution([failed], ok_record)
    assert checks[0]["status"] == "warn" and checks[0]["excused_by"] == "convergence"


def test_harminv_frequency_shift_and_lost_mode():
    shifted = [{**m, "freq": m["freq"] * 1.01} for m in MODES]
    qs = conv.mode_quantities(MODES, shifted, conv.RESOLUTION)
    assert all(q["status"] == "fail" for q in qs if q["name"].endswith("frequency"))
    lost = conv.mode_quantities(MODES, MODES[:2], conv.RESOLUTION)
    far = [q for q in lost if q.get("note")]
    assert len(far) == 1 and far[0]["status"] == "warn"  # Harminv's modes come and go


def _checks(ppw_status="fail", ppw=10.1):
    return {
        "verdict": ppw_status,
        "checks": [
            {"name": "exit_code", "status": "pass", "detail": "exit code 0", "value": 0},
            {
                "name": "built:resolution_ppw",
                "status": ppw_status,
                "detail": f"{ppw} pixels per wavelength",
                "value": ppw,
                "threshold": "fail < 12, warn < 15",
            },
        ],
    }


def _conv(change, ran=True):
    q = conv.quantity(
        conv.RESOLUTION, "f/T pointwise max change", None, None, change, th.CONVERGENCE_POINTWISE
    )
    var = {
        "id": conv.RESOLUTION,
        "ran": ran,
        "quantities": [q] if ran else [],
        "note": "" if ran else "the script ignores REPROLAB_RESOLUTION_SCALE",
    }
    qs = var["quantities"]
    return {"variants": [var], "quantities": qs, "status": conv.verdict(qs), "note": var["note"]}


STAGE = PlanStage.model_construct(stage_id="stage1_x", target_figures=[])
COMPARISON = {"figures": []}


def test_converged_rerun_excuses_an_under_resolved_run():
    judged, note = conv.with_convergence(_checks(), _conv(0.009))
    ppw = next(c for c in judged["checks"] if c["name"] == "built:resolution_ppw")
    assert ppw["status"] == "warn" and ppw["excused_by"] == "convergence"
    assert "excused by convergence" in note and "0.009" in note and "10.1" in note
    assert judged["verdict"] == "warn"
    status, reason = stage_status(STAGE, judged, COMPARISON)
    assert status == "completed_success"
    # without the rerun the same checks fail the stage
    assert stage_status(STAGE, _checks(), COMPARISON)[0] == "completed_failed"


@pytest.mark.parametrize("conv_record", [_conv(0.15), _conv(math.nan), _conv(0, ran=False)])
def test_no_excuse_without_a_converged_rerun(conv_record):
    """A rerun that moved, one whose numbers are NaN, one that could not run: the
    resolution failure stands, and the reason says why."""
    judged, note = conv.with_convergence(_checks(), conv_record)
    ppw = next(c for c in judged["checks"] if c["name"] == "built:resolution_ppw")
    assert ppw["status"] == "fail" and judged["verdict"] == "fail"
    assert "not excused by convergence" in note
    assert stage_status(STAGE, judged, COMPARISON)[0] == "completed_failed"


def test_convergence_failure_fails_a_well_resolved_stage():
    judged, _ = conv.with_convergence(_checks("pass", 40.0), _conv(0.1))
    assert judged["verdict"] == "fail"
    status, reason = stage_status(STAGE, judged, COMPARISON)
    assert status == "completed_failed" and "convergence:resolution_2x" in reason


def _validation(checks_verdict, physics="pass"):
    agent = {"output": {"verdict": "pass"}}
    return {
        "verdict": "fail" if "fail" in (checks_verdict, physics) else "pass",
        "checks_verdict": checks_verdict,
        "execution": agent,
        "physics": {"output": {"verdict": physics}},
    }


def test_verdict_reads_convergence_json(tmp_path):
    """The verdict's inputs as verdict.py judges them: a validation failed only by the
    deterministic checks follows the excuse; an agent's own fail stands."""
    path = tmp_path / "convergence.json"
    path.write_text(json.dumps(_conv(0.009)))
    checks, validation, note = step.judged_with_convergence(_checks(), _validation("fail"), path)
    assert checks["verdict"] == "warn" and validation["verdict"] == "warning" and note
    _, validation, _ = step.judged_with_convergence(_checks(), _validation("fail", "fail"), path)
    assert validation["verdict"] == "fail"
    # no convergence.json (checks.convergence: false): nothing changes
    same = step.judged_with_convergence(_checks(), _validation("fail"), tmp_path / "none.json")
    assert same == (_checks(), _validation("fail"), "")


def _sims(harminv=False):
    run = {"harminv": [{"modes": MODES}]} if harminv else {"harminv": []}
    return [{"runs": [run]}]


@pytest.mark.parametrize(
    ("config", "ppw", "harminv", "wanted"),
    [
        ({}, 40.0, False, []),  # auto, well resolved, no resonance: no rerun
        ({}, 13.0, False, [conv.RESOLUTION]),  # auto, under the warn level
        ({}, 40.0, True, [conv.RESOLUTION, conv.PML]),  # auto, a resonance
        ({"checks": {"convergence": True}}, 40.0, False, [conv.RESOLUTION]),
        ({"checks": {"convergence": False}}, 9.0, True, []),
    ],
)
def test_policy(config, ppw, harminv, wanted):
    pol = step.policy(config)
    names, why = step.variants_needed(pol, _checks("pass", ppw), _sims(harminv))
    assert names == wanted
    assert why.startswith("not needed") == (not wanted)


def test_nothing_to_compare_is_not_rerun():
    """No figure curve and no Harminv mode: no rerun, and the reason says so; an
    under-resolved run of such a stage stays failed."""
    names, why = step.variants_needed("auto", _checks("fail", 9.0), _sims(), curves=False)
    assert names == [] and why.startswith("nothing to compare")
    names, _ = step.variants_needed("auto", _checks("pass", 40.0), _sims(True), curves=False)
    assert names == [conv.RESOLUTION, conv.PML]  # the modes are compared
    record = {"variants": [], "quantities": [], "status": "not_run", "note": why}
    judged, note = conv.with_convergence(_checks("fail", 9.0), record)
    assert judged["verdict"] == "fail" and "nothing to compare" in note


def test_repair_loop_leaves_resolution_to_convergence():
    failed = [{"name": "built:resolution_ppw"}, {"name": "bounds_T:s.csv"}]
    assert step.deferred_to_convergence({}, failed) == failed[1:]
    assert step.deferred_to_convergence({"checks": {"convergence": False}}, failed) == failed


def test_a_script_without_the_scale_variable_is_not_rerun(tmp_path):
    """Honest: no rerun is pretended when the script cannot be scaled."""
    script = tmp_path / "simulation.py"
    script.write_text("import meep as mp\nRESOLUTION = 50\n")
    var = step.run_variant(None, conv.PML, None, script, None, tmp_path)
    assert var["ran"] is False and "ignores REPROLAB_PML_SCALE" in var["note"]
    assert not (tmp_path / "convergence_pml2x").exists()
    checks = conv.convergence_checks({"variants": [var]})
    assert [(c.name, c.status) for c in checks] == [("convergence:pml_2x", "warn")]


RING = """
import os
import meep as mp
DPML = {pml}
sim = mp.Simulation(cell_size=mp.Vector3(8, 8), boundary_layers=[mp.PML(DPML)],
                    resolution=float(os.environ.get("REPROLAB_RESOLUTION_SCALE", 1)) * 10)
h = mp.Harminv(mp.Ez, mp.Vector3(1.1), 0.15, 0.1)
sim.run(mp.after_sources(h), until_after_sources=150)
"""


def test_lint_asks_a_resonance_script_for_the_pml_scale():
    design = {"resolution": 10, "pml_thickness": 2.0, "output_specifications": []}
    fixed = RING.format(pml='float(os.environ.get("REPROLAB_PML_SCALE", 1)) * 2.0')
    for code, need, expected in (
        (RING.format(pml="2.0"), True, "fail"),
        (RING.format(pml="2.0"), False, "warn"),
        (fixed, True, None),
        (RING.format(pml="2.0").replace("h = mp.Harminv", "h = None  # mp.Harminv"), True, None),
    ):
        found = {
            c.name: c.status for c in lint.code_findings(code, design, need_resolution_env=need)
        }
        assert found.get("lint:pml_from_env") == expected, (code, found)


def test_the_reports_checks_table_shows_the_excuse(tmp_path):
    """The report judges each stage's checks as its verdict did: an excused resolution
    is a warn 'excused by convergence', never a fail beside a successful stage."""
    from types import SimpleNamespace

    from reprolab.report.markdown import checks_section
    from reprolab.steps.report import judged_checks

    sd = tmp_path / "stages" / "stage1_x"
    sd.mkdir(parents=True)
    (sd / "checks.json").write_text(json.dumps({**_checks(), "stage_id": "stage1_x"}))
    (sd / "convergence.json").write_text(json.dumps(_conv(0.009)))
    inputs = SimpleNamespace(checks=[str(sd / "checks.json")])
    alone = "\n".join(checks_section(judged_checks(inputs, {"stage1_x"}), tmp_path))
    assert "**fail** `built:resolution_ppw`" in alone  # checks.convergence: false
    inputs.convergence = [str(sd / "convergence.json")]
    md = "\n".join(checks_section(judged_checks(inputs, {"stage1_x"}), tmp_path))
    assert "**warn** `built:resolution_ppw`" in md and "excused by convergence" in md
    assert "**fail**" not in md


@pytest.mark.parametrize(("q_pml", "status"), [(77.66, "warn"), (72.0, "fail")])
def test_a_thin_pml_is_excused_only_by_a_pml_rerun_that_leaves_q(q_pml, status):
    """Meep's ring-mode-overlap example: a 2 a PML is 0.236 of the mode's wavelength,
    under the 0.25 a resonance asks; doubling it moved the Q 77.66 mode by 1e-5
    (measured at 10 px/a): excused. A Q that moves 7 % (judged on twice that, the thin
    PML's own error) leaves the failure standing."""
    modes_n = [{"freq": 0.11807, "Q": 77.66, "label": ""}]
    modes_v = [{"freq": 0.11807, "Q": q_pml, "label": ""}]
    rerun = {
        "id": conv.PML,
        "ran": True,
        "quantities": conv.mode_quantities(modes_n, modes_v, conv.PML),
    }
    thin = {"name": "built:pml_thickness", "status": "fail", "value": 0.236, "detail": "thin"}
    got, note = conv.excuse_pml([thin], {"variants": [rerun]})
    assert got[0]["status"] == status
    assert bool(note) == (status == "warn")
    # no rerun, or one that never ran: the failure stands
    assert conv.excuse_pml([thin], {"variants": []})[0][0]["status"] == "fail"
    assert (
        conv.excuse_pml([thin], {"variants": [{**rerun, "ran": False}]})[0][0]["status"] == "fail"
    )
