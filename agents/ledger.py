"""Tokens, cost and the per-paper budget.

Every agent call appends one line to `outputs/<paper_id>/metrics.jsonl` (tokens,
cost, where the answer came from) and rewrites `cost_summary.json` from it,
under a file lock so that parallel Snakemake jobs neither lose lines nor write
a summary that misses one. The budget is checked before each call that would
cost something, so a paper stops between steps, never in the middle of a write.
"""

from __future__ import annotations

import datetime as dt
import fcntl
import json
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path

from agents.providers import Usage
from reprolab.errors import ReproLabError
from reprolab.fileio import atomic_write_json

METRICS_FILE = "metrics.jsonl"
SUMMARY_FILE = "cost_summary.json"
BUDGET_MARKER = "budget_exceeded.json"


@dataclass(frozen=True)
class Price:
    """USD per million tokens; `cache_write` for the 5-minute lifetime."""

    input: float
    output: float
    cache_read: float
    cache_write: float
    cache_write_1h: float | None = None
    """A write kept for an hour; by default twice the input price, as the API bills it."""

    @property
    def cache_write_hour(self) -> float:
        return 2 * self.input if self.cache_write_1h is None else self.cache_write_1h


# Public list prices (USD per million tokens); config provider.prices_usd_per_mtok
# adds or overrides models. A model is matched exactly or by a dated suffix.
DEFAULT_PRICES = {
    "claude-opus-4-5": Price(5.0, 25.0, 0.50, 6.25),
    "claude-sonnet-4-5": Price(3.0, 15.0, 0.30, 3.75),
    "claude-haiku-4-5": Price(1.0, 5.0, 0.10, 1.25),
}


class BudgetExceededError(ReproLabError):
    """The paper's token or USD budget is spent: no further agent call is made."""


def price_for(model: str, prices: dict[str, Price]) -> Price | None:
    if model in prices:
        return prices[model]
    for name, price in prices.items():
        if model.startswith(name + "-"):
            return price
    return None


def cost_usd(usage: Usage, price: Price | None) -> float | None:
    if price is None:
        return None
    return (
        usage.input_tokens * price.input
        + usage.output_tokens * price.output
        + usage.cache_read_input_tokens * price.cache_read
        + usage.cache_creation_input_tokens * price.cache_write
        + usage.cache_creation_1h_input_tokens * price.cache_write_hour
    ) / 1e6


def parse_prices(cfg: dict | None) -> dict[str, Price]:
    prices = dict(DEFAULT_PRICES)
    for model, value in (cfg or {}).items():
        prices[model] = Price(**value)
    return prices


class Ledger:
    def __init__(
        self,
        paper_out: str | Path,
        prices: dict[str, Price],
        budget: dict | None,
        preset: str | None = None,
        default_model: str = "",
    ):
        self.dir = Path(paper_out)
        self.prices = prices
        self.budget = budget or {}
        self.preset = preset
        """The cost preset the run's models came from (config provider.preset)."""
        self.default_model = default_model
        """The provider's model: every agent's under `top`, the rest's under a preset."""

    @property
    def metrics_path(self) -> Path:
        return self.dir / METRICS_FILE

    @contextmanager
    def locked(self):
        self.dir.mkdir(parents=True, exist_ok=True)
        with open(self.dir / ".ledger.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def entries(self) -> list[dict]:
        if not self.metrics_path.is_file():
            return []
        lines = self.metrics_path.read_text(encoding="utf-8").splitlines()
        return [json.loads(line) for line in lines if line.strip()]

    def record(
        self,
        *,
        call_id: str,
        agent: str,
        stage_id: str,
        attempt: int,
        provider: str,
        model: str,
        source: str,
        usage: Usage,
        requests: int,
        seconds: float,
        cache_key: str | None = None,
    ) -> dict:
        """Append one call; `source` is api (or api_invalid), cache or replay.

        `cost_usd` is money this call spent: the priced usage of a paid API call, 0
        for a cache hit or a replay. A replay's scripted usage is kept with the price
        the recorded call had (`recorded_cost_usd`), never as money spent now."""
        priced = cost_usd(usage, price_for(model, self.prices))
        entry = {
            "time": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "call_id": call_id,
            "agent": agent,
            "stage_id": stage_id,
            "attempt": attempt,
            "provider": provider,
            "model": model,
            "source": source,
            **asdict(usage),
            "cost_usd": priced if source in PAID_SOURCES else 0.0,
            "recorded_cost_usd": priced if source == "replay" else None,
            "requests": requests,
            "seconds": round(seconds, 3),
            "cache_key": cache_key,
            "preset": self.preset,
            "default_model": self.default_model,
        }
        with self.locked():
            with open(self.metrics_path, "a", encoding="utf-8") as fh:
                fh.write(json.dumps(entry, sort_keys=True) + "\n")
            atomic_write_json(self.dir / SUMMARY_FILE, summarize(self.entries()))
        return entry

    def check_budget(self, call_id: str, pending: Usage | None = None, model: str = "") -> None:
        """Refuse the next request once the budget is spent. `pending` is what the call
        in progress already paid (its earlier rounds), not yet in the ledger."""
        if not self.budget:
            return
        summary = summarize(self.entries())
        total, replayed = summary["total"], summary["replayed"]
        # The replay provider stands in for the API: its scripted usage counts against
        # the budget as if paid (so a budget can be tried offline); it is not shown as
        # money spent.
        spent_tokens = sum(total[k] + replayed[k] for k in asdict(Usage()))
        spent_usd = total["cost_usd"] + replayed["recorded_cost_usd"]
        if pending is not None:
            spent_tokens += sum(asdict(pending).values())
            spent_usd += cost_usd(pending, price_for(model, self.prices)) or 0.0
        over = []
        if "max_tokens" in self.budget and spent_tokens >= self.budget["max_tokens"]:
            over.append(f"{spent_tokens} tokens of max_tokens {self.budget['max_tokens']}")
        if "max_usd" in self.budget:
            if total["unpriced_calls"]:
                raise BudgetExceededError(
                    f"config provider.budget.max_usd is set but model(s) "
                    f"{total['unpriced_models']} have no price: add them to "
                    "provider.prices_usd_per_mtok"
                )
            if spent_usd >= self.budget["max_usd"]:
                over.append(f"USD {spent_usd:.4f} of max_usd {self.budget['max_usd']}")
        if over:
            message = (
                f"budget of paper '{self.dir.name}' is spent ({'; '.join(over)}): "
                f"{call_id} was {'stopped before its next round' if pending else 'not made'}. "
                "Raise provider.budget in the config to go on."
            )
            atomic_write_json(self.dir / BUDGET_MARKER, {"call_id": call_id, "spent": over})
            raise BudgetExceededError(message)


PAID_SOURCES = ("api", "api_invalid", "api_failed")
"""Calls that reached the provider's API and were billed: an invalid answer is billed
too, and so are the rounds of a call that then ended in an error or the budget."""


def summarize(entries: list[dict]) -> dict:
    """Calls and money per source: `total` counts what was paid (tokens, `cost_usd`),
    with how many calls were paid, cache hits (nothing paid) and replays; `replayed`
    holds the replays' scripted tokens and what the recorded calls cost when made."""
    token_keys = list(asdict(Usage()))

    def empty():
        return {
            "calls": 0,
            "paid_calls": 0,
            "cache_hits": 0,
            "replays": 0,
            "api_requests": 0,
            "cost_usd": 0.0,
            **dict.fromkeys(token_keys, 0),
        }

    total = empty() | {"unpriced_calls": 0, "unpriced_models": []}
    replayed = dict.fromkeys(token_keys, 0) | {"recorded_cost_usd": 0.0}
    by_agent: dict[str, dict] = {}
    for entry in entries:
        source = entry["source"]
        paid = source in PAID_SOURCES
        for bucket in (total, by_agent.setdefault(entry["agent"], empty())):
            bucket["calls"] += 1
            bucket["paid_calls"] += paid
            bucket["cache_hits"] += source == "cache"
            bucket["replays"] += source == "replay"
            bucket["api_requests"] += entry["requests"] if paid else 0
            for key in token_keys:  # a field newer than the entry counts 0
                bucket[key] += entry.get(key, 0) if paid else 0
            bucket["cost_usd"] = round(bucket["cost_usd"] + (entry["cost_usd"] or 0.0), 6)
        if source == "replay":
            for key in token_keys:
                replayed[key] += entry.get(key, 0)
            recorded = entry.get("recorded_cost_usd") or 0.0
            replayed["recorded_cost_usd"] = round(replayed["recorded_cost_usd"] + recorded, 6)
        unpriced = entry["cost_usd"] is None or (
            source == "replay" and entry.get("recorded_cost_usd", 0.0) is None
        )
        if unpriced:
            total["unpriced_calls"] += 1
            if entry["model"] not in total["unpriced_models"]:
                total["unpriced_models"].append(entry["model"])
    total["cost_text"] = cost_text(total)
    return {"total": total, "replayed": replayed, "by_agent": by_agent}


def cost_text(total: dict) -> str:
    """Money spent as a reader should see it: an unpriced model is never shown as $0."""
    if not total.get("unpriced_calls"):
        return f"${total.get('cost_usd', 0.0):.4f}"
    unpriced = (
        f"unpriced ({total['unpriced_calls']} call(s) of {', '.join(total['unpriced_models'])};"
        " add provider.prices_usd_per_mtok)"
    )
    if total.get("cost_usd"):
        return f"${total['cost_usd']:.4f} + {unpriced}"
    return unpriced
