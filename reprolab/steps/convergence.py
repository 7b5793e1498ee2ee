"""The convergence step: rerun a stage at twice the resolution (a resonance stage also
with twice the PML), compare, and let the verdict judge the result.

Policy (`checks.convergence`, docs/checks.md "Convergence"): `auto` (the default)
reruns a stage whose as-built pixels per wavelength are under `PPW_AS_BUILT.warn` and every
stage that ran Harminv; `true` reruns every simulation stage; `false` never (then an
under-resolved run fails, with nothing to excuse it). A stage that needs no rerun, or
whose script does not read the scale variable, says so in convergence.json: no rerun is
ever pretended. How the resolution is varied is `checks.convergence_method`
(reprolab.steps.grid_convergence); under `auto` a 2D stage's coarser runs come first and
the 2x rerun follows only when they do not show convergence (`escalate`).
"""

from __future__ import annotations

import sys
from pathlib import Path

from reprolab.artifacts import load_result
from reprolab.fileio import atomic_write_json, read_json, sha256_file
from reprolab.physics import convergence as conv_mod
from reprolab.physics import thresholds as th
from reprolab.physics.lint import PML_SCALE_ENV, RESOLUTION_SCALE_ENV
from reprolab.physics.record_checks import load_record

# variant: (the variable the script reads, its folder, the rerun's time budget factor)
VARIANTS = {
    conv_mod.RESOLUTION: (RESOLUTION_SCALE_ENV, "convergence_2x", 4),  # 1D ~4x, 3D ~16x
    conv_mod.PML: (PML_SCALE_ENV, "convergence_pml2x", 2),
}


def policy(config: dict) -> str:
    """`checks.convergence` as a policy: always (true), off (false) or auto."""
    value = config.get("checks", {}).get("convergence", "auto")
    return "always" if value is True else "off" if value is False else "auto"


def is_resonance(sims: list[dict]) -> bool:
    return any(r.get("harminv") for s in sims for r in s.get("runs", []))


def built_no_pml(sims: list[dict]) -> bool:
    """The record shows every simulation's layers and none is a PML (a Bloch cell):
    a 2x-PML rerun would vary nothing."""
    return bool(sims) and all(
        "boundary_layers" in s and not any(x["kind"] == "PML" for x in s["boundary_layers"])
        for s in sims
    )


def variants_needed(
    pol: str, checks: dict, sims: list[dict], curves: bool = True
) -> tuple[list[str], str]:
    """(the reruns the policy asks for, why) from the checks and the run-time record;
    `curves`: the stage reproduces a figure's curve (without one and without Harminv
    modes a rerun would have nothing to compare, so none is run)."""
    ppw = next((c for c in checks.get("checks", []) if c["name"] == "built:resolution_ppw"), None)
    low = ppw is not None and ppw.get("value") is not None and ppw["value"] < th.PPW_AS_BUILT.warn
    resonance = is_resonance(sims)
    why = []
    if pol == "always":
        why.append("checks.convergence is true")
    if low:
        why.append(f"as built {ppw['value']:g} pixels per wavelength < {th.PPW_AS_BUILT.warn:g}")
    vary_pml = resonance and not built_no_pml(sims)
    if resonance:
        why.append(
            "a resonance stage (Harminv ran): resolution and PML are varied"
            if vary_pml
            else "a resonance stage (Harminv ran) without PML (Bloch or closed cell): "
            "resolution is varied"
        )
    from reprolab.physics.material_checks import plasmonic  # numpy: only when judged

    if plasmonic(sims):  # a plasmon resonance hangs on a few pixels
        why.append("a metal nanostructure (a plasmon resonance): resolution is varied")
    if any(s.get("ldos") for s in sims):  # an emitter's LDOS hangs on its few pixels
        why.append("an LDOS stage (dft_ldos ran): resolution is varied")
    if pol == "off" or not why:
        ppw_text = (
            f"as built {ppw['value']:.4g} pixels per wavelength (>= {th.PPW_AS_BUILT.warn:g})"
            if ppw and ppw.get("value") is not None
            else "no resolution in the run-time record"
        )
        return [], f"not needed: {ppw_text}, no Harminv (checks.convergence: {pol})"
    if not curves and not conv_mod.record_modes(sims):
        return [], (
            f"nothing to compare ({'; '.join(why)}): the stage reproduces no figure curve "
            "and found no Harminv mode, so no rerun"
        )
    return [conv_mod.RESOLUTION] + ([conv_mod.PML] if vary_pml else []), "; ".join(why)


def scaled_env(name, value: str = "2"):
    """The run's environment with one scale variable at `value`, or `name` a dict of
    them (the others at 1)."""
    from reprolab.jobs.variant_runs import exported

    return exported(name if isinstance(name, dict) else {name: value})


def run_convergence(run, design_path, code_json, plan_path, out_json) -> None:
    """The `convergence` rule: the reruns the policy asks for and their comparison."""
    from reprolab.artifacts import load_checks, load_design
    from reprolab.steps.blocking import passed_on_block

    stage_dir = Path(out_json).parent
    if passed_on_block(run, out_json, design_path, stage_dir / "result.json"):
        return
    design = load_design(design_path).output
    record = load_result(stage_dir / "result.json").to_json()
    checks = load_checks(stage_dir / "checks.json").to_json()
    pol = policy(run.config)
    sims = load_record(stage_dir / "run")
    names, reason = variants_needed(pol, checks, sims, bool(design.figure_outputs))
    result = {
        "stage_id": design.stage_id,
        "policy": pol,
        "reason": reason,
        "scale": 2,
        "variants": [],
        "quantities": [],
        "extra_meep_seconds": 0.0,
        "run_meep_seconds": record.get("runtime_seconds"),
        "note": "",
    }
    if names and (record.get("failure") or record.get("exit_code")):
        names, reason = [], "the stage's run failed: nothing converged to compare"
    if not names:
        result.update(status="not_needed" if "not needed" in reason else "not_run", note=reason)
        atomic_write_json(out_json, result)
        return
    script = Path(record.get("script") or stage_dir / "simulation.py")
    resolution_evidence(result, names, (run, design, script, plan_path, stage_dir))
    atomic_write_json(out_json, result)


def resolution_evidence(result: dict, wanted: list[str], args: tuple) -> None:
    """The reruns of `wanted` under `checks.convergence_method` into `result` (variants,
    quantities, status, note, Meep seconds); `args`: (run, design, script, plan path,
    stage folder)."""
    from reprolab.steps import grid_convergence as grid

    run, design = args[:2]
    names, result["scale"] = grid.resolution_variants(run.config, wanted, design.dimensions)
    result["method"] = grid.method(run.config, design.dimensions)
    result["variants"] = run_variants(names, *args)
    if names != wanted and grid.escalates(run.config, design.dimensions):
        escalate(result, wanted, args)
    result["extra_meep_seconds"] += sum(v.get("runtime_seconds") or 0.0 for v in result["variants"])
    with_bounds(result)
    result["quantities"] = [q for v in result["variants"] for q in v["quantities"]]
    result["status"] = conv_mod.verdict(result["quantities"])
    if result["status"] != "not_converged" and any(
        v.get("no_evidence") for v in result["variants"]
    ):
        result["status"] = conv_mod.NO_EVIDENCE
    notes = [v["note"] for v in result["variants"] if v["note"]]
    if "escalation" in result:
        notes.insert(0, result["escalation"]["note"])
    result["note"] = "; ".join(notes)


def with_bounds(result: dict) -> None:
    """Each 2x resolution rerun's rows with the bound on the run's error they give
    (reprolab.physics.grid_convergence.refine_bound), from the order the coarser runs
    observed where they ran before it (an escalated stage)."""
    from reprolab.physics import grid_convergence as gc

    coarse = (result.get("escalation") or {}).get("coarse_variants") or []
    rows = [q for v in coarse if v["id"] == gc.COARSE for q in v["quantities"]]
    for var in result["variants"]:
        if var["id"] == conv_mod.RESOLUTION:
            var["quantities"] = gc.with_refine_bounds(var["quantities"], rows)


def run_variants(names: list[str], run, design, script, plan_path, stage_dir) -> list[dict]:
    """Each rerun variant in turn (the coarser runs' or the 2x reruns), kept ones reused."""
    from reprolab.steps import grid_convergence as grid

    coarse = {grid.COARSE: grid.run_coarse, grid.PML_COARSE: grid.run_pml_coarse}
    # this module's rerun helpers, passed in: grid_convergence does not import it
    host = sys.modules[__name__]
    # the coarser runs together first (one process where they can share one)
    ran = grid.run_coarse_batch(run, design, names, script, plan_path, stage_dir, host)
    out = []
    for name in names:
        if name in coarse:
            out.append(coarse[name](run, design, script, plan_path, stage_dir, host, ran))
        else:
            out.append(run_variant(run, name, design, script, plan_path, stage_dir))
    return out


def escalate(result: dict, wanted: list[str], args: tuple) -> None:
    """`auto` in 2D: when the coarser runs do not show convergence, the 2x reruns the
    policy asked for run and decide; the coarse evidence stays in `escalation` (its
    variants, status and Meep seconds, which count in extra_meep_seconds)."""
    from reprolab.steps import grid_convergence as grid

    coarse = result["variants"]
    why = grid.unconvincing(coarse)
    status = conv_mod.verdict([q for v in coarse for q in v["quantities"]])
    seconds = sum(v.get("runtime_seconds") or 0.0 for v in coarse)
    esc = {"escalated": bool(why), "why": why, "coarse_status": status}
    esc.update(coarse_scale=result["scale"], coarse_meep_seconds=seconds)
    if not why:
        esc["note"] = "the coarser runs showed convergence: no 2x rerun (auto in 2D)"
        result["escalation"] = esc
        return
    shown = "; ".join(why[:4]) + (f"; and {len(why) - 4} more" if len(why) > 4 else "")
    esc.update(coarse_variants=coarse, decided_by=grid.METHODS[2])
    esc["note"] = (
        f"the coarser runs did not show convergence ({status}: {shown}); escalated to the "
        "2x rerun, which decided (auto in 2D)"
    )
    result.update(escalation=esc, scale=2, extra_meep_seconds=seconds)
    result["method"] = f"{result['method']}, escalated to {grid.METHODS[2]}"
    result["variants"] = run_variants(wanted, *args)


def run_variant(run, name, design, script: Path, plan_path, stage_dir: Path) -> dict:
    """One rerun (its record in <folder>/result.json) and its comparison with the run."""
    from reprolab.artifacts import RunResult, load_plan, plan_stage, write_result
    from reprolab.jobs import stage_run, submit

    env, folder, factor = VARIANTS[name]
    var = {"id": name, "env": {env: "2"}, "folder": folder, "ran": False, "quantities": []}
    var["note"] = ""
    if env not in script.read_text(encoding="utf-8"):
        var["note"] = f"the script ignores {env}: no {name} rerun possible (not run)"
        return var
    rerun = kept_rerun(stage_dir / folder, script, env)
    var["reused"] = rerun is not None
    if rerun is None:
        stage = plan_stage(load_plan(plan_path), design.stage_id)
        budget_min = rerun_budget_minutes(
            stage.runtime_budget_minutes, factor, name, design.dimensions, stage_dir
        )
        with scaled_env(env):
            rerun = stage_run.run_stage(
                design,
                budget_min,
                submit.named_config(
                    run.config.get("simulation", {}),
                    run.paper_id,
                    f"{design.stage_id}-{folder}",
                    run.out_dir,
                ),
                script,
                stage_dir / folder,
            )
        rerun.update(script=str(script), script_sha256=sha256_file(script), scale_env={env: "2"})
        # The rerun's own record beside its run folder, for provenance and its log.
        write_result(stage_dir / folder / "result.json", RunResult.model_validate(rerun))
    var["runtime_seconds"] = rerun.get("runtime_seconds")
    failure = rerun.get("failure") or {}
    if failure and failure.get("action") != "regenerate_code":
        # Stopped by a limit or from outside: it says nothing about convergence either way.
        var["no_evidence"] = failure.get("kind")
        var["note"] = no_evidence_note(name, rerun)
        return var
    if failure or rerun.get("exit_code"):
        var["note"] = (
            f"the {name} rerun failed: {failure.get('kind', 'exit code')} "
            f"{failure.get('summary', rerun.get('exit_code'))}".splitlines()[0][:300]
        )
        var["quantities"] = [
            conv_mod.quantity(name, "rerun", None, None, float("nan"), th.CONVERGENCE_POINTWISE)
        ]
        return var
    var["ran"] = True
    var["quantities"] = compare_runs(
        run, design, stage_dir / "run", stage_dir / folder / "run", name
    )
    if not var["quantities"]:
        var["note"] = f"{name}: nothing to compare (no reproduced curve, key value or Harminv mode)"
    return var


# A rerun's cost against the run's: twice the resolution in d dimensions has 2^d the
# cells and twice the steps; twice the PML about twice the cells of a thin-PML cell.
def rerun_cost_ratio(variant: str, dims: int) -> float:
    return 2.0 ** (max(1, dims) + 1) if variant == conv_mod.RESOLUTION else 2.0


def rerun_budget_minutes(
    plan_minutes: float, factor: float, variant: str, dims: int, stage_dir: Path
) -> float:
    """The rerun's time budget from its own size: the run's charged time times what the
    rerun costs more (`rerun_cost_ratio`) with job sizing's margin, never below the
    plan's budget times `factor`."""
    from reprolab.jobs.sizing import TIME_MARGIN

    try:
        record = load_result(stage_dir / "result.json").to_json()
    except Exception:  # noqa: BLE001 - no record: the plan's figure
        return plan_minutes * factor
    clock = record.get("time_limit") or {}
    base_s = clock.get("charged_s") or record.get("runtime_seconds") or 0.0
    sized = float(base_s) * rerun_cost_ratio(variant, dims) * TIME_MARGIN / 60.0
    return max(plan_minutes * factor, sized)


def no_evidence_note(name: str, rerun: dict) -> str:
    """One line: which limit stopped the rerun, after how long; no log."""
    failure = rerun.get("failure") or {}
    took = rerun.get("runtime_seconds")
    after = f" after {took:.0f} s" if isinstance(took, int | float) else ""
    limit = rerun.get("timeout_s")
    of = f" (its limit {limit:.0f} s)" if isinstance(limit, int | float) else ""
    return (
        f"no evidence: the {name} rerun was stopped{after}{of}: {failure.get('kind')}; "
        "it shows neither convergence nor its absence"
    )


def kept_rerun(folder: Path, script: Path, env, value: str = "2") -> dict | None:
    """The rerun kept from an earlier convergence step of the same script and scale
    variables (`env` one name at `value`, or a dict of them; the paper's digitized data
    or key values changed: recompare, do not rerun); None otherwise."""
    path = folder / "result.json"
    if not path.is_file() or not (folder / "run").is_dir():
        return None
    kept = load_result(path)
    want = env if isinstance(env, dict) else {env: value}
    same = kept.script_sha256 == sha256_file(script) and kept.scale_env == want
    ok = not (kept.failure or kept.exit_code)
    return kept.to_json() if same and ok else None


def compare_runs(run, design, run_n: Path, run_v: Path, variant: str, paired=False) -> list:
    """The run against the rerun: curves on the paper's x grid, the paper's key values,
    Harminv modes (reprolab.physics.convergence.compare_folders; `paired`: named after
    the run's features, for the coarser runs' Richardson estimate)."""
    from reprolab.physics import grid_convergence

    def paper_grid(fo: dict):
        try:
            return run.paper.curve_data(fo["figure_id"], fo["curve_id"], fo["x_column"])[0]
        except Exception:  # noqa: BLE001 - no digitized data: the run's own grid
            return None

    figure_outputs = [fo.model_dump() for fo in design.figure_outputs]
    kw = {
        "x_grid": paper_grid,
        "key_values": [kv.model_dump() for kv in getattr(run.paper.meta, "key_values", [])],
    }
    if paired:
        return grid_convergence.pair_quantities(figure_outputs, run_n, run_v, **kw)
    return conv_mod.compare_folders(figure_outputs, run_n, run_v, variant, **kw)


def judged_with_convergence(checks: dict, validation: dict | None, conv_path) -> tuple:
    """(checks, validation, note) as the verdict judges them: the convergence result's
    checks added, an under-resolved run excused when its rerun converged (a run
    validation failed only by the deterministic checks follows them)."""
    if not conv_path or not Path(conv_path).is_file():
        return checks, validation, ""
    conv = read_json(conv_path)
    if conv.get("blocked"):
        return checks, validation, ""
    judged, note = conv_mod.with_convergence(checks, conv)
    if validation and validation.get("verdict") == "fail" and judged["verdict"] != "fail":
        from reprolab.steps.validate import combined_verdict

        # in memory: the run validation's JSON (RunValidation.to_json()), as judged so far
        agents = [validation[k]["output"]["verdict"] for k in ("execution", "physics")]
        if "fail" not in agents:
            verdict = combined_verdict(judged["verdict"], agents)
            validation = {**validation, "verdict": verdict, "checks_verdict": judged["verdict"]}
    return judged, validation, note


def deferred_to_convergence(config: dict, failed: list[dict]) -> list[dict]:
    """The failed checks a code repair should act on: with convergence on, an
    under-resolved run goes on to its convergence rerun, which decides."""
    if policy(config) == "off":
        return failed
    return [c for c in failed if c["name"] != "built:resolution_ppw"]
