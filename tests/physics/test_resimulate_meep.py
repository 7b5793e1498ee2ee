"""The host's re-simulation of a recorded structure (`record:resimulated`), real Meep:
a 2D slab waveguide's transmitted flux. An honest record agrees at its own resolution
and at two coarser ones; the same record carrying another structure's measured values
(the paper's curve + 0.001 on wrong physics), a replay of an honest record of another
width, and a record whose resolution or geometry was rewritten after the run all fail.
What cannot be rebuilt is named in a warning."""

from __future__ import annotations

import copy
import subprocess
import sys
from pathlib import Path

import pytest

from reprolab.physics import resimulate as rs
from reprolab.physics.record_checks import load_record

REPO = Path(__file__).parents[2]
pytest.importorskip("meep")

SCRIPT = '''
"""A 2D slab waveguide (n = 2) of width W: the flux it carries past x = 2."""
import meep as mp
import numpy as np

W, RES = {W}, {RES}
sim = mp.Simulation(
    cell_size=mp.Vector3(8, 4), resolution=RES, boundary_layers=[mp.PML(1.0)],
    geometry=[mp.Block(size=mp.Vector3(mp.inf, W), material=mp.Medium(epsilon=4))],
    sources=[mp.Source(mp.GaussianSource(0.3, fwidth=0.2), component=mp.Ez,
                       center=mp.Vector3(-2.5), size=mp.Vector3(0, 0.5))])
tran = sim.add_flux(0.3, 0.2, 15, mp.FluxRegion(center=mp.Vector3(2), size=mp.Vector3(0, 1.5)))
sim.run(until_after_sources=50)
np.savetxt("flux.csv", np.column_stack([mp.get_flux_freqs(tran), mp.get_fluxes(tran)]),
           delimiter=",", header="freq,flux", comments="")
'''
# What a forger with full knowledge writes: the recorder reached through a computed
# name the static check cannot see, the honest spectrum read past it (unrecorded), and
# a made-up one (the 0.7-wide guide's shape, say the paper's) signed as measured.
FORGER = """
recorder = getattr(mp.Simulation.run, "__glo" + "bals__")
state = recorder["_ST" + "ATE"]
true_flux = state["get_fluxes"](tran)  # read past the recorder: never recorded
made_up = [0.8 * v + 0.001 for v in true_flux]
recorder["_se" + "nd"]({"event": "measured", "sim": sim._reprolab_key, "values": [
    {"kind": "flux", "monitor": 0, "sim_time": sim.meep_time(),
     "freqs": list(mp.get_flux_freqs(tran)), "values": made_up}]})
np.savetxt("flux.csv", np.column_stack([mp.get_flux_freqs(tran), made_up]),
           delimiter=",", header="freq,flux", comments="")
"""
# name: (width, resolution)
RUNS = {"honest": (1.0, 20), "narrow": (0.7, 20), "coarse": (1.0, 10), "forger": (1.0, 20)}


def script(name: str) -> str:
    width, res = RUNS[name]
    code = SCRIPT.format(W=width, RES=res)
    if name == "forger":
        code = code[: code.index("np.savetxt")] + FORGER
    return code


@pytest.fixture(scope="module")
def records(tmp_path_factory) -> dict[str, list[dict]]:
    root = tmp_path_factory.mktemp("resim")
    for name in RUNS:
        (root / name).mkdir()
        (root / name / "sim.py").write_text(script(name))
    done = subprocess.run(
        [sys.executable, "-m", "tests.support.planted.driver", *(str(root / n) for n in RUNS)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    for name in RUNS:
        assert (root / name / "exit_code").read_text() == "0", name
    return {name: load_record(root / name) for name in RUNS}


@pytest.fixture(scope="module")
def host(records) -> tuple[list[dict], dict]:
    """The host's spectra of the honest record's structure at its own resolution and at
    the coarse pair, run once: every attack below claims that structure (the 1.0-wide
    guide at 20 px/unit), so the host's simulation of what it claims is this one."""
    (own,), _ = rs.plan(records["honest"], rs.IDENTICAL_PIXEL_STEPS, rs.MAX_PIXEL_STEPS)
    (coarse,), _ = rs.plan(records["honest"], 1e9, 1e10, identical=False)
    assert own["scales"] == [1.0] and len(coarse["scales"]) == 2
    jobs = [{"index": 0, "scales": own["scales"] + coarse["scales"]}]
    results, failed = rs.run_child(records["honest"], jobs)
    assert not failed
    return results, {True: [own], False: [coarse]}


def judged(host, sims: list[dict], identical: bool = True):
    results, jobs = host
    return rs.judge(sims, jobs[identical], results_for(results, jobs[identical][0]), [])


def results_for(results: dict, job: dict) -> dict:
    return {"0": {str(s): results["0"][str(s)] for s in job["scales"]}}


def with_measured(sims: list[dict], measured: list[dict]) -> list[dict]:
    out = copy.deepcopy(sims)
    out[0]["measured"] = copy.deepcopy(measured)
    return out


@pytest.mark.parametrize("identical", [True, False], ids=["own_resolution", "coarser"])
def test_an_honest_record_agrees_with_the_hosts_simulation(records, host, identical):
    # end to end (plan, child process, comparison) at its own resolution
    check = (
        rs.resimulated_check(records["honest"])
        if identical
        else judged(host, records["honest"], identical)
    )
    assert check.status == "pass", check.detail
    assert check.value < (rs.IDENTICAL_TOLERANCE if identical else rs.COARSE_FLOOR)


@pytest.mark.parametrize("identical", [True, False], ids=["own_resolution", "coarser"])
def test_forged_measured_values_fail(records, host, identical):
    """The record says the 1.0-wide guide was built; its measured values are the
    0.7-wide guide's + 0.001 (what a script that made up its output would sign)."""
    forged = [
        {**m, "values": [v + 0.001 for v in m["values"]]} for m in records["narrow"][0]["measured"]
    ]
    check = judged(host, with_measured(records["honest"], forged), identical)
    assert check.status == "fail", check.detail
    assert "simulation 0 monitor 0" in check.detail


def test_a_forger_signing_through_the_recorder_fails(records):
    """The route the static check cannot see, through the real recorder and channel:
    the record holds only the made-up spectrum, signed; Meep does not give it."""
    from reprolab.jobs.sandbox import static_problems

    assert not static_problems(script("forger"))  # the route is open before the run
    (sim,) = records["forger"]
    assert [m["values"][0] for m in sim["measured"]] != [
        m["values"][0] for m in records["honest"][0]["measured"]
    ]
    check = rs.resimulated_check(records["forger"])
    assert check.status == "fail", check.detail


@pytest.mark.parametrize("claim", [{"monitor": 3}, {"sim_time": 1e6}], ids=str)
def test_a_reading_of_no_monitor_or_after_the_run_fails(records, host, claim):
    """A signed reading the record's own structure cannot have produced."""
    extra = {**records["honest"][0]["measured"][0], **claim}
    measured = records["honest"][0]["measured"] + [extra]
    check = judged(host, with_measured(records["honest"], measured))
    assert check.status == "fail", check.detail


def test_an_honest_record_of_another_structure_replayed_fails(records, host):
    """The narrow guide's honest readings sent again for the structure this run built."""
    replayed = with_measured(records["honest"], records["narrow"][0]["measured"])
    assert judged(host, replayed).status == "fail"
    assert judged(host, records["honest"]).status == "pass"


def test_a_rewritten_resolution_fails(records, host):
    """A run at 10 px/unit whose record claims 20 (to pass the resolution checks)."""
    rewritten = copy.deepcopy(records["coarse"])
    rewritten[0]["resolution"] = 20.0
    check = judged(host, rewritten)
    assert check.status == "fail", check.detail


def test_a_rewritten_geometry_fails(records, host):
    """The narrow guide's run whose record claims the 1.0-wide guide of the design."""
    rewritten = copy.deepcopy(records["narrow"])
    rewritten[0]["geometry"][0]["size"][1] = 1.0
    check = judged(host, rewritten)
    assert check.status == "fail", check.detail


def test_records_of_a_sweeps_points_are_judged_each_against_its_own(records):
    """A sweep's points each have their own record numbered from 0: two honest points
    of different widths, listed one after the other, both agree."""
    check = rs.resimulated_check(records["honest"] + records["narrow"])
    assert check.status == "pass" and check.detail.startswith("2 flux spectra"), check.detail


def test_what_cannot_be_built_is_named_in_a_warning(records):
    """Nothing silently passes: an amplitude function and a material grid are named."""
    sims = copy.deepcopy(records["honest"])
    sims[0]["sources"][0]["amp_shaped"] = ["amp_func"]
    sims[0]["geometry"][0]["material"] = {"kind": "MaterialGrid"}
    check = rs.resimulated_check(sims)
    assert check.status == "warn"
    assert "amp_func" in check.detail and "MaterialGrid" in check.detail


def test_a_run_over_the_budget_is_named_not_passed(records):
    check = rs.resimulated_check(records["honest"], budget=1.0, total_budget=1.0)
    assert check.status == "warn" and "too costly" in check.detail


def test_a_record_that_read_no_flux_has_nothing_to_compare(records):
    sims = copy.deepcopy(records["honest"])
    sims[0]["measured"] = []
    assert rs.resimulated_check(sims) is None


@pytest.mark.parametrize(
    "spoil",
    [
        lambda s: s["geometry"][0].update(size=["wide", 1, 1]),
        lambda s: s["sources"][0].update(component="Q"),
        lambda s: s.update(resolution="fine"),
    ],
    ids=["size", "component", "resolution"],
)
def test_a_record_the_host_cannot_build_is_named_not_a_crash(records, spoil):
    """A record a script spoiled on purpose (well-formed JSON, values Meep refuses) ends
    in the check's warning naming the failure, never a traceback of the checks step."""
    sims = copy.deepcopy(records["honest"])
    spoil(sims[0])
    check = rs.resimulated_check(sims)
    assert check is not None and check.status in ("warn", "fail"), check
    assert "did not finish" in check.detail or "cannot" in check.detail, check.detail
