"""One check's result: name, status (pass | warn | fail | skip), what was measured,
threshold. `skip`: the check could not judge the run (its detail says why); it neither
passes nor fails the stage."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Check:
    name: str
    status: str  # pass | warn | fail | skip
    detail: str
    value: float | None = None
    threshold: str = ""
