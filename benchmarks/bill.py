"""The bill in dollars: what each example paper costs per cost preset on the live path,
with the prompt cache's lifetime modelled from the run's own pace.

Each paper runs through real Snakemake and Meep, its agents through the real
Anthropic SDK to the local fake Messages API (answers from the recordings). The fake
caches as the API does: each model's minimum, a prefix kept 5 minutes or an hour from
its write or last read. Its clock is the run's own wall clock (the simulations and
steps as they ran) plus, after each answer, the time a real model would have taken to
write it (MODEL_LATENCY: first token, then output tokens at the model's rate), since
the fake answers at once. `usd_uncached` prices the same requests with nothing
cached: every input token at the input price.

Writes benchmarks/results/bill.json (a paper or preset measured again replaces its
row): for each paper and preset, `paper`, `preset`,
`usd`, `usd_uncached`, `ttl_modelled` (true), the tokens by kind, and the modelled
gaps between calls.

    .venv/bin/python benchmarks/bill.py [--papers ...] [--presets top balanced economy]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from agents.ledger import DEFAULT_PRICES, price_for  # noqa: E402
from agents.prompt_cache import CACHE_MIN_TOKENS  # noqa: E402
from benchmarks.live_path import (  # noqa: E402
    ANCHOR_USD_PER_CASE,
    PAPERS,
    snakemake,
    write_live_config,
)
from reprolab.fileio import atomic_write_json, atomic_write_text  # noqa: E402
from tests.support.fake_llm import FakeLLMServer, FromRecordings, PromptCache  # noqa: E402

MODEL_LATENCY = {
    # (seconds to the first token, output tokens per second): typical published figures.
    "claude-opus-4-5": (2.0, 40.0),
    "claude-sonnet-4-5": (1.5, 60.0),
    "claude-haiku-4-5": (0.8, 120.0),
}
TARGETS_USD = {("ag_etalon_2026", "top"): 0.50, ("ag_etalon_2026", "economy"): 0.21}
"""The etalon paper's targets; ChatCFD reports $0.208 per case."""


def model_latency(model: str, output_tokens: int) -> float:
    first, rate = next(v for k, v in MODEL_LATENCY.items() if model.startswith(k))
    return first + output_tokens / rate


def uncached_usd(entries: list[dict]) -> float:
    """The same requests with nothing cached: every input token at the input price."""
    total = 0.0
    for e in entries:
        price = price_for(e["model"], DEFAULT_PRICES)
        read = e["cache_read_input_tokens"] + e["cache_creation_input_tokens"]
        read += e.get("cache_creation_1h_input_tokens", 0)
        total += (
            (e["input_tokens"] + read) * price.input + e["output_tokens"] * price.output
        ) / 1e6
    return total


class Timed(FromRecordings):
    """Answers from the recordings; keeps each request's modelled time."""

    def __init__(self, recordings: Path, cache: PromptCache):
        super().__init__(recordings)
        self.cache = cache
        self.times: list[float] = []

    def __call__(self, request: dict) -> object:
        self.times.append(self.cache.now())
        return super().__call__(request)


def measure(paper: Path, preset: str) -> dict:
    wd = Path(tempfile.mkdtemp(prefix="bill_"))
    started = time.monotonic()
    cache = PromptCache(
        CACHE_MIN_TOKENS, clock=lambda: time.monotonic() - started, latency=model_latency
    )
    responder = Timed(paper / "recordings", cache)
    with FakeLLMServer(responder, prompt_cache=cache) as server:
        provider = {"kind": "anthropic", "model": "claude-opus-4-5", "base_url": server.url}
        write_live_config(wd, paper, provider | {"preset": preset})
        run = snakemake(wd, {**os.environ, "ANTHROPIC_API_KEY": "benchmark-key-not-real"})
    try:
        if run.returncode:
            raise RuntimeError(run.stderr[-3000:])
        out = next((wd / "outputs").glob("*/cost_summary.json")).parent
        total = json.loads((out / "cost_summary.json").read_text())["total"]
        entries = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]
    finally:
        shutil.rmtree(wd, ignore_errors=True)
    times = responder.times
    gaps = [round(b - a, 1) for a, b in zip(times, times[1:], strict=False)]
    return {
        "paper": paper.name,
        "preset": preset,
        "usd": round(total["cost_usd"], 4),
        "usd_uncached": round(uncached_usd(entries), 4),
        "ttl_modelled": True,
        "requests": len(times),
        "input_tokens": total["input_tokens"],
        "cache_read_input_tokens": total["cache_read_input_tokens"],
        "cache_creation_5m_input_tokens": total["cache_creation_input_tokens"],
        "cache_creation_1h_input_tokens": total.get("cache_creation_1h_input_tokens", 0),
        "output_tokens": total["output_tokens"],
        "modelled_seconds": round(times[-1] - times[0], 1) if times else 0.0,
        "longest_gap_s": max(gaps, default=0.0),
        "gaps_s": gaps,
    }


def measured(paper: Path, preset: str, tries: int = 2) -> dict:
    """One paper's run, tried again once if it stopped (a job lost on a busy machine
    stops the run at a gate): a bill is only measured on a complete run."""
    for n in range(1, tries + 1):
        print(f"{paper.name} / {preset} (try {n}) ...", flush=True)
        try:
            return measure(paper, preset)
        except RuntimeError as exc:
            if n == tries:
                raise
            print(f"  the run stopped, tried again: {str(exc)[-300:]}", flush=True)
    raise AssertionError("unreachable")


def markdown(rows: list[dict]) -> str:
    lines = [
        "# The bill per paper and preset (cache lifetime modelled)",
        "",
        f"Anchor: ChatCFD's ${ANCHOR_USD_PER_CASE:.3f} per case. Writes: 5-minute (1.25x "
        "input) and one-hour (2x) writes; reads 0.1x. The clock: the run's own wall time "
        "plus each answer's modelled model latency.",
        "",
        "| paper | preset | USD | USD uncached | saved | input | read | written 5m "
        "| written 1h | output | modelled s | target |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        target = TARGETS_USD.get((r["paper"], r["preset"]))
        met = (
            ""
            if target is None
            else f"<= ${target:.2f}: {'met' if r['usd'] <= target else 'NOT met'}"
        )
        saved = 1 - r["usd"] / r["usd_uncached"] if r["usd_uncached"] else 0.0
        lines.append(
            f"| {r['paper']} | {r['preset']} | ${r['usd']:.3f} | ${r['usd_uncached']:.3f} "
            f"| {saved:.0%} | {r['input_tokens']} | {r['cache_read_input_tokens']} "
            f"| {r['cache_creation_5m_input_tokens']} | {r['cache_creation_1h_input_tokens']} "
            f"| {r['output_tokens']} | {r['modelled_seconds']:.0f} | {met} |"
        )
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--papers", nargs="+", default=["ag_etalon_2026", "silica_bragg_2026"])
    parser.add_argument("--presets", nargs="+", default=["top", "balanced", "economy"])
    parser.add_argument("--out", default=str(REPO / "benchmarks/results/bill.json"))
    args = parser.parse_args()
    out = Path(args.out)
    # A paper or preset measured again replaces its row; the others are kept.
    rows = json.loads(out.read_text())["runs"] if out.is_file() else []
    for name in args.papers:
        for preset in args.presets:
            row = measured(PAPERS / name, preset)
            rows = [r for r in rows if (r["paper"], r["preset"]) != (name, preset)] + [row]
            atomic_write_json(out, {"model_latency": MODEL_LATENCY, "runs": rows})
    atomic_write_text(Path(args.out).with_suffix(".md"), markdown(rows))
    print(markdown(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
