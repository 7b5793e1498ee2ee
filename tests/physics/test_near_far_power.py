"""The near-to-far checks on real Meep runs: the gallery's radiation pattern (three Ez
line currents, a closed box, the far field read every degree at 1000 a) and a 3D
dipole whose far field is read on a θ, φ sphere. The record itself carries the power
through the near surface (a flux monitor it adds on the near2far regions) and the
Poynting vector of every far-field point the script read, so the balance is judged
from what Meep computed, not from the script's columns.

The correct runs pass (2D: |far / near - 1| = 0.039, 3D: 0.003) and raise no failure.
Wrong on purpose, each through real Meep: the far field read at 2 a
(`built:far_field_is_far`, though the design states 1000 a), a current outside the box
and a box missing a face (`built:near_surface_encloses_sources`), faces whose weights
do not point outward and near2far fields scaled by 2 (`built:near_far_power_balance`);
a far field read over half the turn or half the sphere, or near-field data loaded into
the near2far object, cannot be judged (`skip`, never `pass`). The planted cases are the
corpus's (tests/support/planted/corpus.py).
"""

from __future__ import annotations

import copy
import dataclasses
import math
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from reprolab.physics import near_far_power, record_checks
from reprolab.physics import thresholds as th
from reprolab.physics.record_checks import load_record
from reprolab.report import markdown
from tests.support.planted import corpus

pytest.importorskip("meep")

REPO = Path(__file__).resolve().parents[2]
CASES = [n for n in [*corpus.PLANTED, *corpus.CORRECT] if n.startswith("n2f_")]
SPHERE = textwrap.dedent(
    """
    import math
    import meep as mp
    import numpy as np

    RES, PML, HALF = 10, 0.5, 0.5
    CELL = 2 * (HALF + 0.25 + PML)
    sim = mp.Simulation(cell_size=mp.Vector3(CELL, CELL, CELL), resolution=RES,
                        boundary_layers=[mp.PML(PML)],
                        sources=[mp.Source(mp.GaussianSource(1.0, fwidth=0.4), mp.Ez,
                                           mp.Vector3())])
    box = []
    for ax in range(3):
        for sign in (1, -1):
            centre, size = [0, 0, 0], [2 * HALF] * 3
            centre[ax], size[ax] = sign * HALF, 0
            box.append(mp.Near2FarRegion(mp.Vector3(*centre), size=mp.Vector3(*size),
                                         weight=sign))
    n2f = sim.add_near2far(1.0, 0, 1, *box)
    sim.run(until_after_sources=mp.stop_when_fields_decayed(10, mp.Ez, mp.Vector3(0, 0, HALF),
                                                            1e-4))
    rows = []
    for t in np.arange(0, 181, 10.0):
        for p in np.arange(0, 360, 15.0):
            th, ph = math.radians(t), math.radians(p)
            x = mp.Vector3(100 * math.sin(th) * math.cos(ph), 100 * math.sin(th) * math.sin(ph),
                           100 * math.cos(th))
            rows.append((t, p, abs(sim.get_farfield(n2f, x)[2]) ** 2))
    if mp.am_master():
        np.savetxt("pattern.csv", np.array(rows), delimiter=",", header="theta,phi,ez2",
                   comments="")
    """
)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    base = tmp_path_factory.mktemp("n2f")
    statuses = corpus.run_corpus(base, names=CASES, auto=set())
    (base / "sphere").mkdir()
    (base / "sphere" / "sim.py").write_text(SPHERE)
    subprocess.run(
        [sys.executable, "-m", "tests.support.planted.driver", str(base / "sphere")],
        check=True,
        timeout=300,
        cwd=REPO,
    )
    assert (base / "sphere" / "exit_code").read_text() == "0"
    return base, statuses


def _checks(base: Path, name: str) -> dict:
    design = ({**corpus.PLANTED, **{k: (v, []) for k, v in corpus.CORRECT.items()}})[name][0][1]
    return {c.name: c for c in record_checks.record_checks(load_record(base / name), design)}


def test_the_record_carries_both_powers(runs):
    base, _ = runs
    (sim,) = load_record(base / "n2f_dipole_array_pattern")
    kinds = [m["kind"] for m in sim["measured"]]
    assert kinds.count("farfield") == 360 and kinds.count("near_surface_flux") == 1
    assert [m["kind"] for m in sim["monitors"]] == ["near2far"]  # the record's flux is its own
    far = next(m for m in sim["measured"] if m["kind"] == "farfield")
    assert far["monitor"] == 0 and len(far["poynting"]) == 1
    # |S| = |Ez| |H| in the far field: the Poynting vector matches the recorded |Ez|^2
    assert np.linalg.norm(far["poynting"][0]) == pytest.approx(far["abs2"][2], rel=1e-3)


def test_the_records_flux_monitor_changes_nothing_the_script_computes(runs, tmp_path):
    """The same script run bare (no recorder, no added flux monitor) writes the very same
    pattern, byte for byte."""
    base, _ = runs
    shutil.copy(base / "n2f_dipole_array_pattern" / "sim.py", tmp_path / "sim.py")
    subprocess.run(
        [sys.executable, "sim.py"], cwd=tmp_path, check=True, timeout=120, capture_output=True
    )
    recorded = (base / "n2f_dipole_array_pattern" / "pattern.csv").read_bytes()
    assert (tmp_path / "pattern.csv").read_bytes() == recorded


def test_the_correct_pattern_balances(runs):
    base, statuses = runs
    found = _checks(base, "n2f_dipole_array_pattern")
    check = found["built:near_far_power_balance"]
    assert check.status == "pass" and check.value == pytest.approx(0.039, abs=0.005)
    assert "circle of 1000 a (360 points)" in check.detail
    assert not [n for n, s in statuses["n2f_dipole_array_pattern"].items() if s == "fail"]


def test_planted_near_to_far_mistakes_fail_by_name(runs):
    base, statuses = runs
    for name in corpus.PLANTED:
        if name.startswith("n2f_"):
            for check in corpus.PLANTED[name][1]:
                assert statuses[name][check] == "fail", (name, statuses[name])
    far = _checks(base, "n2f_far_field_read_at_2_wavelengths")["built:far_field_is_far"]
    assert "radius 2 a where read (the design: 1000 a) = 2 wavelengths" in far.detail
    outside = _checks(base, "n2f_source_outside_surface")["built:near_surface_encloses_sources"]
    assert "source at [1.5, 0.0, 0.0] outside" in outside.detail
    open_ = _checks(base, "n2f_surface_missing_a_face")["built:near_surface_encloses_sources"]
    assert "open (no face at x = -1.2" in open_.detail
    weights = _checks(base, "n2f_weights_not_outward")["built:near_far_power_balance"]
    assert "no net power leaves the near surface" in weights.detail
    scaled = _checks(base, "n2f_far_field_scaled_2")["built:near_far_power_balance"]
    assert scaled.value == pytest.approx(4 * 1.039 - 1, rel=0.02)  # power x4, as |2|^2


def test_a_far_field_scaled_in_the_record_fails(runs):
    """The same balance on the correct record with every far-field Poynting vector x2
    (what a far field x sqrt(2) would carry): the correct one passes beside it."""
    base, _ = runs
    sims = load_record(base / "n2f_dipole_array_pattern")
    doubled = copy.deepcopy(sims)
    for m in doubled[0]["measured"]:
        if m["kind"] == "farfield":
            m["poynting"] = [[2 * x for x in s] for s in m["poynting"]]
    assert near_far_power.power_balance_check(sims).status == "pass"
    check = near_far_power.power_balance_check(doubled)
    assert check.status == "fail" and check.value == pytest.approx(1.078, rel=0.01)


def test_half_a_turn_cannot_be_judged(runs):
    base, statuses = runs
    check = _checks(base, "n2f_pattern_half_turn")["built:near_far_power_balance"]
    assert check.status == "skip" and check.value is None
    assert "cannot judge" in check.detail and "covers 180° of the turn" in check.detail
    assert statuses["n2f_pattern_half_turn"]["built:near_far_power_balance"] == "skip"
    note = markdown._check_note(dataclasses.asdict(check))  # the report's checks table
    assert note.startswith("**skip**") and "covers 180° of the turn" in note


def test_loaded_near_field_data_cannot_be_judged(runs):
    """A script that loads near-field data into its near2far object (a scattered field's
    subtraction): the surface's own flux no longer describes it, so no balance."""
    base, statuses = runs
    check = _checks(base, "n2f_pattern_near_data_loaded")["built:near_far_power_balance"]
    assert check.status == "skip" and "no flux of its near surface" in check.detail
    assert not [n for n, s in statuses["n2f_pattern_near_data_loaded"].items() if s == "fail"]


def test_a_sphere_balances_and_half_of_it_cannot_be_judged(runs):
    base, _ = runs
    sims = load_record(base / "sphere")
    check = near_far_power.power_balance_check(sims)
    assert check.status == "pass" and check.value < th.NEAR_FAR_POWER_BALANCE.warn
    assert "sphere of 100 a" in check.detail
    closed = {c.name: c for c in record_checks.record_checks(sims, {})}
    assert closed["built:near_surface_encloses_sources"].status == "pass"
    upper = copy.deepcopy(sims)
    upper[0]["measured"] = [
        m for m in upper[0]["measured"] if m["kind"] != "farfield" or m["point"][2] > -1e-9
    ]
    half = near_far_power.power_balance_check(upper)
    assert half.status == "skip" and "not the whole sphere" in half.detail


def test_quadrature_of_an_analytic_pattern():
    """A 3D dipole's sin²θ pattern (total power 8π/3 r² S0) on a θ, φ grid and an
    isotropic ring: the integrals the check uses, exact to the grid's accuracy; a ring
    sampled with a missing quarter is refused."""
    r = 50.0
    t, p = np.meshgrid(np.radians(np.arange(0, 181, 5.0)), np.radians(np.arange(0, 360, 10.0)))
    d = r * np.stack([np.sin(t) * np.cos(p), np.sin(t) * np.sin(p), np.cos(t)], -1).reshape(-1, 3)
    s = (np.sin(t) ** 2).reshape(-1, 1, 1) * d[:, None, :] / r
    power, why = near_far_power._far_power_3d(d, s, r)
    assert why is None and power[0] == pytest.approx(8 * math.pi / 3 * r**2, rel=2e-3)
    phi = np.radians(np.arange(0, 360, 2.0))
    ring = r * np.stack([np.cos(phi), np.sin(phi), 0 * phi], -1)
    power, why = near_far_power._far_power_2d(ring, ring[:, None, :] / r, r)
    assert power[0] == pytest.approx(2 * math.pi * r, rel=1e-9)
    three_quarters = ring[phi < 1.5 * math.pi]
    power, why = near_far_power._far_power_2d(three_quarters, three_quarters[:, None, :] / r, r)
    assert power is None and "covers 268° of the turn in the plane (a 92° gap" in why
