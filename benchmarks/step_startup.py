"""Step start-up and the example's pipeline test, with the warm step server and without.

    .venv/bin/python benchmarks/step_startup.py [--baseline REV] [--pipeline]
        [--out benchmarks/results/step_startup]

The baseline revision (default e10bfac, the last one with the warm step server,
reprolab/steps/warm.py) is unpacked with `git archive`, byte-compiled and put first on
PYTHONPATH, as benchmarks/overhead.py does; "now" is this working tree. Measured in one
run, back to back:

1. step start-up, overhead.py's method: from a step script's first line to its step's
   code imported (Python's own start left out), the fastest of 3 per step, the median
   over the steps; the baseline in its own process (`REPROLAB_WARM_STEPS=0`, what a
   run's first step paid) and handed over to a warm server (what every later step paid,
   but simulate's), and now;
2. with --pipeline N: the wall of `pytest -q tests/workflow/test_pipeline.py` (the example through
   real Snakemake and Meep, five tests) in N rounds, each round the baseline with the
   server on, the baseline with it off, and now, the order reversed every other round
   (the machine's speed drifts within minutes); beside each wall, the CPU seconds of
   every process the run started, a warm server and its children included (this
   process is their subreaper and waits for the last of them), which other sessions'
   load sways much less than the wall.

Numbers, not assertions. The machine's cores may be shared: the load average at the
start and the end is recorded, and every run is kept.
"""

from __future__ import annotations

import argparse
import ctypes
import datetime as dt
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))

from overhead import PY, STEP_MODULES, env_for, unpack  # noqa: E402

DEFAULT_OUT = str(REPO / "benchmarks/results/step_startup")

CLIENT = """
import sys, time
t0 = time.time()
server = sys.modules.get("reprolab.steps.warm")
if not (server and server._CHILD):  # the script's own process: its start is the clock's
    open("t0", "w").write(repr(t0))
try:
    from reprolab.steps.warm import hand_over
except ImportError:  # a tree without the server
    hand_over = lambda: None
hand_over()
import reprolab.smk, reprolab.steps.{name}
print(time.time() - float(open("t0").read()))
"""

NOT_HANDED_OVER = {"run"}
"""The baseline's simulate.py never handed over: its start-up is its own process's."""


def startup(tree: Path, scratch: Path, env: dict) -> dict:
    """Each step's fastest of 3 and their median (s)."""
    per = {}
    for name in STEP_MODULES.split():
        script = scratch / f"startup_{name}.py"
        script.write_text(CLIENT.format(name=name))
        runs = []
        for _ in range(3):
            proc = subprocess.run(
                [PY, str(script)], capture_output=True, text=True, env=env, cwd=scratch
            )
            runs.append(float(proc.stdout.split()[-1]))
        per[name] = round(min(runs), 3)
    return {"per_step_s": per, "median_s": round(statistics.median(per.values()), 3)}


def start_server(scratch: Path, env: dict) -> None:
    """Two steps in a row start the baseline's server for this place; wait for it."""
    script = scratch / "startup_plan.py"
    script.write_text(CLIENT.format(name="plan"))
    for _ in range(2):
        subprocess.run([PY, str(script)], capture_output=True, env=env, cwd=scratch, check=True)
    folder = Path(env["XDG_RUNTIME_DIR"]) / f"reprolab-steps-{os.getuid()}"
    deadline = time.time() + 120
    while not list(folder.glob("*.sock")):
        if time.time() > deadline:
            raise SystemExit(f"no warm step server came up in {folder}")
        time.sleep(0.2)


def startups(baseline: Path, now: Path, root: Path) -> dict:
    runtime = Path(tempfile.mkdtemp(prefix="ws", dir="/tmp"))  # short: a socket's name
    base_env = {**env_for(baseline), "XDG_RUNTIME_DIR": str(runtime)}
    out = {}
    for label, tree, env in (
        ("baseline_own_process", baseline, {**base_env, "REPROLAB_WARM_STEPS": "0"}),
        ("baseline_warm_server", baseline, base_env),
        ("now", now, env_for(now)),
    ):
        scratch = root / label
        scratch.mkdir(parents=True)
        if label == "baseline_warm_server":
            start_server(scratch, env)
        out[label] = startup(tree, scratch, env)
        if label == "baseline_warm_server":
            for name in NOT_HANDED_OVER:
                out[label]["per_step_s"][name] = out["baseline_own_process"]["per_step_s"][name]
            out[label]["median_s"] = round(statistics.median(out[label]["per_step_s"].values()), 3)
        print(label, json.dumps(out[label]), flush=True)
    shutil.rmtree(runtime, ignore_errors=True)
    return out


PR_SET_CHILD_SUBREAPER = 36


def children_cpu_s() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def reap_all(timeout_s: float = 120.0) -> None:
    """Wait for every orphaned descendant (a warm server exits after 60 s idle)."""
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            time.sleep(0.5)
    raise SystemExit("a process the pipeline test started did not end")


def pipeline_test(tree: Path, env: dict) -> dict:
    # The baseline revision kept its tests in one flat folder.
    test = next(
        p
        for p in ("tests/workflow/test_pipeline.py", "tests/test_pipeline.py")
        if (tree / p).is_file()
    )
    cmd = [PY, "-m", "pytest", "-q", "-p", "no:cacheprovider", test]
    cpu = children_cpu_s()
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tree)
    wall = time.perf_counter() - start
    reap_all()
    summary = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ""
    return {
        "wall_s": round(wall, 1),
        "cpu_s": round(children_cpu_s() - cpu, 1),
        "exit_status": proc.returncode,
        "summary": summary,
    }


def pipelines(baseline: Path, now: Path, rounds: int) -> dict:
    runs = [
        ("baseline_warm_server", baseline, env_for(baseline)),
        ("baseline_own_process", baseline, {**env_for(baseline), "REPROLAB_WARM_STEPS": "0"}),
        ("now", now, env_for(now)),
    ]
    out: dict = {label: [] for label, _, _ in runs}
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    for i in range(rounds):
        for label, tree, env in runs if i % 2 == 0 else runs[::-1]:
            got = pipeline_test(tree, env)
            got["round"] = i + 1
            out[label].append(got)
            print(label, json.dumps(got), flush=True)
    return out


def markdown(r: dict) -> str:
    s = r["step_startup"]
    lines = [
        "# Step start-up and the pipeline test, with the warm step server and without",
        "",
        f"{r['date']}, {r['cpus']} CPUs, load average {r['load_start']} at the start and "
        f"{r['load_end']} at the end; baseline {r['baseline']} (with the server), now "
        f"{r['now']}. The machine is shared with other sessions: its speed drifts and one "
        "run each is noisy.",
        "",
        "| median step start-up (s) | baseline, own process | baseline, warm server | now |",
        "|---|---|---|---|",
        f"| script's first line to the step's code imported, fastest of 3 per step "
        f"| {s['baseline_own_process']['median_s']} | {s['baseline_warm_server']['median_s']} "
        f"| {s['now']['median_s']} |",
        "",
    ]
    for label, v in s.items():
        per = ", ".join(f"{k} {t}" for k, t in v["per_step_s"].items())
        lines.append(f"- {label}: {per}")
    p = r.get("pipeline_test")
    if p:
        lines += [
            "",
            "| `pytest -q tests/workflow/test_pipeline.py` | wall per round (s) | median wall (s) "
            "| CPU per round (s) | median CPU (s) | results |",
            "|---|---|---|---|---|---|",
        ]
        for label, v in p.items():
            walls = [x["wall_s"] for x in v]
            cpus = [x["cpu_s"] for x in v]
            results = "; ".join(x["summary"] for x in v)
            lines.append(
                f"| {label} | {', '.join(map(str, walls))} | {statistics.median(walls)} "
                f"| {', '.join(map(str, cpus))} | {statistics.median(cpus)} | {results} |"
            )
    lines.append("")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default="e10bfac")
    parser.add_argument("--pipeline", type=int, default=0, metavar="ROUNDS")
    parser.add_argument("--out", default=DEFAULT_OUT)
    args = parser.parse_args()
    rev = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    dirty = subprocess.run(
        ["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    result = {
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "cpus": os.cpu_count(),
        "load_start": [round(x, 2) for x in os.getloadavg()],
        "baseline": args.baseline,
        "now": f"{rev} with this working tree's uncommitted changes" if dirty else rev,
    }
    with tempfile.TemporaryDirectory(prefix="step_startup") as tmp:
        root = Path(tmp)
        baseline = unpack(args.baseline, root / "baseline")
        result["step_startup"] = startups(baseline, REPO, root / "startup")
        if args.pipeline:
            result["pipeline_test"] = pipelines(baseline, REPO, args.pipeline)
    result["load_end"] = [round(x, 2) for x in os.getloadavg()]
    Path(args.out + ".json").write_text(json.dumps(result, indent=2) + "\n")
    Path(args.out + ".md").write_text(markdown(result))
    print(markdown(result))


if __name__ == "__main__":
    main()
