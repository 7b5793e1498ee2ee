"""Where the time goes: the pipeline's own cost beside Meep's, baseline and now in one run.

    .venv/bin/python benchmarks/overhead.py [--baseline REV] [--out benchmarks/results/overhead]

The baseline revision (default 3810876, that of the speed targets) is unpacked with `git
archive` into a temporary folder and put first on PYTHONPATH (its Snakefile, its
reprolab); "now" is this working tree. Both are measured in this one run, on
this machine, in temporary working directories:

1. the example end to end (config/demo.yaml, replay provider, --cores 2): wall;
   Meep compute = every simulation the run made (each stage's script, each sweep
   point) run again once in a warm process (Meep imported before the clock starts,
   the same ranks), summed; the ratio wall / Meep compute; a no-op rerun's wall;
2. the example's 8-point sweep stage alone (reprolab.jobs.stage_run.run_stage, the
   cores Snakemake gives it under --cores 2): wall, efficiency on Meep compute
   (Meep compute of its points / (wall x cores)), and whether its gathered CSV is
   byte-identical to the baseline's;
3. per-step start-up: from a script's first line to its step's code being imported
   (Python's own start left out); the fastest of 3, the median over the steps (both
   trees byte-compiled, as `make setup` compiles the checkout);
4. `snakemake -n` for 1, 10 and 100 synthetic papers (benchmarks/bench.py's), and what a
   step of the 100-paper campaign pays to find its paper (`paper_run`);
5. the sandbox per packed worker: bubblewrap's own setup (paid once per worker,
   where it was once per point), from benchmarks/sandbox_overhead.py;
6. the floors under the targets that stay unmet (benchmarks/floors.py).

`--sweeps` measures only 2 (locally, and on the one-node Slurm cluster that
scripts/slurm_up.sh brings up unless --no-slurm: one array task per point in the
baseline, packed workers now, with the number of array tasks), 3 and 5, and writes
benchmarks/results/overhead_sweeps.{json,md}.

Numbers, not assertions (the tests never time anything). Other sessions may share
the machine's cores: the load average at the start and end is recorded.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))

import bench  # noqa: E402  (snakemake runs, synthetic papers)
import floors  # noqa: E402  (what no change of ours could go below)
import sandbox_overhead  # noqa: E402

PY = sys.executable
DEFAULT_OUT = str(REPO / "benchmarks/results/overhead")
STAGE3 = REPO / "examples/papers/silica_bragg_2026/recordings/stage3_pairs_sweep"
EXAMPLE_ID = STAGE3.parents[1].name  # the example paper's id, its outputs folder
STEP_MODULES = "plan design code run checks validate compare analyze verdict material report"


def env_for(tree: Path) -> dict:
    """The tree's code first (run with cwd=tree too: `python -c` puts the current
    folder before PYTHONPATH, and the editable install points at this checkout)."""
    return {**os.environ, "PYTHONPATH": str(tree)}


def snakemake(tree: Path, wd: Path, *extra: str) -> tuple[float, subprocess.CompletedProcess]:
    cmd = [bench.SNAKEMAKE, "--snakefile", str(tree / "Snakefile"), "--directory", str(wd)]
    cmd += ["--configfile", str(wd / "config.yaml"), "--cores", "2", "--keep-going", *extra]
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env_for(tree))
    return time.perf_counter() - start, proc


def example(tree: Path, root: Path) -> dict:
    wd = root / "example"
    config = yaml.safe_load((REPO / "config/demo.yaml").read_text())
    config["papers"] = [{"paper_dir": str(tree / "examples/papers/silica_bragg_2026")}]
    wd.mkdir(parents=True)
    (wd / "config.yaml").write_text(yaml.safe_dump(config))
    wall, proc = snakemake(tree, wd)
    if proc.returncode != 0:
        raise SystemExit(f"the example failed in {tree}:\n{proc.stderr[-3000:]}")
    noop, proc = snakemake(tree, wd)
    runs = {
        p.parent.name: json.loads(p.read_text()).get("runtime_seconds")
        for p in sorted(wd.glob("outputs/*/stages/*/result.json"))
    }
    return {
        "wall_s": round(wall, 2),
        "noop_s": round(noop, 2),
        "simulation_runtime_s": runs,  # each stage's run(s), sandbox and start-up included
        "workdir": str(wd),
    }


WARM = (
    "import json, os, runpy, sys, time\n"
    "import meep\n"
    "t = time.perf_counter()\n"
    "runpy.run_path('simulation.py', run_name='__main__')\n"
    "meep.all_wait()\n"
    "if meep.am_master(): print('MEEP_S', time.perf_counter() - t)\n"
)


def meep_compute(stage_dir: Path, scratch: Path) -> list[float]:
    """Each simulation of the stage's final run, again in a warm process: seconds each."""
    rec = json.loads((stage_dir / "result.json").read_text())
    runs = [(stage_dir / "run", None)]
    if rec.get("sweep"):
        runs = [(stage_dir / f"run/points/p{p['index']:03d}", p["value"]) for p in rec["points"]]
    times = []
    for folder, value in runs:
        wd = scratch / f"{stage_dir.name}_{folder.name}"
        shutil.rmtree(wd, ignore_errors=True)
        wd.mkdir(parents=True)
        shutil.copy(folder / "simulation.py", wd / "simulation.py")
        env = {**os.environ, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
        env.update(OMP_NUM_THREADS="1", MPLBACKEND="Agg")
        if value is not None:
            env.update(REPROLAB_SWEEP_VALUE=json.dumps(value), REPROLAB_SWEEP_INDEX="0")
            env["REPROLAB_SWEEP_PARAMETER"] = rec["sweep"]["parameter"]
        ranks = int(rec.get("mpi_ranks") or 1)
        cmd = [PY, "-c", WARM]
        if ranks > 1:
            cmd = ["mpirun", "--oversubscribe", "-np", str(ranks), *cmd]
        out = subprocess.run(cmd, cwd=wd, env=env, capture_output=True, text=True).stdout
        times += [float(line.split()[1]) for line in out.splitlines() if line.startswith("MEEP_S")]
    return times


LOCAL_SWEEP = {"executor": "local", "max_mpi_ranks": 2, "max_concurrent_jobs": 8, "job_cores": 2}
SLURM_SWEEP = {
    "executor": "slurm",
    "mpi_launcher": "srun --mpi=pmix -n {ranks}",
    "max_concurrent_jobs": 2,  # the one node's 2 CPUs, as tests/slurm/test_slurm_faults.py
    "job_name": "reprolab-overhead-sweep",
}


def sweep_stage(tree: Path, root: Path, cfg: dict | None = None) -> dict:
    """The example's sweep stage alone, as the simulate rule runs it under --cores 2
    (or on Slurm with `cfg` SLURM_SWEEP): wall, and how many jobs (array tasks) ran it."""
    stage3 = tree / STAGE3.relative_to(REPO)  # the tree's own recordings fit its models
    code = yaml.safe_load((stage3 / "code_generator.a1.yaml").read_text())["output"]["code"]
    root.mkdir(parents=True)
    (root / "simulation.py").write_text(code)
    driver = (
        "import json, sys, time, yaml\n"
        "from agents.simulation_designer import SimulationDesign\n"
        "from reprolab.jobs import stage_run\n"
        f"art = yaml.safe_load(open({str(stage3 / 'simulation_designer.a1.yaml')!r}))\n"
        "design = SimulationDesign.model_validate(art['output'])\n"
        f"cfg = {json.dumps(cfg or LOCAL_SWEEP)!r}\n"
        "cfg = json.loads(cfg)\n"
        "t, t_wall = time.perf_counter(), time.time()\n"
        f"rec = stage_run.run_stage(design, 10, cfg, {str(root / 'simulation.py')!r}, "
        f"__import__('pathlib').Path({str(root / 'stage')!r}))\n"
        "jobs = len({p['job_id'] for p in rec['points']})\n"
        f"open({str(root / 'stage/result.json')!r}, 'w').write(json.dumps(rec))\n"
        "print(json.dumps({'wall_s': time.perf_counter() - t, 'failure': rec['failure'], "
        "'jobs': jobs, 'started': t_wall, 'ended': time.time()}))\n"
    )
    out = subprocess.run(
        [PY, "-c", driver], capture_output=True, text=True, env=env_for(tree), cwd=tree
    )
    if out.returncode != 0:
        raise SystemExit(f"sweep stage failed in {tree}:\n{out.stderr[-3000:]}")
    result = json.loads(out.stdout.strip().splitlines()[-1])
    csv = root / "stage/run/pairs_sweep.csv"
    return {
        "wall_s": round(result["wall_s"], 2),
        "failure": result["failure"],
        "jobs": result["jobs"],
        "csv": str(csv),
        "stage_dir": str(root / "stage"),
        "timeline": sweep_timeline(root / "stage/result.json", result["started"], result["ended"]),
    }


def sweep_timeline(result_json: Path, started: float, ended: float) -> dict | None:
    """Where a sweep stage's wall went, from its points' own start and run times:
    `head` from the stage's start to its first point (jobs, sandboxes, Python; `import
    meep` is inside each worker's first point), `points_s` the busiest job's points
    back to back (and each job's, to show the dealing's imbalance), `tail` from the
    last point's end to the stage's result."""
    points = json.loads(result_json.read_text())["points"]
    if not all(p.get("started_at") and p.get("runtime_seconds") for p in points):
        return None  # a tree whose points do not record their start (the baseline's)
    busy: dict[str, float] = {}
    for p in points:
        busy[str(p["job_id"])] = busy.get(str(p["job_id"]), 0.0) + p["runtime_seconds"]
    first = min(p["started_at"] for p in points)
    last = max(p["started_at"] + p["runtime_seconds"] for p in points)
    return {
        "head_s": round(first - started, 2),
        "points_s": round(max(busy.values()), 2),
        "per_job_points_s": sorted(round(v, 2) for v in busy.values()),
        "span_s": round(last - first, 2),
        "tail_s": round(ended - last, 2),
    }


STARTUP_CLIENT = """
import sys, time
t0 = time.time()
import reprolab.smk, reprolab.steps.{name}
print(time.time() - t0)
"""


def step_startup(tree: Path, scratch: Path) -> dict:
    """From a step script's first line to its step's code being ready to run (Python's
    own start left out): the fastest of 3 per step, and their median."""
    scratch.mkdir(parents=True)
    env = env_for(tree)
    per = {}
    for name in STEP_MODULES.split():
        script = scratch / f"startup_{name}.py"
        script.write_text(STARTUP_CLIENT.format(name=name))
        runs = [
            float(
                subprocess.run(
                    [PY, str(script)], capture_output=True, text=True, env=env, cwd=scratch
                ).stdout.split()[-1]
            )
            for _ in range(3)
        ]
        per[name] = round(min(runs), 3)
    return {"per_step_s": per, "median_s": round(statistics.median(per.values()), 3)}


def dry_runs(tree: Path, root: Path) -> list[dict]:
    bench.REPO = tree  # its Snakefile
    saved = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = str(tree)
    try:
        return bench.dag_scaling(root)
    finally:
        bench.REPO = REPO
        if saved is None:
            os.environ.pop("PYTHONPATH")
        else:
            os.environ["PYTHONPATH"] = saved


def measure(trees: dict[str, Path], root: Path) -> dict:
    """Each measure for every tree back to back (the load other sessions put on the
    machine changes by the minute); the sweep stage twice each, alternating, the faster kept."""
    out: dict = {name: {} for name in trees}
    for name, tree in trees.items():
        out[name]["example"] = ex = example(tree, root / name / "ex")
        # Warm re-runs right after the run they divide: this machine's speed drifts by
        # tens of percent over minutes, and the ratio must not straddle such a drift.
        paper = Path(ex["workdir"]) / "outputs" / EXAMPLE_ID
        meep = {
            st.name: round(sum(meep_compute(st, root / name / "warm")), 3)
            for st in sorted(paper.glob("stages/*"))
            if (st / "result.json").is_file()
        }
        ex["meep_compute_s"] = meep
        ex["meep_compute_total_s"] = total = round(sum(meep.values()), 3)
        out[name]["wall_over_meep"] = round(ex["wall_s"] / total, 2)
        print(name, json.dumps(ex), flush=True)
    for attempt in range(2):
        for name, tree in trees.items():
            got = sweep_stage(tree, root / name / f"sweep{attempt}")
            print(name, json.dumps(got), flush=True)
            best = out[name].get("sweep_stage")
            if best is None or got["wall_s"] < best["wall_s"]:
                out[name]["sweep_stage"] = got
    for name, tree in trees.items():
        out[name]["step_startup"] = step_startup(tree, root / name / "startup")
        print(name, json.dumps(out[name]["step_startup"]), flush=True)
    for name, tree in trees.items():
        out[name]["dry_run"] = dry_runs(tree, root / name / "dag")
        out[name]["paper_lookup_s"] = paper_lookup(tree, root / name / "dag" / "dag100")
    return out


PAPER_LOOKUP = """
import sys, time, yaml
from reprolab.settings import paper_run
config = yaml.safe_load(open(sys.argv[1]))
last = config["papers"][-1]["paper_dir"].rsplit("/", 1)[-1]
times = []
for _ in range(3):
    t = time.perf_counter()
    paper_run(config, last)
    times.append(time.perf_counter() - t)
print(min(times))
"""


def paper_lookup(tree: Path, campaign: Path) -> float:
    """What a step pays to find its paper in the 100-paper campaign (`paper_run`, the
    last paper listed), fastest of 3: every step job of a campaign pays it once."""
    out = subprocess.run(
        [PY, "-c", PAPER_LOOKUP, str(campaign / "config.yaml")],
        capture_output=True,
        text=True,
        env=env_for(tree),
        cwd=tree,
        check=True,
    )
    return round(float(out.stdout.strip().splitlines()[-1]), 4)


def measure_sweeps(trees: dict[str, Path], root: Path, slurm: bool) -> dict:
    """The sweep stage locally and (with `slurm`) on the one-node Slurm cluster, each
    tree twice, alternating, the faster kept; then per-step start-up."""
    out: dict = {name: {} for name in trees}
    kinds = [("sweep_stage", None)] + ([("slurm_sweep_stage", SLURM_SWEEP)] if slurm else [])
    for key, cfg in kinds:
        for attempt in range(2):
            for name, tree in trees.items():
                got = sweep_stage(tree, root / name / f"{key}{attempt}", cfg)
                print(name, key, json.dumps(got), flush=True)
                best = out[name].get(key)
                if best is None or got["wall_s"] < best["wall_s"]:
                    out[name][key] = got
    for name, tree in trees.items():
        out[name]["step_startup"] = step_startup(tree, root / name / "startup")
        print(name, json.dumps(out[name]["step_startup"]), flush=True)
    return out


JUDGE_CHAIN = ("checks", "validate", "compare", "analyze", "verdict")
CHAIN_RULE = """
rule {name}:
    input: {inputs}
    output: {outputs}
    localrule: True
    script: "{script}"
"""
CHAIN_SCRIPT = (
    "import reprolab.smk\n"
    "{imports}\n"
    "for out in snakemake.output:\n"
    "    open(out, 'w').write('{{}}')\n"
)


def judge_chain(tree: Path, root: Path) -> dict:
    """What merging a stage's judge chain into one job would save: a chain of five local
    `script:` rules, each importing its step's module (reprolab.steps.checks ...
    verdict) and writing its file, against one rule importing all five and writing the
    five files; each run forced 3 times, the fastest kept, its no-op run subtracted."""
    root.mkdir(parents=True)
    chain, prev = [], "start.txt"
    for name in JUDGE_CHAIN:
        (root / f"{name}.py").write_text(
            CHAIN_SCRIPT.format(imports=f"import reprolab.steps.{name}")
        )
        chain.append(
            CHAIN_RULE.format(
                name=name, inputs=repr(prev), outputs=repr(f"{name}.json"), script=f"{name}.py"
            )
        )
        prev = f"{name}.json"
    imports = "\n".join(f"import reprolab.steps.{n}" for n in JUDGE_CHAIN)
    (root / "merged.py").write_text(CHAIN_SCRIPT.format(imports=imports))
    merged = CHAIN_RULE.format(
        name="judge",
        inputs="'start.txt'",
        outputs=", ".join(repr(f"m_{n}.json") for n in JUDGE_CHAIN),
        script="merged.py",
    )
    (root / "start.txt").write_text("x")
    (root / "chain.smk").write_text("\n".join(chain))
    (root / "merged.smk").write_text(merged)
    out = {}
    for kind, target in (("five_jobs", "verdict.json"), ("one_job", "m_verdict.json")):
        smk = root / ("chain.smk" if kind == "five_jobs" else "merged.smk")
        cmd = [bench.SNAKEMAKE, "-s", str(smk), "-d", str(root), "--cores", "1", target]
        walls, noops = [], []
        for _ in range(3):
            t = time.perf_counter()
            subprocess.run([*cmd, "--forceall"], capture_output=True, env=env_for(tree), cwd=root)
            walls.append(time.perf_counter() - t)
            t = time.perf_counter()
            subprocess.run(cmd, capture_output=True, env=env_for(tree), cwd=root)
            noops.append(time.perf_counter() - t)
        out[kind] = {
            "wall_s": round(min(walls), 3),
            "noop_s": round(min(noops), 3),
            "jobs_s": round(min(walls) - min(noops), 3),
        }
    out["saved_per_stage_s"] = round(out["five_jobs"]["jobs_s"] - out["one_job"]["jobs_s"], 3)
    return out


AS_BUILT_WARM = (
    "import os, runpy, sys, time\n"
    "import meep\n"
    "if sys.argv[1] == 'record':\n"
    "    from reprolab.physics.as_built import install_as_built_recorder\n"
    "    install_as_built_recorder(os.getcwd())\n"
    "t = time.perf_counter()\n"
    "runpy.run_path('simulation.py', run_name='__main__')\n"
    "print('MEEP_S', time.perf_counter() - t)\n"
)


def as_built_cost(workdir: Path, scratch: Path, stage: str = "stage1_single_slab") -> dict:
    """What the as-built record (its field-energy sampler and its record of the
    structure) costs a run: one stage's script warm with and without it, alternating,
    the fastest of 3 each."""
    run = workdir / "outputs" / EXAMPLE_ID / "stages" / stage / "run"
    scratch.mkdir(parents=True)
    shutil.copy(run / "simulation.py", scratch / "simulation.py")
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MPLBACKEND": "Agg", "PYTHONPATH": str(REPO)}
    got: dict[str, list[float]] = {"plain": [], "record": []}
    for _ in range(3):
        for mode in got:
            out = subprocess.run(
                [PY, "-c", AS_BUILT_WARM, mode],
                cwd=scratch,
                env=env,
                capture_output=True,
                text=True,
            ).stdout
            got[mode] += [
                float(ln.split()[1]) for ln in out.splitlines() if ln.startswith("MEEP_S")
            ]
    plain, record = min(got["plain"]), min(got["record"])
    return {
        "stage": stage,
        "plain_s": round(plain, 3),
        "record_s": round(record, 3),
        "share": round(record / plain - 1, 3),
    }


def as_built_line(a: dict) -> str:
    return (
        f"The as-built record's cost ({a['stage']}'s script warm, fastest of 3): "
        f"{a['plain_s']} s without it, {a['record_s']} s with it (+{a['share']:.0%}): its "
        "field-energy sampler, one whole-cell energy integral per source period, and Meep "
        "calling one more step function every time step. A guarantee's price, kept."
    )


def sweeps_main(args, trees: dict[str, Path], result: dict, tmp: Path) -> None:
    """`--sweeps`: only the sweep stage (local, and on Slurm unless --no-slurm), per-step
    start-up and the sandbox per worker; written to benchmarks/results/overhead_sweeps."""
    slurm_user = None
    if args.slurm:
        slurm_user = str(os.getpid())
        up = ["bash", str(REPO / "scripts/slurm_up.sh"), "/run/reprolab-slurm", slurm_user]
        subprocess.run(up, check=True, capture_output=True)
    try:
        result.update(measure_sweeps(trees, tmp / "runs", args.slurm))
        meep = meep_compute(Path(result["now"]["sweep_stage"]["stage_dir"]), tmp / "warm")
        result["sweep_meep_compute_s"] = round(sum(meep), 3)
        base = result["baseline"]
        for key in ("sweep_stage", "slurm_sweep_stage"):
            if key not in base:
                continue
            for name in trees:
                s = result[name][key]
                s["efficiency_on_meep"] = round(sum(meep) / (s["wall_s"] * 2), 3)
                s["identical_to_baseline"] = (
                    Path(s["csv"]).read_bytes() == Path(base[key]["csv"]).read_bytes()
                )
            result[f"{key}_wall_ratio"] = round(
                result["now"][key]["wall_s"] / base[key]["wall_s"], 2
            )
        setup = sandbox_overhead.bare_setup_s()
        result["sandbox_per_worker_s"] = round(setup[1] - setup[0], 4)
        result["judge_chain"] = judge_chain(trees["now"], tmp / "judge")
        print("judge chain", json.dumps(result["judge_chain"]), flush=True)
    finally:
        if slurm_user:
            down = ["bash", str(REPO / "scripts/slurm_down.sh"), "/run/reprolab-slurm", slurm_user]
            subprocess.run(down, capture_output=True)
        result["machine"]["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
        shutil.rmtree(tmp, ignore_errors=True)
    out = Path(args.out if args.out != DEFAULT_OUT else DEFAULT_OUT + "_sweeps")
    bench.atomic_write_text(out.with_suffix(".json"), json.dumps(result, indent=2) + "\n")
    bench.atomic_write_text(out.with_suffix(".md"), sweeps_markdown(result))
    print(f"wrote {out.with_suffix('.json')} and {out.with_suffix('.md')}")


def sweeps_markdown(r: dict) -> str:
    b, n, m, j = r["baseline"], r["now"], r["machine"], r["judge_chain"]
    rows = []
    for key, words in (
        ("sweep_stage", "8-point sweep stage, local (--cores 2)"),
        ("slurm_sweep_stage", "8-point sweep stage, Slurm (array throttle 2, 2 CPUs)"),
    ):
        if key not in b:
            continue
        rows += [
            (f"{words}: wall (s)", b[key]["wall_s"], n[key]["wall_s"]),
            (f"{words}: jobs for 8 points (on Slurm: array tasks)", b[key]["jobs"], n[key]["jobs"]),
            (
                f"{words}: efficiency on Meep compute",
                *(x[key]["efficiency_on_meep"] for x in (b, n)),
            ),
            (f"{words}: CSV identical to the baseline's", True, n[key]["identical_to_baseline"]),
            (f"{words}: wall now / baseline", "", r[f"{key}_wall_ratio"]),
        ]
    rows.append(
        (
            "median step start-up (s)",
            b["step_startup"]["median_s"],
            n["step_startup"]["median_s"],
        )
    )
    lines = [
        "# Sweeps and step start-up (benchmarks/overhead.py --sweeps)",
        "",
        f"{r['date']} on {m['hostname']}: {m['cpus']} CPUs, Snakemake {m['snakemake']}; "
        f"load average {m['load_average_at_start']} at the start, "
        f"{m.get('load_average_at_end')} at the end (other sessions share these cores and "
        "the Slurm node, so single numbers are noisy; each wall is the faster of two "
        f"alternating runs). Baseline: revision {r['baseline_rev']}; now: {r['now_rev']}. "
        "Both measured in this one run.",
        "",
        "| measure | baseline | now |",
        "|---|---|---|",
        *[f"| {name} | {x} | {y} |" for name, x, y in rows],
        "",
        f"Meep compute of the sweep's 8 points, warm re-runs summed: {r['sweep_meep_compute_s']} s "
        "(efficiency = that / (wall x 2 cores)). Sandbox per packed worker (bubblewrap's own "
        "setup, once per worker rather than once per point): "
        f"{r['sandbox_per_worker_s'] * 1000:.0f} ms.",
        "",
        "Step start-up per step, now (s): "
        + ", ".join(f"{k} {v}" for k, v in n["step_startup"]["per_step_s"].items()),
        "",
        "Judge chain (checks, validate, compare, analyze, verdict; each a local `script:` "
        "job importing its step module) as five jobs against one merged job, jobs' share "
        "of the wall (forced run minus no-op, fastest of 3): five jobs "
        f"{j['five_jobs']['jobs_s']} s, "
        f"one job {j['one_job']['jobs_s']} s: merging would save {j['saved_per_stage_s']} s "
        "per stage.",
        "",
        "The chain stays five jobs all the same. Snakemake's `group:` is ignored in local "
        "execution, and every rule here is local. One script per chain would change what "
        "reruns: only analyze and stage_verdict always run together (verdict's inputs are "
        "analyze's and its output), and verdict can wait at a gate (supervisor, material "
        "checkpoint): Snakemake deletes a failed job's outputs, so the analysis would go "
        "and the rerun would ask the analyzer (an LLM call) again. A merge of more steps "
        "would rewrite checks.json on a plan or figure-data change, and convergence (real "
        "simulations) reads checks.json.",
        "",
    ]
    return "\n".join(lines)


def unpack(rev: str, into: Path) -> Path:
    into.mkdir(parents=True)
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", rev], capture_output=True, check=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    # Bytecode for both trees alike, as `make setup` now compiles the checkout: where
    # PYTHONDONTWRITEBYTECODE is set (our machines) every step would compile from source.
    subprocess.run([PY, "-m", "compileall", "-q", "reprolab", "agents"], cwd=into, check=True)
    return into


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default="3810876")
    parser.add_argument("--now", default="HEAD", help="a revision (committed work only)")
    parser.add_argument("--out", default=DEFAULT_OUT)
    parser.add_argument(
        "--sweeps",
        action="store_true",
        help="only the sweep stage (local and Slurm), step start-up and the sandbox per worker",
    )
    parser.add_argument("--no-slurm", dest="slurm", action="store_false")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="reprolab-overhead-"))
    rev = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "--short", args.now], capture_output=True, text=True
    ).stdout.strip()
    trees = {
        "baseline": unpack(args.baseline, tmp / "baseline_tree"),
        "now": unpack(rev, tmp / "now_tree"),
    }
    result: dict = {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "machine": bench.machine(),
        "baseline_rev": args.baseline,
        "now_rev": rev,
    }
    if args.sweeps:
        sweeps_main(args, trees, result, tmp)
        return
    try:
        result.update(measure(trees, tmp / "runs"))
        for key in ("baseline", "now"):
            r = result[key]
            s = r["sweep_stage"]
            sweep_meep = r["example"]["meep_compute_s"].get("stage3_pairs_sweep", 0.0)
            s["efficiency_on_meep"] = round(sweep_meep / (s["wall_s"] * 2), 3)
            s["identical_to_baseline"] = (
                Path(s["csv"]).read_bytes()
                == Path(result["baseline"]["sweep_stage"]["csv"]).read_bytes()
            )
        result["as_built_record"] = as_built_cost(
            Path(result["now"]["example"]["workdir"]), tmp / "as_built"
        )
        result["sweep_wall_ratio"] = round(
            result["now"]["sweep_stage"]["wall_s"] / result["baseline"]["sweep_stage"]["wall_s"], 2
        )
        setup = sandbox_overhead.bare_setup_s()
        result["sandbox_per_worker_s"] = round(setup[1] - setup[0], 4)
        result["floors"] = {
            "sweep": floors.sweep_floor(
                Path(result["now"]["sweep_stage"]["stage_dir"]), tmp / "floor_sweep"
            ),
            # the floor's workflow has as many jobs a paper as ours (counted by its dry runs)
            "dry_run": floors.dry_run_floors(
                tmp / "floor_dag", jobs_per_paper=floors.jobs_per_paper(result["now"]["dry_run"])
            ),
            "pydantic_s": floors.pydantic_floor(),
        }
        print("floors", json.dumps(result["floors"]), flush=True)
    finally:
        result["machine"]["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
        shutil.rmtree(tmp, ignore_errors=True)
    out = Path(args.out)
    bench.atomic_write_text(out.with_suffix(".json"), json.dumps(result, indent=2) + "\n")
    bench.atomic_write_text(out.with_suffix(".md"), markdown(result))
    print(f"wrote {out.with_suffix('.json')} and {out.with_suffix('.md')}")


def markdown(r: dict) -> str:
    b, n, m = r["baseline"], r["now"], r["machine"]
    rows = [
        ("example: wall (s)", b["example"]["wall_s"], n["example"]["wall_s"]),
        (
            "example: Meep compute, warm re-runs summed right after the run (s)",
            b["example"]["meep_compute_total_s"],
            n["example"]["meep_compute_total_s"],
        ),
        ("example: wall / Meep compute", b["wall_over_meep"], n["wall_over_meep"]),
        ("example: no-op rerun wall (s)", b["example"]["noop_s"], n["example"]["noop_s"]),
        ("8-point sweep stage: wall (s)", b["sweep_stage"]["wall_s"], n["sweep_stage"]["wall_s"]),
        (
            "8-point sweep stage: efficiency on Meep compute (2 cores)",
            b["sweep_stage"]["efficiency_on_meep"],
            n["sweep_stage"]["efficiency_on_meep"],
        ),
        (
            "8-point sweep: CSV identical to the baseline's",
            True,
            n["sweep_stage"]["identical_to_baseline"],
        ),
        (
            "median step start-up (s)",
            b["step_startup"]["median_s"],
            n["step_startup"]["median_s"],
        ),
    ]
    if "paper_lookup_s" in n:
        rows.append(
            (
                "a step finding its paper in the 100-paper campaign (s)",
                b["paper_lookup_s"],
                n["paper_lookup_s"],
            )
        )
    for db, dn in zip(b["dry_run"], n["dry_run"], strict=True):
        rows.append(
            (
                f"`snakemake -n`, {db['papers']} paper(s), {db['jobs']} / {dn['jobs']} jobs (s)",
                db["dry_run_s"],
                dn["dry_run_s"],
            )
        )
    lines = [
        "# Where the time goes (benchmarks/overhead.py)",
        "",
        f"{r['date']} on {m['hostname']}: {m['cpus']} CPUs, Snakemake {m['snakemake']}; "
        f"load average {m['load_average_at_start']} at the start, "
        f"{m.get('load_average_at_end')} at the end (other sessions share these cores, "
        "so single numbers are noisy). Baseline: revision "
        f"{r['baseline_rev']}; now: {r['now_rev']}. Both measured in this one run.",
        "",
        "| measure | baseline | now |",
        "|---|---|---|",
        *[f"| {name} | {x} | {y} |" for name, x, y in rows],
        "",
        "Simulation runtime per stage (result.json, s): baseline "
        + ", ".join(f"{k} {v}" for k, v in b["example"]["simulation_runtime_s"].items())
        + "; now "
        + ", ".join(f"{k} {v}" for k, v in n["example"]["simulation_runtime_s"].items()),
        "",
        f"Sweep stage wall, now / baseline: {r['sweep_wall_ratio']}. Sandbox per packed "
        f"worker (bubblewrap's own setup, once per worker rather than once per point): "
        f"{r['sandbox_per_worker_s'] * 1000:.0f} ms.",
        "",
        "Meep compute per stage, warm (s): baseline "
        + ", ".join(f"{k} {v}" for k, v in b["example"]["meep_compute_s"].items())
        + "; now "
        + ", ".join(f"{k} {v}" for k, v in n["example"]["meep_compute_s"].items())
        + ". Both trees run the same simulations (the same recorded code): where their "
        "warm totals differ, the machine's speed drifted between the two measurements.",
        "",
        as_built_line(r["as_built_record"]),
        "",
        "Step start-up per step, now (s): "
        + ", ".join(f"{k} {v}" for k, v in n["step_startup"]["per_step_s"].items()),
        "",
        *floors_markdown(r),
    ]
    return "\n".join(lines)


def floors_markdown(r: dict) -> list[str]:
    """Each unmet speed target beside what no change of ours could go below."""
    f, b, n = r["floors"], r["baseline"], r["now"]
    sweep, dag = f["sweep"], f["dry_run"]
    target_sweep = round(0.6 * b["sweep_stage"]["wall_s"], 2)
    hundred = [d for d in n["dry_run"] if d["papers"] == dag["papers"]][0]
    rows = [
        (
            "8-point sweep stage wall (s)",
            f"{target_sweep} (0.6x baseline)",
            n["sweep_stage"]["wall_s"],
            f"{sweep['with_record_s']} compute with the as-built record "
            f"({sweep['without_record_s']} without), + {sweep['worker_start_s']} to start "
            "a worker",
        ),
        (
            f"`snakemake -n`, {dag['papers']} papers (s)",
            "< 10",
            hundred["dry_run_s"],
            f"{dag['dry_run_s']} for Snakemake alone on {dag['jobs']} jobs of the same shape "
            f"({dag['shell']['dry_run_s']} with `shell:` jobs, the cheapest kind)",
        ),
        (
            "median step start-up (s)",
            "<= 0.1",
            n["step_startup"]["median_s"],
            f"{f['pydantic_s']} to import pydantic and build one model",
        ),
    ]
    return [
        "## Floors under the unmet targets (benchmarks/floors.py, same run)",
        "",
        "| measure | target | now | floor |",
        "|---|---|---|---|",
        *[f"| {a} | {t} | {x} | {y} |" for a, t, x, y in rows],
        "",
        "Sweep floor: the 8 points in two processes with Meep already imported, each running "
        "its points back to back as the packed workers deal them, no job, no sandbox; "
        "worker start: Python and `import meep`, which every fresh worker pays. Dry-run "
        "floor: a workflow with one plan checkpoint per paper and as many `script:` jobs "
        "per paper as ours, nothing of ReproLab in it. Start-up floor: a fresh interpreter, "
        "pydantic, one small model built and used (every step validates what it reads).",
        "",
        *sweep_timeline_lines(n["sweep_stage"].get("timeline")),
        *dry_run_fit_lines(dag),
    ]


def sweep_timeline_lines(t: dict | None) -> list[str]:
    if not t:
        return []
    return [
        f"Where the sweep stage's wall went, now: {t['head_s']} s from the stage's start to "
        "its first point (the workers' jobs, sandboxes and Python; `import meep` is inside "
        f"each worker's first point), {t['span_s']} s of points (each worker's points back "
        f"to back: {', '.join(str(x) for x in t['per_job_points_s'])} s, the gap between "
        f"them the static dealing's imbalance on this run), {t['tail_s']} s from the last "
        "point's end to the stage's result.",
        "",
    ]


def dry_run_fit_lines(dag: dict) -> list[str]:
    if "seconds_per_job" not in dag:
        return []
    small = dag["small"]
    return [
        f"Snakemake's own cost per job: {dag['seconds_per_job'] * 1000:.2f} ms (from "
        f"{dag['jobs']} and {small['jobs']} jobs: {dag['dry_run_s']} s and "
        f"{small['dry_run_s']} s), {dag['fixed_s']} s once. For {dag['papers']} papers to "
        f"dry-run under {dag['target_s']:g} s with nothing of ReproLab in it, a paper could "
        f"have at most {dag['jobs_per_paper_under_target']} jobs; ours has "
        f"{dag['jobs_per_paper']}, each kept apart so that a change reruns only what it "
        "touches (docs/benchmarks.md).",
        "",
    ]


if __name__ == "__main__":
    main()
