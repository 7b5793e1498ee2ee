"""Real Meep emitter runs recorded and judged: a 2D Ez dipole beside a dielectric block (n = 1.5)
with its LDOS (`dft_ldos`) and a closed near-to-far box, and the same dipole in a
homogeneous medium as its Purcell reference. The record holds the LDOS band, so the
source-band, resolution and field-decay checks judge it; the Purcell normalisation,
the near surface and the far-field radius are checked against the design, and each
made wrong on purpose fails by name."""

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from reprolab.physics import emitters, record_checks

REPO = Path(__file__).resolve().parents[2]
SCRIPT = textwrap.dedent(
    """
    import os
    import meep as mp

    ref_eps = float(os.environ.get("REF_EPS", "1"))
    src_x = float(os.environ.get("SRC_X", "0"))
    for eps, block in ((1.0, True), (ref_eps, False)):
        geometry = [mp.Block(mp.Vector3(0.5, 4), center=mp.Vector3(0.6),
                             material=mp.Medium(epsilon=2.25))] if block else []
        src = mp.GaussianSource(0.5, fwidth=0.2)
        sim = mp.Simulation(cell_size=mp.Vector3(6, 6), resolution=16, geometry=geometry,
                            boundary_layers=[mp.PML(1.0)], default_material=mp.Medium(epsilon=eps),
                            sources=[mp.Source(src, mp.Ez, mp.Vector3(src_x))])
        box = [mp.Near2FarRegion(mp.Vector3(0, y), size=mp.Vector3(2.6), weight=w)
               for y, w in ((1.3, 1), (-1.3, -1))]
        box += [mp.Near2FarRegion(mp.Vector3(x, 0), size=mp.Vector3(0, 2.6), weight=w)
                for x, w in ((1.3, 1), (-1.3, -1))]
        sim.add_near2far(0.5, 0, 1, *box)
        sim.run(mp.dft_ldos(0.5, 0.1, 11),
                until_after_sources=mp.stop_when_fields_decayed(20, mp.Ez, mp.Vector3(), 1e-6))
    """
)
VARIANTS = {"ok": {}, "wrong_reference": {"REF_EPS": "2.25"}, "source_outside": {"SRC_X": "1.8"}}
LDOS = {"fmin": 0.45, "fmax": 0.55, "normalisation": "homogeneous_run", "reference_index": 1.0}
N2F = {"surface": [], "far_field_radius": 200.0}


@pytest.fixture(scope="module")
def records(tmp_path_factory):
    base = tmp_path_factory.mktemp("emitters")
    for name, env in VARIANTS.items():
        (base / name).mkdir()
        (base / name / "sim.py").write_text(SCRIPT)
        (base / name / "env.json").write_text(json.dumps(env))
    dirs = [str(base / name) for name in VARIANTS]
    subprocess.run(
        [sys.executable, "-m", "tests.support.planted.driver", *dirs],
        check=True,
        timeout=300,
        cwd=REPO,
    )
    for name in VARIANTS:
        code = (base / name / "exit_code").read_text()
        assert code == "0", (base / name / "stderr.txt").read_text()[-3000:]
    return {name: record_checks.load_record(base / name) for name in VARIANTS}


def _checks(sims, **design) -> dict:
    return {c.name: c for c in record_checks.record_checks(sims, design)}


def test_ldos_is_recorded_and_judged_like_a_spectrum(records):
    sims = records["ok"]
    assert len(sims) == 2
    assert [round(f, 3) for f in sims[0]["ldos"]["freqs"]][::5] == [0.45, 0.5, 0.55]
    found = _checks(sims)
    for name in ("built:resolution_ppw", "built:source_bandwidth", "built:field_decay"):
        assert found[name].status == "pass", found[name]
    assert "0.55" in found["built:source_bandwidth"].detail  # the LDOS band is monitored


def test_correct_emitter_runs_raise_no_emitter_failure(records):
    found = _checks(records["ok"], ldos=LDOS, near_to_far=N2F)
    for name in (
        "built:purcell_normalisation",
        "built:near_surface_encloses_sources",
        "built:far_field_is_far",
    ):
        assert found[name].status == "pass", found[name]
    assert not [c for c in found.values() if c.status == "fail"]


def test_purcell_by_the_wrong_reference_fails(records):
    found = _checks(records["wrong_reference"], ldos=LDOS)
    check = found["built:purcell_normalisation"]
    assert check.status == "fail" and "n = 1.5, not 1" in check.detail
    bulk = _checks(
        records["ok"], ldos=LDOS | {"normalisation": "analytic_bulk", "reference_index": 1.5}
    )
    assert bulk["built:purcell_normalisation"].status == "fail"
    assert "background differs" in bulk["built:purcell_normalisation"].detail


def test_far_field_at_two_wavelengths_fails(records):
    check = _checks(records["ok"], near_to_far=N2F | {"far_field_radius": 4.0})[
        "built:far_field_is_far"
    ]
    assert check.status == "fail" and "2 wavelengths" in check.detail


def test_source_outside_the_near_surface_fails(records):
    check = _checks(records["source_outside"], near_to_far=N2F)[
        "built:near_surface_encloses_sources"
    ]
    assert check.status == "fail" and "outside" in check.detail


def test_design_without_a_near_surface_in_the_run_fails():
    sim = {"index": 0, "sources": [], "monitors": [], "default_material": {"n_max": 1.0}}
    check = emitters.far_field_check([sim], N2F)
    assert check.status == "fail" and "added none" in check.detail


def test_auto_convergence_reruns_an_ldos_stage(records):
    from reprolab.physics import convergence
    from reprolab.steps.convergence import variants_needed

    variants, why = variants_needed("auto", {"checks": []}, records["ok"])
    assert variants == [convergence.RESOLUTION] and "LDOS stage" in why
    assert variants_needed("off", {"checks": []}, records["ok"])[0] == []
    flux_only = [{k: v for k, v in s.items() if k != "ldos"} for s in records["ok"]]
    assert variants_needed("auto", {"checks": []}, flux_only)[0] == []


def test_an_emitter_a_pixel_from_an_interface_fails(records):
    import copy

    found = _checks(records["ok"])["built:emitter_resolution"]
    assert found.status == "pass" and found.value == pytest.approx(0.35 * 16, rel=1e-6)
    close = copy.deepcopy(records["ok"])
    close[0]["sources"][0]["center"] = [0.3, 0.0, 0.0]  # 0.05 a from the block's face
    found = _checks(close)["built:emitter_resolution"]
    assert found.status == "fail" and "0.8 pixels" in found.detail
