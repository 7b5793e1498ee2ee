"""A size parameter x = 2πr/λ as an axis quantity (`size_parameter`, unit 1): converted
to and from wavelength, frequency and photon energy through the paper's
`scatterer_radius`, so a run that writes `wavelength_um` is compared on the paper's x
axis over its whole range; without a radius a paper with such an axis is refused,
naming the field, and no conversion guesses one."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import yaml

from reprolab import units
from reprolab.errors import InputFileError
from reprolab.paper import Paper
from reprolab.physics import compare, positions
from tests.support.builders import copy_paper

MIE = Path(__file__).parents[2] / "examples" / "papers" / "mie_sphere_2026"
X = ("size_parameter", "1")
R_M = 0.5e-6


def test_size_parameter_to_wavelength_and_back():
    lam = units.convert_with_radius([0.5, 1.0, 2.5], X, ("wavelength", "um"), None, R_M)
    assert lam == pytest.approx([2 * math.pi * 0.5 / x for x in (0.5, 1.0, 2.5)])
    assert lam[-1] == pytest.approx(1.256637, rel=1e-6)
    back = units.convert_with_radius(lam, ("wavelength", "um"), X, None, R_M)
    assert back == pytest.approx([0.5, 1.0, 2.5])
    (nm,) = units.convert_with_radius([2.5], X, ("wavelength", "nm"), None, R_M)
    assert nm == pytest.approx(1256.637, rel=1e-6)


def test_size_parameter_to_frequency_energy_and_normalized_units():
    # x = 2πr f / c: at r = 0.5 µm, x = 1 is f = c / (π µm) = 95.43 THz
    (thz,) = units.convert_with_radius([1.0], X, ("frequency", "THz"), None, R_M)
    assert thz == pytest.approx(units.C_M_PER_S / (math.pi * 1e-6) / 1e12, rel=1e-9)
    (ev,) = units.convert_with_radius([1.0], X, ("energy", "eV"), None, R_M)
    assert ev == pytest.approx(1.239842 / math.pi, rel=1e-6)
    # c/a with a = 1 µm: f = x / (2π r / a) = x / π
    (f,) = units.convert_with_radius([2.5], X, ("frequency", "c/a"), 1e-6, R_M)
    assert f == pytest.approx(2.5 / math.pi)
    (x,) = units.convert_with_radius([2.5 / math.pi], ("frequency", "c/a"), X, 1e-6, R_M)
    assert x == pytest.approx(2.5)
    # the same quantity, or two others, go through the ordinary conversion
    assert units.convert_with_radius([2.0], X, X) == [2.0]
    assert units.convert_with_radius([500.0], ("wavelength", "nm"), ("wavelength", "um")) == [0.5]


def test_conversions_that_have_no_meaning_are_refused():
    with pytest.raises(
        units.UnitError, match="only with the scatterer's radius .*scatterer_radius"
    ):
        units.convert_with_radius([1.0], X, ("wavelength", "um"))
    with pytest.raises(units.UnitError, match="only with the scatterer's radius"):
        units.size_parameter_converter(("wavelength", "um"), X, 0.0)
    with pytest.raises(units.UnitError, match="size_parameter cannot be converted to angle"):
        units.convert_with_radius([1.0], X, ("angle", "deg"), None, R_M)
    with pytest.raises(units.UnitError, match="'um' is not a unit of size_parameter"):
        units.convert_with_radius([1.0], ("size_parameter", "um"), ("wavelength", "um"), None, R_M)
    with pytest.raises(units.UnitError, match="has no size parameter"):
        units.convert_with_radius([0.0], X, ("wavelength", "um"), None, R_M)
    # c/a into a size parameter still needs the paper's length a
    with pytest.raises(units.UnitError, match="unit_length"):
        units.convert_with_radius([0.3], ("frequency", "c/a"), X, None, R_M)
    # the plain conversion never guesses a radius
    with pytest.raises(units.UnitError, match="size_parameter cannot be converted to wavelength"):
        units.convert([1.0], X, ("wavelength", "um"))


def _edit(folder: Path, change) -> None:
    meta = yaml.safe_load((folder / "metadata.yaml").read_text())
    change(meta)
    (folder / "metadata.yaml").write_text(yaml.safe_dump(meta, allow_unicode=True))


def test_the_paper_curve_is_read_in_the_run_wavelength(tmp_path):
    paper = Paper(MIE)
    assert paper.scatterer_radius_m == pytest.approx(R_M)
    xs, ys = paper.curve_data("fig1", "qsca")
    assert xs[0] == pytest.approx(0.6) and xs[-1] == pytest.approx(2.5)
    lam, q = paper.curve_data("fig1", "qsca", "wavelength_um")
    assert lam == sorted(lam)  # wavelength runs the other way: sorted
    assert lam[0] == pytest.approx(2 * math.pi * 0.5 / 2.5)
    assert lam[-1] == pytest.approx(2 * math.pi * 0.5 / 0.6)
    assert q[0] == pytest.approx(ys[-1]) and q[-1] == pytest.approx(ys[0])
    assert paper.x_in_figure_units("fig1", "wavelength_um", lam) == pytest.approx(xs[::-1])
    # a radius in nm is the same radius
    folder = copy_paper(tmp_path / "nm", MIE)
    _edit(folder, lambda m: m.update(scatterer_radius={"value": 500, "unit": "nm"}))
    assert Paper(folder).curve_data("fig1", "qsca", "wavelength_um")[0] == pytest.approx(lam)


def test_a_run_in_wavelength_covers_the_size_parameter_axis():
    """A run that writes wavelength_um at 25 points x = 0.59-2.51 (the example's stage) is
    compared over the paper's whole range, not on the number line of x (where 1.25-5.32
    µm would overlap 0.6-2.5 only in part)."""
    paper = Paper(MIE)
    fig = paper.figure("fig1")
    xp, yp = paper.curve_data("fig1", "qsca", "wavelength_um")
    x_run = np.linspace(0.59, 2.51, 25)
    lam_run = 2 * math.pi * 0.5 / x_run
    _, q_paper = paper.curve_data("fig1", "qsca")
    q_run = np.interp(x_run, np.linspace(0.6, 2.5, len(q_paper)), q_paper)
    axis = positions.axis_context(fig, "qsca", "wavelength_um")
    result = compare.compare_curve(xp, yp, list(lam_run), list(q_run), axis)
    assert result["coverage"] == 1.0
    assert result["metrics"]["rms_rel"] < 0.01
    assert compare.classify_curve(result)["rms_rel"] == "SUCCESS"
    # the same run read as if its wavelengths were size parameters: what conversion avoids
    raw = compare.compare_curve(
        paper.curve_data("fig1", "qsca")[0], yp, list(lam_run), list(q_run), axis
    )
    assert raw["coverage"] < 0.95


def test_a_size_parameter_axis_without_a_radius_is_refused(tmp_path):
    folder = copy_paper(tmp_path / "paper", MIE)
    _edit(folder, lambda m: m.pop("scatterer_radius"))
    with pytest.raises(InputFileError) as err:
        Paper(folder)
    text = str(err.value)
    assert "figures[0].x_axis is a size parameter" in text
    assert "scatterer_radius: {value: 0.5, unit: um}" in text
    # a radius in a unit that is not a length is refused, naming what is valid
    _edit(folder, lambda m: m.update(scatterer_radius={"value": 0.5, "unit": "a"}))
    with pytest.raises(InputFileError, match="not a length unit for the scatterer's radius; valid"):
        Paper(folder)
