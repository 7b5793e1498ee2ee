"""CSV headers as a researcher writes them: a column name with parentheses and equals
signs is a name; a unit is read only from a trailing bracketed unit the axis can take
(`[dimensionless]`, `[1]`, `[%]`), else the column is in the axis unit; `check` shows
how each header was read."""

import pytest
import yaml

from reprolab import units
from reprolab.cli import main
from reprolab.paper import Paper
from tests.support.builders import copy_paper


@pytest.mark.parametrize(
    ("header", "quantity", "read"),
    [
        ("Re(epsilon)", "dimensionless", None),
        ("Q_sca = C_sca/(2r)", "dimensionless", None),
        ("Q_sca = C_sca/(2r)", "quality_factor", None),
        ("n (Sellmeier)", "dimensionless", None),
        ("T", "dimensionless", None),
        ("T [dimensionless]", "dimensionless", ("dimensionless", "1")),
        ("Re(epsilon) [1]", "dimensionless", ("dimensionless", "1")),
        ("R [%]", "dimensionless", ("dimensionless", "%")),
        ("R (%)", "dimensionless", ("dimensionless", "%")),
        ("wavelength (nm)", "frequency", ("wavelength", "nm")),
        ("wavelength_um", "wavelength", ("wavelength", "um")),
        ("photon energy (eV)", "energy", ("energy", "eV")),
    ],
)
def test_header_reading(header, quantity, read):
    assert units.column_unit(header, quantity) == read


@pytest.mark.parametrize(
    ("header", "quantity"),
    [("wavelength [furlong]", "wavelength"), ("T [m]", "dimensionless"), ("x (deg)", "length")],
)
def test_a_unit_the_axis_cannot_take_is_refused(header, quantity):
    with pytest.raises(units.UnitError, match=f"not a unit of the axis quantity {quantity}"):
        units.column_unit(header, quantity)


def test_natural_headers_pass_check_in_one_round(tmp_path, capsys):
    folder = tmp_path / "paper"
    copy_paper(folder)
    data = folder / "data"
    header = "wavelength (µm),T = I/I0 [dimensionless]"
    (data / "fig2_T.csv").write_text(header + "\n0.45,0.6\n0.5,0.7\n")
    (data / "fig2_R.csv").write_text("wavelength_um,R (%)\n0.45,40\n0.5,30\n")
    (data / "fig1_n.csv").write_text("wavelength (nm),Re(n)\n450,1.4656\n500,1.4630\n")
    capsys.readouterr()
    assert main(["check", str(folder)]) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    assert "data/fig2_T.csv: 'wavelength (µm)' in 'µm' (axis unit 'um'), " in out
    assert "'T = I/I0 [dimensionless]' in '1' (axis unit '1')" in out
    assert "data/fig1_n.csv: 'wavelength (nm)' in 'nm' (axis unit 'um'), 'Re(n)' in the axis" in out
    paper = Paper(folder)
    assert paper.curve_data("fig2", "R")[1] == [pytest.approx(0.4), pytest.approx(0.3)]
    assert paper.curve_data("fig1", "n")[0] == [pytest.approx(0.45), pytest.approx(0.5)]
    # a unit the axis cannot take is refused, naming the file, the column and what is valid
    (data / "fig2_R.csv").write_text("wavelength_um,R [m]\n0.45,40\n0.5,30\n")
    assert main(["check", str(folder)]) == 1
    err = capsys.readouterr().err
    assert "fig2_R.csv: column 'R [m]' states unit 'm', not a unit of the axis quantity" in err
    meta = yaml.safe_load((folder / "metadata.yaml").read_text())
    assert meta["figures"][1]["y_axes"]["left"]["quantity"] == "dimensionless"
