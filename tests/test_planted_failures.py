"""Planted-failure corpus: small real Meep runs, each with one known mistake.

Every planted failure must be caught by the check meant for it (static lint before the
run, or the run-time check after it), and the correct run of the same problem must
raise no failure. Each run takes about a second (1D slab or a small 2D cell).
"""

from __future__ import annotations

import pytest

from reprolab import checks, lint, simulate
from tests.planted.scripts import plane_wave_script, slab_script

pytest.importorskip("meep")

MATERIALS = [{"material_id": "slab", "index": 2.0}]

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
        slab_script(decay_by=1e-2),
        {"lint:decay_tolerance": "fail", "field_decay": "warn"},
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
}
CORRECT = {
    "slab": slab_script(),
    "slab_fused_quartz_in_range": slab_script(material="fused_quartz"),
    "plane_wave_is_integrated": plane_wave_script(),
}


def run_case(code: str, design: dict, tmp_path) -> dict[str, str]:
    (tmp_path / "sim.py").write_text(code)
    record = simulate.run_job(
        simulate.SimulationJob(
            script=str(tmp_path / "sim.py"), workdir=str(tmp_path), timeout_s=120
        )
    )
    static = lint.design_findings(design, MATERIALS) + lint.code_findings(code, design)
    outputs = [o["file"] for o in design["output_specifications"]]
    result = checks.run_checks(record, tmp_path, outputs, True, design=design, static=static)
    return {c["name"]: c["status"] for c in result["checks"]}


@pytest.mark.parametrize("name", sorted(CASES))
def test_planted_failure_is_caught(name, tmp_path):
    (code, design), expected = CASES[name]
    statuses = run_case(code, design, tmp_path)
    assert statuses["exit_code"] == "pass"
    for check, status in expected.items():
        assert statuses.get(check) == status, (check, statuses)


@pytest.mark.parametrize("name", sorted(CORRECT))
def test_correct_run_raises_no_failure(name, tmp_path):
    code, design = CORRECT[name]
    statuses = run_case(code, design, tmp_path)
    failed = {k: v for k, v in statuses.items() if v == "fail"}
    assert not failed
