"""Formatting helpers shared by the report's section builders."""

from __future__ import annotations

from collections import Counter

from reprolab.physics import thresholds as th


def table_header(*names: str) -> list[str]:
    return ["| " + " | ".join(names) + " |", "|" + "---|" * len(names)]


def overall_classification(figure_classes: list[str]) -> str:
    return th.worst(figure_classes) if figure_classes else "FAILURE"


def classification_tally(figure_rows: list[tuple]) -> tuple[str, Counter]:
    """The overall class and the count per class, so that the summary and the
    conclusions state the same numbers."""
    classes = [fig["classification"] for _, _, fig in figure_rows]
    return overall_classification(classes), Counter(classes)


def cell(value, spec: str = ".3g") -> str:
    """A table cell: a number in `spec` (`%`: a fraction as a percentage), `–` for
    nothing, `n/a` for NaN, any other value as its text."""
    if value is None:
        return "–"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    if value != value:
        return "n/a"
    if spec == "%":
        # below a millionth of a percent a difference is floating-point noise
        return "0 %" if abs(value) < 1e-8 else f"{value * 100:.2g} %"
    return format(value, spec)
