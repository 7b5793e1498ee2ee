"""Checks of the run-time record and the physics-following energy balance (no Meep:
records and spectra written by hand; the planted corpus runs the real thing)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reprolab.physics import checks, record_checks
from reprolab.physics.check import Check
from reprolab.physics.record_store import RECORD_FILE as RECORD
from reprolab.physics.record_store import record_path


def spectrum(tmp_path: Path, T, R) -> tuple[Path, dict]:
    return tmp_path / "s.csv", {"T": T, "R": R}


@pytest.mark.parametrize(
    ("conservation", "name", "status"),
    [
        ("closed", "energy_conservation:s.csv", "fail"),
        (None, "energy_conservation:s.csv", "fail"),  # undeclared: lossless means closed
        ("open_radiating", "radiation_loss:s.csv", "pass"),
        ("absorbing", "absorption_nonnegative:s.csv", "pass"),
    ],
)
def test_energy_balance_demanded_only_where_it_holds(tmp_path, conservation, name, status):
    """A bend radiating 30 %: a failure only for a design that declared itself closed."""
    path, cols = spectrum(tmp_path, [0.5, 0.6], [0.2, 0.1])
    found = {c.name: c.status for c in checks.spectrum_checks(path, cols, True, conservation)}
    assert found[name] == status
    if conservation == "open_radiating":
        assert not any(k.startswith("energy_conservation") for k in found)


def test_open_structure_that_gains_energy_fails(tmp_path):
    path, cols = spectrum(tmp_path, [0.9], [0.3])
    found = {c.name: c.status for c in checks.spectrum_checks(path, cols, True, "open_radiating")}
    assert found["radiation_loss:s.csv"] == "fail"


@pytest.mark.parametrize(
    ("sca", "ab", "ext", "failed"),
    [
        ([1.0, 2.0], [0.5, 0.4], [1.5, 2.4], set()),
        ([2.0, 4.0], [0.5, 0.4], [1.5, 2.4], {"extinction_sum"}),  # sca normalised twice
        ([1.0, 2.0], [-0.5, -0.4], [0.5, 1.6], {"cross_section_nonnegative"}),
    ],
)
def test_cross_sections(tmp_path, sca, ab, ext, failed):
    cols = {"wl": [1, 2], "sigma_sca": sca, "sigma_abs": ab, "sigma_ext": ext}
    found = checks.cross_section_checks(tmp_path / "x.csv", cols)
    assert {c.name.split(":")[0] for c in found if c.status == "fail"} == failed
    assert len(found) == 2


def test_static_fail_becomes_a_warning_when_the_record_decides():
    static = [Check("lint:plane_wave_is_integrated", "fail", "named constant")]
    judged = [Check("built:plane_wave_is_integrated", "pass", "is_integrated=True as built")]
    (c,) = record_checks.defer_static(static, judged)
    assert c.status == "warn" and "built:plane_wave_is_integrated" in c.detail
    # without the record's check, the static finding still fails
    assert record_checks.defer_static(static, [])[0].status == "fail"


def _sim(thickness: float) -> dict:
    block = {"kind": "Block", "size": [None, None, thickness], "material": {}}
    return {
        "index": 0,
        "runs": [],
        "monitors": [{"kind": "flux", "freqs": [1]}],
        "geometry": [block],
        "sources": [],
        "default_material": {},
    }


def test_declared_dimension_against_the_built_geometry():
    declared = [{"name": "spacer", "value": 0.18}]
    ok = record_checks.declared_geometry_check([_sim(0.18)], declared)
    bad = record_checks.declared_geometry_check([_sim(0.20)], declared)
    assert ok.status == "pass"
    assert bad.status == "fail" and "spacer = 0.18" in bad.detail and "0.2" in bad.detail


def test_record_of_every_sweep_point_is_read(tmp_path):
    """Each point's record lies beside the run folder (where the launcher writes it); a
    file of the same name a script left in its point folder is not read."""
    run = tmp_path / "run"
    for i in range(2):
        point = run / "points" / f"p{i:03d}"
        point.mkdir(parents=True)
        assert record_path(point) == tmp_path / "run.record" / "points" / f"p{i:03d}" / RECORD
        record_path(point).parent.mkdir(parents=True)
        record_path(point).write_text(
            json.dumps({"version": 1, "simulations": [_sim(0.1 * (i + 1))]})
        )
        (point / RECORD).write_text(json.dumps({"version": 1, "simulations": [_sim(9)] * 3}))
    assert len(record_checks.load_record(run)) == 2


def _pml_sim(thickness: float, wavelengths: float, pixels: float, cell: float) -> dict:
    layer = {"kind": "PML", "axis": "x", "side": "high", "thickness": thickness}
    layer |= {"wavelengths": wavelengths, "pixels": pixels}
    return {"index": 0, "runs": [], "cell": [cell, cell, 0.0], "boundary_layers": [layer]}


@pytest.mark.parametrize(
    ("wavelengths", "pixels", "status"),
    [(0.0005, 10.0, "pass"), (0.0005, 3.0, "fail"), (0.05, 10.0, "fail")],
)
def test_a_quasi_static_source_has_no_wavelength_to_absorb(wavelengths, pixels, status):
    """Meep's Cherenkov example: a charge moving through a 60 a cell, driven by a
    ContinuousSource at 1e-10 c/a (the record's band gives 0.0005 wavelengths for its 1 a
    PML): its radiation takes its spectrum from the motion, so only pixels are judged. A
    wavelength that fits in the cell (a 1 a PML at 0.05 λ: λ = 20 a) is judged."""
    got = record_checks.pml_check([_pml_sim(1.0, wavelengths, pixels, 60.0)])
    assert got.status == status, got
