"""Field-map figures: the paper format's `field_map` (axes, colour scale,
colour map), its refusals, a design that must name the HDF5 dataset, and the map read
from HDF5 and drawn on the paper's scale with its maximum found by code. No Meep: the
HDF5 file is written here (the etalon example's pipeline run is test_second_example)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import h5py
import numpy as np
import pytest
import yaml

from agents.common import StageType
from agents.planner import PlanStage
from agents.simulation_designer import SimulationDesign
from reprolab.paper import Paper, check_folder
from reprolab.steps.compare import compare_stage
from reprolab.steps.design import design_problems
from tests.support.builders import copy_paper

AG = Path(__file__).parents[2] / "examples" / "papers" / "ag_etalon_2026"
REC = AG / "recordings" / "stage1_etalon"


@pytest.fixture
def paper_dir(tmp_path):
    folder = tmp_path / "paper"
    copy_paper(folder, AG)
    return folder


def edit_map(folder: Path, **changes) -> list[str]:
    meta = yaml.safe_load((folder / "metadata.yaml").read_text())
    fig4 = meta["figures"][3]
    for key, value in changes.items():
        if key == "digitized":
            fig4["curves"][0]["digitized"] = value
        else:
            fig4["field_map"][key] = value
    (folder / "metadata.yaml").write_text(yaml.safe_dump(meta, allow_unicode=True))
    return [message for _file, message in check_folder(folder)[1]]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"vmin": 10}, "vmin (10) must be below vmax (10)"),
        (
            {"colormap": "infern"},
            "colormap 'infern' is not a matplotlib colour map (did you mean inferno",
        ),
        (
            {"digitized": "data/fig2_T.csv"},
            "a field-map figure has exactly one curve (the map), without digitized",
        ),
        ({"x_limits": [0]}, "x_limits"),
    ],
)
def test_bad_field_maps_are_refused(paper_dir, change, message):
    assert edit_map(paper_dir) == []  # the example as it is
    problems = edit_map(paper_dir, **change)
    assert any(message in p and "field 'figures[3]" in p for p in problems), problems


def _design() -> SimulationDesign:
    return SimulationDesign.model_validate(
        yaml.safe_load((REC / "simulation_designer.a1.yaml").read_text())["output"]
    )


def test_a_field_map_needs_its_dataset_and_only_it_has_one():
    run = SimpleNamespace(paper=Paper(AG))
    stage = PlanStage(
        stage_id="stage1_etalon",
        stage_type=StageType.SINGLE_STRUCTURE,
        name="n",
        description="d",
        target_figures=["fig2", "fig3", "fig4"],
        runtime_budget_minutes=1,
    )
    mats = [{"material_id": "ag"}, {"material_id": "silica"}]
    assert design_problems(_design(), stage, run, mats) == []
    design = _design().model_dump()
    design["figure_outputs"][3]["dataset"] = None
    design["figure_outputs"][0]["dataset"] = "T"
    found = design_problems(SimulationDesign.model_validate(design), stage, run, mats)
    assert found == [
        "figure_outputs: fig2 is not a field map: no `dataset` ('T')",
        "figure_outputs: fig4 is a field map: give the HDF5 `dataset` (2D map) with x_column "
        "and y_column naming its coordinate datasets",
    ]


def _stage(tmp_path: Path, write_map) -> Path:
    """A stage folder holding the etalon design, passing checks and a run's outputs."""
    stage = tmp_path / "stage1_etalon"
    (stage / "run").mkdir(parents=True)
    design = _design()
    (stage / "design.json").write_text(
        '{"output": ' + design.model_dump_json() + "}", encoding="utf-8"
    )
    (stage / "checks.json").write_text('{"verdict": "pass", "checks": []}')
    wl = np.linspace(0.45, 0.9, 91)
    rows = ["wavelength_um,T,R,A"] + [f"{w},0.1,0.8,0.1" for w in wl]
    (stage / "run" / "etalon_spectrum.csv").write_text("\n".join(rows) + "\n")
    write_map(stage / "run" / "etalon_field.h5")
    return stage


def test_map_read_from_hdf5_in_the_figures_units_and_drawn(tmp_path):
    z, wl = np.linspace(-0.2, 0.2, 41), np.linspace(0.45, 0.9, 46)
    peak = np.exp(-(((wl[:, None] - 0.7) / 0.02) ** 2) - (z[None, :] / 0.05) ** 2) * 9.0

    def write(path):
        with h5py.File(path, "w") as h5:
            h5["z_um"], h5["wavelength_um"], h5["E2"] = z, wl, peak.T  # transposed: accepted

    stage = _stage(tmp_path, write)
    run = SimpleNamespace(paper=Paper(AG))
    compare_stage(run, stage / "design.json", stage / "checks.json", stage / "comparison.json")
    figs = {
        f["figure_id"]: f
        for f in yaml.safe_load((stage / "comparison.json").read_text())["figures"]
    }
    fig4 = figs["fig4"]
    assert fig4["classification"] == "PARTIAL" and fig4["qualitative"] and fig4["field_map"]
    (curve,) = fig4["curves"]
    numbers = curve["field_map"]
    assert numbers["max"] == pytest.approx(9.0) and numbers["x_at_max"] == pytest.approx(0.0)
    assert numbers["y_at_max"] == pytest.approx(700.0)  # nm, the figure's unit, from µm
    assert "sim" not in curve  # the map itself is not copied into comparison.json
    assert Path(fig4["overlay"]).stat().st_size > 10_000


def test_a_map_of_the_wrong_shape_fails_naming_it(tmp_path):
    def write(path):
        with h5py.File(path, "w") as h5:
            h5["z_um"], h5["wavelength_um"], h5["E2"] = np.zeros(5), np.zeros(4), np.zeros((3, 3))

    stage = _stage(tmp_path, write)
    run = SimpleNamespace(paper=Paper(AG))
    compare_stage(run, stage / "design.json", stage / "checks.json", stage / "comparison.json")
    figs = yaml.safe_load((stage / "comparison.json").read_text())["figures"]
    (fig4,) = [f for f in figs if f["figure_id"] == "fig4"]
    assert fig4["classification"] == "FAILURE"
    assert (
        "dataset 'E2' has shape [3, 3]; expected [len(wavelength_um), len(z_um)] = [4, 5]"
        in (fig4["curves"][0]["error"])
    )
