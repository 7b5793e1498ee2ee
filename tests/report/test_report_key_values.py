"""The report shows each key value the paper states beside what the reproduction gives:
the classification counts them, so the reader must see them, a
wrong one with its error and class, one the reproduced range cannot reach as n/a."""

from reprolab.physics import compare
from reprolab.report import markdown

X = [600.0, 650.0, 700.0, 750.0]  # nm
Y = [0.1, 0.3, 0.5, 0.2]


def figure(*kvs) -> dict:
    curve = {"curve_id": "T", **compare.compare_curve(X, Y, X, Y)}  # as steps/compare.py
    curve["classes"] = compare.classify_curve(curve)
    curve["key_values"] = [compare.key_value(k, X, Y) for k in kvs]
    return {"classification": "FAILURE", "curves": [curve]}


def test_key_values_are_shown_with_error_and_class():
    fig = figure(
        {"quantity": "peak T", "kind": "max_y", "value": 0.5, "unit": "1"},
        {"quantity": "peak wavelength", "kind": "x_of_max", "value": 760.0, "unit": "nm"},
        {"quantity": "T at 900 nm", "kind": "y_at_x", "x": 900.0, "value": 0.2, "unit": "1"},
    )
    table = "\n".join(markdown.key_value_table(fig))
    assert "| T | peak T | 0.5 | 0.5 | 0 % | SUCCESS |" in table
    # the maximum refined between samples (a parabola through the top three): 695 nm
    assert "| T | peak wavelength | 760 nm | 695 nm | 8.6 % | FAILURE |" in table
    assert "| T | T at 900 nm | 0.2 | n/a | n/a | FAILURE |" in table  # outside the range
    section = "\n".join(markdown.figure_section("fig2", "T", "stage1", fig, [], ""))
    assert table in section


def test_a_figure_without_key_values_has_no_table():
    assert markdown.key_value_table(figure()) == []
