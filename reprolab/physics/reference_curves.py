"""A paper's own reference curve (analytic theory, another solver) as a second reference.

The reproduction is judged against the paper's data; its agreement with the paper's
reference, and the paper data's own agreement with it, are said beside that verdict:
a reproduction that matches the theory but not the digitized points points at the
digitization or at the paper, not at the simulation.
"""

from __future__ import annotations

from reprolab.physics import thresholds as th

AGREES = ("both", "paper data", "paper reference", "neither")


def agreement(data_class: str, sim_ref_class: str, paper_ref_class: str) -> dict:
    """Which of the paper's data and its reference the reproduction agrees with (class
    SUCCESS), whether the paper's data agrees with its reference, and one sentence."""
    with_data, with_ref = data_class == "SUCCESS", sim_ref_class == "SUCCESS"
    agrees = AGREES[[with_data and with_ref, with_data, with_ref, True].index(True)]
    paper_ok = paper_ref_class == "SUCCESS"
    own = (
        "the paper's data agrees with its reference"
        if paper_ok
        else f"the paper's data itself differs from its reference ({paper_ref_class})"
    )
    text = {
        "both": "the reproduction agrees with the paper's data and its reference",
        "paper data": "the reproduction agrees with the paper's data, not its reference "
        f"({sim_ref_class})",
        "paper reference": "the reproduction agrees with the paper's reference, not its data "
        f"({data_class})",
        "neither": "the reproduction agrees with neither the paper's data "
        f"({data_class}) nor its reference ({sim_ref_class})",
    }[agrees]
    return {
        "agrees_with": agrees,
        "paper_agrees_with_reference": paper_ok,
        "summary": f"{text}; {own}",
    }


def on_data_range(x_ref, y_ref, x_paper) -> tuple[list[float], list[float]]:
    """The reference curve over the x range the paper's data covers: a theory drawn
    further than the data was digitized is judged where there is data to judge, so
    data lying on its reference over 90 % of its range is not cut short by the rest."""
    lo, hi = min(x_paper), max(x_paper)
    kept = [(x, y) for x, y in zip(x_ref, y_ref, strict=True) if lo <= x <= hi]
    if len(kept) < 2:
        return list(x_ref), list(y_ref)  # no overlap: the coverage says so
    return [x for x, _ in kept], [y for _, y in kept]


def classification(classes: dict[str, str]) -> str:
    return th.worst(list(classes.values()))


def judged(result: dict) -> dict:
    """A comparison with a reference as stored: coverage, metrics, classes, class."""
    from reprolab.physics import compare

    classes = compare.classify_curve(result)
    return {
        "coverage": result["coverage"],
        "metrics": result["metrics"],
        "classes": classes,
        "classification": classification(classes),
        "note": result.get("note", ""),
    }


def recheck(comparison: dict, curves: dict) -> list[str]:
    """Every stored reference comparison recomputed from the raw data; mismatches.

    `curves` holds, under ("reference", figure_id, curve_id, reference_id), the tuple
    (x_ref, y_ref, x_sim, y_sim, x_paper, y_paper, axis) (steps.analyze.raw_curves)."""
    from reprolab.physics import compare

    out = []
    for fig in comparison["figures"]:
        for curve in fig.get("curves", []):
            for ref in curve.get("references", []):
                key = ("reference", fig["figure_id"], curve["curve_id"], ref["reference_id"])
                where = f"{key[1]}/{key[2]} against reference {key[3]}"
                if key not in curves:
                    out.append(f"{where}: no raw data to recompute from")
                    continue
                xr, yr, xs, ys, xp, yp, axis = curves[key]
                xr, yr = on_data_range(xr, yr, xp)
                sim = judged(compare.compare_curve(xr, yr, xs, ys, axis))
                both = axis | {"both_plotted": True}  # the paper's data is plotted already
                own = judged(compare.compare_curve(xr, yr, xp, yp, both))
                data_class = classification(curve.get("classes", {}))
                fresh = agreement(data_class, sim["classification"], own["classification"])
                for name, stored, new in (
                    (
                        "reproduction",
                        ref["sim_vs_reference"]["classification"],
                        sim["classification"],
                    ),
                    (
                        "paper data",
                        ref["paper_vs_reference"]["classification"],
                        own["classification"],
                    ),
                    ("agrees_with", ref["agrees_with"], fresh["agrees_with"]),
                ):
                    if stored != new:
                        out.append(f"{where}: {name} stored {stored}, recomputed {new}")
    return out
