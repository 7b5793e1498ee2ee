"""A live model is paid once and billed truly.

Every case goes through the real SDK over HTTP to the scripted fake server, for
both API providers; request counts come from the server's log and money from
the ledger, so a round that was paid but not recorded (or sent twice) fails here.
"""

import argparse
import json

import pytest

from agents import execution_validator, supervisor
from agents.ledger import BudgetExceededError
from agents.providers import InvalidOutputError, ModelRefusedError, ProviderError
from reprolab.cli import control
from reprolab.errors import GateError
from reprolab.gates import protocol
from tests.agents.test_llm_providers import GOOD, KINDS, USAGE, ask
from tests.agents.test_prompt_cache import planned
from tests.support.fake_llm import (
    FakeLLMServer,
    PromptCache,
    Raw,
    Reply,
    Script,
    Status,
    Text,
    session_factory,
)

BAD = {"stage_id": "stage1_slab", "verdict": "carry_on", "feedback": "x"}
ONE_ROUND_USD = (1234 * 5 + 56 * 25 + 700 * 0.5) / 1e6  # USAGE at claude-opus-4-5 prices


@pytest.fixture
def make_session(tmp_path, monkeypatch):
    return session_factory(tmp_path, monkeypatch)


def paid(session) -> dict:
    """Tokens, requests and money of the ledger's paid entries, summed."""
    entries = [e for e in session.ledger.entries() if e["source"].startswith("api")]
    return {
        "input_tokens": sum(e["input_tokens"] for e in entries),
        "requests": sum(e["requests"] for e in entries),
        "cost_usd": sum(e["cost_usd"] or 0 for e in entries),
        "sources": [e["source"] for e in entries],
    }


def answer(session, gate_id, command, **kw):
    args = argparse.Namespace(command=command, gate=gate_id, **{"note": "", **kw})
    control.answer(session.out_dir, args)


@pytest.mark.parametrize("kind", KINDS)
def test_invalid_output_becomes_an_answerable_gate_that_a_rerun_does_not_pay_again(
    kind, make_session, tmp_path
):
    with FakeLLMServer(Script(*[Reply(BAD, USAGE)] * 4, Reply(GOOD, USAGE))) as server:
        session = make_session(kind, server)
        with pytest.raises(InvalidOutputError, match="still invalid") as err:
            ask(session)
        assert "WAITING FOR YOU" in str(err.value) and "reprolab reject" in str(err.value)
        assert server.count() == 4
        assert paid(session)["input_tokens"] == 4 * 1234
        assert paid(session)["sources"] == ["api_invalid"]
        [gate] = protocol.pending_gates(session.out_dir)  # `reprolab status` lists it
        assert gate.kind == "invalid_agent_output" and gate.actions == ["edit", "reject"]
        assert "carry_on" in json.dumps(gate.payload["raw_output"])

        for _ in range(2):  # a no-op rerun: nothing is asked, nothing is paid
            with pytest.raises(GateError, match="would be paid again"):
                ask(session)
        assert server.count() == 4 and len(session.ledger.entries()) == 1

        answer(session, gate.gate_id, "reject", note="use the verdict ok_continue")
        art = ask(session)
        assert art["output"]["verdict"] == "ok_continue"
        assert server.count() == 5
        assert "use the verdict ok_continue" in json.dumps(server.requests[4]["json"])
        assert protocol.pending_gates(session.out_dir) == []
        ask(session)  # answered: later reruns are served from the cache
        assert server.count() == 5


def test_invalid_output_edited_by_the_user_is_the_agents_answer(make_session, tmp_path):
    with FakeLLMServer(Script(*[Reply(BAD, USAGE)] * 4, Reply(GOOD, USAGE))) as server:
        session = make_session("anthropic", server)
        with pytest.raises(InvalidOutputError):
            ask(session)
        [gate] = protocol.pending_gates(session.out_dir)
        with pytest.raises(GateError, match="accepts"):
            answer(session, gate.gate_id, "approve")  # nothing valid to approve
        bad_edit = tmp_path / "bad.json"
        bad_edit.write_text(json.dumps({**GOOD, "verdict": "carry_on"}))
        answer(session, gate.gate_id, "edit", file=str(bad_edit))
        with pytest.raises(Exception, match="(?s)revised_data.*verdict"):
            ask(session)  # an invalid edit is refused, naming the file and field
        good_edit = tmp_path / "good.json"
        good_edit.write_text(json.dumps(GOOD))
        answer(session, gate.gate_id, "edit", file=str(good_edit))
        art = ask(session)
        assert server.count() == 4
        # The edit answers that prompt only: once the inputs change, the agent is asked.
        changed = ask(session, context={"progress": ["stage0 redone"]})
        assert server.count() == 5 and changed["provenance"]["source"] == "api"
    assert art["output"]["verdict"] == "ok_continue" and art["provenance"]["source"] == "user"


@pytest.mark.parametrize("kind", KINDS)
def test_cut_off_answer_is_asked_again_with_more_room_and_never_cached(kind, make_session):
    cut = Reply(GOOD, USAGE, stop="max_tokens")  # fits the schema, but it was cut off
    with FakeLLMServer(Script(cut, Reply(GOOD, USAGE), Reply(GOOD, USAGE))) as server:
        session = make_session(kind, server, max_output_tokens=1000, max_output_tokens_cap=4000)
        assert ask(session)["output"]["verdict"] == "ok_continue"
        assert [r["json"]["max_tokens"] for r in server.requests] == [1000, 2000]
        assert paid(session)["input_tokens"] == 2 * 1234 and paid(session)["requests"] == 2
        ask(session)
        assert server.count() == 2  # the complete answer was cached
        bigger = make_session(kind, server, max_output_tokens=3000)
        ask(bigger)  # another output limit is another key: asked again
        assert server.count() == 3


@pytest.mark.parametrize("kind", KINDS)
def test_answer_cut_off_at_the_cap_says_max_tokens_and_is_not_cached(kind, make_session):
    cut = Reply(GOOD, USAGE, stop="max_tokens")
    with FakeLLMServer(Script(*[cut] * 6)) as server:
        session = make_session(kind, server, max_output_tokens=1000, max_output_tokens_cap=2000)
        with pytest.raises(InvalidOutputError, match="cut off at max_tokens=2000"):
            ask(session)
        assert server.count() == 2  # 1000, then 2000; no feedback rounds at the same limit
    assert paid(session)["input_tokens"] == 2 * 1234
    assert not list((session.out_dir.parent / ".agent_cache").rglob("*.json"))


@pytest.mark.parametrize("kind", KINDS)
def test_raising_the_output_cap_as_the_question_advises_makes_the_run_go_on(kind, make_session):
    cut = Reply(GOOD, USAGE, stop="max_tokens")
    with FakeLLMServer(Script(cut, cut, Reply(GOOD, USAGE))) as server:
        session = make_session(kind, server, max_output_tokens=1000, max_output_tokens_cap=2000)
        with pytest.raises(InvalidOutputError, match="raise the cap in the config") as err:
            ask(session)
        assert "WAITING FOR YOU" in str(err.value)
        with pytest.raises(GateError, match="would be paid again"):
            ask(session)  # the same cap: the question still waits, nothing is sent
        assert server.count() == 2
        raised = make_session(kind, server, max_output_tokens=1000, max_output_tokens_cap=8000)
        art = ask(raised)  # only the cap raised, no gate answered
        assert art["output"]["verdict"] == "ok_continue" and art["provenance"]["source"] == "api"
        # Asked again above the 2000 that cut it off, never at 1000 and 2000 again.
        assert [r["json"]["max_tokens"] for r in server.requests[2:]] == [4000]
    assert protocol.pending_gates(session.out_dir) == []
    assert "withdrawn" in (session.out_dir / "events.jsonl").read_text()


@pytest.mark.parametrize("kind", KINDS)
def test_budget_is_checked_before_every_feedback_round(kind, make_session):
    with FakeLLMServer(Script(*[Reply(BAD, USAGE)] * 10)) as server:
        session = make_session(kind, server, budget={"max_usd": 1.5 * ONE_ROUND_USD})
        with pytest.raises(BudgetExceededError, match="stopped before its next round"):
            ask(session)
        assert server.count() == 2  # the second round crossed the budget; no third
        with pytest.raises(BudgetExceededError, match="not made"):
            ask(session, attempt=2)
        assert server.count() == 2
    assert paid(session)["sources"] == ["api_failed"]
    assert paid(session)["cost_usd"] == pytest.approx(2 * ONE_ROUND_USD)


@pytest.mark.parametrize("kind", KINDS)
def test_rounds_paid_before_a_provider_error_are_in_the_ledger(kind, make_session):
    with FakeLLMServer(Script(Reply(BAD, USAGE), Status(400, "bad request"))) as server:
        session = make_session(kind, server)
        with pytest.raises(ProviderError, match="bad request"):
            ask(session)
    assert server.count() == 2
    assert paid(session) == {
        "input_tokens": 1234,
        "requests": 2,
        "cost_usd": pytest.approx(ONE_ROUND_USD),
        "sources": ["api_failed"],
    }


@pytest.mark.parametrize("kind", KINDS)
def test_a_refusal_is_named_and_its_tokens_recorded(kind, make_session):
    refusal = Text("I can't help with that.", stop="refusal", usage=USAGE)
    with FakeLLMServer(Script(refusal, Reply(GOOD))) as server:
        session = make_session(kind, server)
        with pytest.raises(ModelRefusedError, match="model refused"):
            ask(session)
    assert server.count() == 1 and paid(session)["input_tokens"] == 1234


@pytest.mark.parametrize("kind", KINDS)
def test_an_empty_reply_is_never_echoed_back(kind, make_session):
    with FakeLLMServer(Script(Text("", usage=USAGE), Reply(GOOD, USAGE))) as server:
        session = make_session(kind, server)
        assert ask(session)["output"]["verdict"] == "ok_continue"
    second = server.requests[1]["json"]["messages"]
    assert [m for m in second if m["role"] == "assistant"] == []
    assert "reply was empty" in json.dumps(second)
    assert paid(session)["input_tokens"] == 2 * 1234  # the empty reply's tokens count


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(
    "body,ctype,says",
    [("<html>502 proxy</html>", "text/html", "not a model response"), ("{oops", None, "not JSON")],
)
def test_a_body_that_is_not_an_answer_is_one_clear_line(kind, body, ctype, says, make_session):
    raw = Raw(body, ctype) if ctype else Raw(body)
    with FakeLLMServer(Script(raw)) as server:
        session = make_session(kind, server)
        with pytest.raises(ProviderError, match=says) as err:
            ask(session)
    assert "\n" not in str(err.value) and "base_url" in str(err.value)
    assert err.value.__cause__ is None


def test_an_unpriced_model_is_shown_as_unpriced_not_zero(make_session):
    with FakeLLMServer(Script(Reply(GOOD, USAGE))) as server:
        session = make_session("openai_compatible", server, model="local-llama-3")
        ask(session)
    summary = json.loads((session.out_dir / "cost_summary.json").read_text())
    assert summary["total"]["cost_text"].startswith("unpriced (1 call(s) of local-llama-3")
    config = {"outputs_dir": str(session.out_dir.parent), "papers": [{"paper_id": "p"}]}
    try:
        text = control.status_text(config, "p")
    except Exception:  # noqa: BLE001 - status needs a full config; the summary is enough
        return
    assert "unpriced" in text and "$0.0000 spent" not in text


def test_record_mode_also_records_answers_served_from_the_cache(make_session, tmp_path):
    with FakeLLMServer(Script(Reply(GOOD, USAGE))) as server:
        first = make_session("anthropic", server, record_dir=str(tmp_path / "rec1"))
        ask(first)
        again = make_session("anthropic", server, record=True, record_dir=str(tmp_path / "rec2"))
        assert ask(again)["provenance"]["source"] == "cache"
    assert server.count() == 1
    recording = tmp_path / "rec2" / "stage1_slab" / "supervisor.a1.yaml"
    assert "input_tokens: 1234" in recording.read_text()  # the paid call's usage, kept


def test_prompts_hold_only_declared_inputs():
    plan = {"summary": "s", "stages": ["stage0", "stage1", "stage2"]}
    progress = [
        {"stage_id": "stage0", "status": "completed_success"},
        {"stage_id": "stage2", "status": "completed_failed"},  # later: left from a past run
    ]
    ctx = supervisor.context(
        plan,
        {"stage_id": "stage1"},
        {},
        progress,
        figure_comparisons=[],
        revision_counts={},
        backtrack_suggestions=[],
        user_interactions=[],
    )
    assert ctx["progress"] == [progress[0]]
    record = {"stage_id": "stage1", "exit_code": 0, "runtime_seconds": 12.34}
    assert "runtime_seconds" not in execution_validator.context(record, [], [])


def test_the_stable_prefix_is_read_from_the_prompt_cache_on_later_rounds(make_session):
    """Measured on the simulated cache: the paper (about 8k tokens) is written once, as
    the plan has the supervisor called again within 5 minutes, and read by the feedback
    round and by the next attempt, instead of paid in full."""
    paper = {"paper_text": "The measured reflectance rises. " * 1000, "progress": []}
    cache = PromptCache(min_tokens=4096)
    with FakeLLMServer(Script(Reply(BAD), Reply(GOOD), Reply(GOOD)), prompt_cache=cache) as server:
        session = make_session("anthropic", server)
        session = planned(session, stage_ids=("stage1_slab", "stage2"))
        ask(session, context=paper)
        ask(session, attempt=2, context={**paper, "progress": ["stage0 done"]})
    first, second = session.ledger.entries()
    assert first["cache_creation_input_tokens"] > 8000
    assert first["cache_read_input_tokens"] > 8000  # round 2 read round 1's write
    assert second["cache_read_input_tokens"] > 8000 and second["cache_creation_input_tokens"] == 0
    assert second["input_tokens"] < 2000


def test_the_same_run_gives_the_execution_validator_the_same_prompt():
    """Meep's wall-clock timings and progress lines differ between two runs of one script."""

    def stdout(fast: bool) -> str:
        progress = "" if fast else "on time step 32758 (time=20.4737), 0.000122109 s/step\n"
        head = "x" * (200 if fast else 140) + "\n"  # where the 4000-character tail began
        return head + (
            f"time for set_epsilon = {0.003 if fast else 0.0097} s\n"
            "field decay(t = 15.001875): 1.44e-11 / 0.25 = 5.76e-11\n"
            f"{progress}run 0 finished at t = 15.001875 (24003 timesteps)\n"
            f"Elapsed run time = {1.2 if fast else 3.4} s\n"
        )

    a, b = (
        execution_validator.context({"stage_id": "s", "stdout_tail": stdout(f)}, [], [])
        for f in (True, False)
    )
    assert a == b and "24003 timesteps" in a["stdout"]
