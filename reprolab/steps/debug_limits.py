"""What quick-check mode changes about a stage's run:
one point per sweep and a runtime cap per stage. The resolution factor is exported to
the scripts by the workflow (REPROLAB_RESOLUTION_SCALE)."""

from __future__ import annotations

DEFAULT_MAX_STAGE_MINUTES = 10.0


def debug_settings(config: dict) -> dict | None:
    """The debug block when quick-check mode is on, else None."""
    debug = config.get("debug") or {}
    return debug if debug.get("enabled") else None


def single_point(design):
    """The design with its sweep cut to one point (the middle value), and a note; the
    design itself when it has no sweep. The kept value is the one a full run would
    reach halfway, so the quick check sees a representative structure."""
    if design.sweep is None or len(design.sweep.values) <= 1:
        return design, None
    values = design.sweep.values
    kept = values[len(values) // 2]
    sweep = design.sweep.model_copy(update={"values": [kept]})
    note = (
        f"quick check: 1 of {len(values)} sweep points ({design.sweep.parameter}={kept}); "
        "the full run sweeps them all"
    )
    return design.model_copy(update={"sweep": sweep}), note


def capped_budget(budget_minutes: float, debug: dict) -> tuple[float, str | None]:
    """The stage's budget under the quick check's per-stage cap, and a note when capped."""
    cap = float(debug.get("max_stage_runtime_minutes", DEFAULT_MAX_STAGE_MINUTES))
    if budget_minutes <= cap:
        return budget_minutes, None
    return cap, (
        f"quick check: runtime capped at {cap:g} min (the plan gives this stage "
        f"{budget_minutes:g} min)"
    )


def for_quick_check(design, budget_minutes: float, config: dict):
    """(design, budget in minutes, notes) as the run should use them."""
    debug = debug_settings(config)
    if debug is None:
        return design, budget_minutes, []
    design, sweep_note = single_point(design)
    budget_minutes, cap_note = capped_budget(budget_minutes, debug)
    return design, budget_minutes, [n for n in (sweep_note, cap_note) if n]
