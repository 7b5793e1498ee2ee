"""One check's result: name, status (pass | warn | fail), what was measured, threshold."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Check:
    name: str
    status: str  # pass | warn | fail
    detail: str
    value: float | None = None
    threshold: str = ""
