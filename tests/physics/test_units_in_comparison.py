"""A figure whose x axis is in other units than the simulation's column (the ag_etalon
example: nm and eV axes, `wavelength_um` columns): key values, the overlay's x and the
lint's reported band are all read in the right unit. Before, a key value in nm was
compared with the column's µm (689.5 vs 0.69: FAILURE), the overlay drew µm under an
"eV" label, and the lint took 450-900 nm for 450-900 µm."""

from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from agents.simulation_designer import SimulationDesign
from reprolab.paper import Paper
from reprolab.physics import compare
from reprolab.steps.static import reported_band

AG = Path(__file__).parents[2] / "examples" / "papers" / "ag_etalon_2026"


@pytest.fixture(scope="module")
def paper():
    return Paper(AG)


def test_key_value_in_nm_read_off_a_column_in_um():
    xs = [0.68, 0.685, 0.69, 0.695, 0.70]
    ys = [0.30, 0.38, 0.40, 0.37, 0.31]
    kv = {"quantity": "peak", "value": 689.5, "unit": "nm", "kind": "x_of_max"}
    converted = compare.key_value(
        {**kv, "x_column": "wavelength_um", "x_axis": ["wavelength", "nm"]}, xs, ys
    )
    assert 689 < converted["sim"] < 690.5 and converted["class"] == "SUCCESS"
    # without the axis (the stored entry of an older comparison), nothing is converted
    assert compare.key_value(kv, xs, ys)["class"] == "FAILURE"
    at = {**kv, "kind": "y_at_x", "x": 690.0, "x_column": "wavelength_um"}
    at |= {"x_axis": ["wavelength", "nm"], "value": 0.40}
    assert compare.key_value(at, xs, ys)["sim"] == pytest.approx(0.40)


def test_simulation_x_in_the_figures_units(paper):
    assert paper.x_in_figure_units("fig2", "wavelength_um", [0.45, 0.9]) == pytest.approx(
        [450.0, 900.0]
    )
    (ev,) = paper.x_in_figure_units("fig1", "wavelength_um", [0.619921])
    assert ev == pytest.approx(2.0, rel=1e-5)
    assert paper.x_in_figure_units("fig2", "x", [0.45]) == [0.45]  # no unit stated
    assert paper.x_in_figure_units("fig2", None, [0.45]) == [0.45]


def test_lint_band_of_a_figure_in_nm(paper):
    rec = AG / "recordings" / "stage1_etalon" / "simulation_designer.a1.yaml"
    design = SimulationDesign.model_validate(yaml.safe_load(rec.read_text())["output"])
    f_lo, f_hi = reported_band(design, SimpleNamespace(paper=paper))
    assert f_lo == pytest.approx(1 / 0.9) and f_hi == pytest.approx(1 / 0.45)
