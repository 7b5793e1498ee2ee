"""Comparisons that do not depend on how finely either side is sampled, on results of
the kinds Meep's own examples produce: an exact Mie series sampled finer than the
paper's plotted vertices, a radiation pattern whose main lobe sits on the 0°/360° seam,
a band run whose Harminv fits see one mode twice, a paper's data lying on its own
reference curve over part of the reference's range. Each correct result is SUCCESS; the
same result made wrong is not."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from reprolab.physics import bands, compare, reference_curves

MIE_FOLDER = Path(__file__).parents[2] / "examples" / "papers" / "mie_sphere_2026"


def _mie():
    spec = importlib.util.spec_from_file_location("mie_series", MIE_FOLDER / "make_paper_data.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.mie_efficiencies


def worst(result: dict) -> str:
    classes = compare.classify_curve(result)
    return next((c for c in ("FAILURE", "PARTIAL") if c in classes.values()), "SUCCESS")


# --- features at the sampling both curves support -----------------------------------


@pytest.fixture(scope="module")
def mie_curves():
    """Q_sca of an n = 1.5 sphere: the paper's 60 plotted vertices (x = 2..14), the exact
    series on 1000 points, and the same series for n = 1.47 (the wrong material)."""
    q = _mie()
    xp = np.linspace(2, 14, 60)
    yp = np.round([q(1.5, x)[0] for x in xp], 4)
    xs = np.linspace(1.9, 14.1, 1000)
    return xp, yp, xs, [q(1.5, x)[0] for x in xs], [q(1.47, x)[0] for x in xs]


def test_an_exact_series_sampled_finer_than_the_paper_is_success(mie_curves):
    """At its own 1000 points the series' ripples stand higher and narrower than the
    paper's 60 vertices can show (widths 96 % off when measured so); seen through the
    paper's sampling they agree."""
    xp, yp, xs, right, _ = mie_curves
    result = compare.compare_curve(xp, yp, xs, right)
    assert worst(result) == "SUCCESS", result["metrics"]
    assert result["metrics"]["feature_width_rel"] < 0.15
    # the positions stay the finer curve's: a shift below one paper step is still seen
    shifted = compare.compare_curve(xp, yp, xs * 1.02, right)
    assert shifted["metrics"]["feature_shift_rel"] > 0.015 and worst(shifted) != "SUCCESS"


def test_the_wrong_sphere_still_fails(mie_curves):
    xp, yp, xs, _, wrong = mie_curves
    assert worst(compare.compare_curve(xp, yp, xs, wrong)) != "SUCCESS"


# --- a periodic axis compared on the circle -------------------------------------------

ANGLE_AXIS = {"x_quantity": "angle", "x_unit": "deg", "x_scale": "linear", "y_scale": "linear",
              "position_tolerance": None, "polar": None}  # fmt: skip


def lobes(x, off=0.0):
    """A main lobe at 0°, a smaller one at 180°, nulls of unequal depth between."""
    t = np.radians(np.asarray(x) - off)
    return np.cos(t) ** 2 * (1 + 0.5 * np.cos(t)) + 0.05 + 0.03 * np.sin(t)


@pytest.mark.parametrize("off", [0.3, -0.3])
@pytest.mark.parametrize(
    "grid",
    [np.linspace(0, 360, 101), np.linspace(-180, 180, 101), np.arange(-180, 180, 3.6)],
    ids=["0..360 both ends", "-180..180 both ends", "-180..176.4"],
)
def test_a_lobe_on_the_seam_is_matched_either_side(grid, off):
    """Paper 0…356.4° by 3.6°; the reproduction 0.3° off on either side, on a grid that
    has the seam twice or crosses it: the main lobe pairs with the main lobe."""
    xp = np.arange(0, 360, 3.6)
    result = compare.compare_curve(xp, lobes(xp), grid, lobes(grid, off), ANGLE_AXIS)
    main = max(result["features"], key=lambda f: f["y_paper"])
    assert abs(main["x_paper"]) < 1
    gap = (main["x_sim"] - main["x_paper"] + 180) % 360 - 180
    assert gap == pytest.approx(off, abs=0.05)
    assert worst(result) == "SUCCESS", result["metrics"]
    moved = compare.compare_curve(xp, lobes(xp), grid, lobes(grid, 12.0), ANGLE_AXIS)
    assert worst(moved) != "SUCCESS"


# --- bands with a mode two Harminv fits both saw --------------------------------------

PATH = [{"label": "Γ", "k": [0, 0, 0]}, {"label": "X", "k": [0.5, 0, 0]},
        {"label": "M", "k": [0.5, 0.5, 0]}, {"label": "Γ", "k": [0, 0, 0]}]  # fmt: skip


def k_at(x):
    if x <= 1:
        return [0.5 * x, 0.0, 0.0]
    if x <= 2:
        return [0.5, 0.5 * (x - 1), 0.0]
    return [0.5 * (3 - x), 0.5 * (3 - x), 0.0]


def band(n, x):
    """TM rods (ε 8.9, r 0.2a) in outline: band 1 to 0.32 at M, band 2 from 0.44 at X."""
    if n == 1:
        return 0.26 * x if x <= 1 else 0.26 + 0.06 * (x - 1) if x <= 2 else 0.32 * (3 - x)
    return 0.56 - 0.12 * x if x <= 1 else 0.44 + 0.1 * (x - 1) if x <= 2 else 0.54 + 0.02 * (x - 2)


def mode(f):
    return {"freq": f, "Q": 1e9, "decay": 0.0, "amp": 0.5, "error": 1e-8}


def band_record(duplicate: float):
    """One run per k, Harminv at two points: the second fit sees band 1 again, `duplicate`
    relative off (its own estimate of the same mode)."""
    runs = []
    for x in [i * 0.25 for i in range(12)]:
        found = [mode(band(n, x)) for n in (1, 2) if band(n, x) > 0]
        second = [mode(band(1, x) * (1 + duplicate))] if band(1, x) > 0 else []
        runs.append({"sim_time": 300.0, "k_point": k_at(x),
                     "harminv": [{"modes": found}, {"modes": second}]})  # fmt: skip
    return [{"index": 0, "cylindrical": False, "k_point": k_at(3), "runs": runs}]


def band_points(labelled=True):
    xs = [i * 0.125 for i in range(25)]
    return [(x, band(n, x), n if labelled else None) for n in (1, 2) for x in xs]


DIAGRAM = {"k_path": PATH, "bands": 2, "gaps": [{"below_band": 1, "lower": 0.32, "upper": 0.44}]}


@pytest.mark.parametrize("labelled", [True, False])
def test_one_mode_seen_by_two_fits_is_one_band(labelled):
    """0.2 % apart, well within what a 300-unit window resolves (1/T = 0.0033): one mode,
    so band 2 and the gap's upper edge stay 0.44 (with the paper's points labelled by
    band or not: unlabelled, the bands are the measured modes in order)."""
    points = band_points(labelled)
    entry = bands.compare_band_diagram("fig", DIAGRAM, points, band_record(0.002))
    (gap,) = entry["gaps"]
    assert gap["measured"]["upper"] == pytest.approx(0.44)
    assert entry["classification"] == "SUCCESS", entry["gaps"]


def test_a_gap_made_wrong_still_fails():
    diagram = {**DIAGRAM, "gaps": [{"below_band": 1, "lower": 0.32, "upper": 0.44 * 1.05}]}
    entry = bands.compare_band_diagram("fig", diagram, band_points(), band_record(0.002))
    assert entry["gaps"][0]["class"] != "SUCCESS"


# --- a reference curve judged where the paper's data is ---------------------------------


def test_data_on_its_reference_over_part_of_its_range_agrees():
    """The reference drawn over 1.0-2.0, the data digitized on 1.0-1.9 exactly on it."""
    xr = np.linspace(1.0, 2.0, 101)
    yr = 0.5 + 0.3 * np.sin(6 * xr)
    xp = np.linspace(1.0, 1.9, 40)
    yp = 0.5 + 0.3 * np.sin(6 * xp)
    cropped = reference_curves.on_data_range(list(xr), list(yr), list(xp))
    axis = {"both_plotted": True}
    own = reference_curves.judged(compare.compare_curve(*cropped, xp, yp, axis))
    assert own["classification"] == "SUCCESS", own
    off = reference_curves.judged(compare.compare_curve(*cropped, xp, yp + 0.05, axis))
    assert off["classification"] != "SUCCESS"
