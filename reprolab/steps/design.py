"""The design step: SimulationDesigner ⇄ DesignReviewer with the checks code makes."""

from __future__ import annotations

from pathlib import Path

from agents import (
    design_reviewer,
    simulation_designer,
)
from agents.common import StageType
from agents.planner import PlannerOutput, PlanStage
from agents.simulation_designer import SimulationDesign
from reprolab.artifacts import (
    load_adaptations,
    load_plan,
    load_verdict,
    plan_stage,
    write_design,
)
from reprolab.fileio import read_json
from reprolab.gates import clarify
from reprolab.physics import lint
from reprolab.settings import PaperRun
from reprolab.steps import eligibility
from reprolab.steps.blocking import block
from reprolab.steps.review import reviewed_loop
from reprolab.steps.static import static_findings


def stage_materials(stage: PlanStage, plan: PlannerOutput, validated: str | Path | None) -> list:
    """Stage 0 designs from planned materials; later stages only from validated ones."""
    if stage.stage_type == StageType.MATERIAL_VALIDATION:
        return [m.model_dump() for m in plan.planned_materials]
    return read_json(validated)["materials"]


def design_problems(design: SimulationDesign, stage: PlanStage, run: PaperRun, mats) -> list[str]:
    problems = []
    if design.stage_id != stage.stage_id:
        problems.append(f"design is for '{design.stage_id}', not '{stage.stage_id}'")
    if not design.runs_simulation and stage.stage_type != StageType.MATERIAL_VALIDATION:
        problems.append(
            f"runs_simulation: false is only for a MATERIAL_VALIDATION stage (stage 0); "
            f"'{stage.stage_id}' is {stage.stage_type.value}: give resolution, "
            "pml_thickness, source_fcen and source_fwidth"
        )
    known = {m["material_id"] for m in mats}
    for mid in design.materials:
        if mid not in known:
            problems.append(f"material '{mid}' is not available (valid: {sorted(known)})")
    problems += mode_result_problems(design, stage, run)
    outputs = {o.file: o for o in design.output_specifications}
    covered = set()
    for fo in design.figure_outputs:
        if fo.figure_id not in stage.target_figures:
            problems.append(
                f"figure_outputs: '{fo.figure_id}' is not a target of this stage "
                f"(targets: {stage.target_figures})"
            )
            continue
        if _is_table(run, fo.figure_id):
            problems.append(
                f"figure_outputs: '{fo.figure_id}' is a table: it is compared from the run's "
                "Harminv modes (list it in mode_results), not from a curve"
            )
            continue
        if (run.paper.figure(fo.figure_id).field_map is None) != (fo.dataset is None):
            problems.append(
                f"figure_outputs: {fo.figure_id} "
                + (
                    "is a field map: give the HDF5 `dataset` (2D map) with x_column and "
                    "y_column naming its coordinate datasets"
                    if fo.dataset is None
                    else f"is not a field map: no `dataset` ('{fo.dataset}')"
                )
            )
        curves = {c.curve_id for c in run.paper.figure(fo.figure_id).curves}
        if fo.curve_id not in curves:
            problems.append(
                f"figure_outputs: {fo.figure_id} has no curve '{fo.curve_id}' "
                f"(valid: {sorted(curves)})"
            )
        spec = outputs.get(fo.file)
        if spec is None:
            problems.append(f"figure_outputs: '{fo.file}' is not in output_specifications")
        else:
            for col in (fo.x_column, fo.y_column):
                if col not in spec.columns:
                    problems.append(
                        f"figure_outputs: column '{col}' is not in {fo.file} "
                        f"(columns: {spec.columns})"
                    )
        covered.add((fo.figure_id, fo.curve_id))
    for fig_id in stage.target_figures:
        if fig_id in design.mode_results or _is_table(run, fig_id):
            continue  # compared from the run's Harminv modes: no curve output needed
        for curve in run.paper.figure(fig_id).curves:
            if getattr(curve, "reference", False):
                continue  # the paper's reference: compared with, never reproduced
            if (fig_id, curve.curve_id) not in covered:
                problems.append(f"no output reproduces {fig_id} curve '{curve.curve_id}'")
    return problems


def _is_table(run: PaperRun, result_id: str) -> bool:
    """A paper's table (not a figure); a paper format without tables has none."""
    is_table = getattr(getattr(run, "paper", None), "is_table", None)
    return bool(is_table and is_table(result_id))


def mode_result_problems(design: SimulationDesign, stage: PlanStage, run: PaperRun) -> list:
    """`mode_results` are among the stage's targets; a target table is measured from
    Harminv modes, so it must be one of them."""
    problems = [
        f"mode_results: '{rid}' is not a target of this stage (targets: {stage.target_figures})"
        for rid in design.mode_results
        if rid not in stage.target_figures
    ]
    band_diagram = getattr(getattr(run, "paper", None), "band_diagram", None)
    problems += [
        f"mode_results: '{rid}' is neither a table nor a figure with a band_diagram "
        "(its curves are compared from output files: figure_outputs)"
        for rid in design.mode_results
        if rid in stage.target_figures
        and band_diagram is not None
        and not _is_table(run, rid)
        and band_diagram(rid) is None
    ]
    problems += [
        f"target table '{rid}' is compared from Harminv modes: list it in mode_results"
        for rid in stage.target_figures
        if _is_table(run, rid) and rid not in design.mode_results
    ]
    if design.mode_results and not design.runs_simulation:
        problems.append("mode_results need a simulation (runs_simulation: false measures none)")
    return problems


def invalidation_feedback(invalidation: str | Path | None) -> str | None:
    """Why this stage is being redone (backtrack, user, material gate), for the designer."""
    if not invalidation:
        return None
    records = read_json(invalidation)["records"]
    return "This stage is being redone. " + " ".join(
        f"Reason ({r['source']}): {r['reason']}" for r in records[-1:]
    )


def design_stage(
    run,
    plan_path,
    adaptations_path,
    stage_id,
    dep_verdicts,
    validated,
    out_design,
    invalidation=None,
    hierarchy_verdicts=(),
) -> None:
    plan = load_plan(plan_path)
    stage = plan_stage(plan, stage_id)
    reason = eligibility.blocked_reason(
        stage,
        [load_verdict(p).to_json() for p in dep_verdicts],
        [load_verdict(p).to_json() for p in hierarchy_verdicts],
        eligibility.spent_seconds(run.out_dir),
        run.total_runtime_budget_s,
        eligibility.ended_before(run.out_dir, plan, stage),
    )
    if reason:
        block(run, out_design, stage_id, reason)
        return
    mats = stage_materials(stage, plan, validated)
    figures = [  # the target tables too: the designer maps them to mode_results
        (run.paper.table(f) if _is_table(run, f) else run.paper.figure(f)).model_dump()
        for f in stage.target_figures
    ]
    assumptions = [a.model_dump() for a in plan.assumptions]
    answers: list[dict] = []  # the user's answers to the designer's questions

    def designer_context(feedback):
        ctx = simulation_designer.context(
            stage.model_dump(),
            assumptions,
            mats,
            figures,
            feedback,
            extracted_parameters=[p.model_dump() for p in plan.extracted_parameters],
            paper_domain=run.paper.meta.domain,
        )
        if answers:
            ctx["user_answers"] = answers
        return ctx

    def loop(first_attempt: int, feedback):
        return reviewed_loop(
            run=run,
            stage_id=stage_id,
            stage_dir=Path(out_design).parent,
            adaptations=load_adaptations(adaptations_path),
            author=simulation_designer.AGENT,
            reviewer=design_reviewer.AGENT,
            limit=run.limits.max_design_revisions,
            author_context=designer_context,
            reviewer_context=lambda art: design_reviewer.context(
                stage.model_dump(), art.output_json(), mats
            ),
            code_problems=lambda design: (
                design_problems(design, stage, run, mats)
                + lint.problems(static_findings(design, mats, None, run))
            ),
            name="design",
            feedback=feedback,
            first_attempt=first_attempt,
        )

    artifact = clarify.settle(  # the designer's questions, answered
        run,
        stage_id,
        simulation_designer.AGENT,
        loop(1, invalidation_feedback(invalidation)),
        lambda attempt: loop(attempt, None),
        answers,
    )
    artifact.materials = mats
    write_design(out_design, artifact)
