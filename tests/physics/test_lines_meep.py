"""Real Meep: the transmission line of a 1D Bragg cavity (n 3 / 1.5 quarter-wave pairs
around a half-wave defect, 40 px per unit, f0 ≈ 0.997, Q ≈ 555). Measured: a defect 1 %
thicker moves the line by 0.63 % of its position (SUCCESS by the ordinary 1 % rule) and
3.3 linewidths (FAILURE in linewidths); the same run against its own spectrum digitized
at every fourth point is 0.001 linewidth off."""

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from reprolab.physics import compare
from reprolab.physics import thresholds as th

SCRIPT = textwrap.dedent(
    """
    import json, sys
    import meep as mp

    mp.verbosity(0)
    scale = float(sys.argv[1])
    nh, nl, pairs = 3.0, 1.5, 4
    mirror = [(nh, 0.25 / nh), (nl, 0.25 / nl)] * pairs
    layers = mirror[:-1] + [(nl, scale * 0.5 / nl)] + mirror[::-1][1:]
    total = sum(t for _, t in layers)
    dpml, pad = 1.0, 1.0
    size = total + 2 * (pad + dpml)
    geometry, z = [], -total / 2
    for n, t in layers:
        centre = mp.Vector3(z=z + t / 2)
        block = mp.Vector3(mp.inf, mp.inf, t)
        geometry.append(mp.Block(size=block, center=centre, material=mp.Medium(index=n)))
        z += t
    spectra = []
    probe = mp.Vector3(z=size / 2 - dpml - 0.2)
    for geo in ([], geometry):
        src = mp.GaussianSource(1.0, fwidth=0.2)
        sources = [mp.Source(src, mp.Ex, mp.Vector3(z=-size / 2 + dpml + 0.2))]
        sim = mp.Simulation(cell_size=mp.Vector3(z=size), dimensions=1, resolution=40,
                            geometry=geo, sources=sources, boundary_layers=[mp.PML(dpml)])
        flux = sim.add_flux(1.0, 0.1, 801, mp.FluxRegion(center=probe))
        sim.run(until_after_sources=mp.stop_when_fields_decayed(50, mp.Ex, probe, 1e-6))
        spectra.append(mp.get_fluxes(flux))
    t = [a / b for a, b in zip(spectra[1], spectra[0])]
    print("SPECTRUM " + json.dumps([mp.get_flux_freqs(flux), t]))
    """
)
CTX = {"x_quantity": "frequency", "x_unit": "c/a", "y_scale": "linear", "polar": None}


def transmission(scale: float) -> tuple[np.ndarray, np.ndarray]:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(scale)], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    line = next(x for x in done.stdout.splitlines() if x.startswith("SPECTRUM "))
    f, t = json.loads(line.removeprefix("SPECTRUM "))
    return np.asarray(f), np.asarray(t)


@pytest.fixture(scope="module")
def spectra():
    return transmission(1.0), transmission(1.01)


def test_a_cavity_line_off_by_three_linewidths_fails_in_linewidths(spectra):
    (f, t), (f2, t2) = spectra
    res = compare.compare_curve(f[::4], t[::4], f2, t2, CTX)
    classes = compare.classify_curve(res)
    (line,) = res["lines"]
    assert line["kind"] == "peak" and line["narrow"]
    assert 400 < line["x_paper"] / line["linewidth_paper"] < 700  # the cavity's Q
    assert classes["feature_shift_rel"] == "SUCCESS"  # the ordinary rule lets it pass
    assert line["shift_linewidths"] > 2.5
    assert classes["line_shift_linewidths"] == "FAILURE"


def test_the_same_cavity_digitized_is_success_and_its_q_agrees(spectra):
    (f, t), _ = spectra
    q = 555.0
    res = compare.compare_curve(f[::4], t[::4], f, t, CTX | {"lines": [{"x": 0.9974, "q": q}]})
    classes = compare.classify_curve(res)
    assert th.worst(list(classes.values())) == "SUCCESS"
    (line,) = res["lines"]
    assert line["shift_linewidths"] < 0.05 and line["q_log10"] < 0.02
