"""The cost section's table by agent: calls, model, tokens, prompt-cache share, USD.

Computed from `metrics.jsonl` (one line per agent call). Paid calls count what was
paid; replayed calls are shown with the usage and price they were recorded at (and
said to be so), cache hits cost nothing."""

from __future__ import annotations

from agents.ledger import PAID_SOURCES

TOKEN_KEYS = ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")


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
