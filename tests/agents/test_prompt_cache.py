"""Prompt caching that pays: each request carries its own agent's tool; its stable
prefix is written, with the lifetime that pays, only where the pipeline expects the
agent's next call to read it in time; nothing marked that the model cannot cache."""

import dataclasses
import json
import struct
import zlib
from pathlib import Path

import pytest
import yaml

from agents import cache_lifetime, prompt_cache, supervisor
from agents.llm_providers import own_tool
from agents.runner import call_agent
from tests.support.fake_llm import FakeLLMServer, PromptCache, Reply, Script, session_factory

GOOD = {"stage_id": "stage1_slab", "verdict": "ok_continue", "feedback": "fine"}
RECORDED_PLANNER = (
    Path(__file__).resolve().parents[2]
    / "examples/papers/ag_etalon_2026/recordings/paper/planner.a1.yaml"
)


@pytest.fixture
def make_session(tmp_path, monkeypatch):
    return session_factory(tmp_path, monkeypatch)


def png(width: int, height: int) -> bytes:
    row = b"\x00" + b"\x80" * width
    chunk = lambda kind, data: (  # noqa: E731
        struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    )
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(row * height))
        + chunk(b"IEND", b"")
    )


@pytest.mark.parametrize(
    "model,minimum",
    [
        ("claude-opus-4-5", 4096),
        ("claude-opus-4-5-20251101", 4096),
        ("claude-haiku-4-5", 4096),
        ("claude-sonnet-4-5-20250929", 1024),
        ("claude-opus-4-20250514", 1024),
        ("claude-opus-4-1", 1024),
        ("local-llama-3", 4096),  # unknown: held to the largest minimum
    ],
)
def test_each_model_has_its_caching_minimum(model, minimum):
    assert prompt_cache.min_tokens(model) == minimum


def test_a_prefix_below_the_minimum_is_never_marked():
    assert prompt_cache.marks("claude-opus-4-5", [3000, 1100]) == [False, True]
    assert prompt_cache.marks("claude-opus-4-5", [3000, 500]) == [False, False]
    assert prompt_cache.marks("claude-sonnet-4-5", [3000, 500]) == [True, True]
    assert prompt_cache.marks("claude-sonnet-4-5", [2000] * 6) == [True] * 4 + [False] * 2


def test_an_image_counts_as_the_api_counts_it():
    assert prompt_cache.image_tokens(png(750, 100)) == 100
    assert prompt_cache.image_tokens(png(3136, 1568)) == 1568 * 784 // 750  # scaled down
    assert prompt_cache.image_tokens(b"not an image") == 1600


def ask(session, agent=supervisor.AGENT, attempt=1, context=None, images=(), stage="stage1_slab"):
    return call_agent(
        agent,
        session=session,
        stage_id=stage,
        attempt=attempt,
        context=context or {"progress": [f"before {stage}"]},
        images=list(images),
    )


def planned(session, minutes=(2, 2, 2), auto_approve=True, stage_ids=()):
    """A plan of stages s0, s1, ... (or `stage_ids`) whose simulations are budgeted
    `minutes` each."""
    ids = stage_ids or [f"s{n}" for n in range(len(minutes))]
    stages = [
        {"stage_id": i, "runtime_budget_minutes": m} for i, m in zip(ids, minutes, strict=False)
    ]
    (session.out_dir / "plan.json").parent.mkdir(parents=True, exist_ok=True)
    (session.out_dir / "plan.json").write_text(json.dumps({"output": {"stages": stages}}))
    gates = frozenset({"material_checkpoint"} if auto_approve else ())
    return dataclasses.replace(session, auto_approved=gates)


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_each_request_carries_only_its_own_agents_tool(make_session):
    with FakeLLMServer(Script(Reply(GOOD))) as server:
        ask(make_session("anthropic", server))
        body = server.requests[0]["json"]
    assert [t["name"] for t in body["tools"]] == ["submit_supervisor"]
    assert '"title"' not in json.dumps(body["tools"])  # pydantic's titles repeat the names


Gap = cache_lifetime.Gap


@pytest.mark.parametrize(
    "gaps,lifetime",
    [
        ([Gap(280)], "5m"),  # one read within 5 minutes: 1.25 + 0.1 < 2
        ([Gap(460)], None),  # one read after 5 minutes: an hour's write costs 2.1 > 2
        ([Gap(460), Gap(460)], "1h"),  # two reads within the hour: 2 + 0.2 < 3
        ([Gap(460), Gap(4000)], None),  # the second read comes after the hour
        ([], None),  # never read
        ([cache_lifetime.PERSON, Gap(10)], None),  # behind a gate that waits for a person
        ([Gap(160, 300)], "5m"),  # in time in 47 % of runs: above the 28 % that pays
        ([Gap(160, 600)], None),  # in time in 23 % of runs: the premium is lost more often
    ],
)
def test_the_lifetime_is_the_one_whose_expected_reads_pay(gaps, lifetime):
    assert cache_lifetime.ttl(gaps) == lifetime


def test_a_call_likely_to_find_an_earlier_write_marks_it_to_read_it():
    assert cache_lifetime.lifetimes([Gap(280)]) == ["5m", "5m"]
    # The hour's entry is read by 5-minute marks: the cheaper write were it gone.
    assert cache_lifetime.lifetimes([Gap(460), Gap(460)]) == ["1h", "5m", "5m"]
    assert cache_lifetime.lifetimes([Gap(460)]) == [None, None]
    assert cache_lifetime.lifetimes([Gap(160, 600)]) == [None, None]
    assert cache_lifetime.lifetimes([Gap(400), Gap(400), Gap(4000), Gap(100)]) == [
        "1h",
        "5m",
        "5m",
        "5m",
        "5m",
    ]


def test_expected_gaps_follow_the_plans_simulations_and_gates():
    stages = [{"stage_id": f"s{n}", "runtime_budget_minutes": m} for n, m in enumerate((2, 5))]
    calls = (len(cache_lifetime.stage_agents()) - 1) * cache_lifetime.MODEL_CALL_SECONDS
    auto = {"material_checkpoint"}
    # The designer's next call waits for stage 0's simulation, the supervisor's for stage 1's.
    assert cache_lifetime.stage_gaps("simulation_designer", stages, auto) == [Gap(calls, 120)]
    assert cache_lifetime.stage_gaps("supervisor", stages, auto) == [Gap(calls, 300)]
    assert cache_lifetime.stage_gaps("supervisor", stages, ()) == [cache_lifetime.PERSON]


def test_an_agents_prefix_is_read_by_its_next_stage_while_it_lives(make_session):
    """Sonnet caches from 1024 tokens: the supervisor's tool, the rules and its
    instructions are written in stage 0 and read in stage 1 (a 5-minute write: the plan
    expects the next call in under 5 minutes); past the lifetime it is written again."""
    clock = Clock()
    cache = PromptCache(prompt_cache.CACHE_MIN_TOKENS, clock=clock)
    with FakeLLMServer(Script(*[Reply(GOOD)] * 4), prompt_cache=cache) as server:
        session = planned(make_session("anthropic", server, model="claude-sonnet-4-5"))
        ask(session, stage="s0")
        clock.now += 200
        ask(session, stage="s1")
        clock.now += 400  # made wrong: the last call comes after the 5 minutes
        ask(session, stage="s2")
        ask(session, stage="s9")  # not in the plan: no read is expected, nothing written
        marks = [json.dumps(r["json"]).count("cache_control") for r in server.requests]
    s0, s1, s2, s9 = session.ledger.entries()
    assert marks == [1, 1, 1, 0]  # the last call marks to read what s1 kept
    written = s0["cache_creation_input_tokens"]
    assert written > 1024 and s0["cache_read_input_tokens"] == 0
    assert s1["cache_read_input_tokens"] == written and s1["cache_creation_input_tokens"] == 0
    assert s2["cache_read_input_tokens"] == 0 and s2["cache_creation_input_tokens"] == written
    assert s9["cache_read_input_tokens"] == s9["cache_creation_input_tokens"] == 0


def test_an_hours_write_is_marked_and_billed_as_such(make_session):
    clock = Clock()
    cache = PromptCache(prompt_cache.CACHE_MIN_TOKENS, clock=clock)
    with FakeLLMServer(Script(*[Reply(GOOD)] * 3), prompt_cache=cache) as server:
        session = make_session("anthropic", server, model="claude-sonnet-4-5")
        session = planned(session, minutes=(10, 10, 10))
        for stage in ("s0", "s1", "s2"):
            ask(session, stage=stage)
            clock.now += 900  # 15 minutes: a 5-minute write would be gone
        first = server.requests[0]["json"]["messages"][0]["content"]
    s0, s1, s2 = session.ledger.entries()
    assert [b.get("cache_control") for b in first][:2] == [{"type": "ephemeral", "ttl": "1h"}, None]
    written = s0["cache_creation_1h_input_tokens"]
    assert written > 1024 and s0["cache_creation_input_tokens"] == 0
    assert s1["cache_read_input_tokens"] == written == s2["cache_read_input_tokens"]
    sonnet = (s0["input_tokens"] * 3 + written * 6 + s0["output_tokens"] * 15) / 1e6
    assert s0["cost_usd"] == pytest.approx(sonnet)  # an hour's write at 2x the input price


def test_a_block_read_by_no_later_call_is_never_written(make_session):
    """The planner is called once: its paper is sent, never marked."""
    planner_output = yaml.safe_load(RECORDED_PLANNER.read_text())["output"]
    paper = {"paper_text": "The measured reflectance rises. " * 1000}
    cache = PromptCache(prompt_cache.CACHE_MIN_TOKENS)
    with FakeLLMServer(Script(Reply(planner_output)), prompt_cache=cache) as server:
        session = planned(make_session("anthropic", server))
        ask(session, agent="planner", stage="paper", context=paper)
        body = json.dumps(server.requests[0]["json"])
    assert "measured reflectance" in body and "cache_control" not in body
    [entry] = session.ledger.entries()
    assert entry["cache_creation_input_tokens"] == entry["cache_read_input_tokens"] == 0


def test_no_breakpoint_below_the_models_minimum(make_session, tmp_path):
    plots = [tmp_path / "p.png"]
    plots[0].write_bytes(png(1200, 900))
    with FakeLLMServer(Script(Reply(GOOD), Reply(GOOD))) as server:
        session = planned(make_session("anthropic", server, model="claude-sonnet-4-5"))
        ask(session, stage="s0", images=plots)
        marked = server.requests[0]["json"]["messages"][0]["content"]
        ask(planned(make_session("anthropic", server)), stage="s0")  # Opus: 4096 minimum
        unmarked = server.requests[1]["json"]
    # The instructions close the prefix; this stage's images come after it.
    assert [b["type"] for b in marked if "cache_control" in b] == ["text"]
    assert [b["type"] for b in marked][-2:] == ["image", "text"]
    assert "cache_control" not in json.dumps(unmarked)


def test_local_paths_become_relative_to_the_papers_outputs(tmp_path):
    import sys

    from agents.runner import without_local_paths

    out = tmp_path / "outputs" / "p"
    context = {
        "stdout": f"wrote {out}/stages/s1/run/flux.csv\n{sys.prefix}/lib/numpy/x.py:89: warning",
        "files": [f"{out}/stages/s1/run/a.h5", f"{tmp_path}/outputs/.agent_cache"],
        "n": 3,
    }
    clean = without_local_paths(context, out)
    assert clean["stdout"] == "wrote stages/s1/run/flux.csv\n<python>/lib/numpy/x.py:89: warning"
    assert clean["files"] == ["stages/s1/run/a.h5", "../.agent_cache"]
    assert clean["n"] == 3 and str(tmp_path) not in str(clean)


def test_the_supervisor_sees_only_answers_given_before_its_inputs(tmp_path):
    seen = tmp_path / "stages" / "stage0" / "supervisor_answers_seen.json"
    plan = {"summary": "s", "stages": ["stage0", "stage1"]}

    def context(analysis: dict, answers: list[dict]) -> dict:
        return supervisor.context(
            plan,
            {"stage_id": "stage0"},
            analysis,
            [],
            figure_comparisons=[],
            revision_counts={},
            backtrack_suggestions=[],
            user_interactions=answers,
            answers_seen=seen,
        )

    def answer(n: int, when: str) -> dict:
        response = {"action": "approve", "sha256": "0" * 64, "nonce": "n", "note": f"a{n}"}
        return {
            "id": f"U{n}",
            "timestamp": when,
            "interaction_type": "clarification",
            "question": "q",
            "user_response": response,
            "impact": "i",
            "decision_key": "k",
        }

    first = context({"x": 1}, [answer(1, "2026-01-01T10:00:00")])
    assert first["user_interactions"] == [
        {
            "interaction_type": "clarification",
            "question": "q",
            "answer": {"action": "approve", "note": "a1"},
            "impact": "i",
        }
    ]
    later = [answer(1, "2026-01-01T10:00:00"), answer(2, "2026-01-01T11:00:00")]
    assert context({"x": 1}, later) == first  # the same inputs: the later answer is not one
    redone = context({"x": 2}, later)  # the stage was redone after both answers
    assert [a["answer"]["note"] for a in redone["user_interactions"]] == ["a1", "a2"]


def test_the_tool_a_request_carries_counts_against_the_context_window(make_session):
    from agents.context_window import ContextOverflowError

    tool = prompt_cache.text_tokens(own_tool(supervisor.AGENT))
    with FakeLLMServer(Script(Reply(GOOD))) as server:
        session = make_session("anthropic", server)
        assert json.loads(session.provider.tools_text(supervisor.AGENT)) == own_tool("supervisor")
        rules_and_tool = {"context_window_tokens": 1000 + tool, "max_output_tokens": 1000}
        with pytest.raises(ContextOverflowError):  # room for the tool, none for the rest
            ask(make_session("anthropic", server, **rules_and_tool))
        assert server.count() == 0


def test_the_fake_api_caches_per_model_minimum_and_expires_each_lifetime():
    """The instrument the bill is measured with: Opus caches nothing below 4096 tokens
    where Sonnet does; a 5-minute entry is gone after 5 minutes, an hour's is not, and
    a read renews it."""
    clock = Clock()
    cache = PromptCache(prompt_cache.CACHE_MIN_TOKENS, clock=clock)

    def body(model, ttl=None, text="x" * 8000):  # about 2000 tokens
        mark = {"type": "ephemeral"} | ({"ttl": ttl} if ttl else {})
        block = {"type": "text", "text": text, "cache_control": mark}
        return {"model": model, "messages": [{"role": "user", "content": [block]}]}

    assert cache.usage(body("claude-opus-4-5"), 10)["cache_creation_input_tokens"] == 0
    written = cache.usage(body("claude-sonnet-4-5"), 10)
    assert written["cache_creation_input_tokens"] > 1024
    assert written["cache_creation"]["ephemeral_5m_input_tokens"] > 1024
    clock.now += 299
    assert cache.usage(body("claude-sonnet-4-5"), 10)["cache_read_input_tokens"] > 1024
    clock.now += 301  # 5 minutes after the read that renewed it: gone
    assert cache.usage(body("claude-sonnet-4-5"), 10)["cache_read_input_tokens"] == 0
    hour = cache.usage(body("claude-sonnet-4-5", "1h", "y" * 8000), 10)
    assert hour["cache_creation"]["ephemeral_1h_input_tokens"] > 1024
    clock.now += 3000
    assert cache.usage(body("claude-sonnet-4-5", text="y" * 8000), 10)["cache_read_input_tokens"]
    clock.now += 3601
    assert not cache.usage(body("claude-sonnet-4-5", text="y" * 8000), 10)[
        "cache_read_input_tokens"
    ]
