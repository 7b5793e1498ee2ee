"""Polar figures and reference curves in the paper format: read from a real paper
folder, compared through the figure's own axes, drawn on polar axes; every wrong
declaration refused naming what would be valid."""

from pathlib import Path

import numpy as np
import pytest
import yaml

from reprolab.paper import Paper
from reprolab.physics import compare, positions
from reprolab.report import polar_plot
from tests.support.builders import copy_paper

THETA = np.arange(0.0, 360.0, 5.0)


def pattern(theta):
    # two in-phase dipoles λ/2 apart on x, seen in the plane: the main lobe at 0°
    af = np.cos(np.pi / 2 * np.sin(np.radians(theta)))
    return np.maximum(af**2, 1e-4)


def _paper(tmp_path: Path, **figure) -> Path:
    folder = tmp_path / "paper"
    copy_paper(folder)
    rows = "\n".join(
        f"{t:g},{10 * np.log10(p):.4f}" for t, p in zip(THETA, pattern(THETA), strict=True)
    )
    (folder / "data" / "fig5_P.csv").write_text("angle_deg,P\n" + rows + "\n")
    (folder / "data" / "fig5_af.csv").write_text("angle_deg,P\n" + rows + "\n")
    fig = {
        "figure_id": "fig5",
        "title": "Pattern",
        "image": "figures/fig1.png",
        "x_axis": {"label": "θ (deg)", "quantity": "angle", "unit": "deg"},
        "y_axes": {"left": {"label": "P/Pmax (dB)", "quantity": "dimensionless"}},
        "polar": {"normalise": "max", "db": True},
        "curves": [
            {"curve_id": "P", "label": "FDTD", "digitized": "data/fig5_P.csv"},
            {"curve_id": "af", "label": "array factor", "digitized": "data/fig5_af.csv"}
            | {"reference": True},
        ],
    } | figure
    meta = yaml.safe_load((folder / "metadata.yaml").read_text())
    meta["figures"].append(fig)
    (folder / "metadata.yaml").write_text(yaml.safe_dump(meta, allow_unicode=True))
    return folder


def test_polar_figure_is_compared_and_drawn_as_the_paper_plots_it(tmp_path):
    paper = Paper(_paper(tmp_path))
    fig = paper.figure("fig5")
    assert [c.curve_id for c in fig.result_curves] == ["P"]
    assert [c.curve_id for c in fig.references_of("P")] == ["af"]
    axis = positions.axis_context(fig, "P", "angle_deg")
    assert axis["polar"] == {"normalise": "max", "db": True}
    xp, yp = paper.curve_data("fig5", "P", "angle_deg")
    sim_theta = np.arange(-180.0, 180.0, 1.0)
    power = 3.0 * pattern(sim_theta)  # a power in the simulation's units, on −180…180°
    res = compare.compare_curve(xp, yp, sim_theta, power, axis)
    assert set(compare.classify_curve(res).values()) == {"SUCCESS"}
    rotated = 3.0 * pattern(sim_theta - 10.0)
    res = compare.compare_curve(xp, yp, sim_theta, rotated, axis)
    assert compare.classify_curve(res)["feature_shift_rel"] != "SUCCESS"
    entry = {"curve_id": "P", "x_column": "angle_deg", "sim": {"x": list(sim_theta), "y": power}}
    out = polar_plot.polar_overlay(
        paper,
        {"figure_id": "fig5", "classification": "SUCCESS", "curves": [entry]},
        tmp_path / "o.png",
    )
    assert Path(out).stat().st_size > 5_000


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"x_axis": {"label": "λ", "quantity": "wavelength", "unit": "um"}}, "quantity 'angle'"),
        (
            {
                "curves": [
                    {"curve_id": "P", "label": "p", "digitized": "data/fig5_P.csv"},
                    {"curve_id": "af", "label": "a", "reference": True},
                ]
            },
            "needs `digitized`",
        ),
        (
            {
                "curves": [
                    {"curve_id": "P", "label": "p", "digitized": "data/fig5_P.csv"},
                    {
                        "curve_id": "af",
                        "label": "a",
                        "digitized": "data/fig5_af.csv",
                        "reference": True,
                        "reference_for": ["Q"],
                    },
                ]
            },
            "not a result curve",
        ),
        (
            {
                "curves": [
                    {
                        "curve_id": "af",
                        "label": "a",
                        "digitized": "data/fig5_af.csv",
                        "reference": True,
                    }
                ]
            },
            "at least one result curve",
        ),
    ],
)
def test_wrong_declarations_are_refused(tmp_path, change, message):
    with pytest.raises(Exception, match=message):
        Paper(_paper(tmp_path, **change))
