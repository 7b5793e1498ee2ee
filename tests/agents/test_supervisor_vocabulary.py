"""The supervisor's words against the code, and its whole vocabulary decided in code.

Unit level (no pipeline): the supervisor's structured claims and classification are
checked against the stage's comparison and the code's verdict, and the report strikes
what they contradict; backtrack suggestions of PhysicsSanity, the ResultsAnalyzer and
the CodeReviewer go through one decision matrix; change_priority is accepted only for
stages whose dependencies are met; the supervisor's end of the paper blocks the later
stages only. The same paths through real Snakemake: tests/report/test_supervisor_pipeline.py.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from agents.common import StageType
from agents.planner import PlannerOutput, PlanStage
from agents.supervisor import SupervisorOutput
from reprolab.errors import StageBlockedError
from reprolab.physics import claims
from reprolab.report import markdown, prose
from reprolab.steps import backtrack as bt
from reprolab.steps import eligibility

S0, S1, S2, S3 = "stage0_mat", "stage1_slab", "stage2_mirror", "stage3_cavity"


def comparison(height_rel: float, shift_rel: float = 5e-5, cls: str = "SUCCESS") -> dict:
    curve = {
        "curve_id": "T",
        "rms_abs": 0.001,
        "max_abs": 0.004,
        "metrics": {"feature_height_rel": height_rel, "feature_shift_rel": shift_rel},
        "features": [],
    }
    return {"figures": [{"figure_id": "fig2", "classification": cls, "curves": [curve]}]}


def supervisor(feedback: str, classification=None, claims_=()) -> dict:
    out = {"stage_id": S1, "verdict": "ok_continue", "feedback": feedback}
    if classification:
        out["classification"] = classification
    out["claims"] = list(claims_)
    return SupervisorOutput.model_validate(out).model_dump(mode="json")


PEAK_CLAIM = {
    "figure_id": "fig2",
    "curve_id": "T",
    "quantity": "feature_height_rel",
    "value": 0.1,
    "unit": "%",
    "relation": "<",
}
BOASTS = "SUCCESS: the single-slab validation passes with sub-0.1 % peak errors."


def conclusions(verdict_status: str, output: dict, comp: dict) -> str:
    verdict = {
        "stage_id": S1,
        "status": verdict_status,
        "reason": "fig2: " + comp["figures"][0]["classification"],
        "supervisor_verdict": output["verdict"],
        "supervisor": {"output": output},
    }
    rows = [("fig2", S1, f) for f in comp["figures"]]
    return "\n".join(markdown.conclusions_section([verdict], rows))


def standing(md: str) -> str:
    return re.sub(r"~~.*?~~", "", md, flags=re.S)


def test_a_failed_stage_called_success_with_wrong_numbers_is_struck():
    comp = comparison(height_rel=0.2, cls="FAILURE")
    out = supervisor(BOASTS, "SUCCESS", [PEAK_CLAIM])
    audit = claims.audit_supervisor(out, comp, "completed_failed")["sections"][0]
    assert audit["status"] == "contradicted"
    said = "; ".join(audit["details"])
    assert "classifies the stage SUCCESS, the code's verdict is completed_failed" in said
    assert "feature_height_rel; computed: 0.2" in said
    md = conclusions("completed_failed", out, comp)
    assert md.index("Final statement (code)") < md.index("Contradicted")
    assert f"~~{BOASTS}~~" in md and BOASTS not in standing(md)


def test_wrong_numbers_alone_strike_even_with_the_right_classification():
    out = supervisor("A FAILURE: peak heights within 0.1 % of the paper.", "FAILURE", [PEAK_CLAIM])
    md = conclusions("completed_failed", out, comparison(height_rel=0.2, cls="FAILURE"))
    assert "Contradicted by the code's numbers" in md and "computed: 0.2" in md


def test_a_class_word_or_status_word_alone_is_held_to_the_code():
    for text in ("Reproduced: a SUCCESS.", "Stage is completed_success."):
        out = supervisor(text)  # no structured classification, no numbers
        md = conclusions("completed_failed", out, comparison(0.2, cls="FAILURE"))
        assert f"~~{text}~~" in md, md


def test_unclassified_feedback_on_a_failed_stage_is_never_standing_unmarked():
    """The measured failure: 'validation passes' beside completed_failed, printed plain.
    Praise of a failed stage with no word of a problem is struck, the missing
    classification said beside it; feedback that names the failure carries the note."""
    text = "The single-structure validation passes."
    out = supervisor(text)
    md = conclusions("completed_failed", out, comparison(0.2, cls="FAILURE"))
    assert f"~~{text}~~" in md and text not in standing(md)
    assert "speaks of success ('passes'), the code's verdict is completed_failed" in md
    assert "gives no classification to check; the code's verdict is completed_failed" in md
    # numbers without a claim and no classification: the note stands beside the marks
    said = "Peak errors differ by 2 % here; the set-up has to be redone."
    md = conclusions("completed_failed", supervisor(said), comparison(0.2, cls="FAILURE"))
    assert "2 % [unchecked]" in md
    assert "unchecked: the supervisor gives no classification to check; the code's " in md
    assert "verdict is completed_failed" in md
    # praise with unclaimed numbers ("2D", "sub-0.1 %"): struck, not only marked
    said = "The 2D set-up passes with sub-0.1 % peak errors; the set-up can be reused."
    md = conclusions("completed_failed", supervisor(said), comparison(0.2, cls="FAILURE"))
    assert f"~~{said}~~" in md and "2 [unchecked]D" not in md
    ok = conclusions("completed_success", out, comparison(1e-4))
    assert f"{text}\n" in ok + "\n" and "unchecked" not in ok  # the example's own words


def test_true_claims_and_classification_stand_unmarked():
    out = supervisor("A SUCCESS: peak heights within 0.1 % of the paper.", "SUCCESS", [PEAK_CLAIM])
    md = conclusions("completed_success", out, comparison(height_rel=4e-4))
    assert "A SUCCESS: peak heights within 0.1 % of the paper." in standing(md)
    assert "[unchecked]" not in md and "Contradicted" not in md
    # an unclaimed number stays marked
    out = supervisor("A SUCCESS; the runtime was 12 s.", "SUCCESS")
    assert "12 [unchecked]" in conclusions("completed_success", out, comparison(4e-4))


def test_bounds_hold_only_on_their_side():
    comp = comparison(height_rel=0.0004)
    for relation, value, status in (
        ("<", 0.1, "ok"),
        (">", 0.1, "contradicted"),
        ("=", 0.1, "contradicted"),
    ):
        claim = {**PEAK_CLAIM, "relation": relation, "value": value}
        assert claims.judge_claims([claim], comp)[0]["status"] == status, relation


def test_old_supervisor_recordings_still_validate():
    old = {"stage_id": S1, "verdict": "ok_continue", "feedback": "fine"}
    out = SupervisorOutput.model_validate(old)
    assert out.claims == [] and out.classification is None and out.priority == []


# --- backtrack suggestions: one decision matrix for every agent that may suggest ---


def plan(*stages) -> PlannerOutput:
    return PlannerOutput.model_construct(
        stages=[
            PlanStage.model_construct(
                stage_id=sid,
                stage_type=StageType(kind),
                dependencies=list(deps),
                runtime_budget_minutes=1,
            )
            for sid, kind, deps in stages
        ]
    )


LINEAR = plan(
    (S0, "MATERIAL_VALIDATION", ()),
    (S1, "SINGLE_STRUCTURE", (S0,)),
    (S2, "ARRAY_SYSTEM", (S1,)),
)


def fake_run(tmp_path: Path):
    (tmp_path / "stages").mkdir(exist_ok=True)
    return SimpleNamespace(out_dir=tmp_path, paper_id="p", limits=SimpleNamespace(max_backtracks=2))


def sug(target, severity, confidence):
    return {"target_stage": target, "reason": "r", "severity": severity, "confidence": confidence}


def test_every_suggester_is_collected_with_its_source():
    found = bt.suggestions(
        {"backtrack_suggestion": sug(S0, "critical", "high")},
        {"backtrack_suggestion": sug(S1, "minor", "high")},
        {"verdict": "approve", "backtrack_suggestion": sug(S1, "significant", "low")},
    )
    assert [s["source"] for s in found] == list(bt.SUGGESTERS)
    # the one naming the target, strongest first; none named: the supervisor's own call
    assert bt.suggestion_for(found, S1)["source"] == "code_reviewer"
    assert bt.suggestion_for(found, S0)["source"] == "physics_sanity"
    assert bt.suggestion_for(found, S2) is None


@pytest.mark.parametrize(
    ("source", "severity", "confidence", "verdict"),
    [
        ("results_analyzer", "minor", "high", "ok_continue"),  # handled in this stage
        ("code_reviewer", "significant", "low", "ask_user"),  # the user is asked
        ("physics_sanity", "minor", "high", "ok_continue"),
    ],
)
def test_analyzer_and_reviewer_suggestions_meet_physics_sanitys_matrix(
    tmp_path, source, severity, confidence, verdict
):
    run = fake_run(tmp_path)
    stage = LINEAR.stages[2]
    found = [{"source": source, **sug(S1, severity, confidence)}]
    out = {"verdict": "backtrack_to_stage", "backtrack_target": S1, "feedback": "redo"}
    assert bt.backtrack(run, LINEAR, stage, out, found) == verdict
    events = (tmp_path / "events.jsonl").read_text()
    assert f"suggestion of {source} {severity}/{confidence}" in events
    assert not (tmp_path / "backtracks.jsonl").exists()  # nothing invalidated


def test_an_accepted_suggestion_is_kept_with_its_source(tmp_path):
    run = fake_run(tmp_path)
    found = [{"source": "results_analyzer", **sug(S1, "critical", "high")}]
    out = {"verdict": "backtrack_to_stage", "backtrack_target": S1, "feedback": "rods"}
    with pytest.raises(StageBlockedError, match="BACKTRACK 1/2"):
        bt.backtrack(run, LINEAR, LINEAR.stages[2], out, found)
    entry = json.loads((tmp_path / "backtracks.jsonl").read_text())
    assert entry["suggested_by"] == "results_analyzer" and entry["to"] == S1


# --- change_priority and the end of the paper, decided in code ---

BRANCHED = plan(
    (S0, "MATERIAL_VALIDATION", ()),
    (S1, "SINGLE_STRUCTURE", (S0,)),
    ("stage4_rod", "SINGLE_STRUCTURE", (S0,)),
    (S2, "ARRAY_SYSTEM", (S1,)),
)


def write_verdict(tmp_path: Path, stage_id: str, status: str) -> None:
    d = tmp_path / "stages" / stage_id
    d.mkdir(parents=True, exist_ok=True)
    (d / "verdict.json").write_text(json.dumps({"stage_id": stage_id, "status": status}))


def test_change_priority_only_among_stages_whose_dependencies_are_met(tmp_path):
    write_verdict(tmp_path, S0, "completed_success")
    stage1 = BRANCHED.stages[1]
    record = eligibility.change_priority(
        tmp_path, BRANCHED, stage1, "completed_success", ["stage4_rod", S2, S0, "stage9_x"]
    )
    # stage2 waits only for what it uses (stage1 and the materials), not for stage4
    assert record["order"] == ["stage4_rod", S2]
    refused = " | ".join(record["refused"])
    assert "stage0_mat: already run" in refused and "stage9_x: not a stage" in refused
    assert eligibility.priority_of(tmp_path, "stage4_rod") == 2
    assert eligibility.priority_of(tmp_path, S2) == 1
    # a stage it uses that has not completed is refused
    (tmp_path / eligibility.PRIORITY_FILE).unlink()
    record = eligibility.change_priority(
        tmp_path, BRANCHED, BRANCHED.stages[2], "completed_success", [S2]
    )
    assert record["refused"] == [
        "stage2_mirror: its dependency stage1_slab has not completed (not run)"
    ]
    # a failed current stage is no met dependency: nothing accepted, nothing written
    (tmp_path / eligibility.PRIORITY_FILE).unlink(missing_ok=True)
    record = eligibility.change_priority(
        tmp_path, LINEAR, LINEAR.stages[1], "completed_failed", [S2]
    )
    assert record["order"] == [] and not (tmp_path / eligibility.PRIORITY_FILE).exists()


def test_the_end_of_the_paper_blocks_later_stages_only(tmp_path):
    eligibility.end_paper(tmp_path, S1, "should_stop", "the slab already shows it")
    by_id = {s.stage_id: s for s in BRANCHED.stages}
    ended = {sid: eligibility.ended_before(tmp_path, BRANCHED, by_id[sid]) for sid in by_id}
    assert ended[S0] is None and ended[S1] is None  # may be redone
    assert ended[S2]["stage_id"] == S1 and ended["stage4_rod"]["stage_id"] == S1
    reason = eligibility.blocked_reason(by_id[S2], [], [], 0.0, None, ended[S2])
    assert reason.startswith("the supervisor of stage1_slab ended the paper (should_stop)")
    assert "the slab already shows it" not in reason  # its prose goes to the Conclusions
    eligibility.clear_paper_end(tmp_path, S2)  # another stage's verdict does not clear it
    assert (tmp_path / eligibility.PAPER_END_FILE).is_file()
    eligibility.clear_paper_end(tmp_path, S1)  # the stopping stage judged again does
    assert not (tmp_path / eligibility.PAPER_END_FILE).exists()


def test_prose_render_without_numbers_gives_no_number_note():
    section = claims.audit_supervisor(supervisor("fine"), comparison(1e-4), "completed_partial")
    text = prose.render("fine", section["sections"][0])
    assert "numbers marked" not in text


def test_a_backtracks_contradicted_reason_is_struck_in_the_history(tmp_path):
    run = fake_run(tmp_path)
    out = {"verdict": "backtrack_to_stage", "backtrack_target": S1, "feedback": BOASTS}
    said = claims.audit_supervisor(
        supervisor(BOASTS, "SUCCESS"), comparison(0.2, cls="FAILURE"), "completed_failed"
    )["sections"][0]
    with pytest.raises(StageBlockedError):
        bt.backtrack(run, LINEAR, LINEAR.stages[2], out, [], said)
    md = "\n".join(markdown.history_section(tmp_path, {}))
    assert f"~~{BOASTS}~~" in md and BOASTS not in standing(md)
    assert "classifies the stage SUCCESS" in md


def test_the_banner_says_who_ended_the_paper_and_how_to_go_on(tmp_path):
    end = eligibility.end_paper(tmp_path / "paper_x", S1, "should_stop", "enough")
    verdicts = [
        {"stage_id": S1, "status": "completed_success", "paper_end": end},
        {"stage_id": S2, "status": "blocked", "reason": "r"},
    ]
    text = "\n".join(markdown.paper_end_banner(verdicts))
    assert text.startswith(f"**PARTIAL: the supervisor of `{S1}` stopped this paper")
    assert f"reprolab invalidate paper_x {S2}" in text and end["file"] in text
    done = [{**verdicts[0], "paper_end": {**end, "verdict": "all_complete"}}]
    text = "\n".join(markdown.paper_end_banner(done))
    assert "PARTIAL" not in text and "ended this paper (all_complete); every stage" in text
    assert markdown.paper_end_banner([verdicts[1]]) == []


def test_a_user_who_went_on_is_not_told_the_paper_was_stopped(tmp_path):
    end = eligibility.end_paper(tmp_path, S1, "should_stop", "enough")
    verdicts = [{"stage_id": S1, "status": "completed_success", "paper_end": end}]
    assert markdown.paper_end_banner(verdicts)
    Path(end["file"]).unlink()
    assert markdown.paper_end_banner(verdicts) == []
