"""A Rabi splitting read off a reproduced spectrum: the coupled-oscillator extinction of
a plasmon and an exciton at zero detuning, plotted in nm, its splitting stated in meV."""

from __future__ import annotations

import numpy as np

from reprolab import units
from reprolab.paper_format import KeyValue
from reprolab.physics import compare

E0 = 2.0  # eV: plasmon and exciton at zero detuning


def coupled_extinction(g_ev: float, wavelength_nm):
    """Im of the plasmon's response dressed by an exciton (coupling g, widths in eV)."""
    e = units.convert(list(wavelength_nm), ("wavelength", "nm"), ("energy", "eV"))
    e = np.asarray(e)
    gp, gx = 0.08, 0.04
    dx = E0 - e - 0.5j * gx
    return np.imag(dx / ((E0 - e - 0.5j * gp) * dx - g_ev**2))


def kv(value_mev: float, kind: str = "x_splitting_of_max") -> dict:
    return {
        "quantity": "Rabi splitting",
        "value": value_mev,
        "unit": "meV",
        "kind": kind,
        "x_axis": ["wavelength", "nm"],
        "x_column": "wavelength_nm",
    }


WL = np.linspace(500, 750, 400)


def test_the_rabi_splitting_in_mev_is_read_off_a_spectrum_in_nm():
    # 2 g = 200 meV: the two peaks sit near 1.9 and 2.1 eV (653 and 590 nm)
    out = compare.key_value(kv(200.0), WL, coupled_extinction(0.1, WL))
    assert out["class"] == "SUCCESS" and abs(out["sim"] - 200.0) < 10.0, out
    # the reproduction coupled too weakly (2 g = 120 meV): caught as a splitting error
    weak = compare.key_value(kv(200.0), WL, coupled_extinction(0.06, WL))
    assert weak["class"] == "FAILURE" and 0.3 < weak["rel_error"] < 0.5
    # no coupling: one peak, no splitting to read
    none = compare.key_value(kv(200.0), WL, coupled_extinction(0.0, WL))
    assert none["class"] == "FAILURE" and "1 peaks" in none["note"]


def test_a_splitting_of_dips_and_the_kinds_are_accepted_by_the_format():
    transmission = 1 - coupled_extinction(0.1, WL) / coupled_extinction(0.1, WL).max()
    out = compare.key_value(kv(200.0, "x_splitting_of_min"), WL, transmission)
    assert out["class"] == "SUCCESS"
    model = KeyValue(quantity="Rabi", value=0.2, unit="eV", kind="x_splitting_of_min")
    assert model.kind == "x_splitting_of_min" and units.photon_quantity("meV") == "energy"
