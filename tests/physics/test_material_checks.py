"""Checks that know metals, on run-time records: the built media against the approved
models (right, wrong loss, another length unit), and the pixels across a metal
nanostructure's smallest feature and gaps (a disk four pixels thick fails)."""

from __future__ import annotations

import copy

from reprolab.physics import material_checks as mc
from reprolab.physics import material_models as mm

AG = {
    "eps_inf": 1.0,
    "terms": [
        {"kind": "drude", "frequency": 1.0, "gamma": 0.0387, "sigma": 80.0},
        {"kind": "lorentzian", "frequency": 4.0, "gamma": 0.5, "sigma": 1.0},
    ],
    "unit_length_um": 1.0,
    "tolerance": {"n": 0.0, "k": 0.0},
}
APPROVED = [
    {"material_id": "ag", "approved_model": AG},
    {"material_id": "glass", "approved_model": mm.constant_index(1.45)},
]


def medium(model: dict, unit_um: float = 1.0, **extra) -> dict:
    """The record's material entry of a medium built from `model` for a = unit_um."""
    built = mm.rescaled(model, unit_um)
    return {
        "kind": "Medium",
        "model": {k: built[k] for k in ("eps_inf", "terms", "conductivity")},
        **extra,
    }


def sim(geometry, unit_um=1.0, dims=3, res=100.0, cell=(1.0, 1.0, 2.0)) -> dict:
    return {
        "index": 0,
        "dimensions": dims,
        "resolution": res,
        "cell": list(cell),
        "band": [unit_um / 0.8, unit_um / 0.45],
        "monitors": [{"kind": "flux", "freqs": [unit_um / w for w in (0.45, 0.6, 0.8)]}],
        "default_material": medium(mm.constant_index(1.0)),
        "geometry": geometry,
        "runs": [],
    }


def disk(height, radius=0.05, material=None, x=0.0):
    return {
        "kind": "Cylinder",
        "center": [x, 0.0, 0.0],
        "radius": radius,
        "height": height,
        "material": material or medium(AG, negative_eps=True, dispersive=True, n_max=0.3),
    }


def test_the_approved_media_pass_in_any_length_unit():
    for unit in (1.0, 0.1):
        glass = {"kind": "Block", "center": [0, 0, -0.5], "size": [None, None, 0.5]}
        glass["material"] = medium(mm.constant_index(1.45), unit)
        record = sim([disk(0.4, 0.5, medium(AG, unit)), glass], unit_um=unit)
        check = mc.materials_as_approved_check([record], APPROVED, unit)
        assert check.status == "pass", check.detail


def test_a_metal_with_too_little_loss_fails_naming_object_and_wavelength():
    weak = copy.deepcopy(AG)
    weak["terms"][0]["gamma"] /= 8
    check = mc.materials_as_approved_check([sim([disk(0.04, 0.05, medium(weak))])], APPROVED, 1.0)
    assert check.status == "fail"
    assert "geometry[0] Cylinder" in check.detail and "nearest 'ag'" in check.detail
    assert "µm built n =" in check.detail


def test_a_medium_nobody_approved_fails_and_within_a_fit_error_passes():
    other = mm.constant_index(1.5)
    check = mc.materials_as_approved_check([sim([disk(0.4, 0.5, medium(other))])], APPROVED, 1.0)
    assert check.status == "fail" and "nearest 'glass'" in check.detail
    fitted = [
        {
            "material_id": "glass",
            "approved_model": {**mm.constant_index(1.45), "tolerance": {"n": 0.06, "k": 0.0}},
        }
    ]
    check = mc.materials_as_approved_check([sim([disk(0.4, 0.5, medium(other))])], fitted, 1.0)
    assert check.status == "pass"
    assert mc.materials_as_approved_check([sim([])], None, 1.0) is None


def test_a_disk_four_pixels_thick_fails_and_sixteen_pass():
    thin = mc.nanostructure_pixels_check([sim([disk(0.04)], res=100.0)])
    assert thin.status == "fail" and thin.value == 4.0 and "Cylinder" in thin.detail
    assert mc.nanostructure_pixels_check([sim([disk(0.04)], res=400.0)]).status == "pass"
    assert mc.plasmonic([sim([disk(0.04)])])


def test_a_narrow_gap_between_metal_particles_fails():
    pair = [disk(0.2, 0.1, x=-0.11), disk(0.2, 0.1, x=0.11)]  # 20 nm gap
    check = mc.nanostructure_pixels_check([sim(pair, res=200.0)])
    assert check.status == "fail" and "gap" in check.detail and check.value == 4.0


def test_films_and_smoothed_dielectrics_are_not_nanostructures():
    film = {"kind": "Block", "center": [0, 0, 0], "size": [None, None, 0.004]}
    film["material"] = medium(AG, negative_eps=True, dispersive=True)
    record = sim([film], dims=1, cell=(0, 0, 2.0))
    assert mc.nanostructure_pixels_check([record]) is None and not mc.plasmonic([record])
    # a non-dispersive high-index particle is smoothed at its faces: judged per wavelength
    silicon = disk(0.04, material=medium(mm.constant_index(3.5), n_max=3.5))
    assert mc.nanostructure_pixels_check([sim([silicon])]) is None
    dispersive_si = disk(0.04, material=medium(mm.constant_index(3.5), n_max=3.5, dispersive=True))
    assert mc.nanostructure_pixels_check([sim([dispersive_si])]).status == "fail"


def test_a_metal_nanostructure_always_gets_a_resolution_rerun():
    from reprolab.steps.convergence import variants_needed

    checks = {"checks": [{"name": "built:resolution_ppw", "value": 40.0, "status": "pass"}]}
    wanted, why = variants_needed("auto", checks, [sim([disk(0.04)], res=400.0)])
    assert wanted == ["resolution_2x"] and "metal nanostructure" in why
    film = {"kind": "Block", "center": [0, 0, 0], "size": [None, None, 0.04]}
    film["material"] = medium(AG, negative_eps=True, dispersive=True)
    wanted, _ = variants_needed("auto", checks, [sim([film], dims=1, cell=(0, 0, 2.0))])
    assert wanted == []
