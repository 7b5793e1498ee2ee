"""The pieces of PDF reading that keep a number's meaning: scripts written so that
they stay readable and unambiguous, broken words joined (compound hyphens kept), printed
numbers read with their exponents, and tables cut into cells at the gaps between
words, never inside a word."""

import pytest

from reprolab.cli.pdf_tables import heading_unit, key_values, mode_table, number
from reprolab.cli.pdf_text import join_hyphen, script


@pytest.mark.parametrize(
    ("text", "kind", "out"),
    [
        ("4", "^", "⁴"),
        ("-1 ", "^", "⁻¹ "),
        ("2N", "^", "^(2N)"),
        ("i", "_", "_i"),
        ("eff", "_", "_eff"),
        ("1/2", "_", "_(1/2)"),
    ],
)
def test_script(text, kind, out):
    assert script(text, kind) == out


def test_join_hyphen():
    assert join_hyphen("in the pho-", "tonics platform") == ("in the photonics", "platform")
    assert join_hyphen("a Lorentz-", "Drude model") == ("a Lorentz-Drude", "model")
    assert join_hyphen("a range 10 -", "20 nm") is None  # not a broken word
    assert join_hyphen("ends here.", "next") is None


@pytest.mark.parametrize(
    ("cell", "value"),
    [
        ("2.1 × 10⁴", 2.1e4),
        ("1.53×10⁵", 1.53e5),
        ("2.1×10^4", 2.1e4),
        ("3 × 10⁻²", 0.03),
        ("−0.5", -0.5),
        ("1.2e4", 1.2e4),
        ("104 nm", None),
        ("Drude", None),
    ],
)
def test_number(cell, value):
    assert number(cell) == (pytest.approx(value) if value is not None else None)


def test_headings_name_values_and_units():
    assert heading_unit("λ (nm)") == ("λ", "nm") and heading_unit("Q") == ("Q", None)
    rows = [
        ["Parameter", "Value", "Unit"],
        ["Gap", "300", "nm"],
        ["Resolution (pixels per µm)", "40", ""],
    ]
    kv = {k["quantity"]: (k["value"], k["unit"]) for k in key_values(rows, "Table 1")}
    assert kv == {"Gap": (300, "nm"), "Resolution (pixels per µm)": (40, "pixels per µm")}
    assert mode_table(rows, "tab1", "Table 1. Parameters.") is None  # no label column
    modes = [["m", "f (THz)", "Q"], ["5", "193.4", "1.2 × 10⁴"]]
    entry = mode_table(modes, "tab2", "Table 2. Modes.")
    assert entry["rows"] == [{"m": 5, "frequency": 193.4, "Q": 1.2e4}]
    assert entry["title"] == "Modes" and entry["labels"] == ["m"]
