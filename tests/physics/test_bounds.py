"""Physics bounds from the record's own estimate (reprolab.physics.bounds), on records
written by hand: a cross section or efficiency with the constant the record derives
passes, the same output off by a whole factor fails naming it, and the closed box of a
lossless scatterer holds its balance."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from reprolab.physics import bounds, checks
from reprolab.physics.record_store import record_path

FREQS = np.linspace(0.25, 0.55, 20)
INC = 0.8 + 0.5 * np.sin(4 * FREQS)  # flux through the empty run's plane monitor
SIDE = 2.0  # that monitor's length
SCA = 0.3 * INC * (FREQS / 0.4) ** 2  # scattered power
FACES = [  # a 2D box of side 2 around the origin
    {"center": [s, 0.0, 0.0], "size": [0.0, 2.0, 0.0]} for s in (-1.0, 1.0)
] + [{"center": [0.0, s, 0.0], "size": [2.0, 0.0, 0.0]} for s in (-1.0, 1.0)]
PLANE_SOURCE = {
    "kind": "Source",
    "center": [-2.5, 0, 0],
    "size": [0.0, 7.0, 0.0],
    "time": "GaussianSource",
    "fcen": 0.4,
    "fwidth": 0.3,
    "is_integrated": True,
    "component": 4,
    "reaches_pml": True,
}
PML = [
    {"axis": a, "side": side, "kind": "PML", "thickness": 1.0, "pixels": 16.0, "wavelengths": 0.4}
    for a in "xy"
    for side in ("low", "high")
]
LOSSLESS = {"kind": "Medium", "lossy": False, "n_max": 1.5}


def flux(monitor: int, values, t: float = 60.0) -> dict:
    values = [float(v) for v in values]
    return {
        "kind": "flux",
        "monitor": monitor,
        "sim_time": t,
        "freqs": list(FREQS),
        "values": values,
    }


def cylinder(r: float = 0.4, material=LOSSLESS, center=(0.0, 0.0, 0.0)) -> dict:
    return {"kind": "Cylinder", "radius": r, "center": list(center), "material": material}


def sim(index, geometry, monitors, measured, dims=2, cell=(7.0, 7.0, 0.0)) -> dict:
    return {
        "_id": index + 1,
        "index": index,
        "dimensions": dims,
        "cylindrical": False,
        "cell": list(cell),
        "sources": [PLANE_SOURCE],
        "geometry": geometry,
        "default_material": LOSSLESS,
        "monitors": [{"kind": "flux", "regions": r, "freqs": list(FREQS)} for r in monitors],
        "measured": measured,
        "runs": [{"harminv": [], "stop": {}, "energy_decay": 1e-9, "sim_time": 60.0}],
        "resolution": 16.0,
        "band": [0.25, 0.55],
        "axes": ["x", "y"][:dims],
        "boundary_layers": PML,
        "boundaries": {a: {"low": "pml", "high": "pml"} for a in "xy"},
        "symmetries": [],
        "k_point": None,
        "bloch_axes": [],
        "metallic_axes": [],
    }


def empty_run(side: float = SIDE) -> dict:
    plane = {"center": [-1.0, 0.0, 0.0], "size": [0.0, side, 0.0]}
    return sim(0, [], [[plane]], [flux(0, INC * side / SIDE)])


def scattering_run(geometry=None, net=0.0, **kw) -> dict:
    """One flux object over the box for the scattered fields, one for the total."""
    return sim(
        1,
        [cylinder()] if geometry is None else geometry,
        [FACES, FACES],
        [flux(0, SCA), flux(1, net * SCA)],
        **kw,
    )


def design(columns, file="spectrum.csv", meanings=None, unit=1.0) -> dict:
    spec = {"file": file, "columns": columns}
    if meanings:
        spec["column_meanings"] = meanings
    return {"stage_id": "stage1_x", "unit_length_um": unit, "output_specifications": [spec]}


def write(workdir, simulations, columns: dict, file="spectrum.csv") -> None:
    path = record_path(workdir)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"version": 1, "simulations": simulations}))
    np.savetxt(
        workdir / file,
        np.column_stack(list(columns.values())),
        delimiter=",",
        header=",".join(columns),
        comments="",
        fmt="%.8g",
    )


@pytest.fixture
def workdir(tmp_path):
    w = tmp_path / "run"
    w.mkdir()
    return w


def by_name(workdir, d) -> dict:
    return {c.name: c for c in bounds.bound_checks(workdir, d)}


def norm(workdir, d, column: str):
    return by_name(workdir, d)[f"bound:cross_section_normalisation:spectrum.csv:{column}"]


SIGMA = SCA / (INC / SIDE)  # the correct cross section


def test_correct_cross_section_and_efficiency_pass(workdir):
    write(
        workdir,
        [empty_run(), scattering_run()],
        {"freq": FREQS, "sigma_sca": SIGMA, "Q_sca": SIGMA / 0.8},
    )
    found = by_name(workdir, design(["freq", "sigma_sca", "Q_sca"]))
    for col in ("sigma_sca", "Q_sca"):
        c = found[f"bound:cross_section_normalisation:spectrum.csv:{col}"]
        assert c.status == "pass" and c.value == pytest.approx(1.0, abs=1e-4), c.detail
    assert "2r = 0.8" in found["bound:cross_section_normalisation:spectrum.csv:Q_sca"].detail


def test_efficiency_normalised_by_radius_fails_naming_the_factor(workdir):
    write(workdir, [empty_run(), scattering_run()], {"freq": FREQS, "Q_sca": SIGMA / 0.4})
    c = norm(workdir, design(["freq", "Q_sca"]), "Q_sca")
    assert c.status == "fail" and c.value == pytest.approx(2.0, rel=1e-4)
    assert "×2.00: normalised by r, not 2r?" in c.detail


@pytest.mark.parametrize(("factor", "status"), [(1.03, "warn"), (1.06, "fail"), (0.5, "fail")])
def test_cross_section_off_by_a_few_percent_or_more(workdir, factor, status):
    write(workdir, [empty_run(), scattering_run()], {"freq": FREQS, "sigma_sca": factor * SIGMA})
    c = norm(workdir, design(["freq", "sigma_sca"]), "sigma_sca")
    assert c.status == status and c.value == pytest.approx(factor, rel=1e-4), c.detail


def test_intensity_from_the_monitor_size_of_the_record(workdir):
    """A monitor 4 long as built (twice the flux of one 2 long) that the script divides
    by 2: its cross section is half the record's; divided by 4 it is right."""
    runs = [empty_run(side=4.0), scattering_run()]
    write(workdir, runs, {"freq": FREQS, "sigma_sca": SCA / (2 * INC / 2)})
    c = norm(workdir, design(["freq", "sigma_sca"]), "sigma_sca")
    assert c.status == "fail" and c.value == pytest.approx(0.5, rel=1e-4)
    assert "/ 4" in c.detail
    write(workdir, runs, {"freq": FREQS, "sigma_sca": SCA / (2 * INC / 4)})
    c = norm(workdir, design(["freq", "sigma_sca"]), "sigma_sca")
    assert c.status == "pass", c.detail


def test_box_read_face_by_face_with_signs(workdir):
    """Four face monitors without weights: P = -left + right - bottom + top (each face
    its own spectral shape, as a scatterer's lobes have)."""
    s1, c1, s2 = np.sin(5 * FREQS), np.cos(3 * FREQS), np.sin(11 * FREQS)
    parts = SCA * np.array(
        [0.1 + 0.05 * s1, 0.4 - 0.05 * s1 + 0.03 * c1, 0.2 + 0.02 * s2, 0.3 - 0.03 * c1 - 0.02 * s2]
    )
    signs = np.array([-1, 1, -1, 1])
    faces = [[f] for f in FACES]
    run = sim(
        1,
        [cylinder()],
        faces,
        [flux(k, s * p) for k, (s, p) in enumerate(zip(signs, parts, strict=True))],
    )
    write(workdir, [empty_run(), run], {"freq": FREQS, "sigma_sca": SIGMA})
    c = norm(workdir, design(["freq", "sigma_sca"]), "sigma_sca")
    assert c.status == "pass", c.detail
    assert "-m0 +m1 -m2 +m3" in c.detail


NM_DESIGN = design(
    ["wavelength_nm", "sigma_sca_nm"],
    meanings={"wavelength_nm": "wavelength", "sigma_sca_nm": "scattering_cross_section"},
    unit=0.5,
)


def test_wavelength_rows_and_units_in_nm(workdir):
    """sigma_sca_nm of a 2D run with a = 0.5 µm: the cross section times 500 nm."""
    write(
        workdir,
        [empty_run(), scattering_run()],
        {"wavelength_nm": 500 / FREQS, "sigma_sca_nm": 500 * SIGMA},
    )
    c = norm(workdir, NM_DESIGN, "sigma_sca_nm")
    assert c.status == "pass", c.detail
    write(
        workdir,
        [empty_run(), scattering_run()],
        {"wavelength_nm": 500 / FREQS, "sigma_sca_nm": SIGMA},
    )
    c = norm(workdir, NM_DESIGN, "sigma_sca_nm")
    assert c.status == "fail"


def test_sphere_efficiency_by_r_squared_fails_with_pi(workdir):
    cell = (7.0, 7.0, 7.0)
    plane = {"center": [-1.0, 0.0, 0.0], "size": [0.0, 2.0, 2.0]}
    empty = sim(0, [], [[plane]], [flux(0, INC * 2)], dims=3, cell=cell)
    sphere = {"kind": "Sphere", "radius": 0.5, "center": [0, 0, 0], "material": LOSSLESS}
    src = {**PLANE_SOURCE, "size": [0.0, 7.0, 7.0]}
    run = {**sim(1, [sphere], [[plane]], [flux(0, SCA)], dims=3, cell=cell), "sources": [src]}
    sigma = SCA / (INC / 2)
    write(workdir, [empty, run], {"freq": FREQS, "Q_sca": sigma / (math.pi * 0.25)})
    ok = norm(workdir, design(["freq", "Q_sca"]), "Q_sca")
    assert ok.status == "pass", ok.detail
    write(workdir, [empty, run], {"freq": FREQS, "Q_sca": sigma / 0.25})
    bad = norm(workdir, design(["freq", "Q_sca"]), "Q_sca")
    assert bad.status == "fail" and "not πr²" in bad.detail


def test_block_efficiency_uses_its_width_across_the_incidence(workdir):
    block = {"kind": "Block", "center": [0, 0, 0], "size": [0.3, 0.6, 0.0], "material": LOSSLESS}
    write(workdir, [empty_run(), scattering_run([block])], {"freq": FREQS, "Q_sca": SIGMA / 0.6})
    c = norm(workdir, design(["freq", "Q_sca"]), "Q_sca")
    assert c.status == "pass", c.detail
    write(workdir, [empty_run(), scattering_run([block])], {"freq": FREQS, "Q_sca": SIGMA / 0.3})
    c = norm(workdir, design(["freq", "Q_sca"]), "Q_sca")
    assert c.status == "fail" and c.value == pytest.approx(2.0, rel=1e-4)


def test_meanings_from_the_design_name_the_columns(workdir):
    """A column the design calls a scattering cross section is judged whatever its name;
    without that meaning and without a documented name it is not."""
    write(workdir, [empty_run(), scattering_run()], {"freq": FREQS, "scat": 3 * SIGMA})
    d = design(["freq", "scat"], meanings={"freq": "frequency", "scat": "scattering_cross_section"})
    c = norm(workdir, d, "scat")
    assert c.name.endswith(":scat") and c.status == "fail"
    assert not [
        x for x in bounds.bound_checks(workdir, design(["freq", "scat"])) if "scat" in x.name
    ]


def test_what_cannot_be_derived_warns(workdir):
    """No run without geometry: no intensity; two separate objects: no G; an output no
    flux combination reproduces: no constant. Each warns, none passes."""
    write(workdir, [scattering_run()], {"freq": FREQS, "sigma_sca": SIGMA})
    c = norm(workdir, design(["freq", "sigma_sca"]), "sigma_sca")
    assert c.status == "warn" and "incident intensity" in c.detail
    two = [cylinder(center=(-0.5, 0, 0)), cylinder(center=(0.5, 0, 0))]
    write(workdir, [empty_run(), scattering_run(two)], {"freq": FREQS, "Q_sca": SIGMA})
    c = norm(workdir, design(["freq", "Q_sca"]), "Q_sca")
    assert c.status == "warn" and "geometric cross section" in c.detail
    write(
        workdir,
        [empty_run(), scattering_run()],
        {"freq": FREQS, "sigma_sca": np.cos(9 * FREQS) + 2},
    )
    c = norm(workdir, design(["freq", "sigma_sca"]), "sigma_sca")
    assert c.status == "warn" and "reproduces" in c.detail


@pytest.mark.parametrize(("net", "status"), [(1e-3, "pass"), (1e-2, "warn"), (0.05, "fail")])
def test_closed_box_balance_of_a_lossless_scatterer(workdir, net, status):
    write(workdir, [empty_run(), scattering_run(net=net)], {"freq": FREQS, "sigma_sca": SIGMA})
    c = by_name(workdir, design(["freq", "sigma_sca"]))["bound:closed_box_balance"]
    assert c.status == status and c.value == pytest.approx(net, rel=1e-6)


def test_closed_box_not_judged_when_lossy_or_open(workdir):
    lossy = cylinder(material={"kind": "Medium", "lossy": True, "n_max": 1.5})
    write(
        workdir,
        [empty_run(), scattering_run([lossy], net=0.3)],
        {"freq": FREQS, "sigma_sca": SIGMA},
    )
    assert "bound:closed_box_balance" not in by_name(workdir, design(["freq", "sigma_sca"]))
    outside = [cylinder(center=(2.0, 0, 0))]  # the box does not enclose it
    write(
        workdir,
        [empty_run(), scattering_run(outside, net=0.3)],
        {"freq": FREQS, "sigma_sca": SIGMA},
    )
    assert "bound:closed_box_balance" not in by_name(workdir, design(["freq", "sigma_sca"]))


def test_run_checks_reports_the_bound(workdir):
    """The pipeline's checks carry the bound, failed by the wrong efficiency."""
    write(workdir, [empty_run(), scattering_run()], {"freq": FREQS, "Q_sca": SIGMA / 0.4})
    record = {
        "exit_code": 0,
        "timed_out": False,
        "stdout_tail": "",
        "stderr_tail": "",
        "output_files": [{"name": "spectrum.csv", "bytes": 100}],
    }
    result = checks.run_checks(
        record, workdir, ["spectrum.csv"], True, design=design(["freq", "Q_sca"])
    )
    status = {c["name"]: c["status"] for c in result["checks"]}
    assert status["bound:cross_section_normalisation:spectrum.csv:Q_sca"] == "fail"


def test_an_incomplete_record_warns_naming_the_field(workdir):
    """A scattering run without its dimensions: the bound warns, it does not crash."""
    broken = scattering_run()
    del broken["dimensions"]
    write(workdir, [empty_run(), broken], {"freq": FREQS, "Q_sca": SIGMA / 0.4})
    c = norm(workdir, design(["freq", "Q_sca"]), "Q_sca")
    assert c.status == "warn" and "dimensions" in c.detail
