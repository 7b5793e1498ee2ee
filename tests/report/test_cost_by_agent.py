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


def test_the_bill_names_its_preset_and_prices_the_same_calls_under_each():
    tokens = {
        "input_tokens": 1000,
        "cache_read_input_tokens": 2000,
        "cache_creation_input_tokens": 3000,
        "cache_creation_1h_input_tokens": 4000,
        "output_tokens": 100,
    }
    run = {"preset": "balanced", "default_model": "claude-opus-4-5"}
    metrics = [
        entry("planner", "api", **tokens) | run,
        entry("code_reviewer", "api", model="claude-sonnet-4-5", **tokens) | run,
        entry("code_reviewer", "cache", **tokens) | run,  # a cache hit is no call of the bill
    ]
    rows = cost.preset_rows(metrics)

    def usd(input_price, output_price):  # reads 0.1x, writes 1.25x (5 min) and 2x (1 h)
        per_input = 1000 + 2000 * 0.1 + 3000 * 1.25 + 4000 * 2
        return (per_input * input_price + 100 * output_price) / 1e6

    opus, sonnet, haiku = usd(5, 25), usd(3, 15), usd(1, 5)
    assert rows[0] == "Cost preset: **balanced** (config provider.preset)."
    assert "2000 input, 4000 read from the prompt cache, 6000 written" in rows[1]
    assert "8000 for an hour" in rows[1]
    table = "\n".join(rows)
    assert f"| top | claude-opus-4-5 | ${2 * opus:.4f} |" in table
    expected = (
        f"| balanced (this run) | claude-opus-4-5 / claude-sonnet-4-5 | ${opus + sonnet:.4f} |"
    )
    assert expected in table
    assert f"| economy | claude-sonnet-4-5 / claude-haiku-4-5 | ${sonnet + haiku:.4f} |" in table
    # Made wrong: a 1-hour write billed as a 5-minute one would show a smaller top.
    cheap = (1000 + 2000 * 0.1 + 7000 * 1.25) * 5 / 1e6 + 100 * 25 / 1e6
    assert f"${2 * cheap:.4f}" not in table


def test_a_run_without_a_preset_says_so_and_metering_nothing_shows_nothing():
    rows = cost.preset_rows([entry("planner", "replay") | {"default_model": "replay"}])
    assert rows[0].startswith("Cost preset: none") and "claude-opus-4-5" in rows[0]
    assert cost.preset_rows([entry("planner", "cache")]) == []
