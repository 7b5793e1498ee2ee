"""The material checkpoint approves the model of every material, constant ones
included: the sha256 changes when a constant index changes, the payload shows each
fit's largest n and k errors and stage 0's data against the model."""

from __future__ import annotations

import json

import numpy as np

from reprolab.gates.material import material_checkpoint, material_payload
from reprolab.physics import material_library as ml
from reprolab.physics import material_models as mm


def stage0(tmp_path, materials: dict[str, tuple]) -> str:
    """A stage-0 folder with its verdict and one material CSV per (wl, n, k)."""
    stage = tmp_path / "stages" / "stage0_materials"
    (stage / "run").mkdir(parents=True)
    for mid, (wl, n, k) in materials.items():
        rows = "\n".join(f"{w:.6g},{a:.8g},{b:.8g}" for w, a, b in zip(wl, n, k, strict=True))
        (stage / "run" / f"material_{mid}.csv").write_text("wavelength_um,n,k\n" + rows + "\n")
    verdict = stage / "verdict.json"
    verdict.write_text(json.dumps({"stage_id": "stage0_materials", "status": "SUCCESS"}))
    return str(verdict)


def test_a_constant_index_is_bound_by_its_number(tmp_path):
    verdict = stage0(tmp_path, {})
    plan = [{"material_id": "spacer", "model": "constant_index", "index": 1.45, "source": "p"}]
    first = material_payload(plan, verdict)
    again = material_payload(plan, verdict)
    changed = material_payload([{**plan[0], "index": 1.46}], verdict)
    assert first["sha256"] == again["sha256"] != changed["sha256"]
    model = first["materials"][0]["approved_model"]
    assert model["eps_inf"] == 1.45**2 and model["terms"] == []


def test_the_gate_shows_each_fit_error_and_stage0_against_the_model(tmp_path):
    wl, n, k = ml.tabulated("au_johnson")
    inside = (wl >= 0.5) & (wl <= 0.9)
    good = (wl[inside], n[inside], k[inside])
    plan = [
        {
            "material_id": "gold",
            "model": "library",
            "library_id": "au_johnson",
            "band_um": [0.5, 0.9],
            "source": "Johnson and Christy",
        },
        {"material_id": "spacer", "model": "constant_index", "index": 1.45, "source": "p"},
    ]
    payload = material_payload(plan, stage0(tmp_path / "a", {"gold": good}))
    gold = payload["materials"][0]
    tol = gold["approved_model"]["tolerance"]
    assert 0 < tol["n"] < 0.1 and 0 < tol["k"] < 0.1
    assert gold["stage0_vs_model"]["max_dn"] <= tol["n"] + 1e-9
    request = material_checkpoint(tmp_path, "p", payload)
    line = request.payload["model_errors"][0]
    assert "gold: Drude-Lorentz fit over 0.5-0.9 µm" in line and "Johnson" in line
    assert f"{tol['n']:.3g}" in line and f"{tol['k']:.3g}" in line
    # stage 0 computed gold with half its k: the gate shows how far that is from the model
    half_k = (good[0], good[1], good[2] / 2)
    wrong = material_payload(plan, stage0(tmp_path / "b", {"gold": half_k}))
    assert wrong["materials"][0]["stage0_vs_model"]["max_dk"] > 1.0
    assert wrong["sha256"] != payload["sha256"]


def test_a_dye_oscillator_is_approved_from_the_paper_parameters(tmp_path):
    osc = {"background_eps": 2.1, "energy_ev": 1.79, "gamma_ev": 0.06, "strength": 0.05}
    model = mm.lorentz_oscillator(**osc)
    wl = np.linspace(0.5, 0.9, 41)
    n, k = mm.n_k(mm.epsilon(model, wl))
    plan = [{"material_id": "dye", "model": "lorentz_oscillator", "oscillator": osc, "source": "p"}]
    payload = material_payload(plan, stage0(tmp_path, {"dye": (wl, n, k)}))
    entry = payload["materials"][0]
    assert entry["approved_model"]["terms"][0]["sigma"] == 0.05
    assert entry["stage0_vs_model"]["max_dn"] < 1e-6
