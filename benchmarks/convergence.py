"""What the convergence policy costs on the example paper: extra Meep seconds.

Runs the example (replay, local jobs) to its report twice in temporary folders, under
`checks.convergence: auto` (the default) and `true`, and reads each simulation stage's
convergence.json: the decision, the reruns and their Meep seconds (`runtime_seconds` of
the rerun's record) against the stage's own run. Writes
benchmarks/results/convergence.{json,md}. Run: `.venv/bin/python benchmarks/convergence.py`
(about 5-10 minutes on 2 cores). The corpus's reruns are in benchmarks/results/planted.md.
"""

from __future__ import annotations

import datetime as dt
import json
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples/papers/silica_bragg_2026"
PAPER = "silica_bragg_2026"
OUT = Path(__file__).parent / "results"
SNAKEMAKE = str(Path(sys.executable).with_name("snakemake"))


def run_example(root: Path, policy) -> dict:
    config = {
        "outputs_dir": "outputs",
        "papers": [{"paper_dir": str(EXAMPLE)}],
        "provider": {"kind": "replay"},
        "simulation": {"executor": "local", "max_mpi_ranks": 2},
        "gates": {"auto_approve": ["material_checkpoint"]},
        "checks": {"convergence": policy},
    }
    root.mkdir(parents=True)
    (root / "config.yaml").write_text(yaml.safe_dump(config))
    cmd = [SNAKEMAKE, "--snakefile", str(REPO / "Snakefile"), "--directory", str(root)]
    cmd += ["--configfile", str(root / "config.yaml"), "--cores", "2", "--keep-going"]
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if proc.returncode:
        raise SystemExit(f"example under convergence {policy} failed:\n{proc.stderr[-3000:]}")
    stages = {}
    for sd in sorted((root / "outputs" / PAPER / "stages").iterdir()):
        conv_path = sd / "convergence.json"
        if not conv_path.is_file():
            continue
        conv = json.loads(conv_path.read_text())
        verdict = json.loads((sd / "verdict.json").read_text())
        stages[sd.name] = {
            "status": conv["status"],
            "reason": conv.get("note") or conv.get("reason"),
            "run_meep_seconds": conv.get("run_meep_seconds"),
            "extra_meep_seconds": conv.get("extra_meep_seconds"),
            "reruns": [v["id"] for v in conv.get("variants", [])],
            "quantities": len(conv.get("quantities", [])),
            "failed": [q["name"] for q in conv.get("quantities", []) if q["status"] == "fail"],
            "verdict": verdict["status"],
        }
    return {"policy": policy, "wall_seconds": round(wall, 1), "stages": stages}


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        runs = [run_example(Path(tmp) / str(p), p) for p in ("auto", True)]
    out = {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "machine": platform.node(),
        "runs": runs,
    }
    OUT.mkdir(exist_ok=True)
    (OUT / "convergence.json").write_text(json.dumps(out, indent=1) + "\n")
    lines = [
        "# Convergence reruns: cost on the example paper",
        "",
        f"{out['date']}, {out['machine']}, 2 cores shared. The example run to its report "
        "under each `checks.convergence`; Meep seconds are the records' `runtime_seconds`. "
        "Other sessions share the cores, so absolute seconds vary; a 2x-resolution rerun "
        "is about 4x the run in 1D (twice the pixels, twice the steps), 8x in 2D, 16x in 3D.",
        "",
        "| policy | stage | decision | reruns | run s | extra Meep s | quantities | "
        "failed | verdict |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for run in runs:
        for sid, s in run["stages"].items():
            lines.append(
                f"| {str(run['policy']).lower()} | {sid} | {s['status']} | "
                f"{', '.join(s['reruns']) or '-'} | {s['run_meep_seconds'] or 0:.1f} | "
                f"{s['extra_meep_seconds'] or 0:.1f} | {s['quantities']} | "
                f"{', '.join(s['failed']) or '-'} | {s['verdict']} |"
            )
    lines.append("")
    for run in runs:
        total = sum(s["extra_meep_seconds"] or 0 for s in run["stages"].values())
        own = sum(s["run_meep_seconds"] or 0 for s in run["stages"].values())
        lines.append(
            f"- `{str(run['policy']).lower()}`: {total:.1f} extra Meep seconds on top of "
            f"{own:.1f} s of the stages' own runs; the whole example took "
            f"{run['wall_seconds']} s."
        )
    (OUT / "convergence.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines[-2:]))


if __name__ == "__main__":
    main()
