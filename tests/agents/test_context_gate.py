"""A prompt that overflows the context window is an answerable gate.

The planner is called for real (agents.runner.call_agent, replay provider) with a
paper whose Results section pushes it over the window: nothing is cut silently;
each answer written by `reprolab answer` is carried out on the next call and
recorded in provenance. tests/report/test_stop_reports.py runs the same through Snakemake.
"""

import argparse
import json
import shutil

import pytest
import yaml

from agents import planner
from agents.context_gate import PaperStopped
from agents.context_window import ContextOverflowError, methods_only
from agents.runner import call_agent
from reprolab.cli import control
from reprolab.gates import protocol
from reprolab.settings import agent_session
from tests.support.pipeline import EXAMPLE

PAPER_TEXT = (EXAMPLE / "paper.md").read_text()
RESULTS = "## 2. Results"
LONG = PAPER_TEXT.replace(RESULTS, RESULTS + "\n\n" + "The measured reflectance rises. " * 400)


PROVIDER = {"kind": "replay", "context_window_tokens": 6000, "max_output_tokens": 1000}


def session(tmp_path, **provider):
    config = {"outputs_dir": str(tmp_path), "provider": {**PROVIDER, **provider}}
    return agent_session(config, "p", tmp_path / "p", EXAMPLE / "recordings")


def plan(sess, text=LONG, attempt=1, feedback=None):
    context = planner.context("p", text, "optics", [])
    if feedback:
        context["planner_feedback"] = feedback
    return call_agent(
        planner.AGENT, session=sess, stage_id="paper", attempt=attempt, context=context
    )


def answer(sess, option, **kw):
    [gate] = protocol.pending_gates(sess.out_dir)
    args = {"gate": gate.gate_id, "option": option, "note": "", "file": None, "model": None}
    control.answer_option(sess.out_dir, argparse.Namespace(**{**args, "window": None, **kw}))
    return gate


def test_overflow_waits_and_nothing_is_cut_silently(tmp_path):
    sess = session(tmp_path)
    for _ in range(2):  # a rerun asks the same question, still sends nothing
        with pytest.raises(ContextOverflowError, match="WAITING FOR YOU") as err:
            plan(sess)
    assert "reprolab answer p context.paper.planner.a1 OPTION" in str(err.value)
    [gate] = protocol.pending_gates(sess.out_dir)
    assert gate.choices == ["methods_only", "shorten_sections", "larger_model", "stop"]
    assert not sess.ledger.entries()  # no call was made
    with pytest.raises(Exception, match="not offered"):
        answer(sess, "summarize_everything")


def test_methods_only_leaves_out_results_and_says_so(tmp_path):
    sess = session(tmp_path)
    with pytest.raises(ContextOverflowError):
        plan(sess)
    gate = answer(sess, "methods_only")
    art = plan(sess)
    prov = art["provenance"]
    assert prov["context_recoveries"] == ["methods_only"]
    [note] = prov["context_left_out"]
    assert "2. Results" in note and f"answer to {gate.gate_id}" in note
    log = [
        json.loads(x)
        for x in (sess.out_dir / "user_interactions.jsonl").read_text().split("\n")
        if x
    ]
    assert log[-1]["interaction_type"] == "context_overflow"
    assert log[-1]["alternatives"] == ["shorten_sections", "larger_model", "stop"]
    assert log[-1]["context"]["agent"] == "planner"


def test_the_agent_s_next_attempt_keeps_the_answer_without_a_new_gate(tmp_path):
    """The reviewer's feedback makes a new prompt for attempt 2, not a new question."""
    recordings = tmp_path / "recordings"
    shutil.copytree(EXAMPLE / "recordings", recordings)
    first = yaml.safe_load((recordings / "paper" / "planner.a1.yaml").read_text())
    (recordings / "paper" / "planner.a2.yaml").write_text(yaml.safe_dump(first | {"attempt": 2}))
    sess = agent_session(
        {"outputs_dir": str(tmp_path), "provider": PROVIDER}, "p", tmp_path / "p", recordings
    )
    with pytest.raises(ContextOverflowError):
        plan(sess)
    gate = answer(sess, "methods_only")
    plan(sess)
    prov = plan(sess, attempt=2, feedback="Stage 2 needs a longer budget.")["provenance"]
    assert prov["attempt"] == 2 and prov["context_recoveries"] == ["methods_only"]
    assert f"answer to {gate.gate_id}" in prov["context_left_out"][0]
    assert protocol.pending_gates(sess.out_dir) == []


def test_shorten_sections_keeps_methods_whole(tmp_path):
    sess = session(tmp_path)
    with pytest.raises(ContextOverflowError):
        plan(sess)
    answer(sess, "shorten_sections")
    prov = plan(sess)["provenance"]
    assert prov["context_recoveries"] == ["shorten_sections"]
    assert "2. Results" in prov["context_left_out"][0]
    assert "1. Methods" not in prov["context_left_out"][0]


def test_larger_model_is_used_for_this_agent(tmp_path):
    sess = session(tmp_path)
    with pytest.raises(ContextOverflowError):
        plan(sess)
    with pytest.raises(Exception, match="--model"):
        answer(sess, "larger_model")
    answer(sess, "larger_model", model="claude-sonnet-4-5", window=1_000_000)
    prov = plan(sess)["provenance"]
    assert prov["context_recoveries"] == []  # the whole paper was sent
    assert prov["estimated_prompt_tokens"] > 6000
    assert "model claude-sonnet-4-5 (1000000 tokens)" in prov["context_left_out"][0]


def test_stop_ends_the_paper(tmp_path):
    sess = session(tmp_path)
    with pytest.raises(ContextOverflowError):
        plan(sess)
    answer(sess, "stop", note="too long for now")
    with pytest.raises(PaperStopped, match="PARTIAL"):
        plan(sess)
    for _ in range(2):  # and every later agent call of the paper stops too
        with pytest.raises(PaperStopped, match="PARTIAL"):
            plan(sess, text="short")
    stopped = json.loads((sess.out_dir / "stopped.json").read_text())
    assert stopped["note"] == "too long for now"


def test_an_answer_that_still_does_not_fit_asks_again_without_it(tmp_path):
    sess = session(tmp_path, context_window_tokens=2500)
    with pytest.raises(ContextOverflowError):
        plan(sess)
    answer(sess, "methods_only")
    with pytest.raises(ContextOverflowError, match=r"context\.paper\.planner\.a1\.r2"):
        plan(sess)
    [again] = protocol.pending_gates(sess.out_dir)
    assert again.choices == ["shorten_sections", "larger_model", "stop"]


def test_a_configured_policy_is_named_and_no_gate_opens(tmp_path):
    sess = session(tmp_path, context_policy="methods_only")
    prov = plan(sess)["provenance"]
    assert "config provider.context_policy methods_only" in prov["context_left_out"][0]
    assert protocol.pending_gates(sess.out_dir) == []


def test_a_paper_without_a_methods_heading_is_not_cut_blindly():
    text = "Some paper text without any heading. " * 1000
    assert methods_only(text) == text


def test_agent_calls_and_gate_answers_are_events_with_levels(tmp_path):
    sess = session(tmp_path)
    with pytest.raises(ContextOverflowError):
        plan(sess)
    answer(sess, "methods_only")
    plan(sess)
    events = [json.loads(x) for x in (sess.out_dir / "events.jsonl").read_text().splitlines()]
    levels = {e["kind"]: e["level"] for e in events}
    assert levels["gate"] == "quiet" and levels["gate_answer"] == "normal"
    assert levels["agent_call"] == "verbose" and levels["context_recovery"] == "normal"
    [call] = [e for e in events if e["kind"] == "agent_call"]
    assert "p/paper/planner/a1: replay" in call["message"] and "tokens" in call["message"]


def test_interactive_answer_walks_the_open_gates(tmp_path, monkeypatch, capsys):
    config = {
        "outputs_dir": str(tmp_path),
        "papers": [{"paper_dir": str(EXAMPLE)}],
        "provider": {"kind": "replay", "context_window_tokens": 6000, "max_output_tokens": 1000},
    }
    paper = "silica_bragg_2026"
    sess = agent_session(config, paper, tmp_path / paper, EXAMPLE / "recordings")
    with pytest.raises(ContextOverflowError):
        plan(sess)
    replies = iter(["shorten_sections", "keep the figures' discussion"])
    monkeypatch.setattr("builtins.input", lambda prompt="": next(replies))
    control.answer_walk(config, None)
    assert "context.paper.planner.a1 (context_overflow)" in capsys.readouterr().out
    decision = json.loads((sess.out_dir / "gates/context.paper.planner.a1.json").read_text())
    assert decision["option"] == "shorten_sections"
    assert plan(sess)["provenance"]["context_recoveries"] == ["shorten_sections"]
