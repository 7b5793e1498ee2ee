"""A stage's coarser runs through one packed worker (reprolab.jobs.variant_runs): one
process for all of them, each with the record a run of its own gets.

Attacked with real Meep in the OS sandbox: the packed runs must give byte-identical
outputs to one job a run, each with its own CPU, peak and job size, from one process
(one pid) where the separate runs had one each; a coarser run stopped by its limit is
that run's `timeout` (the convergence step's `no_evidence`), one that takes the worker
down is that run's failure, and neither takes the other runs with it."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from agents.simulation_designer import SimulationDesign
from reprolab.jobs import variant_runs
from reprolab.physics.lint import RESOLUTION_SCALE_ENV
from reprolab.steps import grid_convergence as grid

REPO = Path(__file__).resolve().parents[2]
DESIGN = REPO / "examples/papers/dipole_array_pattern_2026/recordings/stage1_pattern"

SCRIPT = """
import os

import meep as mp

scale = float(os.environ.get("REPROLAB_RESOLUTION_SCALE", 1))
# FAILURES
sim = mp.Simulation(
    cell_size=mp.Vector3(4, 4),
    resolution=10 * scale,
    boundary_layers=[mp.PML(1)],
    sources=[mp.Source(mp.GaussianSource(1, fwidth=0.5), mp.Ez, mp.Vector3())],
)
sim.run(until=8)
ez = sim.get_field_point(mp.Ez, mp.Vector3(0.5, 0.3))
with open("out.csv", "w") as fh:
    fh.write(f"scale,ez\\n{scale},{ez.real:.12e}\\n")
# the runs this process ran before (its environment lives as long as it does)
before = os.environ.get("TEST_RUNS_BEFORE", "")
os.environ["TEST_RUNS_BEFORE"] = before + "x"
with open("before.txt", "w") as fh:
    fh.write(before)
"""


FAILURES = """
import ctypes
import time

if scale == 0.6:
    time.sleep(30)  # past its limit
if scale == 0.5:
    ctypes.string_at(0)  # a segfault: the process dies
"""


def design() -> SimulationDesign:
    art = yaml.safe_load((DESIGN / "simulation_designer.a1.yaml").read_text())["output"]
    return SimulationDesign.model_validate({**art, "sweep": None})


def runs(stage: Path, scales) -> list:
    return [(stage / f"convergence_{s:g}x", {RESOLUTION_SCALE_ENV: f"{s:g}"}) for s in scales]


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    """The same two coarser runs packed, and one job each."""
    tmp = tmp_path_factory.mktemp("variants")
    script = tmp / "simulation.py"
    script.write_text(SCRIPT)
    cfg = {"executor": "local"}
    together = variant_runs.run_variants(
        design(), 1, cfg, script, runs(tmp / "packed", (0.8, 0.7)), tmp / "packed/shared"
    )
    alone = [
        variant_runs._alone(design(), 1, cfg, script, folder, env)
        for folder, env in runs(tmp / "alone", (0.8, 0.7))
    ]
    return tmp, together, alone


def test_packed_runs_give_what_separate_runs_give(both):
    tmp, together, alone = both
    for rec in together + alone:
        assert rec["failure"] is None and rec["exit_code"] == 0, rec.get("stderr_tail")
    for s in ("0.8", "0.7"):
        got = (tmp / f"packed/convergence_{s}x/run/out.csv").read_bytes()
        assert got == (tmp / f"alone/convergence_{s}x/run/out.csv").read_bytes()
        assert got.decode().splitlines()[1].startswith(f"{s},")  # its own scale
    before = [(tmp / f"packed/convergence_{s}x/run/before.txt").read_text() for s in ("0.8", "0.7")]
    apart = [(tmp / f"alone/convergence_{s}x/run/before.txt").read_text() for s in ("0.8", "0.7")]
    assert before == ["", "x"] and apart == ["", ""]  # one process for the packed runs


def test_each_packed_run_keeps_its_own_record(both):
    _, together, alone = both
    for rec, single in zip(together, alone, strict=True):
        assert rec["sandbox"]["packed_worker"] and rec["packed_worker"]["runs"] == 2
        assert not (single.get("sandbox") or {}).get("packed_worker")
        (use,) = rec["rank_usage"]
        assert use["cpu_s"] > 0 and use["peak_mb"] > 50  # Python and Meep are in it
        assert rec["worker_cpu_s"] >= use["cpu_s"]
        assert rec["mpi"]["size"] == 1 and rec["time_limit"] is not None
        size = rec["job_size"]
        assert size["source"] == "design" and size["actual"]["core_seconds"] == use["cpu_s"]
        # sized as it meshes: the coarser run at its own resolution
        assert size["inputs"]["resolution"] == pytest.approx(
            single["job_size"]["inputs"]["resolution"]
        )
    assert together[0]["job_size"]["inputs"]["resolution"] == pytest.approx(8)
    assert together[1]["job_size"]["inputs"]["resolution"] == pytest.approx(7)
    # the last run's worker CPU counts both runs and the one interpreter start
    assert together[1]["worker_cpu_s"] >= sum(r["rank_usage"][0]["cpu_s"] for r in together)


def test_a_run_stopped_or_killed_takes_no_other_run_with_it(tmp_path, monkeypatch):
    """Four runs in one worker: the 0.6x run sleeps past its 3 s limit, the 0.5x run
    segfaults (the worker dies); the runs before and after each succeed. Folders are
    given relative to the working folder, as the workflow gives them."""
    monkeypatch.chdir(tmp_path)
    script = Path("simulation.py")
    script.write_text(SCRIPT.replace("# FAILURES", FAILURES))
    cfg = {"executor": "local", "sandbox": {"static_checks": False}}  # ctypes, on purpose
    recs = variant_runs.run_variants(
        design(), 0.05, cfg, script, runs(Path("stage"), (0.8, 0.6, 0.5, 0.4)), Path("shared")
    )
    by_scale = dict(zip((0.8, 0.6, 0.5, 0.4), recs, strict=True))
    assert by_scale[0.6]["failure"]["kind"] == "timeout" and by_scale[0.6]["timed_out"]
    assert by_scale[0.5]["failure"] is not None and by_scale[0.5]["exit_code"] != 0
    for s in (0.8, 0.4):
        assert by_scale[s]["failure"] is None, by_scale[s].get("stderr_tail")
        assert (tmp_path / f"stage/convergence_{s:g}x/run/out.csv").is_file()
    # the convergence step reads the stopped run as no evidence either way, in one line
    var = grid._failed({"id": grid.COARSE}, "the 0.6x run failed", by_scale[0.6], 0.0, [False])
    assert var["no_evidence"] == "timeout" and "\n" not in var["note"]
    assert var["note"].startswith("no evidence: the 0.6x run was stopped: timeout")
