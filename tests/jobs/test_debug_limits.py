"""Quick-check mode's limits on a run (reprolab.steps.debug_limits): one point per
sweep and a runtime cap, attacked through the real sweep machinery with the example's
own sweep script: the job that runs must be the cut one, and a full run untouched."""

from pathlib import Path

import yaml

from agents.simulation_designer import SimulationDesign
from reprolab.jobs import stage_run
from reprolab.steps import debug_limits

REPO = Path(__file__).resolve().parents[2]
STAGE3 = REPO / "examples/papers/silica_bragg_2026/recordings/stage3_pairs_sweep"
QUICK = {"debug": {"enabled": True, "max_stage_runtime_minutes": 1}}


def example_sweep() -> SimulationDesign:
    art = yaml.safe_load((STAGE3 / "simulation_designer.a1.yaml").read_text())["output"]
    return SimulationDesign.model_validate(art)


def test_a_full_run_is_never_cut():
    design = example_sweep()
    for config in ({}, {"debug": {"enabled": False, "max_stage_runtime_minutes": 1}}):
        same, budget, notes = debug_limits.for_quick_check(design, 10, config)
        assert same is design and budget == 10 and notes == []


def test_quick_check_runs_one_sweep_point_under_the_cap(tmp_path):
    design = example_sweep()
    cut, budget, notes = debug_limits.for_quick_check(design, 10, QUICK)
    assert cut.sweep.values == [5] and design.sweep.values == list(range(1, 9))
    assert budget == 1 and len(notes) == 2 and "1 of 8 sweep points" in notes[0]
    code = yaml.safe_load((STAGE3 / "code_generator.a1.yaml").read_text())["output"]["code"]
    script = tmp_path / "simulation.py"
    script.write_text(code)
    record = stage_run.run_stage(cut, budget, {"executor": "local"}, script, tmp_path / "stage")
    assert record["failure"] is None, record["failure"]
    points = sorted(p.name for p in (tmp_path / "stage/run/points").glob("p*"))
    assert points == ["p000"]  # one job, not eight
    rows = (tmp_path / "stage/run/pairs_sweep.csv").read_text().strip().splitlines()
    assert len(rows) == 2 and rows[1].split(",")[0].strip() in ("5", "5.0")
    assert record["timeout_s"] <= 60  # the cap reached the job's time limit


def test_a_budget_under_the_cap_is_kept_and_a_single_point_is_not_noted():
    design = example_sweep().model_copy(update={"sweep": None})
    same, budget, notes = debug_limits.for_quick_check(design, 0.5, QUICK)
    assert same is design and budget == 0.5 and notes == []
