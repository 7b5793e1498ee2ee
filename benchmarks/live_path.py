"""The live-model path of the example papers, measured per cost preset: each paper
through the real Anthropic SDK against the local fake Messages API (answers from the
recordings, prompt caching simulated as the API does it: each model's own minimum,
images counted as the API counts them), then a no-op rerun.

Records, per paper and preset, the requests that reached the server, the tokens the
ledger accounted (cache reads and writes included), the share of input read from the
prompt cache (in total, per stage, and from the second stage on) and the USD per
paper, in benchmarks/results/live_path.json and live_path.md. `long_paper` is the
etalon example with its text grown to a ten-page paper (about 15k tokens), the same
recordings answering.

    .venv/bin/python benchmarks/live_path.py [--papers ...] [--presets top balanced economy]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from agents.prompt_cache import CACHE_MIN_TOKENS  # noqa: E402
from tests.support.fake_llm import FakeLLMServer, FromRecordings, PromptCache  # noqa: E402

PAPERS = REPO / "examples" / "papers"
SNAKEMAKE = str(Path(sys.executable).with_name("snakemake"))
ANCHOR_USD_PER_CASE = 0.208
"""ChatCFD's reported cost per case (192k tokens), the anchor the cost is read against."""
LONG_PAPER_TOKENS = 15000


def snakemake(wd: Path, env: dict) -> subprocess.CompletedProcess:
    cmd = [SNAKEMAKE, "--snakefile", str(REPO / "Snakefile"), "--directory", str(wd)]
    cmd += ["--configfile", str(wd / "config.yaml"), "--cores", "2"]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=3600)


def long_paper(tmp: Path) -> Path:
    """The etalon example with its text repeated to about LONG_PAPER_TOKENS tokens (as
    sections of a longer paper), in a copy; the recordings answer as before."""
    paper = tmp / "long_paper"
    shutil.copytree(PAPERS / "ag_etalon_2026", paper)
    text = (paper / "paper.md").read_text()
    parts, n = [text], 1
    while sum(map(len, parts)) < LONG_PAPER_TOKENS * 4:
        parts.append(f"\n\n## Supplementary section S{n}\n\n" + text.split("\n", 1)[1])
        n += 1
    (paper / "paper.md").write_text("".join(parts))
    return paper


def share(entries: list[dict]) -> dict:
    keys = ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
    tokens = {k: sum(e[k] for e in entries) for k in keys}
    total = sum(tokens.values())
    read = tokens["cache_read_input_tokens"]
    return {"input_total": total, "cache_read_share": round(read / total, 3) if total else 0.0}


def write_live_config(wd: Path, paper: Path, provider: dict) -> None:
    """The benchmark run's config: one paper, a live provider, local jobs, the
    material gate auto-approved (as the demo)."""
    config = {
        "outputs_dir": "outputs",
        "papers": [{"paper_dir": str(paper)}],
        "provider": provider,
        "simulation": {"executor": "local", "max_mpi_ranks": 2},
        "gates": {"auto_approve": ["material_checkpoint"]},
    }
    (wd / "config.yaml").write_text(yaml.safe_dump(config))


def measure(paper: Path, preset: str) -> dict:
    wd = Path(tempfile.mkdtemp(prefix="live_path_"))
    cache = PromptCache(CACHE_MIN_TOKENS)
    with FakeLLMServer(FromRecordings(paper / "recordings"), prompt_cache=cache) as server:
        provider = {"kind": "anthropic", "model": "claude-opus-4-5", "base_url": server.url}
        write_live_config(wd, paper, provider | {"preset": preset})
        env = {**os.environ, "ANTHROPIC_API_KEY": "benchmark-key-not-real"}
        started = time.monotonic()
        first = snakemake(wd, env)
        seconds = time.monotonic() - started
        requests = len(server.requests)
        rerun = snakemake(wd, env)
        rerun_requests = len(server.requests) - requests
    if first.returncode or rerun.returncode:
        raise RuntimeError((first.stderr + rerun.stderr)[-3000:])
    out = next((wd / "outputs").glob("*/cost_summary.json")).parent
    summary = json.loads((out / "cost_summary.json").read_text())
    total = summary["total"]
    entries = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    stages = list(dict.fromkeys(e["stage_id"] for e in entries))
    per_stage = {s: share([e for e in entries if e["stage_id"] == s]) for s in stages}
    later = [e for e in entries if e["stage_id"] not in stages[:2]]
    shutil.rmtree(wd, ignore_errors=True)
    return {
        "requests": requests,
        "requests_on_noop_rerun": rerun_requests,
        "paid_calls": total["paid_calls"],
        "input_tokens": total["input_tokens"],
        "output_tokens": total["output_tokens"],
        "cache_read_input_tokens": total["cache_read_input_tokens"],
        "cache_creation_input_tokens": total["cache_creation_input_tokens"],
        "cache_read_share": share(entries)["cache_read_share"],
        "cache_read_share_from_second_stage": share(later)["cache_read_share"],
        "per_stage": per_stage,
        "cost_usd": total["cost_usd"],
        "usd_by_agent": {a: v["cost_usd"] for a, v in summary["by_agent"].items()},
        "models": sorted({e["model"] for e in entries}),
        "wall_seconds": round(seconds, 1),
    }


def markdown(results: dict) -> str:
    lines = [
        "# Live path per cost preset",
        "",
        f"Anchor: ChatCFD's ${ANCHOR_USD_PER_CASE:.3f} per case (192k tokens).",
        "Input tokens = uncached + cache reads + cache writes; the share is cache reads",
        "of that. From the second stage on: every stage after the paper-level calls",
        "and stage 0.",
        "",
        "| paper | preset | calls | input tokens | output tokens | cache read share "
        "| from 2nd stage | USD per paper | x anchor |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for paper, presets in results["papers"].items():
        for preset, r in presets.items():
            tokens = r["input_tokens"] + r["cache_read_input_tokens"]
            tokens += r["cache_creation_input_tokens"]
            lines.append(
                f"| {paper} | {preset} | {r['paid_calls']} | {tokens} | {r['output_tokens']} "
                f"| {r['cache_read_share']:.0%} | {r['cache_read_share_from_second_stage']:.0%} "
                f"| ${r['cost_usd']:.3f} | {r['cost_usd'] / ANCHOR_USD_PER_CASE:.1f} |"
            )
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--papers", nargs="+", default=["ag_etalon_2026", "silica_bragg_2026", "long_paper"]
    )
    parser.add_argument("--presets", nargs="+", default=["top", "balanced", "economy"])
    parser.add_argument("--out", default=str(REPO / "benchmarks/results/live_path.json"))
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="live_path_papers_"))
    results = {
        "what": "each example paper through the live path (real Anthropic SDK -> local fake "
        "API answering from the recordings, prompt caching simulated with each model's "
        "minimum), then a no-op rerun; per cost preset",
        "cache_min_tokens": CACHE_MIN_TOKENS,
        "anchor_usd_per_case": ANCHOR_USD_PER_CASE,
        "papers": {},
    }
    for name in args.papers:
        paper = long_paper(tmp) if name == "long_paper" else PAPERS / name
        for preset in args.presets:
            print(f"{name} / {preset} ...", flush=True)
            results["papers"].setdefault(name, {})[preset] = measure(paper, preset)
            Path(args.out).write_text(json.dumps(results, indent=2) + "\n")
    Path(args.out).with_suffix(".md").write_text(markdown(results))
    print(markdown(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
