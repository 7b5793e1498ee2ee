"""The floors under the three unmet speed targets (docs/benchmarks.md), measured rather
than argued:

1. the sweep: the best any scheduler could do with the 8 points on this machine's
   cores, the as-built record on (a guarantee) and off: two processes, Meep imported
   and the recorder installed before the clock starts, each running its points one
   after another (the same dealing as the packed workers), timed from a shared go
   to the last point's end; and, apart, what starting those processes took (Python
   and `import meep`). No job, no sandbox, no pipeline;
2. the 100-paper dry run: Snakemake alone on a workflow of the same shape (one plan
   checkpoint per paper, as many `script:` jobs per paper as ours, chained stage by
   stage, input functions that only read the plan), nothing of ReproLab in it; the
   same with `shell:` jobs (the cheapest kind Snakemake has), and with five jobs a
   stage, which together give Snakemake's cost per job and how many jobs a paper could
   have at all under the target;
3. a step's start-up: a fresh interpreter importing pydantic and building the one
   model a step needs at least to read its inputs.

    .venv/bin/python benchmarks/floors.py   (overhead.py calls these in its run)
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

PY = sys.executable
SNAKEMAKE = str(Path(PY).with_name("snakemake"))

SWEEP_WORKER = """
import json, os, runpy, sys, time
import meep
points = json.loads(sys.argv[2])
if sys.argv[1] == "record":
    from reprolab.physics.as_built import install_as_built_recorder
    install_as_built_recorder(points[0]["dir"])
print("READY", flush=True)
sys.stdin.readline()  # the go, sent to both workers at once
for p in points:
    os.chdir(p["dir"])
    os.environ.update(p["env"])
    runpy.run_path("simulation.py", run_name="__main__")
meep.all_wait()
print("DONE", time.time(), flush=True)
"""


def sweep_floor(stage_dir: Path, scratch: Path, cores: int = 2) -> dict:
    """Wall of the sweep's points in `cores` warm processes, with and without the
    as-built record (the faster of 2 each, alternating)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from reprolab.jobs.packed import plan_workers  # the packed workers' own dealing

    rec = json.loads((stage_dir / "result.json").read_text())
    param = rec["sweep"]["parameter"]
    points = []
    for p in rec["points"]:
        src = stage_dir / f"run/points/p{p['index']:03d}"
        points.append(
            {
                "src": src,
                "env": {
                    "REPROLAB_SWEEP_VALUE": json.dumps(p["value"]),
                    "REPROLAB_SWEEP_INDEX": str(p["index"]),
                    "REPROLAB_SWEEP_PARAMETER": param,
                },
            }
        )
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MPLBACKEND": "Agg"}
    env.update(OMPI_MCA_ess_singleton_isolated="1", OMPI_ALLOW_RUN_AS_ROOT="1")
    env["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1"
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[1])
    walls: dict[str, list[float]] = {"record": [], "plain": []}
    starts: list[float] = []
    for attempt in range(2):
        for mode in walls:
            run = scratch / f"{mode}{attempt}"
            shutil.rmtree(run, ignore_errors=True)
            dealt = plan_workers(list(range(len(points))), cores)
            procs, spawned = [], time.time()
            for idx in dealt:
                mine = []
                for i in idx:
                    d = run / f"p{i:03d}"
                    d.mkdir(parents=True)
                    shutil.copy(points[i]["src"] / "simulation.py", d / "simulation.py")
                    mine.append({"dir": str(d), "env": points[i]["env"]})
                procs.append(
                    subprocess.Popen(
                        [PY, "-c", SWEEP_WORKER, mode, json.dumps(mine)],
                        stdin=subprocess.PIPE,
                        stdout=subprocess.PIPE,
                        stderr=subprocess.DEVNULL,
                        text=True,
                        env=env,
                        cwd=run,
                    )
                )
            for p in procs:
                while "READY" not in p.stdout.readline():
                    if p.poll() is not None:
                        raise SystemExit(f"a floor worker died in {run}")
            go = time.time()
            starts.append(go - spawned)
            for p in procs:
                p.stdin.write("go\n")
                p.stdin.flush()
            ends = []
            for p in procs:
                out, _ = p.communicate()
                ends += [float(ln.split()[1]) for ln in out.splitlines() if ln.startswith("DONE")]
            if len(ends) != len(procs):
                raise SystemExit(f"a floor worker did not finish in {run}")
            walls[mode].append(max(ends) - go)
    return {
        "cores": cores,
        "points": len(points),
        "with_record_s": round(min(walls["record"]), 2),
        "without_record_s": round(min(walls["plain"]), 2),
        # Python and `import meep` in every worker, the slower one: what a run that
        # starts its workers fresh adds to the floor (the packed workers do).
        "worker_start_s": round(min(starts), 2),
    }


STAGES = 5
FIGURES_PER_STAGE = 0.8  # 4 figures over 5 stages, as benchmarks/bench.py's papers
STAGE_RULES = 11  # a stage's jobs when our own dry run does not give the count
SNAKEFILE = """
import json
PAPERS = config["papers"]

rule all:
    input: expand("out/{{paper}}/report.txt", paper=PAPERS)

checkpoint plan:
    output: "out/{{paper}}/plan.json"
    script: "noop.py"

def stages(wildcards):
    plan = json.load(open(checkpoints.plan.get(paper=wildcards.paper).output[0]))
    return [f"out/{{wildcards.paper}}/{{s}}/s{last}.txt" for s in plan["stages"]]

rule report:
    input: stages, "out/{{paper}}/p{paper_last}.txt"
    output: "out/{{paper}}/report.txt"
    script: "noop.py"

rule p0:
    input: "out/{{paper}}/plan.json"
    output: "out/{{paper}}/p0.txt"
    script: "noop.py"
{paper_chain}

rule s0:
    input: "out/{{paper}}/plan.json"
    output: "out/{{paper}}/{{stage}}/s0.txt"
    script: "noop.py"
{chain}
"""
PAPER_LINK = """
rule p{i}:
    input: "out/{{paper}}/p{prev}.txt"
    output: "out/{{paper}}/p{i}.txt"
    script: "noop.py"
"""
# the report: the paper's job besides its stages and the paper-level chain (its plan is
# written before the dry run, as bench.dag_scaling writes ours: no job)
PAPER_FIXED_JOBS = 1
LINK = """
rule s{i}:
    input: "out/{{paper}}/{{stage}}/s{prev}.txt"
    output: "out/{{paper}}/{{stage}}/s{i}.txt"
    script: "noop.py"
"""


def jobs_per_paper(dry_runs: list[dict]) -> int:
    """A paper's jobs in our workflow: the growth of the job count between the smallest
    and the largest of bench.dag_scaling's dry runs (what is paid once, `all` and the
    campaign's index, drops out)."""
    lo, hi = min(dry_runs, key=lambda e: e["papers"]), max(dry_runs, key=lambda e: e["papers"])
    if hi["papers"] == lo["papers"]:
        raise ValueError("jobs_per_paper needs dry runs of two paper counts")
    return round((hi["jobs"] - lo["jobs"]) / (hi["papers"] - lo["papers"]))


def shape(jobs_per_paper: int | None) -> tuple[int, int]:
    """(jobs a stage, paper-level jobs besides the plan and the report) that make a
    paper of STAGES stages have `jobs_per_paper` jobs, as our own dry run counted them
    (None: STAGE_RULES a stage and one paper-level job)."""
    if jobs_per_paper is None:
        return STAGE_RULES, 1
    per_stage, extra = divmod(jobs_per_paper - PAPER_FIXED_JOBS - 1, STAGES)
    if per_stage < 1:
        raise ValueError(f"jobs_per_paper {jobs_per_paper}: fewer than one job a stage")
    return per_stage, extra + 1


def dry_run_floor(
    root: Path,
    papers: int = 100,
    per_stage: int = STAGE_RULES,
    job: str = "script",
    paper_jobs: int = 1,
) -> dict:
    """`snakemake -n --quiet rules` on a workflow of our shape (`per_stage` jobs a stage,
    `paper_jobs` more a paper), nothing of ours in it; `job` "script" (as ours:
    Snakemake reads each job's script) or "shell" (the cheapest job Snakemake has). The
    faster of 2."""
    root.mkdir(parents=True, exist_ok=True)
    chain = "".join(LINK.format(i=i, prev=i - 1) for i in range(1, per_stage))
    paper_chain = "".join(PAPER_LINK.format(i=i, prev=i - 1) for i in range(1, paper_jobs))
    text = SNAKEFILE.format(
        chain=chain, last=per_stage - 1, paper_chain=paper_chain, paper_last=paper_jobs - 1
    )
    if job == "shell":
        text = text.replace('script: "noop.py"', 'shell: "true"')
    (root / "Snakefile").write_text(text)
    (root / "noop.py").write_text("pass\n")
    names = [f"synth_{i:03d}" for i in range(papers)]
    for name in names:
        out = root / "out" / name
        out.mkdir(parents=True, exist_ok=True)
        plan = {"stages": [f"stage{s}" for s in range(STAGES)]}
        (out / "plan.json").write_text(json.dumps(plan))
    (root / "config.json").write_text(json.dumps({"papers": names}))
    cmd = [SNAKEMAKE, "-s", str(root / "Snakefile"), "-d", str(root)]
    cmd += ["--configfile", str(root / "config.json"), "--cores", "2", "-n", "--quiet", "rules"]
    walls = []
    for _ in range(2):
        start = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True)
        walls.append(time.perf_counter() - start)
        if proc.returncode != 0:
            raise SystemExit(f"floor dry run failed:\n{proc.stderr[-3000:]}")
    totals = [ln.split()[-1] for ln in proc.stdout.splitlines() if ln.startswith("total ")]
    return {
        "papers": papers,
        "job": job,
        "jobs": int(totals[-1]),
        "jobs_per_paper": round(int(totals[-1]) / papers, 1),
        "dry_run_s": round(min(walls), 2),
    }


SMALL_STAGE_RULES = 5
"""A second, smaller shape (a stage of five jobs) to tell Snakemake's cost per job from
what it pays once."""


def dry_run_floors(
    root: Path, papers: int = 100, target_s: float = 10.0, jobs_per_paper: int | None = None
) -> dict:
    """The dry-run floor at our shape (`jobs_per_paper`: what our own dry run counts for
    a paper of STAGES stages) with `script:` jobs (as ours) and `shell:` jobs (the
    cheapest kind), and at a smaller shape; from the two script shapes, Snakemake's
    seconds per job and how many jobs a paper could have for `papers` papers to dry-run
    under `target_s` with nothing of ours in it."""
    per_stage, paper_jobs = shape(jobs_per_paper)
    ours = dry_run_floor(root / "script", papers, per_stage, paper_jobs=paper_jobs)
    shell = dry_run_floor(root / "shell", papers, per_stage, "shell", paper_jobs)
    small = dry_run_floor(root / "small", papers, SMALL_STAGE_RULES, paper_jobs=paper_jobs)
    per_job = (ours["dry_run_s"] - small["dry_run_s"]) / max(1, ours["jobs"] - small["jobs"])
    fixed = ours["dry_run_s"] - per_job * ours["jobs"]
    fits = (target_s - fixed) / per_job / papers if per_job > 0 else None
    return {
        **ours,
        "shell": shell,
        "small": small,
        "seconds_per_job": round(per_job, 5),
        "fixed_s": round(fixed, 2),
        "target_s": target_s,
        "jobs_per_paper_under_target": None if fits is None else round(fits, 1),
    }


PYDANTIC_FLOOR = """
import time
t = time.perf_counter()
from pydantic import BaseModel, ConfigDict
class Verdict(BaseModel):
    model_config = ConfigDict(extra="forbid")
    stage_id: str
    status: str
    notes: list[str] = []
Verdict.model_validate({"stage_id": "s", "status": "ok"})
print(time.perf_counter() - t)
"""


def pydantic_floor() -> float:
    """Importing pydantic and building, then using, one small model, in a fresh
    interpreter: the fastest of 5."""
    runs = [
        float(subprocess.run([PY, "-c", PYDANTIC_FLOOR], capture_output=True, text=True).stdout)
        for _ in range(5)
    ]
    return round(min(runs), 3)


if __name__ == "__main__":
    import tempfile

    tmp = Path(tempfile.mkdtemp(prefix="reprolab-floors-"))
    try:
        print(json.dumps({"pydantic_floor_s": pydantic_floor()}), flush=True)
        print(json.dumps({"dry_run_floor": dry_run_floors(tmp / "dag")}), flush=True)
        if len(sys.argv) > 1:  # a finished sweep stage's folder
            print(json.dumps({"sweep_floor": sweep_floor(Path(sys.argv[1]), tmp / "sweep")}))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
