"""Real Meep mode runs recorded and judged: a square-lattice Bloch cell (ε = 8.9 rods,
r = 0.2 a, TM, Γ/X/M with run_k_points, no PML) and a 1D-radial cylindrical ring
(cell (sr, 0, 0), m = 3). Their records keep every k point and m, their checks raise
no failure, and a design that declares a PML the run never built is flagged.

The Bloch cell runs at 20 px/a (a 1x1 cell: about a second): at 10 px/a the densest
rod (n = 2.98) has 7 pixels per wavelength at f = 0.5 and `built:resolution_ppw`
rightly fails. All runs (with the 2x-resolution reruns) take about 5 s."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from agents.simulation_designer import SimulationDesign
from reprolab.physics import convergence as conv
from reprolab.physics import record_checks
from tests.support.planted import corpus
from tests.support.planted.modes import SQUARE_K, bloch_script, ring_script

pytest.importorskip("meep")

CASES = {"bloch": bloch_script(), "ring": ring_script()}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("modes")
    dirs = []
    for name, (code, _) in CASES.items():
        for variant in ("", ".2x"):
            d = root / f"{name}{variant}"
            d.mkdir()
            (d / "sim.py").write_text(code)
            if variant:
                (d / "env.json").write_text(json.dumps({"REPROLAB_RESOLUTION_SCALE": "2"}))
            dirs.append(str(d))
    subprocess.run([sys.executable, "-m", "tests.support.planted.driver", *dirs], check=True)
    for d in dirs:
        assert (root / d / "exit_code").read_text() == "0", (root / d / "stderr.txt").read_text()
    return root


def _failed(result: dict) -> dict:
    return {c["name"]: c["detail"] for c in result["checks"] if c["status"] == "fail"}


def test_every_k_point_of_run_k_points_is_recorded(runs):
    (sim,) = record_checks.load_record(runs / "bloch")
    assert [r["k_point"] for r in sim["runs"]] == SQUARE_K
    assert sim["coordinates"] == "cartesian" and sim["boundary_layers"] == []
    assert sim["bloch_axes"] == ["x", "y"] and sim["metallic_axes"] == []
    at_x = [m["freq"] for m in sim["runs"][1]["harminv"][0]["modes"]]
    # the first TM band at X of this lattice: 0.275 (0.2748 at 20 px/a)
    assert any(0.27 < f < 0.28 for f in at_x), at_x


def test_bloch_run_raises_no_failure(runs):
    code, design = CASES["bloch"]
    SimulationDesign.model_validate(design)
    result = corpus.judge(runs / "bloch", code, design)
    assert not _failed(result)
    found = {c["name"]: c for c in result["checks"]}
    assert found["built:k_points_run"]["status"] == "pass"
    assert found["built:bloch_as_declared"]["status"] == "pass"
    assert "above what this run can measure" in found["built:harminv_modes"]["detail"]
    assert not any(n.startswith("extinction") for n in found)  # bands.csv's k is negative


def test_declared_pml_that_was_never_built_is_flagged(runs):
    code, design = CASES["bloch"]
    planted = {
        **design,
        "boundaries": [
            {"axis": "x", "kind": "pml", "thickness": 1.0},
            {"axis": "y", "kind": "bloch"},
        ],
    }
    SimulationDesign.model_validate(planted)
    failed = _failed(corpus.judge(runs / "bloch", code, planted))
    assert "declared PML not built on simulation 0: x" in failed["built:pml_as_declared"]
    old = {k: v for k, v in design.items() if k not in ("boundaries", "k_points")}
    old["pml_thickness"] = 1.0
    assert "built:pml_as_declared" in _failed(corpus.judge(runs / "bloch", code, old))


def test_cylindrical_run_is_recorded_on_r_and_z(runs):
    (sim,) = record_checks.load_record(runs / "ring")
    assert sim["cylindrical"] and sim["dimensions"] == -2 and sim["axes"] == ["r"]
    assert sim["m"] == 3 and sim["runs"][0]["m"] == 3
    layers = [(x["axis"], x["side"]) for x in sim["boundary_layers"]]
    assert layers == [("r", "high")]  # never four x/y sides: r = 0 is the axis
    assert sim["boundaries"] == {"r": {"low": "axis", "high": "pml"}}


def test_cylindrical_run_raises_no_failure_and_is_held_to_its_design(runs):
    code, design = CASES["ring"]
    SimulationDesign.model_validate(design)
    result = corpus.judge(runs / "ring", code, design)
    assert not _failed(result)
    assert {c["name"]: c["status"] for c in result["checks"]}["built:m_run"] == "pass"
    assert "built:m_run" in _failed(corpus.judge(runs / "ring", code, {**design, "m": [2]}))
    cartesian = {**design, "coordinates": "cartesian", "m": []}
    cartesian["boundaries"] = [{"axis": "x", "kind": "pml"}]
    assert "built:coordinates_as_designed" in _failed(corpus.judge(runs / "ring", code, cartesian))


def test_resolution_rerun_converges_on_frequencies(runs):
    bloch = conv.compare_folders([], runs / "bloch", runs / "bloch.2x")
    assert bloch and conv.verdict(bloch) == "converged"
    assert all(q["name"].endswith("frequency") and "Q not compared" in q["note"] for q in bloch)
    ring = conv.compare_folders([], runs / "ring", runs / "ring.2x")
    assert conv.verdict(ring) == "converged"
    assert any(q["name"].endswith(" Q") for q in ring)  # a leaky mode's Q is measured


def test_debug_plot_draws_a_cylindrical_cell_from_the_axis(runs, tmp_path):
    from reprolab.steps import debug

    sim = debug.as_built_simulation(runs / "ring")
    assert debug._span([1.5, 0, 0], [1.0, None, None], 0, 4.0, 4.0) == (1.0, 2.0)
    assert debug._span([7.0, 0, 0], [2.0, None, None], 0, 4.0, 4.0) == (6.0, 8.0)
    assert Path(debug.monitor_positions_plot(sim, tmp_path / "ring.png")).is_file()
