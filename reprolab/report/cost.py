"""The cost section's table by agent: calls, model, tokens, prompt-cache share, USD.

Computed from `metrics.jsonl` (one line per agent call). Paid calls count what was
paid; replayed calls are shown with the usage and price they were recorded at (and
said to be so), cache hits cost nothing."""

from __future__ import annotations

from agents.ledger import DEFAULT_PRICES, PAID_SOURCES, cost_usd, price_for
from agents.presets import DEFAULT_MODEL, PRESETS
from agents.providers import Usage

TOKEN_KEYS = (
    "input_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
    "cache_creation_1h_input_tokens",
)


def by_agent_rows(metrics: list[dict]) -> list[str]:
    """Markdown lines: one row per agent in the order they were first called, and a
    total; nothing when no call was metered."""
    if not metrics:
        return []
    agents: dict[str, dict] = {}
    for entry in metrics:
        row = agents.setdefault(
            entry["agent"],
            {"models": [], "paid": 0, "cache": 0, "replay": 0, "out": 0, "usd": 0.0, "unpriced": 0}
            | dict.fromkeys(TOKEN_KEYS, 0),
        )
        source = entry["source"]
        counted = source in PAID_SOURCES or source == "replay"
        row["paid"] += source in PAID_SOURCES
        row["cache"] += source == "cache"
        row["replay"] += source == "replay"
        if entry["model"] not in row["models"]:
            row["models"].append(entry["model"])
        if not counted:
            continue
        for key in TOKEN_KEYS:
            row[key] += entry.get(key) or 0
        row["out"] += entry.get("output_tokens") or 0
        usd = entry.get("recorded_cost_usd") if source == "replay" else entry.get("cost_usd")
        row["usd"] += usd or 0.0
        row["unpriced"] += usd is None
    md = [
        "| agent | model | calls (paid / cache / replayed) | input tokens | read from "
        "prompt cache | output tokens | USD |",
        "|---|---|---|---|---|---|---|",
    ]
    total = {"paid": 0, "cache": 0, "replay": 0, "out": 0, "usd": 0.0, "unpriced": 0}
    total |= dict.fromkeys(TOKEN_KEYS, 0)
    for name, row in agents.items():
        md.append(line(name, ", ".join(row["models"]), row))
        for key in total:
            total[key] += row[key]
    md.append(line("**total**", "", total))
    if total["replay"]:
        md += [
            "",
            "Replayed calls are shown with the usage and price they were recorded at; "
            "nothing was spent on them in this run.",
        ]
    return md + [""]


def line(name: str, models: str, row: dict) -> str:
    tokens = sum(row[k] for k in TOKEN_KEYS)
    read = row["cache_read_input_tokens"]
    share = f"{read / tokens:.0%}" if tokens else "–"
    usd = f"${row['usd']:.4f}" + (f" + {row['unpriced']} unpriced" if row["unpriced"] else "")
    return (
        f"| {name} | {models} | {row['paid']} / {row['cache']} / {row['replay']} | {tokens} "
        f"| {share} | {row['out']} | {usd} |"
    )


def counted(metrics: list[dict]) -> list[dict]:
    """The calls whose tokens a bill counts: paid ones, and replays at their recording."""
    return [e for e in metrics if e["source"] in PAID_SOURCES or e["source"] == "replay"]


def preset_rows(metrics: list[dict]) -> list[str]:
    """The preset the paper ran under, its tokens (cache reads and writes apart), and
    what those calls cost under each preset: each agent's tokens at the price of the
    model that preset gives it. Nothing when no call was metered."""
    calls = counted(metrics)
    if not calls:
        return []
    used = calls[-1].get("preset")
    default = calls[-1].get("default_model") or DEFAULT_MODEL
    if price_for(default, DEFAULT_PRICES) is None:  # a replay's provider has no model
        default = DEFAULT_MODEL
    tokens = {k: sum(e.get(k) or 0 for e in calls) for k in (*TOKEN_KEYS, "output_tokens")}
    run_usd = sum(
        (e.get("recorded_cost_usd") if e["source"] == "replay" else e.get("cost_usd")) or 0.0
        for e in calls
    )
    md = [
        f"Cost preset: **{used}** (config provider.preset)."
        if used
        else f"Cost preset: none (config provider.preset unset; default model {default}).",
        f"Tokens: {tokens['input_tokens']} input, {tokens['cache_read_input_tokens']} read "
        f"from the prompt cache, {tokens['cache_creation_input_tokens']} written to it for 5 "
        f"minutes and {tokens['cache_creation_1h_input_tokens']} for an hour, "
        f"{tokens['output_tokens']} output; ${run_usd:.4f} as billed.",
        "",
        "| preset | authors / reviewers and validators | USD for these calls |",
        "|---|---|---|",
    ]
    for name, models in PRESETS.items():
        usd = 0.0
        for e in calls:
            usage = Usage(**{k: e.get(k) or 0 for k in (*TOKEN_KEYS, "output_tokens")})
            usd += cost_usd(usage, price_for(models.get(e["agent"], default), DEFAULT_PRICES)) or 0
        pair = " / ".join(
            dict.fromkeys(models.get(a, default) for a in ("planner", "code_reviewer"))
        )
        mark = " (this run)" if name == used else ""
        md.append(f"| {name}{mark} | {pair} | ${usd:.4f} |")
    return md + [
        "",
        "Each preset prices the same calls' tokens (cache reads and writes included) at "
        "its models' list prices; each model's caching minimum would move a few of them.",
        "",
    ]


def job_size_line(job_size: dict) -> str:
    """One stage's job as sized before submission against what it used (the result
    record's `job_size`, reprolab.jobs.job_size): core-seconds, memory, the request."""
    est, act = job_size.get("estimated") or {}, job_size.get("actual") or {}
    parts = []
    for key, unit in (("core_seconds", "core-s"), ("memory_mb", "MB")):
        e, a, ratio = est.get(key), act.get(key), job_size.get(f"{key}_ratio")
        text = f"{e:.3g} {unit} est." if e is not None else "no estimate"
        text += f" / {a:.3g} actual (x{ratio:.2f})" if a and ratio else " / not measured"
        parts.append(text)
    req = job_size.get("request") or {}
    return (
        f"{'; '.join(parts)}; asked {req.get('ranks')} rank(s), {req.get('time_min')} min, "
        f"{req.get('mem_mb')} MB; sized from the {job_size.get('source')}"
    )
