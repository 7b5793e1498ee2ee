"""The paper format (docs/paper-format.md): axes with units converted by code, CSV
headers with units, two-axis figures, key values, unknown keys refused with a
did-you-mean, `reprolab check` / `check-recordings` listing every problem at once."""

import json
import math
import shutil
from pathlib import Path

import pytest
import yaml

from reprolab import units
from reprolab.cli import main
from reprolab.errors import InputFileError
from reprolab.paper import Paper
from reprolab.paper_format import SCHEMA_PATH, schema_text
from tests.support.builders import copy_paper

EXAMPLE = Path(__file__).parents[2] / "examples" / "papers" / "silica_bragg_2026"


@pytest.fixture
def paper_dir(tmp_path):
    folder = tmp_path / "paper"
    copy_paper(folder)
    return folder


def edit(folder: Path, change) -> None:
    meta = yaml.safe_load((folder / "metadata.yaml").read_text())
    change(meta)
    (folder / "metadata.yaml").write_text(yaml.safe_dump(meta, allow_unicode=True))


def check(folder, capsys) -> tuple[int, str]:
    code = main(["check", str(folder)])
    out = capsys.readouterr()
    return code, out.out + out.err


def test_committed_schema_is_generated_from_the_models():
    assert json.loads(SCHEMA_PATH.read_text()) == json.loads(schema_text()), (
        "docs/paper-format.schema.json is stale: run `reprolab paper-schema --write`"
    )
    fig = json.loads(schema_text())["$defs"]["Figure"]
    assert fig["additionalProperties"] is False and "x_axis" in fig["required"]


def test_units_converted_by_code():
    assert units.convert([500.0], ("wavelength", "nm"), ("wavelength", "um")) == [0.5]
    (ev,) = units.convert([1.0], ("wavelength", "um"), ("energy", "eV"))
    assert ev == pytest.approx(1.239842, rel=1e-6)
    (thz,) = units.convert([1.55], ("wavelength", "um"), ("frequency", "THz"))
    assert thz == pytest.approx(193.414, rel=1e-5)
    assert units.convert([50.0], ("dimensionless", "%"), ("dimensionless", "1")) == [0.5]
    assert units.convert([180.0], ("angle", "deg"), ("angle", "rad")) == [pytest.approx(math.pi)]
    with pytest.raises(units.UnitError, match="angle cannot be converted to wavelength"):
        units.converter(("angle", "deg"), ("wavelength", "nm"))
    with pytest.raises(units.UnitError, match="'furlong' is not a unit of wavelength; valid: "):
        units.converter(("wavelength", "furlong"), ("wavelength", "nm"))
    assert units.column_quantity("wavelength_um") == ("wavelength", "um")
    assert units.column_quantity("frequency (thz)") == ("frequency", "THz")
    assert units.column_quantity("num_pairs") is None


def test_csv_units_in_headers_and_two_axes(paper_dir):
    """A figure in nm with a right-axis curve in %: the CSVs state their own units
    (µm, %, eV) and are read in the axes' units; a simulation column in THz gets x in
    THz, sorted."""
    (paper_dir / "data" / "fig2_T.csv").write_text("wavelength [um],T [%]\n0.5,40\n0.6,60\n")
    (paper_dir / "data" / "fig2_R.csv").write_text("energy_eV,R\n2.479684,0.1\n2.066403,0.2\n")

    def two_axes(meta):
        fig = meta["figures"][1]
        fig["x_axis"] = {"label": "λ (nm)", "quantity": "wavelength", "unit": "nm"}
        fig["y_axes"]["right"] = {"label": "R", "quantity": "dimensionless", "unit": "1"}
        fig["curves"][1]["y_axis"] = "right"

    edit(paper_dir, two_axes)
    paper = Paper(paper_dir)
    x, y = paper.curve_data("fig2", "T")
    assert x == pytest.approx([500, 600]) and y == pytest.approx([0.4, 0.6])
    x, y = paper.curve_data("fig2", "R")
    assert x == pytest.approx([500, 600], rel=1e-6) and y == [0.1, 0.2]
    x, y = paper.curve_data("fig2", "T", x_column="frequency_THz")
    assert x == pytest.approx([499.654, 599.585], rel=1e-5) and y == pytest.approx([0.6, 0.4])
    assert paper.figure("fig2").y_label == "Transmittance, reflectance / R (right)"


def test_first_format_still_read(paper_dir):
    """x_label / y_label / x_quantity and `x,y` CSVs (values in the axis units)."""

    def legacy(meta):
        for fig in meta["figures"]:
            fig["x_label"], fig["y_label"] = fig.pop("x_axis")["label"], "y"
            fig["x_quantity"] = "num_pairs" if fig["figure_id"] == "fig4" else "wavelength_um"
            fig.pop("y_axes")

    edit(paper_dir, legacy)
    (paper_dir / "data" / "fig3_R.csv").write_text("x,y\n0.5,0.1\n0.6,0.2\n")
    paper = Paper(paper_dir)
    assert paper.figure("fig3").x_axis.unit == "um"
    assert paper.figure("fig4").x_axis.name == "num_pairs"
    assert paper.curve_data("fig3", "R", x_column="wavelength_nm")[0] == pytest.approx([500, 600])


def test_every_problem_listed_at_once_with_field_and_valid(paper_dir, capsys):
    def broken(meta):
        meta["key_value"] = []  # a typo of key_values
        fig = meta["figures"][1]
        fig["captoin"] = "typo"
        fig["x_axis"]["unit"] = "nanometre"
        fig["curves"][0]["y_axis"] = "right"
        meta["figures"][2]["curves"][0]["digitized"] = "data/missing.csv"
        meta["key_values"] = [
            {"quantity": "peak R", "value": 0.99, "figure": "fig9", "kind": "max_y"},
            {"quantity": "R", "value": 0.5, "figure": "fig3", "curve": "Q", "kind": "y_at_x"},
        ]

    edit(paper_dir, broken)
    (paper_dir / "data" / "fig1_n.csv").write_text("wavelength [furlong],n\n1,2\n3,4\n")
    code, out = check(paper_dir, capsys)
    assert code == 1
    for expected in (
        "field 'key_value' is not a field of the paper format; did you mean 'key_values'?",
        "field 'figures[1].captoin' is not a field of the paper format; did you mean 'caption'?",
        "field 'figures[1].x_axis': 'nanometre' is not a unit of wavelength; valid: a, m, "
        "micron, mm, nm, um, µm",
    ):
        assert expected in out
    assert "problem(s), listed above" in out
    # once the schema errors are fixed, the next layer's problems are all listed too
    edit(paper_dir, lambda m: (m.pop("key_value"), m["figures"][1].pop("captoin")))
    edit(paper_dir, lambda m: m["figures"][1]["x_axis"].update(unit="um"))
    code, out = check(paper_dir, capsys)
    assert code == 1
    for expected in (
        "field 'figures[1].curves[0].y_axis' is 'right' but figure 'fig2' has no y_axes.right",
        "field 'figures[2].curves[0].digitized' refers to 'data/missing.csv', which does not",
        "field 'key_values[0].figure' is 'fig9'; valid: ['fig1', 'fig2', 'fig3', 'fig4']",
        "field 'key_values[0]': kind 'max_y' needs a figure and a curve",
        "field 'key_values[1].curve' is 'Q'; valid: ['R']",
        "field 'key_values[1].x' is required for kind 'y_at_x'",
        "fig1_n.csv: column 'wavelength [furlong]' states unit 'furlong', not a unit of the axis "
        "quantity wavelength; valid: a, m, micron, mm, nm, um, µm",
    ):
        assert expected in out
    with pytest.raises(InputFileError, match=r"y_axes.right(.|\n)*6 more problem"):
        Paper(paper_dir)


def test_todo_markers_refused(paper_dir, capsys):
    edit(paper_dir, lambda m: m["figures"][0]["x_axis"].update(quantity="TODO: confirm"))
    code, out = check(paper_dir, capsys)
    assert code == 1
    assert "field 'figures[0].x_axis.quantity' still has a TODO marker ('TODO: confirm')" in out
    assert "Input should be" not in out  # the TODO, not a second message on the same field


def test_check_recordings_lists_every_missing_or_invalid_file(tmp_path, capsys):
    paper = tmp_path / "paper"
    shutil.copytree(EXAMPLE / "recordings", paper / "recordings")
    rec = paper / "recordings"
    (rec / "stage2_bragg_mirror" / "supervisor.a1.yaml").unlink()
    (rec / "stage1_single_slab" / "design_reviewer.a2.yaml").unlink()
    (rec / "stage3_pairs_sweep" / "code_reviewer.a1.yaml").rename(
        rec / "stage3_pairs_sweep" / "code_reveiwer.a1.yaml"
    )
    bad = rec / "stage0_material_validation" / "physics_sanity.a1.yaml"
    data = yaml.safe_load(bad.read_text())
    data["output"]["nonsense_field"] = 1
    bad.write_text(yaml.safe_dump(data))
    shutil.copytree(rec / "stage3_pairs_sweep", rec / "stage9_unplanned")
    assert main(["check-recordings", str(paper)]) == 1
    out = capsys.readouterr().err
    for expected in (
        "stage2_bragg_mirror/supervisor.a1.yaml: is missing",
        "stage1_single_slab/design_reviewer.a2.yaml: is missing: design_reviewer attempt 1 "
        "asked for a revision",
        "code_reveiwer.a1.yaml: is not named <agent>.a<attempt>.yaml",
        "did you mean 'code_reviewer'?",
        "stage3_pairs_sweep/code_reviewer.a1.yaml: is missing",
        "physics_sanity.a1.yaml: does not match PhysicsSanityOutput",
        "nonsense_field",
        "stage9_unplanned: is not a stage of the recorded plan; valid: ['stage0_material",
    ):
        assert expected in out, expected
    assert main(["check-recordings", str(tmp_path / "nowhere")]) == 1
    assert "is not a folder of recordings" in capsys.readouterr().err


def test_overlay_puts_right_axis_curves_on_a_second_axis(paper_dir, monkeypatch, tmp_path):
    from reprolab.report import plots

    def two_axes(meta):
        fig = meta["figures"][1]
        fig["y_axes"]["right"] = {"label": "R (right)", "quantity": "dimensionless"}
        fig["curves"][1]["y_axis"] = "right"
        del fig["curves"][1]["digitized"]

    edit(paper_dir, two_axes)
    drawn = {}
    monkeypatch.setattr(plots, "save_figure", lambda fig, out: drawn.setdefault("fig", fig))
    sim = {"x": [0.5, 0.6, 0.7], "y": [0.1, 0.2, 0.3]}
    curves = [{"curve_id": "T", "sim": sim}, {"curve_id": "R", "sim": sim, "qualitative": True}]
    result = {"figure_id": "fig2", "classification": "PARTIAL", "qualitative": True}
    plots.overlay(Paper(paper_dir), result | {"curves": curves}, tmp_path / "o.png")
    left, right = drawn["fig"].axes
    assert [ln.get_label() for ln in left.lines] == ["paper: T", "reproduced: T"]
    assert [ln.get_label() for ln in right.lines] == ["reproduced: R"]  # no paper data
    assert right.get_ylabel() == "R (right)" and "qualitative" in left.get_title()
    drawn["fig"].clf()


def test_folder_level_refusals_named(paper_dir, tmp_path, capsys):
    code, out = check(tmp_path / "empty", capsys)
    assert code == 1 and "metadata.yaml: file does not exist; a paper folder needs one" in out
    (paper_dir / "metadata.yaml").write_text("paper_id: [unclosed\n")
    code, out = check(paper_dir, capsys)
    assert code == 1 and "metadata.yaml: is not valid YAML" in out and "line 1" in out


def test_a_csv_unit_its_axis_cannot_take_is_refused(paper_dir, capsys):
    (paper_dir / "data" / "fig4_Rpeak.csv").write_text("pairs [nm],R\n1,0.6\n2,0.8\n")
    (paper_dir / "data" / "fig2_T.csv").write_text("angle [deg],T\n1,0.6\n2,0.8\n")
    code, out = check(paper_dir, capsys)
    assert code == 1
    assert "fig4_Rpeak.csv: column 'pairs [nm]': parameter in 'nm' cannot be converted to " in out
    assert "fig2_T.csv: column 'angle [deg]': angle cannot be converted to wavelength" in out
