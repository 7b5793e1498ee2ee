"""The supervisor's words and vocabulary through real Snakemake runs, reading the
rendered report.

paper_f: its fig2 data are scaled by 0.8 (stage 1 fails on peak heights), and its
stage-1 supervisor, wrong on purpose, classifies it SUCCESS and writes "validation
passes" and "sub-0.1 % peak errors" (a structured claim on the peak heights), then
asks for a backtrack to stage 0 that only the ResultsAnalyzer suggested, as minor: the
decision matrix rejects it. paper_s: stage 1 succeeds, and its supervisor stops the paper
(should_stop) with true claims, while the ResultsAnalyzer and the CodeReviewer each
suggest a backtrack it does not take. Both runs end as an accepted failure does:
exit 0 with a report that says what did not run and why.
"""

from __future__ import annotations

import json
import re

import pytest
import yaml

from tests.test_decisions import (
    STAGE0,
    STAGE1,
    STAGE2,
    copy_paper,
    copy_recording,
    edit_recording,
    stage_dir,
    write_config,
)
from tests.test_pipeline import snakemake
from tests.test_wrong_on_purpose import edit_csv

pytestmark = pytest.mark.pipeline
STAGE3 = "stage3_pairs_sweep"
BOASTS = "The single-slab validation passes with sub-0.1 % peak errors."
STOPS = "A SUCCESS: the fringes sit within 0.1 % of the paper's; the slab answers it, stop here."


def suggestion(target: str, severity: str, confidence: str) -> dict:
    return {
        "target_stage": target,
        "reason": "the silica index of stage 0 looks low",
        "severity": severity,
        "confidence": confidence,
    }


def claim(quantity: str) -> dict:
    return {
        "figure_id": "fig2",
        "curve_id": "T",
        "quantity": quantity,
        "value": 0.1,
        "unit": "%",
        "relation": "<",
    }


def report(wd, paper: str) -> str:
    return (wd / f"outputs/{paper}/REPRODUCTION_REPORT_{paper}.md").read_text()


@pytest.fixture(scope="module")
def supervised(tmp_path_factory):
    wd = tmp_path_factory.mktemp("supervisor_words")
    f = copy_paper(wd / "papers" / "paper_f", "paper_f")
    edit_csv(f / "data" / "fig2_T.csv", "T", lambda y: 0.8 * y)
    rec = f / "recordings" / STAGE1
    for agent in ("results_analyzer", "comparison_validator"):  # the flagged analysis redone
        copy_recording(rec, agent, 1, 2)
    for attempt in (1, 2):
        edit_recording(
            rec / f"results_analyzer.a{attempt}.yaml",
            backtrack_suggestion=suggestion(STAGE0, "minor", "high"),
        )
    edit_recording(
        rec / "supervisor.a1.yaml",
        verdict="backtrack_to_stage",
        backtrack_target=STAGE0,
        feedback=BOASTS,
        classification="SUCCESS",
        claims=[claim("feature_height_rel")],
    )
    s = copy_paper(wd / "papers" / "paper_s", "paper_s")
    rec = s / "recordings" / STAGE1
    edit_recording(
        rec / "results_analyzer.a1.yaml",
        backtrack_suggestion=suggestion(STAGE0, "minor", "high"),
    )
    edit_recording(
        rec / "code_reviewer.a1.yaml",
        backtrack_suggestion=suggestion(STAGE0, "significant", "low"),
    )
    edit_recording(
        rec / "supervisor.a1.yaml",
        verdict="should_stop",
        feedback=STOPS,
        classification="SUCCESS",
        claims=[claim("feature_shift_rel")],
    )
    write_config(wd, [f, s])
    goals = [f"outputs/{p}/REPRODUCTION_REPORT_{p}.md" for p in ("paper_f", "paper_s")]
    first = snakemake(wd, *goals)
    again = snakemake(wd, *goals)
    return wd, first, again


def test_a_decided_end_exits_0_with_a_report_and_stays_done(supervised):
    wd, first, again = supervised
    assert first.returncode == 0, first.stderr[-3000:]
    assert again.returncode == 0 and "Nothing to be done" in again.stdout + again.stderr
    for paper in ("paper_f", "paper_s"):
        assert not (wd / f"outputs/{paper}/REPRODUCTION_REPORT_{paper}.PARTIAL.md").exists()
        for stage in (STAGE2, STAGE3):
            assert not (stage_dir(wd, paper, stage) / "run").exists()  # nothing simulated


def test_supervisor_contradicting_the_code_is_struck_in_the_report(supervised):
    wd, _, _ = supervised
    verdict = json.loads((stage_dir(wd, "paper_f", STAGE1) / "verdict.json").read_text())
    assert verdict["status"] == "completed_failed"
    check = verdict["supervisor_check"]
    assert check["status"] == "contradicted"
    assert any("classifies the stage SUCCESS" in d for d in check["details"])
    assert any("feature_height_rel" in d for d in check["details"])
    md = report(wd, "paper_f")
    standing = re.sub(r"~~.*?~~", "", md, flags=re.S)
    assert f"~~{BOASTS}~~" in md and BOASTS not in standing
    assert "classifies the stage SUCCESS, the code's verdict is completed_failed" in md
    conclusion = next(line for line in md.splitlines() if line.startswith(f"- `{STAGE1}`"))
    assert conclusion.index("**completed_failed**") < conclusion.index("Contradicted")
    # every sentence of the supervisor's anywhere in the report is struck
    for sentence in ("validation passes", "sub-0.1 % peak errors"):
        assert sentence not in standing, sentence
    html = (wd / "outputs/paper_f/REPRODUCTION_REPORT_paper_f.html").read_text()
    assert "Contradicted by the code" in html


def test_analyzer_backtrack_goes_through_the_decision_matrix(supervised):
    wd, _, _ = supervised
    verdict = json.loads((stage_dir(wd, "paper_f", STAGE1) / "verdict.json").read_text())
    assert verdict["supervisor_verdict"] == "ok_continue"  # minor: handled in this stage
    assert [s["source"] for s in verdict["backtrack_suggestions"]] == ["results_analyzer"]
    events = (wd / "outputs/paper_f/events.jsonl").read_text()
    assert f"backtrack to {STAGE0}: reject (suggestion of results_analyzer minor/high" in events
    assert not (wd / "outputs/paper_f/backtracks.jsonl").exists()
    assert not (stage_dir(wd, "paper_f", STAGE0) / "invalidation.json").exists()


def test_should_stop_ends_the_paper_with_a_report_that_says_why(supervised):
    wd, _, _ = supervised
    verdict = json.loads((stage_dir(wd, "paper_s", STAGE1) / "verdict.json").read_text())
    assert verdict["status"] == "completed_success"
    assert verdict["supervisor_verdict"] == "should_stop"
    assert verdict["paper_end"]["stage_id"] == STAGE1
    assert verdict["supervisor_check"]["status"] == "ok"
    sources = [s["source"] for s in verdict["backtrack_suggestions"]]
    assert sources == ["results_analyzer", "code_reviewer"]  # both reach the supervisor
    for stage in (STAGE2, STAGE3):
        blocked = json.loads((stage_dir(wd, "paper_s", stage) / "verdict.json").read_text())
        assert blocked["status"] == "blocked"
        assert blocked["reason"].startswith(
            f"the supervisor of {STAGE1} ended the paper (should_stop)"
        )
    md = report(wd, "paper_s")
    banner = (
        f"**PARTIAL: the supervisor of `{STAGE1}` stopped this paper (should_stop); "
        f"not run: {STAGE2}, {STAGE3}.**"
    )
    assert banner in md and md.index(banner) < md.index("## 1. Executive Summary")
    assert f"| Not run: {STAGE2} | blocked: the supervisor of {STAGE1} ended the paper" in md
    conclusion = next(line for line in md.splitlines() if line.startswith(f"- `{STAGE1}`"))
    assert f"Supervisor (should_stop): {STOPS}" in conclusion  # true claims stand unmarked
    assert "[unchecked]" not in conclusion and "Contradicted" not in conclusion
    events = [json.loads(x) for x in (wd / "outputs/paper_s/events.jsonl").open()]
    assert any("ended the paper (should_stop)" in e.get("message", "") for e in events)


def test_recordings_edited_here_are_valid_supervisor_outputs(supervised):
    wd, _, _ = supervised
    rec = wd / "papers/paper_s/recordings" / STAGE1 / "supervisor.a1.yaml"
    out = yaml.safe_load(rec.read_text())["output"]
    from agents.supervisor import SupervisorOutput

    assert SupervisorOutput.model_validate(out).verdict == "should_stop"
