"""A key value stated in a unit its axis cannot take is refused by `reprolab check`,
naming the file, the field, what the unit measures and what would be valid; an area is
never converted into an efficiency (docs/paper-format.md, "Key values")."""

import shutil
from pathlib import Path

import yaml

from reprolab.paper import check_folder

EXAMPLES = Path(__file__).parents[2] / "examples" / "papers"


def etalon(tmp_path: Path, change) -> list[tuple[str, str]]:
    folder = tmp_path / "etalon"
    shutil.copytree(EXAMPLES / "ag_etalon_2026", folder, ignore=shutil.ignore_patterns("rec*"))
    meta = yaml.safe_load((folder / "metadata.yaml").read_text())
    change(meta)
    (folder / "metadata.yaml").write_text(yaml.safe_dump(meta, allow_unicode=True))
    return check_folder(folder)[1]


def key_value(index: int, **fields):
    def change(meta):
        meta["key_values"][index].update(fields)

    return change


def test_the_example_is_valid(tmp_path):
    assert etalon(tmp_path, lambda meta: None) == []


def test_a_cross_section_against_an_efficiency_axis_is_refused(tmp_path):
    # key_values[1]: peak transmittance, max_y on the dimensionless axis of fig2
    ((path, msg),) = etalon(tmp_path, key_value(1, unit="µm²", value=0.12))
    assert Path(path).name == "metadata.yaml"
    assert msg.startswith("field 'key_values[1].unit' is 'µm²' (an area)")
    assert "y_axes.left, dimensionless in '1'; valid: '1': an efficiency" in msg
    assert "never converted" in msg
    for spelling in ("um^2", "nm2"):
        ((_, msg),) = etalon(tmp_path / spelling, key_value(1, unit=spelling))
        assert "(an area)" in msg


def test_a_length_against_a_dimensionless_axis_is_refused(tmp_path):
    ((_, msg),) = etalon(tmp_path, key_value(1, unit="nm"))
    assert "is 'nm' (a length or a wavelength)" in msg
    assert "valid: '1' (a key value is stated in its axis's unit, dimensionless)" in msg


def test_a_percentage_names_its_value_in_the_axis_unit(tmp_path):
    ((_, msg),) = etalon(tmp_path, key_value(1, unit="%", value=40.5))
    assert "valid: '1': the value is 0.405 (a key value" in msg


def frequency_figure(meta, unit_length=None):
    fig = meta["figures"][1]
    fig["x_axis"] = {"label": "Frequency (c/a)", "quantity": "frequency", "unit": "c/a"}
    # its CSVs are in nm: they convert to c/a only through the length a
    meta["unit_length"] = unit_length or {"value": 500, "unit": "nm"}
    meta["key_values"] = [
        {"quantity": "peak", "value": 4.35e14, "unit": "Hz", "kind": "x_of_max"}
        | {"figure": "fig2", "curve": "T"}
    ]


def test_hz_against_c_over_a_names_the_converted_value_with_the_length_a(tmp_path):
    ((_, msg),) = etalon(tmp_path, frequency_figure)
    assert "is 'Hz' (a frequency)" in msg and "x_axis, frequency in 'c/a'" in msg
    # 4.35e14 Hz · 500 nm / c = 0.725502 c/a
    assert "valid: 'c/a': the value is 0.725502 c/a" in msg


def test_hz_against_c_over_a_without_the_length_a_says_what_to_state(tmp_path):
    def change(meta):
        frequency_figure(meta)
        del meta["unit_length"]

    found = [msg for _, msg in etalon(tmp_path, change) if "key_values[0]" in msg]
    assert len(found) == 1
    assert "Hz converts to c/a only with state the paper's length a as `unit_length" in found[0]
