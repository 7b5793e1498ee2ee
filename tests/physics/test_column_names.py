"""Column names that state a unit: a ratio to a wavelength is not a wavelength."""

import math

import pytest

from reprolab.physics import checks, column_names


@pytest.mark.parametrize("name", ["wavelength_um", "lambda_nm", "wl", "Wavelength"])
def test_wavelength_names_are_read_as_wavelengths(name):
    assert column_names.is_wavelength(name)


@pytest.mark.parametrize("name", ["L_over_lambda", "d_per_wl", "r/lambda", "gap_to_wavelength"])
def test_a_ratio_to_a_wavelength_is_not_a_wavelength(name):
    assert not column_names.is_wavelength(name)
    assert column_names.frequencies(name, [0.5, 1.0], 1.0) is None


def test_frequencies_keep_rows_and_checks_drop_bad_ones():
    got = column_names.frequencies("wavelength_nm", [500.0, 0.0], 1.0)
    assert got[0] == pytest.approx(2.0) and math.isnan(got[1])
    assert checks.reported_frequencies("wavelength_nm", [500.0, 0.0], 1.0) == [2.0]
    assert checks.reported_frequencies("freq", [0.3], 1.0) == [0.3]
    assert checks.reported_frequencies("freq_thz", [0.3], 1.0) is None
