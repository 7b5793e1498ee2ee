"""Planted-failure corpus: small real Meep runs, each with one known mistake.

Every planted failure must be caught by the check meant for it (static lint before the
run, or the run-time check after it), and the correct run of the same problem must
raise no failure. Each run takes about a second (1D slab or a small 2D cell).

"stopped too early" is an 8-pair quarter-wave stack stopped at decay_by = 1e-2: it rings
long enough that T comes out ~0.08 off (a single slab decays so fast that the same
criterion leaves T within 1e-6, and no run-time check should fail that).
"""

from __future__ import annotations

import numpy as np
import pytest

from reprolab.jobs import launch
from reprolab.physics import checks, lint
from tests.planted.scripts import plane_wave_script, slab_script

pytest.importorskip("meep")

MATERIALS = [{"material_id": "slab", "index": 2.0}]


def ag_film(offset_px: float) -> tuple[str, dict]:
    """40 nm of meep.materials.Ag (8 pixels at 200 px/µm; Ag is stable from 50)."""
    return slab_script(
        material="Ag", thickness_um=0.04, resolution=200, band_um=(0.45, 0.8), offset_px=offset_px
    )


# name: (script, {check name: status it must have}); "lint:" names are static findings.
CASES = {
    "missing_normalisation": (
        slab_script(normalise=False),
        {"lint:normalisation_run": "fail", "energy_conservation:spectrum.csv": "fail"},
    ),
    "reflection_without_subtraction": (
        slab_script(subtract_incident=False),
        {"lint:incident_field_subtracted": "fail", "bounds_R:spectrum.csv": "fail"},
    ),
    "stopped_too_early": (
        slab_script(decay_by=1e-2, bragg_pairs=8),
        {
            "lint:decay_tolerance": "fail",
            "field_decay": "fail",
            "energy_conservation:spectrum.csv": "fail",
        },
    ),
    "pml_two_pixels": (
        slab_script(pml_um=0.02),
        {"pml_thickness": "fail", "lint:pml_pixels": "fail"},
    ),
    "resolution_under_8_ppw": (slab_script(resolution=12), {"resolution_ppw": "fail"}),
    "material_outside_valid_range": (
        slab_script(material="fused_quartz", band_um=(0.15, 0.3), resolution=300),
        {"materials_valid_range": "fail"},
    ),
    "plane_wave_without_is_integrated": (
        plane_wave_script(integrated=False),
        {"lint:plane_wave_is_integrated": "fail", "plane_wave_uniformity:incident.csv": "fail"},
    ),
    "metal_film_faces_on_grid": (ag_film(offset_px=0.0), {"lint:film_faces_off_grid": "fail"}),
}
CORRECT = {
    "slab": slab_script(),
    "slab_fused_quartz_in_range": slab_script(material="fused_quartz"),
    "bragg_stack_decayed": slab_script(bragg_pairs=8),
    "plane_wave_is_integrated": plane_wave_script(),
    "metal_film_off_grid": ag_film(offset_px=0.25),
}
LOSSY = {"metal_film_faces_on_grid", "metal_film_off_grid"}


def run_case(code: str, design: dict, tmp_path, lossless: bool = True) -> dict[str, str]:
    (tmp_path / "sim.py").write_text(code)
    record = launch.run_job(
        launch.SimulationJob(script=str(tmp_path / "sim.py"), workdir=str(tmp_path), timeout_s=120)
    )
    static = lint.design_findings(design, MATERIALS) + lint.code_findings(code, design)
    outputs = [o["file"] for o in design["output_specifications"]]
    result = checks.run_checks(record, tmp_path, outputs, lossless, design=design, static=static)
    return {c["name"]: c["status"] for c in result["checks"]}


@pytest.mark.parametrize("name", sorted(CASES))
def test_planted_failure_is_caught(name, tmp_path):
    (code, design), expected = CASES[name]
    statuses = run_case(code, design, tmp_path, lossless=name not in LOSSY)
    assert statuses["exit_code"] == "pass"
    for check, status in expected.items():
        assert statuses.get(check) == status, (check, statuses)


@pytest.mark.parametrize("name", sorted(CORRECT))
def test_correct_run_raises_no_failure(name, tmp_path):
    code, design = CORRECT[name]
    statuses = run_case(code, design, tmp_path, lossless=name not in LOSSY)
    failed = {k: v for k, v in statuses.items() if v == "fail"}
    assert not failed


def transfer_matrix_T(eps: np.ndarray, freqs: np.ndarray, thickness: float) -> np.ndarray:
    """|t|^2 of one film in air at normal incidence (Airy formula)."""
    n = np.sqrt(eps.astype(complex))
    r01, t01, t12 = (1 - n) / (1 + n), 2 / (1 + n), 2 * n / (n + 1)
    phase = np.exp(2j * np.pi * freqs * n * thickness)
    return np.abs(t01 * t12 * phase / (1 - r01**2 * phase**2)) ** 2


def test_film_grid_check_matches_the_physics(tmp_path):
    """The film lint is right: faces on grid points make T wrong, a quarter pixel off fixes it."""
    from meep.materials import Ag

    errors = {}
    for offset in (0.0, 0.25):
        work = tmp_path / str(offset)
        work.mkdir()
        run_case(*ag_film(offset_px=offset), work, lossless=False)
        cols = checks.read_numeric_csv(work / "spectrum.csv")
        freqs = 1 / np.array(cols["wavelength_um"])
        eps = np.array([Ag.epsilon(f)[0, 0] for f in freqs])
        errors[offset] = np.max(np.abs(np.array(cols["T"]) - transfer_matrix_T(eps, freqs, 0.04)))
    # measured 0.037 and 0.001 (T itself is about 0.07)
    assert errors[0.0] > 0.02 and errors[0.25] < 0.005, errors
