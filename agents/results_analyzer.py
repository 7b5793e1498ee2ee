"""ResultsAnalyzerAgent: explains the comparison numbers that code computed."""

from __future__ import annotations

from typing import Literal

from agents.common import AgentModel, StageId
from agents.physics_sanity import BacktrackSuggestion

AGENT = "results_analyzer"


class FigureNarrative(AgentModel):
    figure_id: str
    narrative: str
    """What matches and what does not, citing the computed numbers."""


class Discrepancy(AgentModel):
    figure_id: str
    quantity: str
    """What differs, e.g. `stop-band edge`."""
    description: str
    likely_cause: str
    severity: Literal["minor", "significant", "critical"]
    """Held to the figure's class: minor only beside SUCCESS or PARTIAL, critical only
    beside FAILURE (code strikes a row whose severity does not fit)."""
    curve_id: str | None = None
    """The curve the row is about (with `feature`: the matched feature it names)."""
    feature: int | None = None
    """Index of the feature in the curve's `features` list, when the row names one."""
    direction: Literal["red", "blue"] | None = None
    """Where the reproduced feature lies against the paper's on a spectral axis; code
    checks it against the matched positions (so does any 'to the red/blue' in prose)."""


class Claim(AgentModel):
    """One number the prose cites, named by the comparison quantity it is."""

    figure_id: str
    curve_id: str | None = None
    """The curve; a table row's labels (`m=5`); a band diagram's `band<n>` or `gap<n>`."""
    quantity: str
    """A comparison quantity of that curve: a metric (`rms_rel`, `max_abs_rel`,
    `feature_shift_rel`, `feature_height_rel`, `feature_width_rel`), `rms_abs`,
    `max_abs`, `coverage`, or with `feature` a matched feature's `x_paper`, `x_sim`,
    `shift_rel`, `y_paper`, `y_sim`, `height_rel`, `width_paper`, `width_sim`,
    `width_rel`. Of a table (curve_id: the row's labels as `m=5` or `band=2,k=X`):
    `<column>.stated`, `<column>.measured`, `<column>.error` (a Q's error is
    log10(Q_run/Q_paper)), `matched.freq`. Of a band diagram: curve_id `band<n>` with
    `rms_rel`, `max_rel`, `points`, `missing`, or `gap<n>` with `lower`, `upper`,
    `ratio` (measured), `stated_lower`, `stated_upper`, `stated_ratio`, `lower_rel`,
    `upper_rel`, `ratio_abs`."""
    feature: int | None = None
    """Index of the feature in the curve's `features` list (feature quantities only)."""
    value: float
    """The number exactly as the prose writes it."""
    unit: str = "1"
    """`%` when the prose writes a percentage of a fraction; else the quantity's unit."""
    relation: Literal["=", "<", ">"] = "="
    """`<` when the prose gives an upper bound ("below 0.1 %", "sub-0.1 %"), `>` a lower
    bound; `=` (default) when it gives the value itself."""


class AnalysisOutput(AgentModel):
    stage_id: StageId
    summary: str
    """One paragraph on the stage's reproduction."""
    per_figure: list[FigureNarrative] = []
    discrepancies: list[Discrepancy] = []
    claims: list[Claim] = []
    """Every number the prose cites (summary, narratives, discrepancies): code checks
    each against the same computed quantity; a number without a claim is unchecked."""
    backtrack_suggestion: BacktrackSuggestion | None = None
    """Only when the results reveal a wrong assumption of an earlier stage (wrong geometry
    type, wrong material, wrong wavelength range), never for quantitative discrepancies
    this stage can explain; the supervisor decides, through the same decision matrix as
    PhysicsSanity's suggestions."""


def context(plan_stage: dict, comparison: dict, checks: dict, figures: list[dict]) -> dict:
    return {
        "current_stage": plan_stage,
        "comparison": comparison,
        "checks": checks,
        "target_figures": figures,
    }
