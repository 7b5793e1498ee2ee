"""The report's narrow-line table and reasons say 'linewidths' and the scale chosen."""

import numpy as np

from reprolab.physics import compare, lines
from reprolab.report import lines_table, markdown, why

F0, W = 0.25, 5e-4
CTX = {"x_quantity": "frequency", "x_unit": "c/a", "y_scale": "linear", "polar": None}


def figure(shift_linewidths: float) -> dict:
    xp = np.linspace(0.24, 0.26, 801)
    xs = np.linspace(0.24, 0.26, 2001)
    yp = lines.fano(xp, F0, W, 1.0, 0.1, 0.4)
    ys = lines.fano(xs, F0 + shift_linewidths * W, W, 1.0, 0.1, 0.4)
    res = compare.compare_curve(xp, yp, xs, ys, CTX)
    curve = {"curve_id": "T", "x_column": "frequency_c/a", **res}
    curve["classes"] = compare.classify_curve(res)
    return {
        "figure_id": "fig2",
        "curves": [curve],
        "classification": compare.th.worst(list(curve["classes"].values())),
    }


def test_table_shows_the_error_in_linewidths_and_the_scale():
    fig = figure(3.0)
    text = "\n".join(lines_table.line_table(fig))
    assert "| T | fano | 0.25 (c/a) | 0.2515 | 0.0005 | 3 linewidths" in text
    assert "FAILURE" in text
    assert "linewidth 0.0005 from the width of a Fano fit" in text
    assert "below the ordinary position tolerance 0.0025" in text
    reasons = why.figure_reasons(fig)
    assert any("fano line 0" in r and "3 linewidths off" in r for r in reasons)
    assert not any("line_shift_linewidths =" in r for r in reasons)  # said in linewidths
    section = "\n".join(markdown.figure_section("fig2", "t", "s1", fig, [], ""))
    assert "Narrow lines, judged in their linewidths" in section


def test_no_table_without_narrow_lines():
    x = np.linspace(1, 2, 201)
    res = compare.compare_curve(x, np.exp(-(((x - 1.5) / 0.05) ** 2)), x, x * 0 + 0.1)
    fig = {"figure_id": "f", "curves": [{"curve_id": "T", **res}]}
    assert lines_table.line_table(fig) == []
