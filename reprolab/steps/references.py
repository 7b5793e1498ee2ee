"""Each reproduced curve against the paper's reference curves of its figure."""

from __future__ import annotations

from reprolab.physics import compare, positions, reference_curves


def compare_with_references(paper, fo, xs, ys, entry: dict) -> list[dict]:
    """For every reference curve of `fo`'s curve (paper_format.Figure.references_of):
    the reproduction and the paper's data each compared with it, and which of the two
    the reproduction agrees with. Empty without reference curves."""
    figure = paper.figure(fo.figure_id)
    if not hasattr(figure, "references_of"):
        return []
    out = []
    xp, yp = paper.curve_data(fo.figure_id, fo.curve_id, fo.x_column)
    for ref in figure.references_of(fo.curve_id):
        xr, yr = reference_curves.on_data_range(
            *paper.curve_data(fo.figure_id, ref.curve_id, fo.x_column), xp
        )
        axis = positions.axis_context(figure, ref.curve_id, fo.x_column)
        sim_ref = reference_curves.judged(compare.compare_curve(xr, yr, xs, ys, axis))
        paper_ref = reference_curves.judged(
            compare.compare_curve(xr, yr, xp, yp, axis | {"both_plotted": True})
        )
        data_class = reference_curves.classification(entry["classes"])
        out.append(
            {
                "reference_id": ref.curve_id,
                "label": ref.label,
                "sim_vs_reference": sim_ref,
                "paper_vs_reference": paper_ref,
                **reference_curves.agreement(
                    data_class, sim_ref["classification"], paper_ref["classification"]
                ),
            }
        )
    return out
