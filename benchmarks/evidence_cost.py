"""What each example stage's resolution evidence cost against its own run, and whether
its estimated error bounds the run's error.

Runs the bundled example papers offline (real Snakemake, real Meep, the replay
recordings; `checks.convergence: true`, so that every simulation stage gets evidence
under the default `convergence_method: auto`), or reads finished runs (`--workdir`),
and writes per stage that got evidence: `paper`, `stage`, `dims`, `run_core_s` (the
run's CPU seconds, every rank, from its record), `evidence_core_s` (the same over every
rerun folder of the stage: the coarser runs, the PML doubling, a 2x rerun; coarser
runs that shared one packed worker by that worker's whole CPU, its start included),
`runs_in_one_process` (those folders), `escalated`, `estimated_error` and
`true_error` per compared quantity kind: the grid's
bound on the run's error of the quantity (the coarse bound, or the 2x rerun's bound
from its change: `reprolab.physics.grid_convergence.refine_bound`) against
the run's difference from the example's data, which for these examples is the
independent truth (analytic, series, or a converged reference). Where the model itself
differs from that truth the difference is more than the discretisation error, and the
row says `true_error_kind: against_paper`; a Richardson extrapolation from finer runs is
not made here. Targets: evidence <= 0.8x the run in 2D, <= 0.6x in 3D, estimated >=
true on every row.

Writes benchmarks/results/evidence_cost.json. Run:
`.venv/bin/python benchmarks/evidence_cost.py [--papers ID ...] [--workdir DIR ...]`
(minutes a paper on 2 shared cores).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the pipeline helpers live in tests/
from reprolab.fileio import atomic_write_text, read_json  # noqa: E402
from reprolab.report.discretisation import comparisons_with_grid  # noqa: E402

OUT = Path(__file__).parent / "results" / "evidence_cost.json"
TARGET = {2: 0.8, 3: 0.6}


def core_s(result_json: Path) -> float | None:
    """A run's CPU seconds over its ranks, from its record (None without one)."""
    if not result_json.is_file():
        return None
    usage = read_json(result_json).get("rank_usage") or []
    return round(sum(u["cpu_s"] for u in usage), 3) if usage else None


def evidence_core_s(stage_dir: Path, folders: list[str]) -> float:
    """The reruns' CPU seconds: a run of its own by its ranks' use; the coarser runs a
    packed worker ran together by that worker's CPU (once: their own CPU and the one
    interpreter start and `import meep` they shared)."""
    own, workers = 0.0, {}
    for folder in folders:
        path = stage_dir / folder / "result.json"
        if not path.is_file():
            continue
        rec = read_json(path)
        worker = (rec.get("packed_worker") or {}).get("folder")
        if worker and rec.get("worker_cpu_s") is not None:
            workers[worker] = max(workers.get(worker, 0.0), float(rec["worker_cpu_s"]))
        else:
            own += core_s(path) or 0.0
    return round(own + sum(workers.values()), 3)


def rerun_folders(conv: dict) -> list[str]:
    """The folders of the reruns convergence.json was decided from (the coarse ones
    kept under `escalation` when the 2x rerun followed): a folder left by an earlier
    decision is not counted."""
    variants = conv.get("variants", []) + (conv.get("escalation") or {}).get("coarse_variants", [])
    out: list[str] = []
    for var in variants:
        if not var.get("ran") and not var.get("runtime_seconds"):
            continue
        folder = var.get("folder")
        out += folder if isinstance(folder, list) else [folder] if folder else []
    return list(dict.fromkeys(out))


def stage_rows(paper: str, stage_dir: Path) -> list[dict]:
    """The rows of one finished stage with convergence evidence ([] without it)."""
    conv_path = stage_dir / "convergence.json"
    if not conv_path.is_file():
        return []
    conv = read_json(conv_path)
    if conv.get("status") in ("not_needed", "not_run") or not conv.get("variants"):
        return []
    design = read_json(stage_dir / "design.json")["output"]
    dims = design.get("dimensions")
    run_s = core_s(stage_dir / "result.json")
    esc = conv.get("escalation") or {}
    evidence_s = evidence_core_s(stage_dir, rerun_folders(conv))
    packed = [f for f in rerun_folders(conv) if _packed(stage_dir / f / "result.json")]
    base = {
        "paper": paper,
        "stage": stage_dir.name,
        "dims": dims,
        "method": conv.get("method"),
        "status": conv.get("status"),
        "run_core_s": run_s,
        "evidence_core_s": evidence_s,
        "evidence_over_run": round(evidence_s / run_s, 3) if run_s else None,
        "escalated": bool(esc.get("escalated")),
        "runs_in_one_process": packed,
    }
    target = TARGET.get(dims)
    base["meets_cost_target"] = (
        None if target is None or not run_s else base["evidence_over_run"] <= target
    )
    comparison = stage_dir / "comparison.json"
    figures = read_json(comparison).get("figures", []) if comparison.is_file() else []
    rows = []
    for fig in figures:
        for what, true, est in comparisons_with_grid(fig, conv):
            if true is None or est is None:
                continue
            rows.append(
                {
                    **base,
                    "figure": fig["figure_id"],
                    "quantity": what,
                    "estimated_error": est,
                    "true_error": true,
                    "true_error_kind": "against_paper",
                    "bounds": est >= true,
                }
            )
    return rows or [{**base, "estimated_error": None, "true_error": None, "bounds": None}]


def _packed(result_json: Path) -> bool:
    return result_json.is_file() and bool(read_json(result_json).get("packed_worker"))


def run_papers(papers: list[str], root: Path) -> list[Path]:
    """Each paper run to the end offline in its own working folder."""
    from tests.support.pipeline import snakemake, write_config

    out = []
    for paper in papers:
        wd = root / paper
        wd.mkdir(parents=True)
        write_config(wd, [ROOT / "examples" / "papers" / paper], checks={"convergence": True})
        run = snakemake(wd)
        print(paper, "exit", run.returncode, flush=True)
        out.append(wd)
    return out


def compare_packing(workdirs: list[Path]) -> list[dict]:
    """`packing_compared` for every 2D or 3D stage whose evidence had coarser runs."""
    out = []
    for wd in workdirs:
        for paper_dir in sorted((wd / "outputs").iterdir()):
            for stage_dir in sorted((paper_dir / "stages").glob("stage*")):
                if not (stage_dir / "convergence.json").is_file():
                    continue
                tmp = Path(tempfile.mkdtemp(prefix="packing_"))
                found = packing_compared(stage_dir, tmp)
                if found:
                    out.append({"paper": paper_dir.name, "stage": stage_dir.name, **found})
                    print(json.dumps(out[-1]), flush=True)
    return out


def collect(workdirs: list[Path]) -> list[dict]:
    rows = []
    for wd in workdirs:
        for paper_dir in sorted((wd / "outputs").iterdir()):
            for stage_dir in sorted((paper_dir / "stages").glob("stage*")):
                rows += stage_rows(paper_dir.name, stage_dir)
    return rows


def packing_compared(stage_dir: Path, tmp: Path) -> dict | None:
    """The stage's coarser runs again, in a scratch folder, one job each and then in one
    packed worker, right after each other: their CPU seconds both ways (each run's ranks
    summed; the worker's whole CPU). None for a stage without coarser runs."""
    from reprolab.artifacts import load_design, load_plan, plan_stage
    from reprolab.jobs import variant_runs

    conv = read_json(stage_dir / "convergence.json")
    variants = conv.get("variants", []) + (conv.get("escalation") or {}).get("coarse_variants", [])
    folders = [f for f in rerun_folders({"variants": variants}) if f.startswith("convergence_0.")]
    if not folders:
        return None
    envs = [read_json(stage_dir / f / "result.json")["scale_env"] for f in folders]
    design = load_design(stage_dir / "design.json").output
    plan = stage_dir.parents[1] / "plan.json"
    budget = plan_stage(load_plan(plan), design.stage_id).runtime_budget_minutes
    script, cfg = stage_dir / "simulation.py", {"executor": "local"}
    apart = [
        variant_runs._alone(design, budget, cfg, script, tmp / "apart" / f, env)
        for f, env in zip(folders, envs, strict=True)
    ]
    runs = [(tmp / "packed" / f, env) for f, env in zip(folders, envs, strict=True)]
    packed = variant_runs.run_variants(design, budget, cfg, script, runs, tmp / "packed/w")
    return {
        "runs": folders,
        "separate_core_s": round(sum(u["cpu_s"] for r in apart for u in r["rank_usage"]), 3),
        "packed_core_s": round(max(r["worker_cpu_s"] for r in packed), 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--papers", nargs="*", default=[])
    parser.add_argument("--workdir", nargs="*", default=[], type=Path)
    parser.add_argument("--out", default=str(OUT))
    parser.add_argument(
        "--compare-packing",
        action="store_true",
        help="also run each stage's coarser runs one job each and packed, and compare",
    )
    args = parser.parse_args()
    workdirs = list(args.workdir)
    if args.papers:
        workdirs += run_papers(args.papers, Path(tempfile.mkdtemp(prefix="evidence_cost_")))
    rows = collect(workdirs)
    result = {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "targets": {"evidence_over_run": TARGET, "estimated_error": ">= true_error"},
        "rows": rows,
    }
    if args.compare_packing:
        result["packing"] = compare_packing(workdirs)
    atomic_write_text(Path(args.out), json.dumps(result, indent=2) + "\n")
    for r in rows:
        print(json.dumps(r))


if __name__ == "__main__":
    main()
