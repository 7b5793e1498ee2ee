"""A key value read off a column in c/a against a figure in nm converts through the
paper's length a; without it the key value fails with the reason, never compared in the
wrong unit."""

import numpy as np
import pytest

from reprolab.physics import compare

A_M = 500e-9
KV = {"quantity": "peak", "value": 689.2, "unit": "nm", "kind": "x_of_max"}
KV |= {"x_column": "frequency_c/a", "x_axis": ["wavelength", "nm"]}


def curve():
    f = np.linspace(0.70, 0.75, 101)  # c/a
    return f, np.exp(-(((f - 0.7255) / 0.005) ** 2))  # peak at 500 nm / 0.7255 = 689.2 nm


def test_c_over_a_column_against_a_nm_axis_through_the_length_a():
    got = compare.key_value(KV | {"unit_length_m": A_M}, *curve())
    assert got["sim"] == pytest.approx(689.2, abs=0.1)
    assert got["class"] == "SUCCESS"


def test_without_the_length_a_the_key_value_fails_with_its_reason():
    got = compare.key_value(KV, *curve())
    assert got["sim"] is None and got["class"] == "FAILURE"
    assert "frequency_c/a" in got["note"] and "unit_length" in got["note"]


def test_a_free_parameter_axis_reads_the_column_as_is():
    kv = {"quantity": "R at 4 pairs", "value": 0.9, "unit": "1", "kind": "y_at_x", "x": 4.0}
    kv |= {"x_column": "length_nm", "x_axis": ["parameter", "1"]}
    got = compare.key_value(kv, [2.0, 4.0, 6.0], [0.5, 0.9, 0.99])
    assert got["sim"] == 0.9 and got["class"] == "SUCCESS"


def test_a_size_parameter_axis_converts_the_wavelength_column_through_the_radius():
    radius_m = 0.4e-6  # x = 2πr/λ; the curve peaks at λ = 1.0 µm, x = 2.513
    kv = {"quantity": "peak", "value": 2.513, "unit": "1", "kind": "x_of_max"}
    kv |= {"x_column": "wavelength_um", "x_axis": ["size_parameter", "1"]}
    lam = np.linspace(0.8, 1.2, 201)
    q = np.exp(-(((lam - 1.0) / 0.05) ** 2))
    got = compare.key_value(kv | {"radius_m": radius_m}, lam, q)
    assert got["sim"] == pytest.approx(2.513, abs=2e-3) and got["class"] == "SUCCESS"
    without = compare.key_value(kv, lam, q)
    assert without["class"] == "FAILURE" and "scatterer_radius" in without["note"]
