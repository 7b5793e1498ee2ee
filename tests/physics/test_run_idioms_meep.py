"""Real Meep in the run styles of Meep's own examples, judged by the run-time record:

- a scattering cross section run for a fixed time after its sources (Meep's cylinder
  and Mie examples: `until_after_sources=T`), judged by whether its flux spectra had
  stopped changing: long enough passes, cut short fails, and the truth is the same run
  made longer;
- a χ(3) medium whose flux spectrum spans the third harmonic (Meep's 3rd-harm-1d
  example): generated frequencies are monitored by design, while the same monitors on
  a linear medium, or a monitor at 2·fcen that no χ(3) process reaches, fail;
- a scattered-field near-to-far surface (Meep's differential cross-section example: the
  empty run's near fields subtracted with `load_minus_near2far_data`) has its incident
  source outside by design; the same surface read without the subtraction fails;
- an open near-to-far surface over a waveguide cavity (Meep's cavity far-field example:
  a line above the waveguide from PML to PML and two short faces at its ends, the far
  field read above) divides the cell; the same surface read below, on the source's
  side, or stopping short of the PML, fails.

All scripts run in one Meep process (tests.support.planted.driver)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from reprolab.physics import record_checks
from reprolab.physics.record_checks import load_record

REPO = Path(__file__).parents[2]
pytest.importorskip("meep")

SCATTERING = textwrap.dedent(
    '''
    """A dielectric cylinder's scattering cross section, run a fixed time after its sources."""
    import meep as mp
    import numpy as np

    R, N, DPML, DAIR, RES = 0.5, 2.0, 1.0, 1.0, 12
    S = 2 * (DPML + DAIR + R)
    FCEN, DF, B = 1.0, 1.0, R + 0.3
    src = [mp.Source(mp.GaussianSource(FCEN, fwidth=DF, is_integrated=True), component=mp.Ez,
                     center=mp.Vector3(-0.5 * S + DPML), size=mp.Vector3(0, S))]
    FACES = [(mp.Vector3(-B), mp.Vector3(0, 2 * B)), (mp.Vector3(B), mp.Vector3(0, 2 * B)),
             (mp.Vector3(0, -B), mp.Vector3(2 * B)), (mp.Vector3(0, B), mp.Vector3(2 * B))]


    def box(sim):
        return [sim.add_flux(FCEN, 0.8 * DF, 30, mp.FluxRegion(center=c, size=s)) for c, s in FACES]


    def make(geometry):
        return mp.Simulation(cell_size=mp.Vector3(S, S), resolution=RES, sources=src,
                             boundary_layers=[mp.PML(DPML)], geometry=geometry)


    sim = make([])
    empty = box(sim)
    sim.run(until_after_sources=10)
    data = [sim.get_flux_data(f) for f in empty]
    intensity = np.asarray(mp.get_fluxes(empty[0])) / (2 * B)
    sim.reset_meep()
    sim = make([mp.Cylinder(R, material=mp.Medium(index=N))])
    faces = box(sim)
    for f, d in zip(faces, data):
        sim.load_minus_flux_data(f, d)
    sim.run(until_after_sources={until})
    flux = [np.asarray(mp.get_fluxes(f)) for f in faces]
    sigma = (flux[1] - flux[0] + flux[3] - flux[2]) / intensity
    if mp.am_master():
        np.savetxt("sigma.csv", np.column_stack([mp.get_flux_freqs(faces[0]), sigma]),
                   delimiter=",", header="freq,sigma_sca", comments="")
    '''
)

HARMONICS = textwrap.dedent(
    '''
    """Third-harmonic generation in a 1D χ(3) medium: the transmitted flux spectrum."""
    import meep as mp

    FCEN = 1 / 3.0
    DF = FCEN / 20
    sim = mp.Simulation(cell_size=mp.Vector3(0, 0, 20), resolution=20, dimensions=1,
                        boundary_layers=[mp.PML(1.0)],
                        default_material=mp.Medium(index=1, chi3={chi3}),
                        sources=[mp.Source(mp.GaussianSource(FCEN, fwidth=DF), component=mp.Ex,
                                           center=mp.Vector3(0, 0, -8.5), amplitude=2.0)])
    fmin, fmax = {band}
    trans = sim.add_flux(0.5 * (fmin + fmax), fmax - fmin, 100,
                         mp.FluxRegion(mp.Vector3(0, 0, 8.5)))
    sim.run(until_after_sources=20)
    '''
)

NEAR_TO_FAR = textwrap.dedent(
    '''
    """A cylinder's scattered far field: the empty run's near fields subtracted."""
    import meep as mp

    R, DPML, RES, B = 0.5, 1.0, 10, 1.0
    S = 2 * (DPML + 1.5)
    FCEN, DF = 1.0, 0.2
    src = [mp.Source(mp.GaussianSource(FCEN, fwidth=DF, is_integrated=True), component=mp.Ez,
                     center=mp.Vector3(-0.5 * S + DPML), size=mp.Vector3(0, S))]
    FACES = [mp.Near2FarRegion(center=mp.Vector3(-B), size=mp.Vector3(0, 2 * B), weight=-1),
             mp.Near2FarRegion(center=mp.Vector3(B), size=mp.Vector3(0, 2 * B)),
             mp.Near2FarRegion(center=mp.Vector3(0, -B), size=mp.Vector3(2 * B), weight=-1),
             mp.Near2FarRegion(center=mp.Vector3(0, B), size=mp.Vector3(2 * B))]


    def make(geometry):
        return mp.Simulation(cell_size=mp.Vector3(S, S), resolution=RES, sources=src,
                             boundary_layers=[mp.PML(DPML)], geometry=geometry)


    sim = make([])
    n2f = sim.add_near2far(FCEN, 0, 1, *FACES)
    sim.run(until_after_sources=20)
    incident = sim.get_near2far_data(n2f)
    sim.reset_meep()
    sim = make([mp.Cylinder(R, material=mp.Medium(index=2.0))])
    n2f = sim.add_near2far(FCEN, 0, 1, *FACES)
    if {subtract}:
        sim.load_minus_near2far_data(n2f, incident)
    sim.run(until_after_sources=20)
    ff = sim.get_farfield(n2f, mp.Vector3(1000, 0))
    '''
)

CAVITY_CAP = textwrap.dedent(
    '''
    """A waveguide cavity's far field above it, from an open near surface."""
    import meep as mp

    W, D1, DPML, RES = 1.2, 0.2, 1.0, 10
    SX, SY = 8 + 2 * DPML, 6 + 2 * DPML
    sim = mp.Simulation(cell_size=mp.Vector3(SX, SY), resolution=RES,
                        boundary_layers=[mp.PML(DPML)],
                        geometry=[mp.Block(mp.Vector3(mp.inf, W, mp.inf),
                                           material=mp.Medium(epsilon=13))],
                        sources=[mp.Source(mp.GaussianSource(0.25, fwidth=0.2), mp.Hz,
                                           mp.Vector3())],
                        symmetries=[mp.Mirror(mp.X, phase=-1), mp.Mirror(mp.Y, phase=-1)])
    X = 0.5 * SX - DPML - {short}
    n2f = sim.add_near2far(
        0.25, 0, 1,
        mp.Near2FarRegion(mp.Vector3(0, 0.5 * W + D1), size=mp.Vector3(2 * X)),
        mp.Near2FarRegion(mp.Vector3(-X, 0.5 * W + 0.5 * D1), size=mp.Vector3(0, D1), weight=-1),
        mp.Near2FarRegion(mp.Vector3(X, 0.5 * W + 0.5 * D1), size=mp.Vector3(0, D1)))
    sim.run(until_after_sources=20)
    ff = sim.get_farfield(n2f, mp.Vector3(0, {y}))
    '''
)

CASES = {
    "fixed_short": SCATTERING.format(until=2),
    "fixed_long": SCATTERING.format(until=100),
    "fixed_longest": SCATTERING.format(until=300),
    "chi3_spectrum": HARMONICS.format(chi3=0.01, band="FCEN / 2, 4 * FCEN"),
    "linear_spectrum": HARMONICS.format(chi3=0, band="FCEN / 2, 4 * FCEN"),
    "chi3_at_2f": HARMONICS.format(chi3=0.01, band="1.95 * FCEN, 2.05 * FCEN"),
    "n2f_scattered": NEAR_TO_FAR.format(subtract=True),
    "n2f_not_subtracted": NEAR_TO_FAR.format(subtract=False),
    "n2f_cap": CAVITY_CAP.format(short=0, y=2.8),
    "n2f_cap_read_below": CAVITY_CAP.format(short=0, y=-2.8),
    "n2f_cap_short_of_pml": CAVITY_CAP.format(short=1, y=2.8),
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("run_idioms")
    for name, code in CASES.items():
        (base / name).mkdir()
        (base / name / "sim.py").write_text(code)
    subprocess.run(
        [sys.executable, "-m", "tests.support.planted.driver", *(str(base / n) for n in CASES)],
        check=True,
        cwd=REPO,
        timeout=600,
    )
    for name in CASES:
        assert (base / name / "exit_code").read_text().strip() == "0", name
    return base


def _sigma(runs: Path, name: str) -> np.ndarray:
    return np.loadtxt(runs / name / "sigma.csv", delimiter=",", skiprows=1)[:, 1]


def test_fixed_time_run_is_judged_by_its_settled_spectra(runs):
    """The check reads the flux spectra's own settling: a run 100 time units past its
    sources passes (its cross section within 1 % of a run three times longer), one cut
    2 units past them fails (its cross section off by far more)."""
    truth = _sigma(runs, "fixed_longest")
    scale = np.max(np.abs(truth))
    assert np.max(np.abs(_sigma(runs, "fixed_long") - truth)) / scale < 0.01
    assert np.max(np.abs(_sigma(runs, "fixed_short") - truth)) / scale > 0.05
    long = record_checks.field_decay_check(load_record(runs / "fixed_long"))
    short = record_checks.field_decay_check(load_record(runs / "fixed_short"))
    assert long.status == "pass" and "spectra" in long.detail, long
    assert short.status == "fail", short
    # the record keeps what the check read: per-sample changes, their wander, the energy
    run = load_record(runs / "fixed_long")[-1]["runs"][-1]
    assert len(run["spectrum_changes"]) == len(run["energy_recent"]) > 0


def test_spectrum_left_to_change_extrapolates_the_tail():
    """A tail decaying by half in amplitude per sample leaves as much as its current
    change (the largest of the last three carried forward: beats dip); one that does
    not decay leaves the range it wanders in; too few samples say nothing."""
    energy = [4.0**-i for i in range(6)]
    left = record_checks.spectrum_left_to_change
    assert left([1e-3] * 6, energy) == pytest.approx(1e-3)
    assert left([0, 0, 0, 8e-3, 1e-3, 1e-4], energy, wander=0.5) == pytest.approx(2e-3)
    assert record_checks.spectrum_left_to_change([1e-3] * 6, [1.0] * 6, 0.02) == 0.02
    assert record_checks.spectrum_left_to_change([1e-3] * 6, [1.0] * 6) == float("inf")
    assert record_checks.spectrum_left_to_change([1e-3] * 3, energy) is None


@pytest.mark.parametrize(
    ("name", "status"),
    [("chi3_spectrum", "pass"), ("linear_spectrum", "fail"), ("chi3_at_2f", "fail")],
)
def test_generated_harmonics_are_monitored_by_design(runs, name, status):
    sims = load_record(runs / name)
    assert sims[0]["default_material"]["nonlinear_order"] == (1 if "linear" in name else 3)
    got = record_checks.source_band_check(sims)
    assert got.status == status, got


@pytest.mark.parametrize(
    ("name", "status"), [("n2f_scattered", "pass"), ("n2f_not_subtracted", "fail")]
)
def test_scattered_field_surface_may_leave_the_incident_source_outside(runs, name, status):
    from reprolab.physics.emitters import near_surface_check

    sims = load_record(runs / name)
    got = near_surface_check(sims)
    assert got.status == status, got
    if status == "fail":  # the reference run is not judged: only the surface it read
        assert "simulation 0" not in got.detail and "simulation 1" in got.detail


@pytest.mark.parametrize(
    ("name", "status"),
    [("n2f_cap", "pass"), ("n2f_cap_read_below", "fail"), ("n2f_cap_short_of_pml", "fail")],
)
def test_an_open_surface_that_divides_the_cell_encloses_nothing_it_needs(runs, name, status):
    from reprolab.physics.emitters import near_surface_check

    got = near_surface_check(load_record(runs / name))
    assert got.status == status, got
    if status == "fail":
        assert "the surface is open (no face at y = 0.6" in got.detail, got
