"""Material models: the Lorentz oscillator's conversion to Meep's terms against Meep's
own evaluation, the Drude-Lorentz fit of tabulated data, the library's provenance, and
the built-vs-approved comparison on right and wrong media."""

from __future__ import annotations

import numpy as np
import pytest

from reprolab.errors import InputFileError
from reprolab.physics import material_library as ml
from reprolab.physics import material_models as mm

mp = pytest.importorskip("meep")


def paper_lorentz(eps_b, e0, g, f, energy_ev):
    """The paper's form in angular frequency (energies in eV)."""
    w = np.asarray(energy_ev)
    return eps_b + f * e0**2 / (e0**2 - w**2 - 1j * g * w)


def meep_medium(model: dict, unit_um: float = 1.0):
    sus = []
    for t in model["terms"]:
        cls = mp.DrudeSusceptibility if t["kind"] == "drude" else mp.LorentzianSusceptibility
        sus.append(
            cls(frequency=t["frequency"] * unit_um, gamma=t["gamma"] * unit_um, sigma=t["sigma"])
        )
    return mp.Medium(epsilon=model["eps_inf"], E_susceptibilities=sus)


def test_lorentz_oscillator_matches_the_paper_formula_as_meep_evaluates_it():
    model = mm.lorentz_oscillator(2.1, 1.79, 0.06, strength=0.05)
    energies = np.linspace(1.5, 2.1, 13)
    wl_um = mm.HC_EV_UM / energies
    for unit in (1.0, 0.1):  # Meep's length unit a = 1 µm and 100 nm
        medium = meep_medium(model, unit)
        built = np.array([complex(medium.epsilon(unit / w)[0, 0]) for w in wl_um])
        assert np.allclose(built, paper_lorentz(2.1, 1.79, 0.06, 0.05, energies), rtol=1e-9)
    # gamma taken as an angular rate (2 pi too large): no longer the paper's line
    wrong = {
        **model,
        "terms": [{**model["terms"][0], "gamma": model["terms"][0]["gamma"] * 2 * np.pi}],
    }
    assert not mm.compare(wrong, model, wl_um)["ok"]
    plasma = mm.lorentz_oscillator(2.1, 1.79, 0.06, plasma_energy_ev=1.79 * 0.05**0.5)
    assert mm.compare(plasma, model, wl_um)["ok"]
    with pytest.raises(InputFileError, match="exactly one of"):
        mm.lorentz_oscillator(2.1, 1.79, 0.06)


def test_epsilon_of_a_meep_medium_is_meeps_own():
    from meep.materials import Ag, Au

    for medium in (Ag, Au):
        model = mm.from_meep_medium(medium)
        freqs = np.linspace(1.3, 2.5, 9)
        ours = mm.epsilon(model, 1 / freqs)
        theirs = np.array([complex(medium.epsilon(f)[0, 0]) for f in freqs])
        assert np.allclose(ours, theirs, rtol=1e-12)
        rescaled = mm.rescaled(model, 0.05)
        assert np.allclose(mm.epsilon(rescaled, 1 / freqs), ours, rtol=1e-12)


def test_fit_recovers_a_known_model_and_reports_its_error():
    truth = {
        "eps_inf": 1.5,
        "terms": [
            {"kind": "drude", "frequency": 1.0, "gamma": 0.05, "sigma": 60.0},
            {"kind": "lorentzian", "frequency": 2.4, "gamma": 0.6, "sigma": 1.5},
        ],
        "unit_length_um": 1.0,
    }
    wl = np.linspace(0.4, 1.0, 120)
    n, k = mm.n_k(mm.epsilon(truth, wl))
    model = mm.fit_drude_lorentz(wl, n, k, (0.45, 0.9))
    assert model["tolerance"]["n"] < 0.02 and model["tolerance"]["k"] < 0.02
    assert mm.index_error(model, wl[10:-20], n[10:-20], k[10:-20])[1] <= 0.02
    with pytest.raises(InputFileError, match="outside the data's range"):
        mm.fit_drude_lorentz(wl, n, k, (0.3, 0.9))


def test_library_fit_is_passive_and_within_its_stated_error():
    model = ml.fitted_model("al_mcpeak", (0.4, 0.8))
    wl, n, k = ml.tabulated("al_mcpeak")
    inside = (wl >= 0.4) & (wl <= 0.8)
    dn, dk = mm.index_error(model, wl[inside], n[inside], k[inside])
    assert dn <= model["tolerance"]["n"] + 1e-12 and dk <= model["tolerance"]["k"] + 1e-12
    assert max(dn, dk) < 0.02  # McPeak's Al over the visible: four terms suffice
    eps = mm.epsilon(model, np.geomspace(0.1, 20, 400))
    assert (eps.imag >= -1e-12).all()  # passive everywhere, not only in the band
    assert "McPeak" in model["source"] and model["valid_range_um"] == [0.15, 1.7]


def test_library_lists_twenty_materials_with_source_and_range():
    entries = ml.library()
    assert len(entries) >= 20
    kinds = {e.kind for e in entries.values()}
    assert {"metal", "oxide", "semiconductor", "polymer"} <= kinds
    for mid in entries:
        lo, hi = ml.valid_range_um(mid)
        assert 0 < lo < hi and ml.source(mid)
        wl, n, k = ml.tabulated(mid)
        assert len(wl) > 5 and (n > 0).all() and (k >= 0).all()
    readme = (ml.LIBRARY_PATH.parent / "README.md").read_text(encoding="utf-8")
    assert ml.library_table() in readme  # the README's table is the library's


def test_approved_model_refuses_what_it_cannot_build():
    with pytest.raises(InputFileError, match="au_johnson"):
        ml.approved_model({"material_id": "gold", "model": "library", "library_id": "gold"})
    with pytest.raises(InputFileError, match="meep.materials has no such medium"):
        ml.approved_model({"material_id": "x", "model": "Unobtainium"})
    with pytest.raises(InputFileError, match="oscillator"):
        ml.approved_model({"material_id": "dye", "model": "lorentz_oscillator"})
    assert ml.approved_model({"material_id": "s", "model": "constant_index", "index": 1.45})[
        "eps_inf"
    ] == pytest.approx(1.45**2)


def test_a_plan_names_what_a_material_model_lacks():
    ok = {
        "material_id": "au",
        "model": "library",
        "library_id": "au_johnson",
        "band_um": [0.5, 0.9],
    }
    assert ml.plan_problems(ok) == []
    assert "is not one of" in ml.plan_problems({**ok, "library_id": "gold"})[0]
    assert "outside au_johnson's data" in ml.plan_problems({**ok, "band_um": [0.1, 0.9]})[0]
    assert "band_um" in ml.plan_problems({**ok, "band_um": None})[0]
    assert "oscillator" in ml.plan_problems({"material_id": "d", "model": "lorentz_oscillator"})[0]
