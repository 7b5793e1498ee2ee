"""The convergence step's resolution evidence from coarser runs (the default method):
the stage rerun at each of `checks.convergence_scales` (0.8 and 0.6 of its resolution)
and every compared quantity given its Richardson error estimate at the chosen resolution
(reprolab.physics.grid_convergence). `checks.convergence_method: refine_2x` keeps the
2x-resolution rerun instead.
"""

from __future__ import annotations

from pathlib import Path

from reprolab.artifacts import load_result
from reprolab.physics import convergence as conv_mod
from reprolab.physics import grid_convergence as gc
from reprolab.physics import thresholds as th
from reprolab.physics.lint import RESOLUTION_SCALE_ENV

COARSE = gc.COARSE
METHODS = ("coarse", "refine_2x")


def method(config: dict) -> str:
    """`checks.convergence_method`: refine_2x (the default) or coarse (opt-in)."""
    value = config.get("checks", {}).get("convergence_method", "refine_2x")
    if value not in METHODS:
        raise ValueError(
            f"checks.convergence_method is {value!r}; valid: {', '.join(METHODS)} "
            "(config/config.yaml)"
        )
    return value


def scales(config: dict) -> tuple[float, float]:
    """`checks.convergence_scales`: two resolution factors, 0 < mid < 1, coarse < mid."""
    raw = config.get("checks", {}).get("convergence_scales", list(gc.DEFAULT_SCALES))
    ok = (
        isinstance(raw, (list, tuple))
        and len(raw) == 2
        and all(isinstance(s, (int, float)) for s in raw)
        and 0 < raw[1] < raw[0] < 1
    )
    if not ok:
        raise ValueError(
            f"checks.convergence_scales is {raw!r}; valid: two factors in (0, 1), the first "
            "larger, e.g. [0.8, 0.6] (config/config.yaml)"
        )
    return float(raw[0]), float(raw[1])


def resolution_variants(config: dict, names: list[str]) -> tuple[list[str], object]:
    """(the variants to run, the scale convergence.json states): the 2x resolution rerun
    replaced by the coarser runs unless the method is refine_2x."""
    if method(config) == "refine_2x" or conv_mod.RESOLUTION not in names:
        return names, 2
    return [COARSE if n == conv_mod.RESOLUTION else n for n in names], list(scales(config))


def folder_of(scale: float) -> str:
    return f"convergence_{scale:g}x"


def run_coarse(run, design, script: Path, plan_path, stage_dir: Path, host) -> dict:
    """The coarser runs (each record in <folder>/result.json) and the Richardson
    comparison of the run with them; `host` gives the convergence step's helpers
    (compare_runs, kept_rerun, scaled_env: reprolab.steps.convergence)."""
    sc = scales(run.config)
    var = {"id": COARSE, "env": {RESOLUTION_SCALE_ENV: [f"{s:g}" for s in sc]}, "ran": False}
    var.update(folder=[folder_of(s) for s in sc], quantities=[], note="", scales=list(sc))
    if RESOLUTION_SCALE_ENV not in script.read_text(encoding="utf-8"):
        var["note"] = f"the script ignores {RESOLUTION_SCALE_ENV}: no coarser runs (not run)"
        return var
    seconds, reused, var["runs"] = 0.0, [], []
    run_s = load_result(stage_dir / "result.json").runtime_seconds
    dims = design.dimensions
    for s in sc:
        rerun, kept = _rerun(run, design, script, plan_path, stage_dir / folder_of(s), s, host)
        seconds += rerun.get("runtime_seconds") or 0.0
        reused.append(kept)
        # predicted before it ran (pixels x steps from the run's own seconds), and actual
        predicted = run_s * gc.cost_ratio([s], dims) if run_s else None
        var["runs"].append(
            {
                "scale": s,
                "predicted_seconds": predicted,
                "runtime_seconds": rerun.get("runtime_seconds"),
            }
        )
        if rerun.get("failure") or rerun.get("exit_code"):
            var["note"] = f"the {s:g}x run failed: {rerun.get('failure') or rerun['exit_code']}"
            var["quantities"] = [
                conv_mod.quantity(
                    COARSE, "rerun", None, None, float("nan"), th.CONVERGENCE_POINTWISE
                )
            ]
            var.update(runtime_seconds=seconds, reused=all(reused))
            return var
    var.update(runtime_seconds=seconds, reused=all(reused), ran=True)
    runs = [stage_dir / folder_of(s) / "run" for s in sc]
    rows = [host.compare_runs(run, design, stage_dir / "run", r, COARSE, True) for r in runs]
    var["quantities"] = gc.combine(rows[0], rows[1], sc)
    if not var["quantities"]:
        var["note"] = f"{COARSE}: nothing to compare (no reproduced curve, key value or mode)"
    return var


def _rerun(run, design, script: Path, plan_path, folder: Path, scale: float, host):
    """(the record of the stage run at `scale` of its resolution, whether it was kept)."""
    from reprolab.artifacts import RunResult, load_plan, plan_stage, write_result
    from reprolab.fileio import sha256_file
    from reprolab.jobs import stage_run

    value = f"{scale:g}"
    kept = host.kept_rerun(folder, script, RESOLUTION_SCALE_ENV, value)
    if kept is not None:
        return kept, True
    stage = plan_stage(load_plan(plan_path), design.stage_id)
    with host.scaled_env(RESOLUTION_SCALE_ENV, value):
        rerun = stage_run.run_stage(
            design,
            stage.runtime_budget_minutes,
            run.config.get("simulation", {}),
            script,
            folder,
        )
    env = {RESOLUTION_SCALE_ENV: value}
    rerun.update(script=str(script), script_sha256=sha256_file(script), scale_env=env)
    write_result(folder / "result.json", RunResult.model_validate(rerun))
    return rerun, False
