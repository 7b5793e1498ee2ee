"""`checks.convergence_method: auto` in 2D through the convergence step's own code
(reprolab.steps.convergence.resolution_evidence): the coarser runs first, the 2x rerun
only when they do not show convergence, and then it decides; kept reruns are reused.

Real Meep runs every rerun: only the job layer is replaced (each run goes through the
planted corpus's driver in this machine's Python, with the run-time recorder the
sandbox installs), so the folders, records and comparisons are the step's own.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from reprolab.artifacts import RunResult, write_result
from reprolab.physics import convergence as conv
from reprolab.physics.lint import PML_SCALE_ENV, RESOLUTION_SCALE_ENV
from reprolab.steps import convergence as step
from reprolab.steps import grid_convergence as grid
from tests.physics.test_grid_convergence_meep import BLOCH_CELL
from tests.support.planted.scripts2d import ring_script

REPO = Path(__file__).parents[2]


def local_run_stage(calls: list):
    """stage_run.run_stage's stand-in: the script run by real Meep in <folder>/run with
    the scale variables of this process's environment; the call recorded."""

    def run_stage(design, budget_minutes, sim_cfg, script, stage_dir):
        run = Path(stage_dir) / "run"
        run.mkdir(parents=True, exist_ok=True)
        (run / "sim.py").write_text(Path(script).read_text())
        env = {k: os.environ[k] for k in (RESOLUTION_SCALE_ENV, PML_SCALE_ENV)}
        (run / "env.json").write_text(json.dumps(env))
        calls.append((Path(stage_dir).name, env))
        start = time.monotonic()
        cmd = [sys.executable, "-m", "tests.support.planted.driver", str(run)]
        subprocess.run(cmd, check=True, cwd=REPO, timeout=300, capture_output=True)
        code = int((run / "exit_code").read_text())
        seconds = time.monotonic() - start
        return {"stage_id": design.stage_id, "exit_code": code, "runtime_seconds": seconds}

    return run_stage


@pytest.fixture
def stage(tmp_path, monkeypatch):
    """(make a stage folder with its run done, the reruns' calls) for a 2D script."""
    import reprolab.artifacts as artifacts
    from reprolab.jobs import stage_run, variant_runs

    calls: list = []
    monkeypatch.setattr(stage_run, "run_stage", local_run_stage(calls))
    # the coarser runs one stand-in run each (packing them is the job layer's)
    monkeypatch.setattr(
        variant_runs,
        "run_variants",
        lambda design, budget, cfg, script, runs, shared: [
            variant_runs._alone(design, budget, cfg, script, f, env) for f, env in runs
        ],
    )
    budget = SimpleNamespace(runtime_budget_minutes=1)
    monkeypatch.setattr(artifacts, "load_plan", lambda path: None)
    monkeypatch.setattr(artifacts, "plan_stage", lambda plan, sid: budget)

    def make(code: str, name: str):
        sd = tmp_path / name
        script = sd / "simulation.py"
        sd.mkdir()
        script.write_text(code)
        design = SimpleNamespace(stage_id=name, dimensions=2, figure_outputs=[])
        with step.scaled_env({RESOLUTION_SCALE_ENV: "1"}):
            record = stage_run.run_stage(design, 1, {}, script, sd)
        write_result(sd / "result.json", RunResult.model_validate(record))
        calls.clear()
        paper = SimpleNamespace(curve_data=None, meta=SimpleNamespace(key_values=[]))
        run = SimpleNamespace(config={}, paper=paper, paper_id="p", out_dir=str(tmp_path))
        return (run, design, script, None, sd)

    return make, calls


def evidence(args: tuple, wanted: list[str]) -> dict:
    result = {"scale": 2, "variants": [], "quantities": [], "extra_meep_seconds": 0.0}
    step.resolution_evidence(result, wanted, args)
    return result


def test_coarse_evidence_that_converges_runs_no_2x_rerun(stage):
    """A Bloch cell's bands (2D, Harminv, no PML) at 48 px/a (true errors 0.005-0.08 %
    against 64 and 88 px/a): the coarser runs at 36 and 26 px bound every band's error
    under the limit, so no 2x rerun runs: its folder does not exist and convergence.json
    says the coarser runs sufficed. That holds for the lowest band too, whose order is
    not determined: its bound, with the factor 3, still passes. (At 32 px/a the third
    band's bound, 0.56 %, is over the 0.5 % limit while its error is 0.17 %: that stage
    escalates.)"""
    make, calls = stage
    args = make(BLOCH_CELL.replace("* 32", "* 48"), "bands")
    result = evidence(args, [conv.RESOLUTION])
    sd = args[-1]
    assert result["status"] == "converged", result
    assert [v["id"] for v in result["variants"]] == [grid.COARSE]
    freqs = [q for q in result["quantities"] if q["name"].endswith("frequency")]
    assert len(freqs) >= 3 and all(q["status"] != "fail" for q in freqs), freqs
    assert any(q["order"] is None for q in freqs), freqs  # an order not determined
    assert not (sd / "convergence_2x").exists()
    assert sorted(c[0] for c in calls) == ["convergence_0.55x", "convergence_0.75x"]
    esc = result["escalation"]
    assert esc["escalated"] is False and esc["why"] == [] and esc["coarse_status"] == "converged"
    assert "no 2x rerun" in result["note"] and result["method"] == "coarse"


def test_correct_ring_escalates_and_the_2x_rerun_decides(stage):
    """The planted correct ring at 10 px/a: its coarser runs (8 and 6 px/a) are
    pre-asymptotic in Q and alone would fail it; auto escalates to the 2x reruns, which
    pass it, and the record says both. Resumed, every rerun is kept: Meep runs nothing."""
    from reprolab.report import discretisation

    make, calls = stage
    args = make(ring_script()[0], "ring")
    wanted = [conv.RESOLUTION, conv.PML]
    result = evidence(args, wanted)
    sd = args[-1]
    esc = result["escalation"]
    assert esc["escalated"] and esc["coarse_status"] == "not_converged", esc
    assert any(w.endswith("Q: fail") for w in esc["why"]), esc["why"]
    assert [v["id"] for v in esc["coarse_variants"]] == [grid.COARSE, conv.PML]
    assert [v["id"] for v in result["variants"]] == wanted
    assert result["status"] == "converged", result["quantities"]
    assert result["method"] == "coarse, escalated to refine_2x" and result["scale"] == 2
    assert result["note"].startswith("the coarser runs did not show convergence (not_converged")
    assert "escalated to the 2x rerun, which decided" in result["note"]
    for folder in ("convergence_0.75x", "convergence_0.55x", "convergence_0.55x_pml2x"):
        assert (sd / folder / "result.json").is_file(), folder
    assert (sd / "convergence_2x/result.json").is_file()
    assert (sd / "convergence_pml2x/result.json").is_file()
    spent = esc["coarse_meep_seconds"] + sum(v["runtime_seconds"] for v in result["variants"])
    assert result["extra_meep_seconds"] == pytest.approx(spent)
    assert len(calls) == 5
    # what the verdict judges: the 2x reruns (the under-resolution excused by them)
    ppw = {"name": "built:resolution_ppw", "status": "fail", "value": 10, "detail": "as built"}
    checks = {"checks": [ppw]}
    judged, note = conv.with_convergence(checks, result)
    names = {c["name"]: c["status"] for c in judged["checks"]}
    assert "convergence:resolution_coarse" not in names and judged["verdict"] != "fail", names
    assert "at 2x resolution" in note
    # the report says that the 2x rerun decided, after what the coarser runs found
    md = "\n".join(discretisation.escalation_lines(result))
    assert "The coarser runs did not show convergence, so the 2x rerun was run and decided" in md
    assert "The coarser runs (`not_converged`) fell short on:\n\n- " in md
    # resumed: the kept reruns are reused, the same evidence, no Meep run
    calls.clear()
    again = evidence(args, wanted)
    assert calls == []
    assert again["escalation"]["why"] == esc["why"] and again["status"] == "converged"
    assert all(v["reused"] for v in again["variants"])
