"""The demo's stages on a machine whose every core is busy: a CPU-bound process per
core (started here) for the whole run, one simulation paused from outside (SIGSTOP,
as a laptop's sleep or Ctrl-Z pauses it) longer than its time limit, and another
simulation's worker killed from outside while it runs (as submitit's own wall-clock
timer did). The stages end SUCCESS with the code they had: nothing is charged for the
pause, the killed run is resubmitted with the same script, no code is regenerated."""

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from tests.support.builders import copy_paper
from tests.support.pipeline import EXAMPLE, PAPER, snakemake, write_config

pytestmark = pytest.mark.pipeline

PAUSED = "stage1_single_slab"
KILLED = "stage2_bragg_mirror"
BUDGET_MIN = 0.5  # the paused stage's plan budget, so that the pause outlasts its limit
PAUSE_S = 40.0
# A rank (and its bwrap) of this run's stage; this run's stage's submitit worker.
RANK = "reprolab.jobs.sandbox_run .*{}/outputs/.*/stages/{}/run/simulation.py"
WORKER = "submitit.core._submit .*{}/outputs/.*/stages/{}/submitit"


def pids(pattern: str) -> list[int]:
    found = subprocess.run(["pgrep", "-f", pattern], capture_output=True, text=True)
    return [int(p) for p in found.stdout.split() if int(p) != os.getpid()]


def pause_once(pattern: str, seconds: float, log: dict, stop: threading.Event) -> None:
    """SIGSTOP what matches `pattern` once it runs, SIGCONT it `seconds` later."""
    while not stop.wait(0.05):
        found = pids(pattern)
        if found:
            for pid in found:
                with contextlib.suppress(ProcessLookupError):  # one may have just ended
                    os.kill(pid, signal.SIGSTOP)
            log["paused_at"] = time.time()
            stop.wait(seconds)
            for pid in found + pids(pattern):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGCONT)
            log["resumed_at"] = time.time()
            return


def kill_worker_once(wd, stage: str, log: dict, stop: threading.Event) -> None:
    """SIGKILL the stage's submitit worker once its simulation is under way."""
    while not stop.wait(0.1):
        if pids(RANK.format(wd, stage)):
            stop.wait(1.0)
            workers = pids(WORKER.format(wd, stage))
            for pid in workers:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            log["killed"] = workers
            return


@pytest.fixture(scope="module")
def busy_run(tmp_path_factory):
    wd = tmp_path_factory.mktemp("busy")
    paper = copy_paper(wd / "paper", EXAMPLE, recordings=True)
    plan = paper / "recordings" / "paper" / "planner.a1.yaml"
    text = plan.read_text()
    budget = "runtime_budget_minutes: 5"
    at = text.index(budget, text.index(f"stage_id: {PAUSED}"))
    plan.write_text(text[:at] + f"runtime_budget_minutes: {BUDGET_MIN}" + text[at + len(budget) :])
    write_config(wd, [paper])
    cores = os.cpu_count() or 1
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(cores)]
    paused, killed, stop = {}, {}, threading.Event()
    threads = [
        threading.Thread(
            target=pause_once,
            args=(RANK.format(wd, PAUSED), PAUSE_S, paused, stop),
            daemon=True,
        ),
        threading.Thread(target=kill_worker_once, args=(wd, KILLED, killed, stop), daemon=True),
    ]
    for t in threads:
        t.start()
    try:
        run = snakemake(wd, f"outputs/{PAPER}/stages/{KILLED}/verdict.json")
    finally:
        stop.set()
        for t in threads:
            t.join(timeout=5)
        for hog in hogs:
            hog.kill()
            hog.wait()
    return {"wd": wd, "run": run, "paused": paused, "killed": killed}


def stage(busy_run, stage_id: str) -> dict:
    sd = busy_run["wd"] / "outputs" / PAPER / "stages" / stage_id
    return {
        "dir": sd,
        "result": json.loads((sd / "result.json").read_text()),
        "verdict": json.loads((sd / "verdict.json").read_text()),
    }


def test_every_stage_succeeds_on_a_busy_machine(busy_run):
    assert busy_run["run"].returncode == 0, busy_run["run"].stderr[-3000:]
    for stage_id in ("stage0_material_validation", PAUSED, KILLED):
        sd = busy_run["wd"] / "outputs" / PAPER / "stages" / stage_id
        verdict = json.loads((sd / "verdict.json").read_text())
        assert verdict["status"] == "completed_success", (stage_id, verdict)
        assert not list(sd.glob("code.fix*.json")), f"{stage_id}: code was regenerated"


def test_a_run_paused_past_its_limit_is_not_charged_for_the_pause(busy_run):
    assert busy_run["paused"].get("paused_at"), "the simulation was never paused"
    rec = stage(busy_run, PAUSED)["result"]
    assert rec["failure"] is None and rec["execution_failures"] == 0
    clock = rec["time_limit"]
    assert clock["clock"] == "cpu_share" and clock["stopped_s"] >= PAUSE_S - 5
    # paused longer than its whole limit, and judged within it
    assert rec["timeout_s"] < PAUSE_S and clock["charged_s"] < rec["timeout_s"]


def test_a_worker_killed_from_outside_is_resubmitted_with_the_same_code(busy_run):
    assert busy_run["killed"].get("killed"), "no worker was killed"
    got = stage(busy_run, KILLED)
    rec = got["result"]
    assert rec["failure"] is None and rec["resubmits"] == 1, rec.get("repairs")
    kept = json.loads((got["dir"] / "failed_runs" / "f1" / "result.json").read_text())
    assert kept["failure"]["kind"] == "worker_lost" and kept["failure"]["action"] == "resubmit"
    assert kept["script_sha256"] == rec["script_sha256"]  # the same script ran again
