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
