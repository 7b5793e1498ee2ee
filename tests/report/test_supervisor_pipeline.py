"""The supervisor's words and vocabulary through real Snakemake runs, reading the
rendered report.

paper_f: its fig2 data are scaled by 0.8 (stage 1 fails on peak heights), and its
stage-1 supervisor, wrong on purpose, classifies it SUCCESS, writes "validation passes"
and "sub-0.1 % peak errors" (a structured claim on the peak heights) and stops the paper
(should_stop), while the ResultsAnalyzer and the CodeReviewer each suggested a
backtrack it does not take. The paper ends as an accepted failure does: exit 0 with a
report that says who stopped it, what did not run, and strikes the supervisor's words.
paper_p: stage 3 made stage 2's sibling, and stage 1's supervisor puts stage 3 first
(change_priority). The decision matrix on each suggester: test_supervisor_vocabulary.
"""

from __future__ import annotations

import json
import re

import pytest
import yaml

from tests.gates.test_decisions import (
    STAGE0,
    STAGE1,
    STAGE2,
    copy_recording,
    edit_recording,
    stage_dir,
)
from tests.report.test_wrong_on_purpose import edit_csv
from tests.support.builders import copy_paper
from tests.support.pipeline import snakemake, write_config

pytestmark = pytest.mark.pipeline
STAGE3 = "stage3_pairs_sweep"
BOASTS = "The single-slab validation passes with sub-0.1 % peak errors; stop here."
REPORT = "outputs/paper_f/REPRODUCTION_REPORT_paper_f.md"


def suggestion(target: str, severity: str, confidence: str) -> dict:
    return {
        "target_stage": target,
        "reason": "the silica index of stage 0 looks low",
        "severity": severity,
        "confidence": confidence,
    }


@pytest.fixture(scope="module")
def supervised(tmp_path_factory):
    wd = tmp_path_factory.mktemp("supervisor_words")
    f = copy_paper(wd / "papers" / "paper_f", recordings=True, paper_id="paper_f")
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
        rec / "code_reviewer.a1.yaml",
        backtrack_suggestion=suggestion(STAGE0, "significant", "low"),
    )
    peak_claim = {"figure_id": "fig2", "curve_id": "T", "quantity": "feature_height_rel"}
    edit_recording(
        rec / "supervisor.a1.yaml",
        verdict="should_stop",
        feedback=BOASTS,
        classification="SUCCESS",
        claims=[{**peak_claim, "value": 0.1, "unit": "%", "relation": "<"}],
    )
    p = copy_paper(wd / "papers" / "paper_p", recordings=True, paper_id="paper_p")
    planner = p / "recordings" / "paper" / "planner.a1.yaml"
    plan = yaml.safe_load(planner.read_text())
    sweep = plan["output"]["stages"][3]  # stage 3 becomes stage 2's sibling
    sweep.update(stage_type="ARRAY_SYSTEM", dependencies=[STAGE1])
    planner.write_text(yaml.safe_dump(plan, sort_keys=False))
    edit_recording(
        p / "recordings" / STAGE1 / "supervisor.a1.yaml",
        verdict="change_priority",
        priority=[STAGE3, STAGE2, STAGE0, "stage9_nothing"],
        classification="SUCCESS",
    )
    write_config(wd, [f, p])
    # paper_p up to stage 1's verdict, and what its siblings' designs need besides (in a
    # whole run these are made right after the plan, long before stage 1 ends)
    siblings = [f"outputs/paper_p/.inputs/{s}.stage.json" for s in (STAGE2, STAGE3)]
    siblings += [f"outputs/paper_p/.inputs/{f}.x_range.json" for f in ("fig3", "fig4")]
    first = snakemake(wd, REPORT, f"outputs/paper_p/stages/{STAGE1}/verdict.json", *siblings)
    again = snakemake(wd, REPORT)
    return wd, first, again


def verdict_of(wd, paper: str, stage: str) -> dict:
    return json.loads((stage_dir(wd, paper, stage) / "verdict.json").read_text())


def test_a_decided_end_exits_0_with_a_report_and_stays_done(supervised):
    wd, first, again = supervised
    assert first.returncode == 0, first.stderr[-3000:]
    assert again.returncode == 0 and "Nothing to be done" in again.stdout + again.stderr
    assert not (wd / REPORT.replace(".md", ".PARTIAL.md")).exists()
    for stage in (STAGE2, STAGE3):
        assert not (stage_dir(wd, "paper_f", stage) / "run").exists()  # nothing simulated


def test_supervisor_contradicting_the_code_is_struck_in_the_report(supervised):
    wd, _, _ = supervised
    verdict = verdict_of(wd, "paper_f", STAGE1)
    assert verdict["status"] == "completed_failed"
    check = verdict["supervisor_check"]
    assert check["status"] == "contradicted"
    assert any("classifies the stage SUCCESS" in d for d in check["details"])
    assert any("feature_height_rel" in d for d in check["details"])
    md = (wd / REPORT).read_text()
    standing = re.sub(r"~~.*?~~", "", md, flags=re.S)
    assert f"~~{BOASTS}~~" in md
    assert "classifies the stage SUCCESS, the code's verdict is completed_failed" in md
    lines = md.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith(f"- `{STAGE1}`"))
    # the code's verdict first, then the supervisor's words, quoted as its commentary
    assert "**completed_failed**" in lines[at] and "Contradicted" not in lines[at]
    assert lines[at + 1].startswith("  > **Supervisor's commentary (the agent's words")
    assert "Contradicted" in lines[at + 1]
    for sentence in ("validation passes", "sub-0.1 % peak errors", "stop here"):
        assert sentence not in standing, sentence  # nowhere in the report, any section
    html = (wd / REPORT.replace(".md", ".html")).read_text()
    assert "Contradicted by the code" in html and "validation passes" in html


def test_should_stop_ends_the_paper_with_a_report_that_says_why(supervised):
    wd, _, _ = supervised
    verdict = verdict_of(wd, "paper_f", STAGE1)
    assert verdict["supervisor_verdict"] == "should_stop"
    assert verdict["paper_end"]["stage_id"] == STAGE1
    for stage in (STAGE2, STAGE3):
        blocked = verdict_of(wd, "paper_f", stage)
        assert blocked["status"] == "blocked"
        assert blocked["reason"].startswith(
            f"the supervisor of {STAGE1} ended the paper (should_stop)"
        )
    md = (wd / REPORT).read_text()
    banner = (
        f"**PARTIAL: the supervisor of `{STAGE1}` stopped this paper (should_stop); "
        f"not run: {STAGE2}, {STAGE3}.**"
    )
    assert banner in md and md.index(banner) < md.index("## 1. Executive Summary")
    assert f"| Not run: {STAGE2} | blocked: the supervisor of {STAGE1} ended the paper" in md
    events = [json.loads(x) for x in (wd / "outputs/paper_f/events.jsonl").open()]
    assert any("ended the paper (should_stop)" in e["message"] for e in events)


def test_analyzer_and_reviewer_suggestions_reach_the_supervisor(supervised):
    wd, _, _ = supervised
    verdict = verdict_of(wd, "paper_f", STAGE1)
    found = {s["source"]: s for s in verdict["backtrack_suggestions"]}
    assert list(found) == ["results_analyzer", "code_reviewer"]  # the code that ran
    assert found["code_reviewer"]["confidence"] == "low"
    assert not (wd / "outputs/paper_f/backtracks.jsonl").exists()  # not taken


def design_order(wd) -> list[str]:
    """Which sibling stage's design Snakemake ran first, on one core (both ready at once)."""
    designs = [f"outputs/paper_p/stages/{s}/design.json" for s in (STAGE2, STAGE3)]
    run = snakemake(wd, "--cores", "1", *designs)
    assert run.returncode == 0, run.stderr[-3000:]
    found = re.findall(
        r"rule design:\n(?:.*\n)*?\s+wildcards: paper=paper_p, stage=(\w+)", run.stderr
    )
    for path in designs:
        (wd / path).unlink()
    return found


def test_change_priority_reorders_siblings_whose_dependencies_are_met(supervised):
    wd, first, _ = supervised
    verdict = json.loads((stage_dir(wd, "paper_p", STAGE1) / "verdict.json").read_text())
    assert verdict["supervisor_verdict"] == "change_priority"
    record = verdict["priority"]
    assert record["order"] == [STAGE3, STAGE2]
    assert [r.split(":")[0] for r in record["refused"]] == [STAGE0, "stage9_nothing"]
    priority = wd / "outputs/paper_p/priority.json"
    assert json.loads(priority.read_text())["order"] == [STAGE3, STAGE2]
    assert design_order(wd) == [STAGE3, STAGE2]  # the supervisor's order
    # Control: the other order runs the other way (the priority decides, not chance).
    priority.write_text(json.dumps({"from": "test", "order": [STAGE2, STAGE3], "refused": []}))
    assert design_order(wd) == [STAGE2, STAGE3]
