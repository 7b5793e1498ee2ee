"""The report's cost section by agent: calls, model, tokens, prompt-cache share, USD."""

from reprolab.report import cost


def entry(agent, source, model="claude-opus-4-5", usd=0.01, **tokens):
    base = {"input_tokens": 100, "cache_read_input_tokens": 300}
    base |= {"cache_creation_input_tokens": 0, "output_tokens": 50} | tokens
    return {
        "agent": agent,
        "source": source,
        "model": model,
        "cost_usd": usd if source.startswith("api") else 0.0,
        "recorded_cost_usd": usd if source == "replay" else None,
        **base,
    }


def test_each_agent_has_its_calls_tokens_cache_share_and_money():
    metrics = [
        entry("planner", "api"),
        entry("planner", "cache", usd=0.5),  # a cache hit costs nothing
        entry("code_reviewer", "api", model="claude-haiku-4-5", usd=0.002),
        entry("supervisor", "api", model="local-llama", usd=None),
    ]
    rows = cost.by_agent_rows(metrics)
    planner = next(r for r in rows if r.startswith("| planner"))
    assert planner == "| planner | claude-opus-4-5 | 1 / 1 / 0 | 400 | 75% | 50 | $0.0100 |"
    assert "| code_reviewer | claude-haiku-4-5 | 1 / 0 / 0 |" in "\n".join(rows)
    assert "$0.0000 + 1 unpriced" in next(r for r in rows if r.startswith("| supervisor"))
    total = next(r for r in rows if r.startswith("| **total**"))
    assert total == "| **total** |  | 3 / 1 / 0 | 1200 | 75% | 150 | $0.0120 + 1 unpriced |"
    assert not any("recorded at" in r for r in rows)


def test_replayed_calls_say_they_were_not_paid():
    rows = cost.by_agent_rows([entry("planner", "replay", usd=0.2)])
    assert "| planner | claude-opus-4-5 | 0 / 0 / 1 | 400 | 75% | 50 | $0.2000 |" in rows
    assert any("nothing was spent on them" in r for r in rows)
    assert cost.by_agent_rows([]) == []
