"""The analysis step: the ResultsAnalyzer writes the narrative and the
ComparisonValidator checks it against the numbers code recomputed, in a bounded loop."""

from __future__ import annotations

import functools
import re
from pathlib import Path

from agents import comparison_validator, results_analyzer
from agents.comparison_validator import ComparisonValidatorOutput
from agents.runner import call_agent
from agents.simulation_designer import SimulationDesign
from reprolab.artifacts import (
    AnalysisArtifact,
    ReviewArtifact,
    as_agent_artifact,
    load_adaptations,
    load_checks,
    load_comparison,
    load_design,
    load_plan,
    load_validation,
    plan_stage,
    write_analysis,
    write_review,
)
from reprolab.errors import InputFileError
from reprolab.events import log_event
from reprolab.fileio import read_json
from reprolab.physics import checks as checks_mod
from reprolab.physics import claims, compare, positions, reference_curves
from reprolab.steps import mode_results
from reprolab.steps.blocking import passed_on_block


def raw_curves(run, design: SimulationDesign, run_dir: Path) -> dict:
    """(figure, curve) → (x_paper, y_paper, x_sim, y_sim, axis), for recomputing the
    comparison; each reference curve under ("reference", figure, curve, reference) with
    the tuple reference_curves.recheck reads."""
    curves = {}
    for fo in design.figure_outputs:
        if not run.paper.has_data(fo.figure_id, fo.curve_id):
            continue  # compared by eye: nothing to recompute
        try:
            cols = checks_mod.read_output_csv(run_dir, fo.file)
            sim = (cols[fo.x_column], cols[fo.y_column])
        except (OSError, ValueError, KeyError, IndexError, InputFileError):
            continue  # recompute_comparison reports the curve as not recomputable
        paper = run.paper.curve_data(fo.figure_id, fo.curve_id, fo.x_column)
        figure = run.paper.figure(fo.figure_id)
        try:
            axis = positions.axis_context(figure, fo.curve_id, fo.x_column, run.paper.unit_length_m)
        except ValueError:
            continue  # a stated line that cannot be converted: the comparison failed it
        curves[(fo.figure_id, fo.curve_id)] = (*paper, *sim, axis)
        for ref in figure.references_of(fo.curve_id) if hasattr(figure, "references_of") else []:
            ref_data = run.paper.curve_data(fo.figure_id, ref.curve_id, fo.x_column)
            ref_axis = positions.axis_context(figure, ref.curve_id, fo.x_column)
            key = ("reference", fo.figure_id, fo.curve_id, ref.curve_id)
            curves[key] = (*ref_data, *sim, *paper, ref_axis)
    return curves


def given_numbers(run, design) -> tuple[float, ...]:
    """The numbers the design and the approved materials state (as the report reads them)."""
    materials = Path(run.out_dir) / "validated_materials.json"
    approved = read_json(materials) if materials.is_file() else {}
    return claims.given_numbers(design.model_dump(mode="json"), approved)


def analysis_problems(
    analysis: dict,
    comparison: dict,
    target_figures: list[str],
    curves: dict | None = None,
    given: tuple[float, ...] = (),
) -> list[str]:
    """What code can tell is wrong with an analysis: missing figures, wrong classes,
    numbers no recomputed metric supports (and a comparison file that does not recompute),
    discrepancy rows whose severity or direction the comparison contradicts. `given`: the
    numbers the design states (no claim needed)."""
    problems = []
    if curves is not None:
        problems += [
            f"comparison.json: {m}" for m in compare.recompute_comparison(comparison, curves)
        ]
        problems += [f"comparison.json: {m}" for m in reference_curves.recheck(comparison, curves)]
    # every cited number through its structured claim; no regex acceptance of prose
    problems += claims.problems(claims.audit_analysis(analysis, comparison, given))
    computed = {f["figure_id"]: f["classification"] for f in comparison["figures"]}
    narrated = {n["figure_id"]: n["narrative"] for n in analysis.get("per_figure", [])}
    for fig in target_figures:
        if fig not in narrated:
            problems.append(f"no narrative for target figure '{fig}'")
    for fig, text in narrated.items():
        if fig not in computed:
            problems.append(f"narrative for '{fig}', which this stage does not compare")
            continue
        said = {w for w in claims.CLASS_WORDS if re.search(rf"\b{w}\b", text)}
        if said and computed[fig] not in said:
            problems.append(
                f"{fig}: the narrative calls it {sorted(said)}, "
                f"but the thresholds give {computed[fig]}"
            )
    return problems


def analyze_stage(
    run,
    plan_path,
    comparison_path,
    checks_path,
    validation_path,
    design_path,
    adaptations_path,
    out_analysis,
) -> None:
    """ResultsAnalyzer ⇄ ComparisonValidator, at most `max_analysis_revisions` rounds;
    at the limit the analysis goes to the supervisor, flagged (docs/operation.md)."""
    if passed_on_block(run, out_analysis, comparison_path):
        return
    compared = load_comparison(comparison_path)
    comparison = compared.to_json()  # what the claims' audit and the agents read
    stage = plan_stage(load_plan(plan_path), compared.stage_id)
    stage_dir = Path(out_analysis).parent
    figures = [mode_results.result_meta(run.paper, f) for f in stage.target_figures]
    images = [mode_results.result_image(run.paper, f) for f in stage.target_figures]
    images = [p for p in images if p is not None]  # a table has no image
    images += [f["overlay"] for f in compared.figures if f.get("overlay")]
    ask = functools.partial(
        call_agent,
        stage_id=stage.stage_id,
        session=run.agents,
        adaptations=load_adaptations(adaptations_path),
        images=[str(p) for p in images],
    )
    validation = load_validation(validation_path)
    design = load_design(design_path).output
    curves = raw_curves(run, design, stage_dir / "run")
    given = given_numbers(run, design)
    feedback = None
    limit = run.limits.max_analysis_revisions
    for attempt in range(1, limit + 1):
        ctx = results_analyzer.context(
            stage.model_dump(), comparison, load_checks(checks_path).to_json(), figures
        )
        ctx["run_validation"] = {
            "verdict": validation.verdict,
            "checks_verdict": validation.checks_verdict,
            "backtrack_suggestion": validation.backtrack_suggestion,
        }
        if feedback:
            ctx["reviewer_feedback"] = feedback
        analysis = as_agent_artifact(
            AnalysisArtifact, ask(results_analyzer.AGENT, attempt=attempt, context=ctx)
        )
        write_analysis(stage_dir / f"analysis.r{attempt}.json", analysis)
        said = analysis.output_json()  # the analysis as the audit and the validator read it
        problems = analysis_problems(said, comparison, stage.target_figures, curves, given)
        ctx = comparison_validator.context(compared.figures, said, figures, problems)
        check = as_agent_artifact(
            ReviewArtifact[ComparisonValidatorOutput],
            ask(comparison_validator.AGENT, attempt=attempt, context=ctx),
        )
        check.code_problems = problems
        write_review(stage_dir / f"comparison_check.r{attempt}.json", check)
        approved = check.output.verdict == "approve" and not problems
        if approved or attempt == limit:
            analysis.comparison_check = {
                "verdict": "approve" if approved else "needs_revision",
                "attempts": attempt,
                "flagged": not approved,
                "issues": check.output.issues + problems,
            }
            analysis.prose_audit = claims.audit_analysis(said, comparison, given)
            write_analysis(out_analysis, analysis)
            log_event(
                run.out_dir,
                "analysis",
                f"{stage.stage_id}: analysis "
                + (f"approved at attempt {attempt}" if approved else "flagged at the limit"),
            )
            return
        feedback = "\n".join(
            [check.output.feedback] + [f"- (checked in code) {p}" for p in problems]
        ).strip()
