"""Confusion counts of the run-time checks on the planted-failure corpus, and the cost of
the convergence reruns.

Writes benchmarks/results/planted.{json,md}: per case, whether the planted mistake was
caught by the check that names it, or whether a correct run raised a failure, the policy
it was judged under and the Meep wall seconds of its run and of its convergence reruns.
A second pass judges every case under `checks.convergence: auto` (the pipeline's default)
to show what the default policy reruns and what it costs. Run:
`.venv/bin/python benchmarks/planted.py` (a few minutes). A measurement, not a test
(tests/physics/test_planted_failures.py asserts the counts of the first pass).
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
from tests.support.planted import corpus  # noqa: E402

OUT = Path(__file__).parent / "results"


def seconds(folder: Path) -> float:
    path = folder / "wall_seconds"
    return float(path.read_text()) if path.is_file() else 0.0


def costs(folder: Path, names: list[str]) -> dict[str, dict]:
    """Wall seconds of each case's run and of its reruns (<case>.<variant> folders)."""
    out = {}
    for name in names:
        found = [*folder.glob(f"{name}.*_2x"), *folder.glob(f"{name}.resolution_coarse.*")]
        reruns = {
            p.name.split(".", 1)[1]: seconds(p) for p in found if not p.name.endswith(".record")
        }
        out[name] = {"run_s": seconds(folder / name), "reruns_s": reruns}
    return out


def one_pass(auto: set[str]) -> tuple[dict, dict]:
    start = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        results = corpus.run_corpus(Path(tmp), auto=auto)
        cost = costs(Path(tmp), list(results))
    counts = corpus.confusion(results)
    for name, row in counts["cases"].items():
        row.update(policy="auto" if name in auto else "false", **cost[name])
    counts["wall_seconds"] = round(time.monotonic() - start, 1)
    return counts, cost


def summary(counts: dict) -> list[str]:
    n_planted = sum(1 for r in counts["cases"].values() if r["planted"])
    n_correct = len(counts["cases"]) - n_planted
    return [
        "| | check failed | no failure |",
        "|---|---|---|",
        f"| planted mistake ({n_planted}) | {counts['caught']} caught by the named check "
        f"| {counts['missed']} missed |",
        f"| correct run ({n_correct}) | {counts['false_alarms']} false alarms "
        f"| {counts['clean']} clean |",
    ]


def main() -> None:
    counts, _ = one_pass(corpus.AUTO)
    every = set(corpus.PLANTED) | set(corpus.CORRECT)
    default, _ = one_pass(every)
    counts.update(
        date=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        machine=platform.node(),
        under_auto=default,
    )
    OUT.mkdir(exist_ok=True)
    (OUT / "planted.json").write_text(json.dumps(counts, indent=1) + "\n")
    lines = [
        "# Planted-failure corpus: confusion counts",
        "",
        f"{counts['date']}, {counts['wall_seconds']} s for all cases (two processes: the "
        "runs, then the convergence reruns). Policy: the `checks.convergence` each case is "
        "judged under (`auto` reruns it when its as-built resolution is under 15 pixels per "
        "wavelength or it ran Harminv).",
        "",
        *summary(counts),
        "",
        "| case | planted | policy | failed checks | run s | reruns s |",
        "|---|---|---|---|---|---|",
    ]
    for name, row in counts["cases"].items():
        reruns = ", ".join(f"{k} {v:.1f}" for k, v in row["reruns_s"].items()) or "-"
        lines.append(
            f"| {name} | {row['planted']} | {row['policy']} | {', '.join(row['failed']) or '-'} "
            f"| {row['run_s']:.1f} | {reruns} |"
        )
    rerun_s = sum(sum(r["reruns_s"].values()) for r in default["cases"].values())
    run_s = sum(r["run_s"] for r in default["cases"].values())
    rerun_cases = [n for n, r in default["cases"].items() if r["reruns_s"]]
    lines += [
        "",
        "## Every case under `checks.convergence: auto` (the pipeline's default)",
        "",
        f"{default['wall_seconds']} s. {len(rerun_cases)} of {len(default['cases'])} cases "
        f"were rerun: {rerun_s:.1f} extra Meep wall seconds on top of {run_s:.1f} s for all "
        f"the runs ({rerun_s / run_s:.0%}).",
        "",
        *summary(default),
        "",
        "| case | planted | failed checks | reruns s |",
        "|---|---|---|---|",
    ]
    for name in rerun_cases:
        row = default["cases"][name]
        reruns = ", ".join(f"{k} {v:.1f}" for k, v in row["reruns_s"].items())
        lines.append(
            f"| {name} | {row['planted']} | {', '.join(row['failed']) or '-'} | {reruns} |"
        )
    (OUT / "planted.md").write_text("\n".join(lines) + "\n")
    print({k: counts[k] for k in ("caught", "missed", "false_alarms", "clean")})
    print({k: default[k] for k in ("caught", "missed", "false_alarms", "clean")})


if __name__ == "__main__":
    main()
