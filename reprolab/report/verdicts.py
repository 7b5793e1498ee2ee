"""One verdict per figure, the same wherever it is named (executive summary, figure
sections, summary table, conclusions, the campaign's index): its comparison's class,
capped by the verdict of the stage that made it. A stage the code failed (a check, the
run's validation, a missing target, the user's reject) made numbers that do not stand,
so none of its figures counts as SUCCESS, whatever its curves matched."""

from __future__ import annotations

from reprolab.physics import thresholds as th

# The best class a figure may count as under its stage's status (others: no cap).
STAGE_CAP = {"completed_failed": "FAILURE"}


def capped_figure(fig: dict, status: str | None, reason: str = "") -> dict:
    """The figure as the report counts it: `classification` capped by its stage's status,
    its comparison's own class kept as `comparison_class` with `capped_by` saying why."""
    cap = STAGE_CAP.get(status or "")
    if cap is None or th.worst([fig["classification"], cap]) == fig["classification"]:
        return fig
    return {
        **fig,
        "classification": cap,
        "comparison_class": fig["classification"],
        "capped_by": f"its stage is {status}" + (f" ({reason})" if reason else ""),
    }


def capped_comparison(comparison: dict, verdict: dict | None) -> dict:
    """A stage's comparison with every figure capped by the stage's verdict."""
    if not verdict:
        return comparison
    status, reason = verdict.get("status"), verdict.get("reason") or ""
    figures = [capped_figure(f, status, reason) for f in comparison.get("figures", [])]
    return {**comparison, "figures": figures}


def capped_note(fig: dict) -> str:
    """The words the report puts beside a capped class (empty when not capped)."""
    if "comparison_class" not in fig:
        return ""
    return (
        f" (its curves alone compare as {fig['comparison_class']}; counted "
        f"{fig['classification']} because "
        f"{fig['capped_by']})"
    )
