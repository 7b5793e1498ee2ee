"""The convergence step's resolution evidence from coarser runs: the stage rerun at each
of `checks.convergence_scales` (about 0.75 and 0.55 of its resolution, moved to whole
pixels) and every compared quantity given its Richardson error estimate at the chosen
resolution (reprolab.physics.grid_convergence); a resonance's PML doubled in one more
run at the coarsest scale. `checks.convergence_method` picks it or the 2x rerun; `auto`
(the default) decides by it in 3D and starts with it in 2D, escalating to the 2x rerun
when it does not show convergence (docs/checks.md "Convergence").

The coarser runs a stage needs run together first (`run_coarse_batch`, through
reprolab.jobs.variant_runs: one sandboxed process for all of them where they can share
one, each with its own record, limits and failure in `<folder>/result.json`);
`run_coarse` and `run_pml_coarse` then compare them. `coarse_runs` names the (folder,
scale variables) of every coarser run a stage asks for: what another step that reruns a
stage at other scales may reuse.
"""

from __future__ import annotations

from pathlib import Path

from reprolab.artifacts import load_result
from reprolab.physics import convergence as conv_mod
from reprolab.physics import grid_convergence as gc
from reprolab.physics import thresholds as th
from reprolab.physics.lint import PML_SCALE_ENV, RESOLUTION_SCALE_ENV
from reprolab.physics.record_checks import load_record

COARSE = gc.COARSE
# The PML doubling at the coarsest scale, in the list of variants to run (its result is
# the pml_2x variant: judged as the 2x-PML rerun is).
PML_COARSE = "pml_2x_coarse"
METHODS = ("auto", "coarse", "refine_2x")
# `auto` takes the coarser runs where the 2x rerun costs most (3D: 16x the run against
# 0.59x measured) and decides by them alone. In 2D it takes them first (0.64x against
# 6.5x) and escalates to the 2x rerun when they do not show convergence: the coarser runs
# of the planted ring at 10 px/a (8 and 6 px/a) are pre-asymptotic in Q (1298, 1045,
# 5137) and alone would fail a correct run. 1D keeps the 2x rerun: the coarser runs cost
# 1.25-1.30x there against 2.0-2.1x, and a 1D stage is verified mostly because it is
# under-resolved, where escalation would pay both.
AUTO_COARSE_DIMS = (3,)
AUTO_ESCALATE_DIMS = (2,)


def method(config: dict, dims: int | None = None) -> str:
    """The method a stage of `dims` dimensions starts with: `checks.convergence_method`
    (auto, the default: coarse in 2D and 3D, refine_2x in 1D; coarse; refine_2x).
    Without `dims`, the setting itself."""
    value = config.get("checks", {}).get("convergence_method", "auto")
    if value not in METHODS:
        raise ValueError(
            f"checks.convergence_method is {value!r}; valid: {', '.join(METHODS)} "
            "(config/config.yaml)"
        )
    if value != "auto" or dims is None:
        return value
    return "coarse" if dims in AUTO_COARSE_DIMS + AUTO_ESCALATE_DIMS else "refine_2x"


def escalates(config: dict, dims: int | None) -> bool:
    """Whether coarse evidence that does not show convergence is followed by the 2x
    rerun, which then decides (`auto` in 2D)."""
    return method(config) == "auto" and dims in AUTO_ESCALATE_DIMS


def unconvincing(variants: list[dict]) -> list[str]:
    """Why the 2x rerun could change the coarse evidence's verdict: a variant not run or
    with nothing compared, a quantity whose bound fails (the coarser runs may be
    pre-asymptotic, which the 2x rerun shows), a quantity with no estimate (a mode or
    curve a coarser run did not give). A bound that passes or warns stands whatever its
    order: its safety factor already covers an order not observed. Empty when none."""
    why = []
    for var in variants:
        if not var.get("ran") or not var.get("quantities"):
            why.append(f"{var['id']}: {var.get('note') or 'nothing compared'}")
            continue
        for q in var["quantities"]:
            if q["status"] == "fail":
                why.append(f"{q['name']}: fail")
            elif q.get("no_estimate"):
                why.append(f"{q['name']}: {q['status']} ({q['no_estimate']})")
    return why


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
            f"larger, e.g. {list(gc.DEFAULT_SCALES)} (config/config.yaml)"
        )
    return float(raw[0]), float(raw[1])


def resolution_variants(config: dict, names: list[str], dims: int) -> tuple[list[str], object]:
    """(the variants to run, the scale convergence.json states): with the coarse method
    the 2x resolution rerun is replaced by the coarser runs and the 2x-PML rerun by the
    PML doubling at the coarsest scale."""
    if method(config, dims) == "refine_2x" or conv_mod.RESOLUTION not in names:
        return names, 2
    swap = {conv_mod.RESOLUTION: COARSE, conv_mod.PML: PML_COARSE}
    return [swap.get(n, n) for n in names], list(scales(config))


def folder_of(scale: float, pml: bool = False) -> str:
    """A coarser run's folder, named by its configured scale."""
    return f"convergence_{scale:g}x" + ("_pml2x" if pml else "")


def env_value(scale: float) -> str:
    """The scale variable's text: enough digits that Meep finds the same whole pixels."""
    return f"{scale:.10g}"


BATCH_FOLDER = "convergence_coarse"  # the coarser runs' shared worker and job logs


def coarse_runs(run, names: list[str], script: Path, stage_dir: Path) -> list[tuple]:
    """(folder, scale variables) of every coarser run `names` asks for: the two scales
    (the script reads the resolution scale), and the PML doubled at the coarsest (a
    resonance; the script reads the PML scale)."""
    code = script.read_text(encoding="utf-8")
    if COARSE not in names or RESOLUTION_SCALE_ENV not in code:
        return []
    nominal = scales(run.config)
    sc = gc.grid_scales(nominal, load_record(stage_dir / "run"))[0]
    out = [
        (stage_dir / folder_of(n), {RESOLUTION_SCALE_ENV: env_value(s)})
        for n, s in zip(nominal, sc, strict=True)
    ]
    if PML_COARSE in names and PML_SCALE_ENV in code:
        env = {RESOLUTION_SCALE_ENV: env_value(sc[1]), PML_SCALE_ENV: "2"}
        out.append((stage_dir / folder_of(nominal[1], pml=True), env))
    return out


def run_coarse_batch(run, design, names, script: Path, plan_path, stage_dir: Path, host):
    """The coarser runs `names` asks for that no earlier step kept, together
    (reprolab.jobs.variant_runs: one process for all of them where they can share one,
    each with its own record, limits and failure), each record written to its
    <folder>/result.json; {folder name: (record, kept)} for every coarser run asked."""
    from reprolab.artifacts import RunResult, load_plan, plan_stage, write_result
    from reprolab.fileio import sha256_file
    from reprolab.jobs import submit, variant_runs

    done, todo = {}, []
    for folder, env in coarse_runs(run, names, script, stage_dir):
        kept = host.kept_rerun(folder, script, env)
        if kept is not None:
            done[folder.name] = (kept, True)
        else:
            todo.append((folder, env))
    if not todo:
        return done
    budget = plan_stage(load_plan(plan_path), design.stage_id).runtime_budget_minutes
    sim_cfg = submit.named_config(
        run.config.get("simulation", {}),
        run.paper_id,
        f"{design.stage_id}-{BATCH_FOLDER}",
        run.out_dir,
    )
    records = variant_runs.run_variants(
        design, budget, sim_cfg, script, todo, stage_dir / BATCH_FOLDER
    )
    for (folder, env), rerun in zip(todo, records, strict=True):
        rerun.update(script=str(script), script_sha256=sha256_file(script), scale_env=env)
        write_result(folder / "result.json", RunResult.model_validate(rerun))
        done[folder.name] = (rerun, False)
    return done


def run_coarse(run, design, script: Path, plan_path, stage_dir: Path, host, ran=None) -> dict:
    """The coarser runs (each record in <folder>/result.json) and the Richardson
    comparison of the run with them; `host` gives the convergence step's helpers
    (compare_runs, kept_rerun, scaled_env: reprolab.steps.convergence); `ran`: the
    runs `run_coarse_batch` made, by folder name (the others are run here)."""
    nominal = scales(run.config)
    sc, misfit = gc.grid_scales(nominal, load_record(stage_dir / "run"))
    var = {"id": COARSE, "env": {RESOLUTION_SCALE_ENV: [env_value(s) for s in sc]}, "ran": False}
    var.update(folder=[folder_of(s) for s in nominal], quantities=[], note="", scales=sc)
    var.update(configured_scales=list(nominal), cell_misfit=misfit)
    if RESOLUTION_SCALE_ENV not in script.read_text(encoding="utf-8"):
        var["note"] = f"the script ignores {RESOLUTION_SCALE_ENV}: no coarser runs (not run)"
        return var
    seconds, reused, var["runs"] = 0.0, [], []
    run_s = load_result(stage_dir / "result.json").runtime_seconds
    for s, folder in zip(sc, var["folder"], strict=True):
        env = {RESOLUTION_SCALE_ENV: env_value(s)}
        rerun, kept = (ran or {}).get(folder) or _rerun(
            run, design, script, plan_path, stage_dir / folder, env, host
        )
        seconds += rerun.get("runtime_seconds") or 0.0
        reused.append(kept)
        # predicted before it ran (pixels x steps from the run's own seconds), and actual
        predicted = run_s * gc.cost_ratio([s], design.dimensions) if run_s else None
        var["runs"].append(
            {
                "scale": s,
                "predicted_seconds": predicted,
                "runtime_seconds": rerun.get("runtime_seconds"),
            }
        )
        if rerun.get("failure") or rerun.get("exit_code"):
            return _failed(var, f"the {s:g}x run failed", rerun, seconds, reused)
    var.update(runtime_seconds=seconds, reused=all(reused), ran=True)
    runs = [stage_dir / f / "run" for f in var["folder"]]
    rows = [host.compare_runs(run, design, stage_dir / "run", r, COARSE, True) for r in runs]
    var["quantities"] = gc.combine(rows[0], rows[1], sc)
    if not var["quantities"]:
        var["note"] = f"{COARSE}: nothing to compare (no reproduced curve, key value or mode)"
    return var


def run_pml_coarse(run, design, script: Path, plan_path, stage_dir: Path, host, ran=None):
    """The PML doubled at the coarsest scale (its record in <folder>/result.json),
    compared with the coarsest run (run_coarse ran it first): the pml_2x variant; `ran`
    as `run_coarse`'s."""
    nominal = scales(run.config)
    s = gc.grid_scales(nominal, load_record(stage_dir / "run"))[0][1]
    folder = folder_of(nominal[1], pml=True)
    env = {RESOLUTION_SCALE_ENV: env_value(s), PML_SCALE_ENV: "2"}
    var = {"id": conv_mod.PML, "env": env, "folder": folder, "ran": False, "quantities": []}
    var.update(note="", resolution_scale=s)
    if PML_SCALE_ENV not in script.read_text(encoding="utf-8"):
        var["note"] = (
            f"the script ignores {PML_SCALE_ENV}: no {conv_mod.PML} rerun possible (not run)"
        )
        return var
    low = stage_dir / folder_of(nominal[1]) / "run"
    if not low.is_dir():
        var["note"] = f"no {s:g}x run to compare the doubled PML with (not run)"
        return var
    rerun, kept = (ran or {}).get(folder) or _rerun(
        run, design, script, plan_path, stage_dir / folder, env, host
    )
    if rerun.get("failure") or rerun.get("exit_code"):
        seconds = rerun.get("runtime_seconds") or 0.0
        return _failed(var, f"the {s:g}x run with twice the PML failed", rerun, seconds, [kept])
    var.update(runtime_seconds=rerun.get("runtime_seconds"), reused=kept, ran=True)
    var["quantities"] = gc.pml_quantities(stage_dir / "run", low, stage_dir / folder / "run", s)
    if not var["quantities"]:
        var["note"] = f"{conv_mod.PML}: nothing to compare (no Harminv mode)"
    return var


def _failed(var: dict, what: str, rerun: dict, seconds: float, reused: list) -> dict:
    failure = rerun.get("failure") or {}
    var.update(runtime_seconds=seconds, reused=all(reused))
    if failure and failure.get("action") != "regenerate_code":
        # Stopped by a limit or from outside: no evidence either way, said in one line.
        var["no_evidence"] = failure.get("kind")
        var["note"] = (
            f"no evidence: {what.replace(' failed', '')} was stopped: {failure.get('kind')}"
        )
        return var
    said = f"{failure.get('kind')} {failure.get('summary', '')}" if failure else rerun["exit_code"]
    var["note"] = f"{what}: {said}".splitlines()[0][:300]
    nan = float("nan")
    var["quantities"] = [
        conv_mod.quantity(var["id"], "rerun", None, None, nan, th.CONVERGENCE_POINTWISE)
    ]
    var.update(runtime_seconds=seconds, reused=all(reused))
    return var


def _rerun(run, design, script: Path, plan_path, folder: Path, env: dict, host):
    """(the record of the stage run with the scale variables `env`, whether it was kept)."""
    from reprolab.artifacts import RunResult, load_plan, plan_stage, write_result
    from reprolab.fileio import sha256_file
    from reprolab.jobs import stage_run, submit

    kept = host.kept_rerun(folder, script, env)
    if kept is not None:
        return kept, True
    stage = plan_stage(load_plan(plan_path), design.stage_id)
    with host.scaled_env(env):
        rerun = stage_run.run_stage(
            design,
            stage.runtime_budget_minutes,
            submit.named_config(
                run.config.get("simulation", {}),
                run.paper_id,
                f"{design.stage_id}-{Path(folder).name}",
                run.out_dir,
            ),
            script,
            folder,
        )
    rerun.update(script=str(script), script_sha256=sha256_file(script), scale_env=env)
    write_result(folder / "result.json", RunResult.model_validate(rerun))
    return rerun, False
