"""The gallery's dye-filled silver microcavity (dye_microcavity_2026: the transmittance of
Ag 30 nm / dye 145 nm / Ag 30 nm against photon energy, its truth the transfer-matrix
method with the same Rakic silver and the paper's Lorentz dye) through the real pipeline
offline: real Snakemake, real Meep in 1D, the replay recordings, the material gate
binding meep.materials.Ag and the dye's oscillator.

The correct run is SUCCESS, with the Rabi splitting compared as a key value in meV (the
two maxima read off the run's wavelength column in photon energy). Wrong on purpose, each
the finished stage's script changed and run again with the run-time recorder (real Meep,
1D, a few seconds each), each caught with its cause named:

- silver with an eighth of its Drude damping: `built:materials_as_approved` names the
  silver film and the wavelength;
- the dye's oscillator strength 0.02 instead of 0.05 (read wrong from the paper, and
  approved so): every built medium is as approved, and the Rabi splitting fails, 33 %
  small (0.025 gives 26 %: PARTIAL in the splitting band);
- the silver films resolved by 4 pixels (133 px/µm): the static lint names the pixels
  across the film and the 2x rerun moves the spectrum (`convergence`), the comparison
  fails.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from reprolab.fileio import read_json
from reprolab.paper import Paper
from reprolab.physics import convergence as conv
from reprolab.physics import lint, material_library
from reprolab.physics.material_checks import materials_as_approved_check
from reprolab.physics.record_checks import load_record
from reprolab.steps.compare import compare_stage
from tests.support.pipeline import snakemake, write_config

REPO = Path(__file__).parents[2]
PAPER = "dye_microcavity_2026"
EXAMPLE = REPO / "examples" / "papers" / PAPER
STAGE = "stage1_cavity"
FILE = "cavity_spectrum.csv"
AG = "from meep.materials import Ag"
# meep.materials.Ag with its Drude term's damping scaled (the record carries each term)
AG_LOSS = """from meep.materials import Ag as _AG
Ag = mp.Medium(epsilon=_AG.epsilon_diag.x, valid_freq_range=_AG.valid_freq_range,
               E_susceptibilities=[
                   type(s)(frequency=s.frequency, sigma=s.sigma_diag.x,
                           gamma=s.gamma * ({loss} if i == 0 else 1))
                   for i, s in enumerate(_AG.E_susceptibilities)])"""

pytestmark = pytest.mark.pipeline


def _truth():
    spec = importlib.util.spec_from_file_location("cavity_data", EXAMPLE / "make_paper_data.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def cavity_run(tmp_path_factory) -> Path:
    wd = tmp_path_factory.mktemp("cavity")
    write_config(wd, [EXAMPLE])
    run = snakemake(wd)
    report = wd / "outputs" / PAPER / f"REPRODUCTION_REPORT_{PAPER}.md"
    assert run.returncode == 0 and report.is_file(), run.stderr[-3000:]
    return wd


def stage_dir(wd: Path) -> Path:
    return wd / "outputs" / PAPER / "stages" / STAGE


def _rabi(comparison: dict) -> dict:
    (fig,) = comparison["figures"]
    (curve,) = fig["curves"]
    (kv,) = curve["key_values"]
    assert kv["quantity"] == "Rabi splitting" and kv["unit"] == "meV", kv
    return kv


def _run_variant(folder: Path, code: str, env: dict | None = None) -> Path:
    """The script run as the sandbox runs it (the run-time recorder installed)."""
    folder.mkdir(parents=True)
    (folder / "sim.py").write_text(code)
    if env:
        (folder / "env.json").write_text(json.dumps(env))
    subprocess.run(
        [sys.executable, "-m", "tests.support.planted.driver", str(folder)],
        cwd=REPO,
        check=True,
        timeout=300,
    )
    assert (folder / "exit_code").read_text().strip() == "0", (folder / "stderr.txt").read_text()
    return folder


def _compared(cavity_run: Path, tmp: Path, csv: Path) -> dict:
    """The finished stage copied with `csv` as its spectrum, compared with the paper."""
    stage = tmp / STAGE
    shutil.copytree(stage_dir(cavity_run), stage, symlinks=True)
    shutil.copy(csv, stage / "run" / FILE)
    compare_stage(
        SimpleNamespace(paper=Paper(EXAMPLE)),
        stage / "design.json",
        stage / "checks.json",
        stage / "c.json",
    )
    return read_json(stage / "c.json")


def _approved(cavity_run: Path) -> list[dict]:
    return read_json(cavity_run / "outputs" / PAPER / "validated_materials.json")["materials"]


def test_the_rabi_splitting_is_reproduced(cavity_run):
    stage = stage_dir(cavity_run)
    assert read_json(stage / "verdict.json")["status"] == "completed_success"
    comparison = read_json(stage / "comparison.json")
    assert comparison["figures"][0]["classification"] == "SUCCESS"
    rabi = _rabi(comparison)
    print(f"Rabi splitting {rabi['sim']:.2f} meV against {rabi['value']} meV")
    assert rabi["class"] == "SUCCESS" and rabi["rel_error"] < 0.005, rabi
    # against the transfer-matrix truth at the run's own energies
    truth = _truth()
    wl, t = np.loadtxt(stage / "run" / FILE, delimiter=",", skiprows=1).T
    exact = truth.cavity_T(truth.HC_EV_UM / wl)
    error = np.max(np.abs(t - exact)) / exact.max()
    print(f"Meep vs transfer matrix: max error {error:.4f} of the maximum")
    assert error < 0.02
    checks = {c["name"]: c for c in read_json(stage / "checks.json")["checks"]}
    assert not [c for c in checks.values() if c["status"] == "fail"], checks
    assert checks["built:materials_as_approved"]["status"] == "pass"
    report = (cavity_run / "outputs" / PAPER / f"REPRODUCTION_REPORT_{PAPER}.md").read_text()
    assert "| Overall classification | **SUCCESS** |" in report
    assert "Rabi splitting" in report


def test_silver_with_too_little_loss_is_not_the_approved_medium(cavity_run, tmp_path):
    code = (stage_dir(cavity_run) / "simulation.py").read_text()
    assert AG in code
    run = _run_variant(tmp_path / "loss", code.replace(AG, AG_LOSS.format(loss=1 / 8)))
    check = materials_as_approved_check(load_record(run), _approved(cavity_run), 1.0)
    print(check.detail)
    assert check.status == "fail" and "nearest 'ag'" in check.detail, check
    assert "Block" in check.detail and "µm" in check.detail


def test_a_weak_dye_fails_the_rabi_splitting(cavity_run, tmp_path):
    """The dye's f read as 0.02 instead of 0.05 and approved so: the built media are as
    approved, and the splitting (about √2.5 smaller) fails the key value."""
    code = (stage_dir(cavity_run) / "simulation.py").read_text()
    weak = code.replace(
        "DYE_STRENGTH = 2.1, 2.10, 0.10, 0.05", "DYE_STRENGTH = 2.1, 2.10, 0.10, 0.02"
    )
    assert weak != code
    run = _run_variant(tmp_path / "weak", weak)
    approved = []
    for m in _approved(cavity_run):
        if m["material_id"] == "dye":
            m = {**m, "oscillator": {**m["oscillator"], "strength": 0.02}}
            m["approved_model"] = material_library.approved_model(m)
        approved.append(m)
    check = materials_as_approved_check(load_record(run), approved, 1.0)
    assert check.status == "pass", check
    compared = _compared(cavity_run, tmp_path, run / FILE)
    assert compared["figures"][0]["classification"] != "SUCCESS"
    rabi = _rabi(compared)
    print(f"weak dye: Rabi splitting {rabi['sim']:.1f} meV against {rabi['value']} meV")
    assert rabi["class"] == "FAILURE" and rabi["sim"] < 0.7 * rabi["value"], rabi


def test_films_four_pixels_thick_are_caught(cavity_run, tmp_path):
    """133 px/µm (4 pixels across each 30 nm silver film): the lint names the pixels,
    the 2x rerun moves the spectrum beyond its limits, and the spectrum fails."""
    stage = stage_dir(cavity_run)
    code = (stage / "simulation.py").read_text()
    coarse = code.replace("* 400  # 12 px per film", "* 400 / 3  # 4 px per film")
    assert coarse != code
    design = read_json(stage / "design.json")["output"]
    findings = [f for f in lint.code_findings(coarse, {**design, "resolution": 400 / 3})]
    thin = [f for f in findings if f.name == "lint:thin_layer_pixels" and f.status != "pass"]
    assert thin and "4" in thin[0].detail, findings
    print(f"4 px films: {thin[0].detail}")
    run = _run_variant(tmp_path / "coarse", coarse)
    rerun = _run_variant(tmp_path / "coarse_2x", coarse, {"REPROLAB_RESOLUTION_SCALE": "2"})
    qs = conv.compare_folders(design["figure_outputs"], run, rerun)
    assert conv.verdict(qs) == "not_converged", qs
    failed = [q["name"] for q in conv.judged(qs) if q["status"] == "fail"]
    print(f"4 px films at 2x: failed {failed}")
    assert _compared(cavity_run, tmp_path, run / FILE)["figures"][0]["classification"] != "SUCCESS"
