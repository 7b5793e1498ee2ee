"""Speed and cost of the pipeline, as numbers anyone can regenerate: `make bench`.

    .venv/bin/python benchmarks/bench.py [--out benchmarks/results/bench] [--skip-sweep]

Measures, on this machine, in temporary working directories (nothing under the
repository's outputs/ is touched):

1. no-op rerun of the example (config/demo.yaml): wall time, agent calls made and
   simulations run (both must be 0);
2. pipeline overhead on the example: the first run's wall time against the sum of
   the simulations' runtimes (result.json `runtime_seconds`) and the agent calls'
   times (metrics.jsonl `seconds`);
3. sweep fan-out: the example's 8-point sweep (stage 3, N = 1..8) through
   submitit's local executor, at most one point per core, against the ideal (the
   sum of the single runs divided by the cores); reuses benchmarks/slurm_bench.py,
   whose Slurm job-array numbers (benchmarks/results/slurm.json) are quoted;
4. DAG scaling: `snakemake -n` time for 1, 10 and 100 synthetic papers of 5 stages
   each (paper folders, prompt adaptations and plans written, so the plan
   checkpoint is done and the whole DAG is known);
5. agent usage per reproduced paper (calls, tokens, cost) from cost_summary.json,
   i.e. the usage scripted in the replay recordings.

Writes <out>.json and <out>.md with the machine and the date. Numbers, not
assertions: the tests never time anything.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

import slurm_bench  # noqa: E402  (the 8-point sweep's jobs and timing)

from reprolab.artifacts import load_result  # noqa: E402
from reprolab.fileio import atomic_write_json, atomic_write_text  # noqa: E402

SNAKEMAKE = str(Path(sys.executable).with_name("snakemake"))
EXAMPLE = REPO / "examples/papers/silica_bragg_2026"
CORES = os.cpu_count() or 1


def snakemake(workdir: Path, *extra: str) -> tuple[float, subprocess.CompletedProcess]:
    cmd = [
        SNAKEMAKE,
        "--snakefile",
        str(REPO / "Snakefile"),
        "--directory",
        str(workdir),
        "--configfile",
        str(workdir / "config.yaml"),
        "--cores",
        str(CORES),
        "--keep-going",
        *extra,
    ]
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    return time.perf_counter() - start, proc


def example_workdir(root: Path) -> Path:
    config = yaml.safe_load((REPO / "config/demo.yaml").read_text())
    config["papers"] = [{"paper_dir": str(EXAMPLE)}]
    root.mkdir(parents=True)
    (root / "config.yaml").write_text(yaml.safe_dump(config))
    return root


def metrics(paper_out: Path) -> list[dict]:
    path = paper_out / "metrics.jsonl"
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def results(paper_out: Path) -> dict[str, dict]:
    return {
        p.parent.name: load_result(p).to_json()
        for p in sorted(paper_out.glob("stages/*/result.json"))
    }


STAMP = re.compile(r"^\[(\w{3} \w{3} +\d+ [\d:]{8} \d{4})\]$")


def job_walls(log: str) -> dict[str, float]:
    """Seconds per rule, summed over its jobs, from Snakemake's own start/finish
    timestamps (1 s resolution)."""
    started: dict[str, tuple[str, float]] = {}
    walls: dict[str, float] = {}
    lines = log.splitlines()
    rule, stamp = None, None
    for i, line in enumerate(lines):
        found = STAMP.match(line.strip())
        if found:
            stamp = dt.datetime.strptime(found.group(1), "%a %b %d %H:%M:%S %Y").timestamp()
            nxt = lines[i + 1] if i + 1 < len(lines) else ""
            rule = nxt[len("localrule ") : -1] if nxt.startswith("localrule ") else None
            done = re.match(r"Finished jobid: (\d+) \(Rule: (\w+)\)", nxt)
            if done and done.group(1) in started:
                name, t0 = started.pop(done.group(1))
                walls[name] = walls.get(name, 0.0) + stamp - t0
        elif rule and line.strip().startswith("jobid: "):
            started[line.split(":")[1].strip()] = (rule, stamp)
            rule = None
    return walls


def example_runs(root: Path) -> tuple[dict, dict, dict]:
    """(overhead, no-op rerun, usage) from one full run of the example and a rerun."""
    wd = example_workdir(root / "example")
    wall, proc = snakemake(wd)
    if proc.returncode != 0:
        raise SystemExit(f"the example run failed:\n{proc.stderr[-3000:]}")
    paper_out = next((wd / "outputs").iterdir())
    calls = metrics(paper_out)
    runs = results(paper_out)
    script_s = sum(r["runtime_seconds"] or 0 for r in runs.values())
    agent_s = sum(c["seconds"] for c in calls)
    walls = job_walls(proc.stdout + proc.stderr)
    sim_s = walls.get("simulate", 0.0)
    overhead = {
        "total_wall_s": round(wall, 2),
        "simulation_wall_s": round(sim_s, 2),
        "simulation_script_s": round(script_s, 2),
        "simulation_script_s_by_stage": {k: r["runtime_seconds"] for k, r in runs.items()},
        "agent_call_s": round(agent_s, 2),
        "agent_calls": len(calls),
        "pipeline_overhead_s": round(wall - sim_s - agent_s, 2),
        "overhead_ratio": round(wall / (sim_s + agent_s), 2),
        "job_wall_s_by_rule": {k: round(v, 1) for k, v in sorted(walls.items())},
    }
    stamps = {k: (paper_out / "stages" / k / "result.json").stat().st_mtime_ns for k in runs}
    wall, proc = snakemake(wd)
    rerun_calls = metrics(paper_out)[len(calls) :]
    after = {k: (paper_out / "stages" / k / "result.json").stat().st_mtime_ns for k in runs}
    noop = {
        "wall_s": round(wall, 2),
        "exit_code": proc.returncode,
        "nothing_to_be_done": "Nothing to be done" in proc.stdout + proc.stderr,
        "agent_calls": len(rerun_calls),
        "simulations_run": sum(after[k] != stamps[k] for k in runs),
    }
    summary = json.loads((paper_out / "cost_summary.json").read_text())
    usage = {"paper_id": paper_out.name, **summary}
    return overhead, noop, usage


def sweep(root: Path) -> dict:
    """The example's 8-point sweep: one at a time, then fanned out over the cores."""
    code = slurm_bench.meep_code()
    singles = []
    for n in range(1, 9):
        _, (record,) = slurm_bench.timed(
            [slurm_bench.make_job(root / "single", f"n{n}", code, n)], "local", root
        )
        singles.append(record["runtime_seconds"])
    jobs = [slurm_bench.make_job(root / "fanout", f"n{n}", code, n) for n in range(1, 9)]
    wall, records = slurm_bench.timed(jobs, "local", root, cap=CORES)
    ideal = sum(singles) / CORES
    entry = {
        "points": 8,
        "cores": CORES,
        "executor": "local",
        "max_concurrent_jobs": CORES,
        "single_runs_s": [round(s, 3) for s in singles],
        "ideal_s": round(ideal, 2),
        "wall_s": round(wall, 2),
        "point_runtimes_s": [r["runtime_seconds"] for r in records],
        "efficiency": round(ideal / wall, 3),
    }
    slurm = REPO / "benchmarks/results/slurm.json"
    if slurm.is_file():
        data = json.loads(slurm.read_text())
        entry["slurm_array"] = {"date": data["date"], **data["sweep"]}
    return entry


# ---------------------------------------------------------------------------
# DAG scaling with synthetic papers.

STAGES = 5
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
)


def synthetic_paper(root: Path, i: int) -> Path:
    folder = root / "papers" / f"synth_{i:03d}"
    (folder / "figures").mkdir(parents=True)
    (folder / "data").mkdir()
    figures = []
    for s in range(1, STAGES):
        (folder / "figures" / f"fig{s}.png").write_bytes(PNG)
        (folder / "data" / f"fig{s}_T.csv").write_text("x,y\n0.5,0.1\n0.6,0.2\n0.7,0.3\n")
        figures.append(
            {
                "figure_id": f"fig{s}",
                "title": f"Transmission {s}",
                "image": f"figures/fig{s}.png",
                "x_label": "wavelength (um)",
                "y_label": "T",
                "curves": [{"curve_id": "T", "label": "T", "digitized": f"data/fig{s}_T.csv"}],
            }
        )
    (folder / "paper.md").write_text(f"# Synthetic paper {i}\n\n## Methods\n\nA slab.\n")
    meta = {
        "paper_id": f"synth_{i:03d}",
        "title": f"Synthetic paper {i}",
        "domain": "thin films",
        "paper_text": "paper.md",
        "figures": figures,
    }
    (folder / "metadata.yaml").write_text(yaml.safe_dump(meta, sort_keys=False))
    return folder


def synthetic_plan(paper_id: str) -> dict:
    """A plan of STAGES chained stages in the form the plan reader takes (validated by
    its model, so that a change of the plan's fields fails here, not in Snakemake)."""
    from reprolab.artifacts import PlanArtifact

    def stage(stage_id: str, stage_type: str, deps: list[str], figures: list[str]) -> dict:
        return {
            "stage_id": stage_id,
            "stage_type": stage_type,
            "name": stage_id,
            "description": "synthetic",
            "dependencies": deps,
            "target_figures": figures,
            "runtime_budget_minutes": 1,
        }

    stages = [stage("stage0_materials", "MATERIAL_VALIDATION", [], [])]
    for s in range(1, STAGES):
        stages.append(
            stage(f"stage{s}_structure", "SINGLE_STRUCTURE", [stages[-1]["stage_id"]], [f"fig{s}"])
        )
    material = {"material_id": "glass", "name": "glass", "model": "constant_index", "index": 1.5}
    material["source"] = "synthetic"
    output = {
        "paper_id": paper_id,
        "title": paper_id,
        "summary": "synthetic",
        "stages": stages,
        "planned_materials": [material],
    }
    plan = PlanArtifact.model_validate({"output": output, "synthetic": True})
    return plan.model_dump(mode="json", exclude_unset=True)


def dag_scaling(root: Path, counts=(1, 10, 100)) -> list[dict]:
    entries = []
    for n in counts:
        wd = root / f"dag{n}"
        wd.mkdir(parents=True)
        papers = [synthetic_paper(wd, i) for i in range(n)]
        time.sleep(0.01)  # the plans must be newer than the papers they came from
        for folder in papers:
            out = wd / "outputs" / folder.name
            atomic_write_json(out / "prompt_adaptations.json", {"output": {"modifications": []}})
            atomic_write_text(out / "adaptation_log.md", "synthetic\n")
            atomic_write_json(out / "plan.json", synthetic_plan(folder.name))
        config = {
            "papers": [{"paper_dir": str(p)} for p in papers],
            "provider": {"kind": "replay"},
            "gates": {"auto_approve": ["material_checkpoint"]},
        }
        (wd / "config.yaml").write_text(yaml.safe_dump(config))
        wall, proc = snakemake(wd, "-n", "--quiet", "rules")
        if proc.returncode != 0:
            raise SystemExit(
                f"dry run of {n} synthetic papers failed:\n"
                f"{proc.stdout[-3000:]}{proc.stderr[-3000:]}"
            )
        totals = [ln.split()[-1] for ln in proc.stdout.splitlines() if ln.startswith("total ")]
        jobs = int(totals[-1])  # the job stats table (printed again after the checkpoints)
        entries.append(
            {"papers": n, "stages_per_paper": STAGES, "jobs": jobs, "dry_run_s": round(wall, 2)}
        )
        print(json.dumps(entries[-1]), flush=True)
    return entries


def machine() -> dict:
    return {
        "hostname": platform.node(),
        "cpus": CORES,
        "platform": platform.platform(),
        "python": platform.python_version(),
        "snakemake": subprocess.run(
            [SNAKEMAKE, "--version"], capture_output=True, text=True
        ).stdout.strip(),
        "load_average_at_start": [round(x, 2) for x in os.getloadavg()],
    }


def markdown(r: dict) -> str:
    m, o, n, u = r["machine"], r["overhead"], r["noop_rerun"], r["agent_usage"]
    lines = [
        "# ReproLab benchmarks (benchmarks/bench.py, `make bench`)",
        "",
        f"{r['date']} on {m['hostname']}: {m['cpus']} CPUs, {m['platform']}, Python "
        f"{m['python']}, Snakemake {m['snakemake']}; load average at start "
        f"{m['load_average_at_start']}. Replay provider, local executor.",
        "",
        "| benchmark | number |",
        "|---|---|",
        f"| no-op rerun of the example: wall | {n['wall_s']} s |",
        f"| no-op rerun: agent calls / simulations run | {n['agent_calls']} / "
        f"{n['simulations_run']} (Nothing to be done: {n['nothing_to_be_done']}) |",
        f"| example, first run: total wall | {o['total_wall_s']} s |",
        f"| example: simulate jobs (wall, Snakemake's timestamps) | {o['simulation_wall_s']} s |",
        f"| example: simulation scripts (sum of result.json runtime_seconds; the sweep's "
        f"points run 2 at a time) | {o['simulation_script_s']} s |",
        f"| example: agent calls ({o['agent_calls']}, sum of seconds) | {o['agent_call_s']} s |",
        f"| example: pipeline overhead (wall - simulate jobs - agent calls) | "
        f"{o['pipeline_overhead_s']} s |",
        f"| example: overhead ratio (wall / (simulate jobs + agent calls)) | "
        f"{o['overhead_ratio']} |",
        "| example: job wall by rule (s) | "
        + ", ".join(f"{k} {v}" for k, v in o["job_wall_s_by_rule"].items())
        + " |",
    ]
    if r.get("sweep"):
        s = r["sweep"]
        lines += [
            f"| 8-point sweep, local, {s['max_concurrent_jobs']} at once: wall | {s['wall_s']} s |",
            f"| 8-point sweep: ideal (sum of single runs / {s['cores']} cores) | "
            f"{s['ideal_s']} s |",
            f"| 8-point sweep: efficiency (ideal / wall) | {s['efficiency']} |",
        ]
        if "slurm_array" in s:
            a = s["slurm_array"]
            lines.append(
                f"| 8-point sweep as a Slurm array (slurm.json, {a['date']}): efficiency | "
                f"{a['efficiency']} (wall {a['array_wall_s']} s, ideal {a['ideal_s']} s) |"
            )
    for d in r["dag_scaling"]:
        lines.append(
            f"| `snakemake -n`, {d['papers']} synthetic paper(s) x {d['stages_per_paper']} "
            f"stages ({d['jobs']} jobs) | {d['dry_run_s']} s |"
        )
    t = u["total"]
    lines += [
        f"| agent usage per paper ({u['paper_id']}): calls | {t['calls']} |",
        f"| agent usage: input / output / cache-read / cache-write tokens | "
        f"{t['input_tokens']} / {t['output_tokens']} / {t['cache_read_input_tokens']} / "
        f"{t['cache_creation_input_tokens']} |",
        f"| agent usage: cost | USD {t['cost_usd']:.4f} |",
        "",
        "Agent usage is what the replay recordings script (their `usage` fields), priced",
        "with agents/ledger.py; replayed calls take milliseconds, so the example's agent",
        "time is not an API's latency.",
        "",
        "## Agent usage by agent",
        "",
        "| agent | calls | input | output | cache read | cache write | USD |",
        "|---|---|---|---|---|---|---|",
    ]
    for agent, b in sorted(u["by_agent"].items()):
        lines.append(
            f"| {agent} | {b['calls']} | {b['input_tokens']} | {b['output_tokens']} | "
            f"{b['cache_read_input_tokens']} | {b['cache_creation_input_tokens']} | "
            f"{b['cost_usd']:.4f} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(REPO / "benchmarks/results/bench"))
    parser.add_argument("--skip-sweep", action="store_true", help="leave out benchmark 3")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="reprolab-bench-"))
    result: dict = {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "machine": machine(),
    }
    try:
        print("1-2, 5: the example, then a no-op rerun", flush=True)
        result["overhead"], result["noop_rerun"], result["agent_usage"] = example_runs(root)
        print(json.dumps(result["overhead"]), json.dumps(result["noop_rerun"]), flush=True)
        if not args.skip_sweep:
            print("3: the 8-point sweep", flush=True)
            result["sweep"] = sweep(root / "sweep")
            print(json.dumps(result["sweep"]), flush=True)
        print("4: DAG scaling", flush=True)
        result["dag_scaling"] = dag_scaling(root)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    out = Path(args.out)
    atomic_write_text(out.with_suffix(".json"), json.dumps(result, indent=2) + "\n")
    atomic_write_text(out.with_suffix(".md"), markdown(result))
    print(f"wrote {out.with_suffix('.json')} and {out.with_suffix('.md')}")


if __name__ == "__main__":
    main()
