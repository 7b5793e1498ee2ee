"""Prompt caching that pays: a shared prefix above the model's minimum, read by the
calls of other agents; nothing marked that the model cannot cache."""

import struct
import zlib

import pytest

from agents import execution_validator, prompt_cache, supervisor
from agents.runner import call_agent
from tests.support.fake_llm import FakeLLMServer, PromptCache, Reply, Script, session_factory

GOOD = {"stage_id": "stage1_slab", "verdict": "ok_continue", "feedback": "fine"}
VALID_RUN = {"stage_id": "stage1_slab", "verdict": "pass", "diagnosis": "ran to the end"}


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


def ask(session, agent=supervisor.AGENT, attempt=1, context=None, images=()):
    return call_agent(
        agent,
        session=session,
        stage_id="stage1_slab",
        attempt=attempt,
        context=context or {"progress": ["stage0 done"]},
        images=list(images),
    )


def test_other_agents_read_the_tools_and_rules_from_the_cache(make_session):
    """Opus 4.5 caches nothing under 4096 tokens: the tools of every agent and the
    global rules go first and are the same in every request, so the second agent's
    call reads them although its own tool and prompt differ."""
    script = Script(Reply(GOOD), Reply(VALID_RUN))
    with FakeLLMServer(script, prompt_cache=PromptCache(4096)) as server:
        session = make_session("anthropic", server)
        ask(session)
        ask(session, execution_validator.AGENT, context={"stage_id": "stage1_slab"})
        first, second = (r["json"] for r in server.requests)
    assert first["tools"] == second["tools"] and first["system"] == second["system"]
    assert first["tool_choice"] != second["tool_choice"]
    one, two = session.ledger.entries()
    assert one["cache_creation_input_tokens"] >= 4096 and one["cache_read_input_tokens"] == 0
    assert two["cache_read_input_tokens"] == one["cache_creation_input_tokens"]
    assert two["cache_read_input_tokens"] > 2 * two["input_tokens"]


def test_shared_images_are_marked_and_read_by_the_next_agent(make_session, tmp_path):
    plots = []
    for n in range(3):
        plots.append(tmp_path / f"p{n}.png")
        plots[-1].write_bytes(png(1200, 900 + n))
    script = Script(Reply(GOOD), Reply(GOOD, stop="tool_use"))
    with FakeLLMServer(script, prompt_cache=PromptCache(4096)) as server:
        session = make_session("anthropic", server)
        ask(session, images=plots)
        ask(session, attempt=2, context={"progress": ["other"]}, images=plots)
        content = server.requests[0]["json"]["messages"][0]["content"]
    assert [("cache_control" in b) for b in content if b["type"] == "image"] == [0, 0, 1]
    _, second = session.ledger.entries()
    assert second["cache_read_input_tokens"] >= 4096 + 3 * 1440


def test_no_breakpoint_below_the_minimum_even_when_the_text_is_shared(make_session):
    """The paper's text is the shared prefix of a call; a short one on top of the
    tools is still marked, as their sum is above the minimum, but a model whose
    minimum the whole prompt cannot reach gets no mark at all."""
    with FakeLLMServer(Script(Reply(GOOD), Reply(GOOD))) as server:
        session = make_session("anthropic", server, model="claude-opus-4-5")
        ask(session, context={"paper_text": "short", "progress": []})
        marked = server.requests[0]["json"]
    assert "cache_control" in marked["system"][0]
    assert "cache_control" in marked["messages"][0]["content"][0]
    tools_and_rules = prompt_cache.text_tokens(marked["tools"]) + prompt_cache.text_tokens(
        marked["system"][0]["text"]
    )
    bigger = {"claude-opus-4-5": tools_and_rules + 10_000}
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(prompt_cache, "CACHE_MIN_TOKENS", bigger)
        with FakeLLMServer(Script(Reply(GOOD))) as server:
            session = make_session("anthropic", server)
            ask(session, context={"paper_text": "another short text", "progress": []})
            unmarked = server.requests[0]["json"]
    assert "cache_control" not in str(unmarked)


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


def test_the_tools_every_request_carries_count_against_the_context_window(make_session):
    from agents.context_window import ContextOverflowError

    with FakeLLMServer(Script(Reply(GOOD))) as server:
        small = {"context_window_tokens": 11000, "max_output_tokens": 1000}
        with pytest.raises(ContextOverflowError):
            ask(make_session("anthropic", server, **small))  # about 10k tokens of tools
        assert server.count() == 0
        ask(make_session("openai_compatible", server, **small))  # its one tool fits
        assert server.count() == 1
