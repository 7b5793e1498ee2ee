"""Code's checks on the judging agents: they can tighten a verdict, never relax it,
and an analysis whose words or numbers disagree with the recomputed comparison is
sent back."""

import numpy as np

from reprolab.physics import compare
from reprolab.steps.analyze import analysis_problems
from reprolab.steps.validate import combined_verdict


def comparison_for(shift: float):
    x = np.linspace(0.5, 0.8, 301)
    y_paper = np.exp(-(((x - 0.65) / 0.02) ** 2))
    y_sim = np.exp(-(((x - 0.65 * (1 + shift)) / 0.02) ** 2))
    curve = {"curve_id": "R", **compare.compare_curve(list(x), list(y_paper), list(x), list(y_sim))}
    curve["classes"] = compare.classify_curve(curve)
    from reprolab.physics import thresholds as th

    fig = {
        "figure_id": "fig3",
        "curves": [curve],
        "classification": th.worst(list(curve["classes"].values())),
    }
    curves = {("fig3", "R"): (list(x), list(y_paper), list(x), list(y_sim))}
    return {"stage_id": "stage2_x", "figures": [fig]}, curves


def test_agents_cannot_relax_a_deterministic_failure():
    assert combined_verdict("fail", ["pass", "pass"]) == "fail"
    assert combined_verdict("pass", ["pass", "warning"]) == "warning"
    assert combined_verdict("warn", ["pass", "pass"]) == "warning"
    assert combined_verdict("pass", ["fail", "pass"]) == "fail"


def test_correct_analysis_has_no_problems():
    comparison, curves = comparison_for(0.0)
    analysis = {
        "summary": "Reproduced.",
        "per_figure": [{"figure_id": "fig3", "narrative": "The stop band matches: SUCCESS."}],
    }
    assert analysis_problems(analysis, comparison, ["fig3"], curves) == []


def test_wrong_class_missing_figure_and_tampered_numbers_are_found():
    comparison, curves = comparison_for(0.05)  # a 5 % shift: not a SUCCESS
    computed = comparison["figures"][0]["classification"]
    assert computed != "SUCCESS"
    analysis = {
        "summary": "",
        "per_figure": [{"figure_id": "fig3", "narrative": "Perfect agreement, SUCCESS."}],
    }
    problems = analysis_problems(analysis, comparison, ["fig3", "fig4"], curves)
    assert any("no narrative for target figure 'fig4'" in p for p in problems)
    assert any("calls it ['SUCCESS']" in p and computed in p for p in problems)
    comparison["figures"][0]["curves"][0]["rms_abs"] = 1e-9  # a comparison that lies
    assert any("rms_abs" in p for p in analysis_problems(analysis, comparison, ["fig3"], curves))
    cited = {
        "summary": "",
        "per_figure": [
            {
                "figure_id": "fig3",
                "narrative": f"The RMS difference is 0.4321 and the class is {computed}.",
            }
        ],
    }
    assert any("0.4321" in p for p in analysis_problems(cited, comparison, ["fig3"]))


def analysis_with(narrative: str, claims: list[dict]) -> dict:
    return {
        "summary": "",
        "per_figure": [{"figure_id": "fig3", "narrative": narrative}],
        "claims": claims,
    }


def test_a_claimed_number_is_checked_against_the_same_quantity():
    comparison, curves = comparison_for(0.002)
    curve = comparison["figures"][0]["curves"][0]
    rms = curve["rms_abs"]
    shift = curve["metrics"]["feature_shift_rel"]
    good = analysis_with(
        f"RMS difference {rms:.3g}, peak shift {100 * shift:.2f} %: SUCCESS.",
        [
            {
                "figure_id": "fig3",
                "curve_id": "R",
                "quantity": "rms_abs",
                "value": float(f"{rms:.3g}"),
            },
            {
                "figure_id": "fig3",
                "curve_id": "R",
                "quantity": "feature_shift_rel",
                "value": round(100 * shift, 2),
                "unit": "%",
            },
        ],
    )
    assert analysis_problems(good, comparison, ["fig3"], curves) == []
    # the same number claimed as another quantity does not hold
    wrong = analysis_with(
        f"Largest difference {rms:.3g}.",
        [
            {
                "figure_id": "fig3",
                "curve_id": "R",
                "quantity": "max_abs",
                "value": float(f"{rms:.3g}"),
            }
        ],
    )
    assert any("max_abs" in p for p in analysis_problems(wrong, comparison, ["fig3"], curves))


def test_numbers_near_thresholds_or_other_metrics_are_not_accepted():
    """The old regex accepted 'RMS 0.0098' and 'largest 0.029' because 0.01 and 0.03
    are thresholds, and 'peak at 701.30 nm' because some number was near: without a
    claim each is unchecked, and a claim that names its quantity is contradicted."""
    comparison, curves = comparison_for(0.002)
    unclaimed = analysis_with("RMS 0.0098, largest 0.029, peak at 701.30 nm.", [])
    problems = analysis_problems(unclaimed, comparison, ["fig3"], curves)
    for text in ("0.0098", "0.029", "701.30"):
        assert any(f"'{text}' is no claimed number" in p for p in problems), problems
    claimed = analysis_with(
        "The peak is at 701.30 nm.",
        [
            {
                "figure_id": "fig3",
                "curve_id": "R",
                "quantity": "x_sim",
                "feature": 0,
                "value": 701.30,
            }
        ],
    )
    assert any("x_sim" in p for p in analysis_problems(claimed, comparison, ["fig3"], curves))
