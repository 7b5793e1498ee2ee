"""Real Meep in the styles of Meep's own scattering examples (a 2D absorbing cylinder):
one flux monitor per face of a closed box, the scattered-field box (the empty run's
fields subtracted) and the total-field box on the same faces in one run, the faces'
outward signs applied in Python or as FluxRegion weights, the numpy header `# a,b`.
The trace, the bounds and the CSV checks pass both; the same run reporting the two
boxes summed, or one face's sign wrong, fails the trace."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from reprolab.physics import bounds, checks, trace

REPO = Path(__file__).parents[2]
pytest.importorskip("meep")

SCRIPT = textwrap.dedent(
    '''
    """A lossy cylinder's scattering and absorption cross sections (2D, TM)."""
    import meep as mp
    import numpy as np

    STYLE = "{style}"
    RES, DPML, R, B = 12, 1.0, 0.4, 0.8
    SX = SY = 2 * DPML + 4.0
    FCEN, DF, NF = 0.5, 0.4, 15
    src = [mp.Source(mp.GaussianSource(FCEN, fwidth=DF, is_integrated=True), component=mp.Ez,
                     center=mp.Vector3(-0.5 * SX + DPML), size=mp.Vector3(0, SY))]
    cyl = [mp.Cylinder(radius=R, material=mp.Medium(index=1.5, D_conductivity=0.3))]
    SIDES = [(mp.Vector3(-B), mp.Vector3(0, 2 * B), -1), (mp.Vector3(B), mp.Vector3(0, 2 * B), 1),
             (mp.Vector3(0, -B), mp.Vector3(2 * B), -1), (mp.Vector3(0, B), mp.Vector3(2 * B), 1)]


    def box(sim):
        """One monitor per face; the lower faces weighted -1 only in the weights style."""
        return [sim.add_flux(FCEN, DF, NF, mp.FluxRegion(
                    center=c, size=s, weight=(sign if STYLE == "weights" else 1)))
                for c, s, sign in SIDES]


    def outward(faces):
        if STYLE == "weights":
            return sum(np.array(mp.get_fluxes(f)) for f in faces)
        return sum(sign * np.array(mp.get_fluxes(f)) for f, (_, _, sign) in zip(faces, SIDES))


    def make(geometry):
        return mp.Simulation(cell_size=mp.Vector3(SX, SY), geometry=geometry, sources=src,
                             boundary_layers=[mp.PML(DPML)], resolution=RES)


    stop = lambda: mp.stop_when_fields_decayed(20, mp.Ez, mp.Vector3(1.5), 1e-6)
    sim = make([])
    empty = box(sim)
    sim.run(until_after_sources=stop())
    data = [sim.get_flux_data(f) for f in empty]
    intensity = np.array(mp.get_fluxes(empty[0])) * (-1 if STYLE == "weights" else 1) / (2 * B)
    freqs = np.array(mp.get_flux_freqs(empty[0]))
    sim.reset_meep()
    sim = make(cyl)
    scattered = box(sim)
    total = box(sim)
    for f, d in zip(scattered, data):
        sim.load_minus_flux_data(f, d)
    sim.run(until_after_sources=stop())
    sigma_sca = outward(scattered) / intensity
    sigma_abs = -outward(total) / intensity
    summed = (outward(scattered) + outward(total)) / intensity  # two boxes taken as one
    sign_wrong = sigma_sca - 2 * np.array(mp.get_fluxes(scattered[1])) / intensity
    if mp.am_master():
        np.savetxt("xs.csv", np.column_stack([1 / freqs, sigma_sca, sigma_abs, summed,
                                              sign_wrong]),
                   delimiter=",", header="wavelength_um,sigma_sca,sigma_abs,summed,sign_wrong",
                   fmt="%.8g")
    '''
)


def run(folder: Path, style: str) -> Path:
    folder.mkdir(parents=True)
    (folder / "sim.py").write_text(SCRIPT.replace("{style}", style))
    done = subprocess.run(
        [sys.executable, "-m", "tests.support.planted.driver", str(folder)],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=REPO,
    )
    err = (folder / "stderr.txt").read_text() if (folder / "stderr.txt").is_file() else ""
    assert done.returncode == 0 and (folder / "exit_code").read_text() == "0", err[-3000:]
    return folder


@pytest.fixture(scope="module", params=["python_signs", "weights"])
def cylinder(request, tmp_path_factory):
    return run(tmp_path_factory.mktemp("idioms") / request.param, request.param)


def design(column: str) -> dict:
    fo = {"figure_id": "f", "curve_id": "c", "file": "xs.csv", "x_column": "wavelength_um",
          "y_column": column}  # fmt: skip
    spec = {"file": "xs.csv", "columns": ["wavelength_um", "sigma_sca", "sigma_abs"]}
    return {"stage_id": "stage1_cyl", "unit_length_um": 1.0, "figure_outputs": [fo],
            "output_specifications": [spec]}  # fmt: skip


@pytest.mark.parametrize("column", ["sigma_sca", "sigma_abs"])
def test_each_box_traces_however_signed(cylinder, column):
    (check,) = trace.trace_checks(cylinder, design(column))
    assert check.status == "pass", check.detail


@pytest.mark.parametrize("column", ["summed", "sign_wrong"])
def test_the_boxes_summed_or_a_face_misread_is_not_traced(cylinder, column):
    (check,) = trace.trace_checks(cylinder, design(column))
    assert check.status == "fail" and check.detail.startswith(trace.NOT_TRACEABLE)


def test_numpy_header_and_bounds_agree_with_the_trace(cylinder):
    cols = checks.read_output_csv(cylinder, "xs.csv")
    assert set(cols) == {"wavelength_um", "sigma_sca", "sigma_abs", "summed", "sign_wrong"}
    assert not any(np.isnan(v) for v in cols["sigma_sca"])
    found = {c.name: c for c in bounds.bound_checks(cylinder, design("sigma_sca"))}
    norm = found["bound:cross_section_normalisation:xs.csv:sigma_sca"]
    assert norm.status == "pass", norm.detail


def test_the_hosts_resimulation_agrees_however_signed(cylinder):
    """Both styles' records (an empty run's flux data subtracted, eight face monitors)
    agree with the host's own simulation of the recorded structures."""
    from reprolab.physics.record_checks import load_record
    from reprolab.physics.resimulate import resimulated_check

    check = resimulated_check(load_record(cylinder))
    assert check.status == "pass" and check.detail.startswith("9 flux spectra"), check.detail
