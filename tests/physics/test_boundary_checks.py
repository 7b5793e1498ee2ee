"""The design's coordinates, boundaries, k points and m against the run-time record;
column meanings instead of column names; Harminv modes matched per k point and m
with Q compared only where measurable. Records written by hand (no Meep; the real runs
are in test_mode_runs.py)."""

from __future__ import annotations

import numpy as np
import pytest

from reprolab.physics import boundary_checks as bc
from reprolab.physics import checks, compare, meanings, record_checks
from reprolab.physics import convergence as conv

SQUARE_K = [[0.0, 0.0, 0.0], [0.5, 0.0, 0.0], [0.5, 0.5, 0.0]]
EMPTY = {"sources": [], "monitors": [], "geometry": [], "default_material": {}}
LOSSLESS = {"freq": 0.275, "Q": -2.5e8, "decay": 5e-10, "amp": 0.3, "error": 4e-10}


def _run(k=None, m=None, modes=()) -> dict:
    return {"k_point": k, "m": m, "sim_time": 116.7, "harminv": [{"modes": list(modes)}]}


def bloch_sim(ks=SQUARE_K, layers=()) -> dict:
    """A 2D Cartesian cell with a k_point: Bloch on x and y unless a layer is there."""
    kinds = {
        ax: {side: "pml" if (ax, side) in layers else "bloch" for side in ("low", "high")}
        for ax in "xy"
    }
    return {
        "index": 0,
        "dimensions": 2,
        "cylindrical": False,
        "coordinates": "cartesian",
        "k_point": ks[-1],
        "boundaries": kinds,
        "runs": [_run(k=k, modes=[LOSSLESS]) for k in ks],
        **EMPTY,
    }


def ring_sim(m=3, cylindrical=True) -> dict:
    sides = {"low": "axis", "high": "pml"} if cylindrical else {"low": "pml", "high": "pml"}
    return {
        "index": 0,
        "dimensions": -2 if cylindrical else 2,
        "cylindrical": cylindrical,
        "coordinates": "cylindrical" if cylindrical else "cartesian",
        "m": m,
        "k_point": None,
        "boundaries": {"r" if cylindrical else "x": sides},
        "runs": [_run(m=m)],
        **EMPTY,
    }


BLOCH = {
    "boundaries": [{"axis": "x", "kind": "bloch"}, {"axis": "y", "kind": "bloch"}],
    "k_points": SQUARE_K,
}
RING = {
    "coordinates": "cylindrical",
    "m": [3],
    "pml_thickness": 2.0,
    "boundaries": [{"axis": "r", "kind": "pml"}],
}


def statuses(sims, design) -> dict[str, str]:
    return {c.name: c.status for c in bc.boundary_checks(sims, design)}


def test_correct_bloch_and_ring_records_pass():
    assert set(statuses([bloch_sim()], BLOCH).values()) == {"pass"}
    assert set(statuses([ring_sim()], RING).values()) == {"pass"}
    assert "built:pml_as_declared" in statuses([ring_sim()], RING)


def test_declared_pml_not_built():
    design = {**BLOCH, "boundaries": [{"axis": "x", "kind": "pml", "thickness": 1.0}]}
    found = {c.name: c for c in bc.boundary_checks([bloch_sim()], design)}
    assert found["built:pml_as_declared"].status == "fail"
    assert "simulation 0: x" in found["built:pml_as_declared"].detail
    # an old design (pml_thickness, no boundaries): a PML somewhere is all it can ask
    old = statuses([bloch_sim()], {"pml_thickness": 1.0})
    assert old["built:pml_as_declared"] == "fail"
    assert (
        statuses([bloch_sim(layers=[("y", "low"), ("y", "high")])], {"pml_thickness": 1.0})[
            "built:pml_as_declared"
        ]
        == "pass"
    )


def test_pml_where_the_design_has_bloch():
    sim = bloch_sim(layers=[("y", "low"), ("y", "high")])
    found = {c.name: c for c in bc.boundary_checks([sim], BLOCH)}
    assert found["built:pml_only_where_declared"].status == "fail"
    assert (
        "y (low, high) where the design has bloch" in found["built:pml_only_where_declared"].detail
    )


def test_bloch_axis_built_without_k_point():
    sim = bloch_sim()
    sim["boundaries"] = {ax: {"low": "metallic", "high": "metallic"} for ax in "xy"}
    found = {c.name: c for c in bc.boundary_checks([sim], BLOCH)}
    assert found["built:bloch_as_declared"].status == "fail"
    assert "no k_point" in found["built:bloch_as_declared"].detail
    metallic = {"boundaries": [{"axis": "x", "kind": "metallic"}]}
    assert statuses([bloch_sim()], metallic)["built:bloch_as_declared"] == "fail"


def test_cylindrical_against_cartesian():
    found = statuses([ring_sim(cylindrical=False)], RING)
    assert found["built:coordinates_as_designed"] == "fail"
    assert "built:pml_as_declared" not in found  # r and x are not the same axis
    assert statuses([ring_sim()], BLOCH)["built:coordinates_as_designed"] == "fail"


def test_k_points_not_run():
    sim = bloch_sim(ks=SQUARE_K[:2])
    found = {c.name: c for c in bc.boundary_checks([sim], BLOCH)}
    assert found["built:k_points_run"].status == "fail"
    assert (
        "1 of 3 declared k points never ran: [[0.5, 0.5, 0.0]]"
        in found["built:k_points_run"].detail
    )


def test_only_the_last_k_point_of_an_old_record_is_known():
    """A record without per-run k points (the simulation's entry overwritten by every run)
    shows one k point: the others are reported as not run."""
    sim = bloch_sim()
    for r in sim["runs"]:
        r.pop("k_point")
    assert statuses([sim], BLOCH)["built:k_points_run"] == "fail"


def test_m_not_run():
    found = {c.name: c for c in bc.boundary_checks([ring_sim(m=2)], RING)}
    assert found["built:m_run"].status == "fail" and "[3] never ran" in found["built:m_run"].detail


def test_old_record_without_boundaries_is_read_from_its_layers():
    layer = {"axis": "x", "side": "low", "kind": "PML", "thickness": 1, "pixels": 10}
    sim = {"dimensions": 2, "k_point": None, "boundary_layers": [layer]}
    assert bc.built_kinds(sim) == {
        "x": {"low": "pml", "high": "metallic"},
        "y": {"low": "metallic", "high": "metallic"},
    }


def test_boundary_checks_join_the_record_checks():
    names = {c.name for c in record_checks.record_checks([bloch_sim()], BLOCH)}
    assert {"built:k_points_run", "built:bloch_as_declared", "built:harminv_modes"} <= names
    assert not bc.boundary_checks([bloch_sim()], None)
    assert not bc.boundary_checks([bloch_sim()], {"runs_simulation": False})


def test_lossless_q_is_reported_not_judged():
    (summary,) = [
        c for c in record_checks.record_checks([bloch_sim()], BLOCH) if "harminv" in c.name
    ]
    assert summary.status == "pass"
    assert "Q = above what this run can measure" in summary.detail
    assert "k = (0.5, 0.5, 0)" in summary.detail
    assert "-2.5e+08" not in summary.detail


# Column meanings, never column names


def test_negative_wavevector_is_no_failure(tmp_path):
    cols = {"k": [-0.5, 0.0, 0.5], "freq": [0.3, 0.0, 0.3]}
    found = checks.spectrum_checks(tmp_path / "bands.csv", cols, True, None, {"k": "wavevector"})
    assert found == []
    # the old name-keyed check is gone even without meanings
    assert checks.spectrum_checks(tmp_path / "bands.csv", cols, True) == []


def test_range_follows_the_declared_meaning(tmp_path):
    cols = {"trans": [0.5, 1.3], "refl": [0.2, 0.1]}
    path = tmp_path / "s.csv"
    mean = {"trans": "transmittance", "refl": "reflectance"}
    found = {c.name: c.status for c in checks.spectrum_checks(path, cols, True, "closed", mean)}
    assert found["bounds_trans:s.csv"] == "fail"
    assert "energy_conservation:s.csv" in found
    # a column named T that the design calls a parameter is not a transmittance
    named_t = {"T": [300.0, 400.0]}
    assert checks.spectrum_checks(path, named_t, True, None, {"T": "parameter"}) == []
    assert checks.spectrum_checks(path, named_t, True)[0].status == "fail"  # the convention


def test_cross_sections_by_meaning(tmp_path):
    cols = {"s": [1.0, 2.0], "a": [-0.5, -0.4], "e": [0.5, 1.6]}
    mean = {
        "s": "scattering_cross_section",
        "a": "absorption_cross_section",
        "e": "extinction_cross_section",
    }
    found = {c.name: c.status for c in checks.cross_section_checks(tmp_path / "x.csv", cols, mean)}
    assert found == {"cross_section_nonnegative:x.csv": "fail", "extinction_sum:x.csv": "pass"}


def test_meanings_of_a_file_and_ratio_outputs():
    design = {
        "output_specifications": [
            {"file": "a.csv", "columns": ["T", "x"], "column_meanings": {"T": "parameter"}},
            {"file": "b.csv", "columns": ["R", "sigma_ext"]},
        ]
    }
    assert meanings.of_file(design, "a.csv", ["T", "x"]) == {"T": "parameter"}
    assert meanings.of_file(design, "b.csv", ["R", "sigma_ext"]) == {
        "R": "reflectance",
        "sigma_ext": "extinction_cross_section",
    }
    assert meanings.ratio_outputs(design)
    design["output_specifications"].pop()
    assert not meanings.ratio_outputs(design)


def test_band_axis_is_not_held_to_the_source_band():
    design = {
        "source_fcen": 0.35,
        "source_fwidth": 0.3,
        "unit_length_um": 1.0,
        "figure_outputs": [{"file": "b.csv", "x_column": "freq_k", "y_column": "f"}],
        "output_specifications": [
            {"file": "b.csv", "columns": ["freq_k", "f"], "column_meanings": {"freq_k": "k_path"}}
        ],
    }
    cols = {"freq_k": [0.0, 3.0], "f": [0.3, 0.4]}
    assert checks.output_checks("b.csv", cols, design, []) == []
    design["output_specifications"][0]["column_meanings"] = {"freq_k": "frequency"}
    (band,) = checks.output_checks("b.csv", cols, design, [])
    assert band.status == "fail"


# Convergence: modes per k point and m, Q where measurable


def _record(freqs_by_k: dict, q=None, window=116.7) -> list[dict]:
    runs = []
    for k, freqs in freqs_by_k.items():
        modes = [
            {**LOSSLESS, "freq": f}
            if q is None
            else {**LOSSLESS, "freq": f, "Q": q, "decay": f / (2 * q)}
            for f in freqs
        ]
        runs.append({"k_point": list(k), "sim_time": window, "harminv": [{"modes": modes}]})
    return [{"index": 0, "runs": runs}]


def test_lossless_modes_converge_on_frequency_alone():
    run = _record({(0.5, 0, 0): [0.275, 0.4376], (0.5, 0.5, 0): [0.3236]})
    rerun = _record({(0.5, 0, 0): [0.2751, 0.4377], (0.5, 0.5, 0): [0.3237]})
    rerun[0]["runs"][0]["harminv"][0]["modes"][0]["Q"] = 4e9  # noise: never compared
    qs = conv.mode_quantities(conv.record_modes(run), conv.record_modes(rerun), conv.RESOLUTION)
    assert conv.verdict(qs) == "converged"
    assert all(q["name"].endswith("frequency") for q in qs) and len(qs) == 3
    assert all("Q not compared" in q["note"] for q in qs)


def test_modes_match_only_within_their_k_point():
    """The rerun lost M's mode; X's 0.3237 must not stand in for it."""
    run = _record({(0.5, 0, 0): [0.31], (0.5, 0.5, 0): [0.3236]})
    rerun = _record({(0.5, 0, 0): [0.3237], (0.5, 0.5, 0): []})
    qs = conv.mode_quantities(conv.record_modes(run), conv.record_modes(rerun), conv.RESOLUTION)
    at_m = [q for q in qs if "k = (0.5, 0.5, 0)" in q["name"]]
    assert len(at_m) == 1 and at_m[0]["status"] == "warn"
    assert "no mode of the rerun near it at k = (0.5, 0.5, 0)" in at_m[0]["note"]
    at_x = [q for q in qs if "k = (0.5, 0, 0)" in q["name"]]
    assert at_x[0]["status"] == "fail"  # 0.31 -> 0.3237: a real 4 % move at X


def test_measurable_q_is_still_compared():
    run = _record({(0, 0, 0): [0.12]}, q=85.0, window=300)
    rerun = _record({(0, 0, 0): [0.12]}, q=120.0, window=300)
    qs = conv.mode_quantities(conv.record_modes(run), conv.record_modes(rerun), conv.RESOLUTION)
    (q,) = [x for x in qs if x["name"].endswith(" Q")]
    assert q["status"] == "fail" and q["value_n"] == 85.0


def test_feature_at_x_zero_neither_crashes_nor_fails():
    x = np.linspace(0.0, 3.0, 61)
    y = np.cos(np.pi * x / 3) ** 2 + 0.2  # a peak at x = 0 (a band top at Γ)
    qs = conv.curve_quantities("f/b", (x, y), (x, y.copy()))
    assert all(q["status"] == "pass" for q in qs)
    feats = compare.match_features(
        [{"kind": "peak", "x": 0.0, "y": 1.0, "width": None}],
        [{"kind": "peak", "x": 0.03, "y": 1.0, "width": None}],
        1.0,
        3.0,
    )
    assert feats[0]["shift_rel"] == pytest.approx(0.01)


def test_a_bloch_cell_is_not_rerun_with_twice_its_pml():
    from reprolab.steps import convergence as step

    ok = {"checks": [{"name": "built:resolution_ppw", "status": "pass", "value": 40.0}]}
    bloch = [{**bloch_sim(), "boundary_layers": []}]
    names, why = step.variants_needed("auto", ok, bloch)
    assert names == [conv.RESOLUTION] and "without PML" in why
    layer = {"axis": "r", "side": "high", "kind": "PML", "thickness": 2.0}
    ring = [{**ring_sim(), "boundary_layers": [layer]}]
    ring[0]["runs"][0]["harminv"] = [{"modes": [{"freq": 0.118, "Q": 86.0}]}]
    assert step.variants_needed("auto", ok, ring)[0] == [conv.RESOLUTION, conv.PML]


def test_lint_reads_reflection_from_the_meanings():
    from reprolab.physics import lint
    from tests.support.planted.scripts import slab_script

    code, design = slab_script(subtract_incident=False)
    (spec,) = [o for o in design["output_specifications"] if "R" in o["columns"]]
    named = {f.name: f.status for f in lint.code_findings(code, design)}
    assert named["lint:incident_field_subtracted"] == "fail"  # R by the convention
    spec["column_meanings"] = {"R": "parameter"}
    assert "lint:incident_field_subtracted" not in {
        f.name for f in lint.code_findings(code, design)
    }
    spec["column_meanings"] = {"R": "reflectance"}
    found = {f.name: f.status for f in lint.code_findings(code, design)}
    assert found["lint:incident_field_subtracted"] == "fail"
