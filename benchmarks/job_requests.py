"""What each bundled example stage asks the scheduler for, against what it used.

Every stage's recorded design and script is sized as submission sizes it
(`reprolab.jobs.stage_run.sized_resources`, the default `simulation` config, the plan's
budget for the stage) and its request (`--mem`, the run's time limit and Slurm's
`--time`) is set beside the use measured by `benchmarks/job_sizing_stages.py` (peak MB,
core-seconds of one rank: its wall time; a sweep's per point). A request within
GOAL times the use is sized; one above it names what sets it: the memory floor, Slurm's
whole minute, or the plan's budget (a run that ends on a field decay, or one sized from
the agent's estimate, whose length is not known before it runs).

Writes benchmarks/results/job_requests.json and the section "Requests against use" of
benchmarks/results/job_sizing.md. Run: `.venv/bin/python benchmarks/job_requests.py`
(seconds; no Meep: the use is job_sizing_stages.json's).
"""

from __future__ import annotations

import datetime as dt
import json
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from agents.simulation_designer import SimulationDesign  # noqa: E402
from benchmarks.job_sizing_stages import recorded, stages  # noqa: E402
from reprolab.jobs import job_size, sizing, stage_run  # noqa: E402

OUT = Path(__file__).parent / "results"
SECTION = "## Requests against use"
GOAL = 1.5
CONFIG = {"max_mpi_ranks": 1}  # as measured: one rank


def plan_budget(folder: Path, stage_id: str) -> float:
    plan = yaml.safe_load((folder.parent / "paper" / "planner.a1.yaml").read_text())["output"]
    return next(s["runtime_budget_minutes"] for s in plan["stages"] if s["stage_id"] == stage_id)


def memory_reason(mem_mb: int, used_mb: float, job: job_size.JobSize) -> str:
    if mem_mb / used_mb <= GOAL:
        return f"sized: estimate x {sizing.MARGIN:g}"
    if mem_mb == sizing.MIN_MEMORY_MB:
        return (
            f"floor min_memory_mb = {sizing.MIN_MEMORY_MB} MB: one rank of Python with Meep "
            f"({sizing.BASE_MEMORY_MB:g} MB) with the {sizing.MARGIN:g}x margin, and the worker"
        )
    if job.source != "design":
        return "the agent's estimate x memory_safety_factor (the script's cell not read)"
    return f"sized: estimate x {sizing.MARGIN:g} (the estimate runs high here)"


def time_reason(timeout_s: float, used_s: float, job: job_size.JobSize, notes) -> str:
    if timeout_s / used_s <= GOAL:
        return f"sized: estimate x {sizing.TIME_MARGIN:g}"
    if any("field decay" in n for n in notes):
        return "the plan's budget: the run ends on a field decay, its length unknown before"
    if job.source != "design":
        return "the plan's budget: sized by the agent's estimate, the script's run not read"
    if timeout_s <= sizing.MIN_TIME_MIN * 60:
        return "floor: one minute (Slurm's time limits are whole minutes)"
    return f"sized: estimate x {sizing.TIME_MARGIN:g} (the estimate runs high here)"


def rows() -> list[dict]:
    used = {
        (r["paper"], r["stage"]): r
        for r in json.loads((OUT / "job_sizing_stages.json").read_text())["stages"]
    }
    out = []
    for paper, folder in stages():
        design = SimulationDesign.model_validate(recorded(folder, "simulation_designer"))
        code = recorded(folder, "code_generator")["code"]
        job = job_size.for_stage(design, code, CONFIG, env={})
        budget = plan_budget(folder, design.stage_id)
        res, timeout_s, notes = stage_run.sized_resources(job, design, budget, CONFIG)
        measured = used[(paper, design.stage_id)]["actual"]
        # The job's allocation also holds its worker: measured here is the rank alone.
        mem_ratio = res.mem_mb / (measured["memory_mb"] + sizing.WORKER_MEMORY_MB)
        time_ratio = timeout_s / measured["core_seconds"]
        out.append(
            {
                "paper": paper,
                "stage": design.stage_id,
                "sized_from": job.source,
                "mem_mb": res.mem_mb,
                "used_mb": round(measured["memory_mb"], 1),
                "mem_ratio": round(mem_ratio, 2),
                "mem_within": mem_ratio <= GOAL,
                "mem_set_by": memory_reason(res.mem_mb, measured["memory_mb"], job),
                "timeout_s": timeout_s,
                "slurm_time_min": res.time_min,
                "used_s": round(measured["core_seconds"], 2),
                "time_ratio": round(time_ratio, 1),
                "time_within": time_ratio <= GOAL,
                "time_set_by": time_reason(timeout_s, measured["core_seconds"], job, notes),
            }
        )
    return out


def markdown(result: dict) -> list[str]:
    rs = result["stages"]
    mem_ok = sum(r["mem_within"] for r in rs)
    time_ok = sum(r["time_within"] for r in rs)
    lines = [
        SECTION,
        "",
        f"{result['date']}: requests from `benchmarks/job_requests.py` (this code's sizing, "
        "the default config, the plan's budget), use from the section above "
        f"({result['use_measured']}). Memory: {mem_ok} of {len(rs)} stages within "
        f"{GOAL:g}x their peak (the rank's measured peak plus {sizing.WORKER_MEMORY_MB} MB "
        "for the job's own worker, which shares Slurm's --mem and was not measured there), "
        "the others set by what the column names. Time (the run's "
        f"limit; Slurm's `--time` is it rounded up to minutes, plus one): {time_ok} of "
        f"{len(rs)} within {GOAL:g}x, the others by what the column names: no stage here "
        "runs a minute, so Slurm's whole minute alone is 20-80x their use.",
        "",
        "| paper | stage | sized from | --mem MB | rank's MB | ratio | set by | time limit s "
        "| --time min | used s | ratio | set by |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rs:
        lines.append(
            f"| {r['paper']} | {r['stage']} | {r['sized_from']} | {r['mem_mb']} | "
            f"{r['used_mb']:.0f} | {r['mem_ratio']:.2f} | {r['mem_set_by']} | "
            f"{r['timeout_s']:g} | {r['slurm_time_min']} | {r['used_s']:.3g} | "
            f"{r['time_ratio']:g} | {r['time_set_by']} |"
        )
    return lines


def write_section(lines: list[str]) -> None:
    """Replace (or append) this section of job_sizing.md; the sections above stay."""
    md = OUT / "job_sizing.md"
    text = md.read_text() if md.is_file() else ""
    head, _, rest = text.partition(SECTION)
    tail = rest.split("\n## ", 1)[1] if "\n## " in rest else ""
    body = head.rstrip("\n") + "\n\n" + "\n".join(lines) + "\n"
    md.write_text(body + ("\n## " + tail if tail else ""))


def main() -> None:
    measured = json.loads((OUT / "job_sizing_stages.json").read_text())
    result = {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "use_measured": f"{measured['date']}, {measured['machine']}",
        "goal_factor": GOAL,
        "stages": rows(),
    }
    (OUT / "job_requests.json").write_text(json.dumps(result, indent=1) + "\n")
    lines = markdown(result)
    write_section(lines)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
