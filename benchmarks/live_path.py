"""The live-model path of the example, measured: the whole paper through the real
Anthropic SDK against the local fake Messages API (answers from the recordings,
prompt caching simulated as the API does it), then a no-op rerun.

Records the requests that reached the server, the tokens the ledger accounted
(cache reads and writes included) and the cost, in benchmarks/results/live_path.json.

    .venv/bin/python benchmarks/live_path.py [--min-cache-tokens 4096]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.support.fake_llm import FakeLLMServer, FromRecordings, PromptCache  # noqa: E402

EXAMPLE = REPO / "examples" / "papers" / "silica_bragg_2026"
SNAKEMAKE = str(Path(sys.executable).with_name("snakemake"))


def snakemake(wd: Path, env: dict) -> subprocess.CompletedProcess:
    cmd = [SNAKEMAKE, "--snakefile", str(REPO / "Snakefile"), "--directory", str(wd)]
    cmd += ["--configfile", str(wd / "config.yaml"), "--cores", "2"]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=3600)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--min-cache-tokens", type=int, default=4096)
    parser.add_argument("--out", default=str(REPO / "benchmarks/results/live_path.json"))
    args = parser.parse_args()
    wd = Path(tempfile.mkdtemp(prefix="live_path_"))
    cache = PromptCache(args.min_cache_tokens)
    with FakeLLMServer(FromRecordings(EXAMPLE / "recordings"), prompt_cache=cache) as server:
        config = {
            "outputs_dir": "outputs",
            "papers": [{"paper_dir": str(EXAMPLE)}],
            "provider": {"kind": "anthropic", "model": "claude-opus-4-5", "base_url": server.url},
            "simulation": {"executor": "local", "max_mpi_ranks": 2},
            "gates": {"auto_approve": ["material_checkpoint"]},
        }
        (wd / "config.yaml").write_text(yaml.safe_dump(config))
        env = {**os.environ, "ANTHROPIC_API_KEY": "benchmark-key-not-real"}
        started = time.monotonic()
        first = snakemake(wd, env)
        seconds = time.monotonic() - started
        requests = len(server.requests)
        rerun = snakemake(wd, env)
        rerun_requests = len(server.requests) - requests
    if first.returncode or rerun.returncode:
        print((first.stderr + rerun.stderr)[-3000:], file=sys.stderr)
        return 1
    out = wd / "outputs" / EXAMPLE.name
    total = json.loads((out / "cost_summary.json").read_text())["total"]
    recordings = len(list((EXAMPLE / "recordings").glob("*/*.yaml")))
    result = {
        "what": "example paper, live path (real Anthropic SDK -> local fake API, prompt "
        f"caching simulated with a {args.min_cache_tokens}-token minimum), then a no-op rerun",
        "recordings": recordings,
        "requests": requests,
        "requests_on_noop_rerun": rerun_requests,
        "paid_calls": total["paid_calls"],
        "input_tokens": total["input_tokens"],
        "output_tokens": total["output_tokens"],
        "cache_read_input_tokens": total["cache_read_input_tokens"],
        "cache_creation_input_tokens": total["cache_creation_input_tokens"],
        "cost_usd": total["cost_usd"],
        "wall_seconds": round(seconds, 1),
    }
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
