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


def classification(classes: dict[str, str]) -> str:
    return th.worst(list(classes.values()))
