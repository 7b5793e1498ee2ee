"""Confusion counts of the run-time checks on the planted-failure corpus.

Writes benchmarks/results/planted.{json,md}: per case, whether the planted mistake was
caught by the check that names it, or whether a correct run raised a failure. Run:
`.venv/bin/python benchmarks/planted.py` (about a minute). A measurement, not a test
(tests/test_planted_failures.py asserts the same counts).
"""

from __future__ import annotations

import datetime as dt
import json
import platform
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the corpus lives in tests/
from tests.planted import corpus  # noqa: E402

OUT = Path(__file__).parent / "results"


def main() -> None:
    start = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        results = corpus.run_corpus(Path(tmp))
    counts = corpus.confusion(results)
    counts.update(
        date=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        machine=platform.node(),
        wall_seconds=round(time.monotonic() - start, 1),
    )
    OUT.mkdir(exist_ok=True)
    (OUT / "planted.json").write_text(json.dumps(counts, indent=1) + "\n")
    lines = [
        "# Planted-failure corpus: confusion counts",
        "",
        f"{counts['date']}, {counts['wall_seconds']} s for all cases in one process.",
        "",
        "| | check failed | no failure |",
        "|---|---|---|",
        f"| planted mistake ({len(corpus.PLANTED)}) | {counts['caught']} caught by the "
        f"named check | {counts['missed']} missed |",
        f"| correct run ({len(corpus.CORRECT)}) | {counts['false_alarms']} false alarms "
        f"| {counts['clean']} clean |",
        "",
        "| case | planted | failed checks |",
        "|---|---|---|",
    ]
    for name, row in counts["cases"].items():
        lines.append(f"| {name} | {row['planted']} | {', '.join(row['failed']) or '-'} |")
    (OUT / "planted.md").write_text("\n".join(lines) + "\n")
    print({k: counts[k] for k in ("caught", "missed", "false_alarms", "clean")})


if __name__ == "__main__":
    main()
