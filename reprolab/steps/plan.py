"""Paper-level steps: prompt adaptation, then the plan with its review loop."""

from __future__ import annotations

from pathlib import Path

from agents import context_window, plan_reviewer, planner, prompt_adaptor, prompts, untrusted
from agents.common import StageType
from agents.planner import PlannerOutput
from agents.runner import call_agent
from reprolab.artifacts import AgentArtifact, as_agent_artifact, load_adaptations, write_plan
from reprolab.events import log_event
from reprolab.fileio import atomic_write_json, atomic_write_text, read_json
from reprolab.gates import clarify
from reprolab.paper import Paper
from reprolab.settings import PaperRun
from reprolab.steps import mode_results

PAPER_SCOPE = "paper"  # stage_id used for paper-level agent calls


def abstract_and_methods(text: str) -> str:
    """The Abstract and Methods sections, which is all the adaptor needs."""
    return context_window.methods_only(text)


def figures_summary(paper: Paper) -> list[dict]:
    """The paper's results a plan may target: its figures, then its tables (kind
    `table`, their id as `figure_id`)."""
    figures = [f.model_dump(exclude={"image"}) for f in paper.meta.figures]
    tables = getattr(paper, "tables", None) or getattr(paper.meta, "tables", None) or []
    return figures + [
        mode_results.result_meta(paper, getattr(t, "table_id", None) or t["table_id"])
        for t in (tables() if callable(tables) else tables)
    ]


def adapt_prompts(run: PaperRun, out_json: str | Path, out_log: str | Path) -> None:
    """The adaptor's proposals, each applied only if code's review passes it; the whole
    paper (text and metadata) scanned once for instruction-like passages."""
    text = run.paper.text()
    flags = untrusted.scan_paper(run.paper.meta, text)
    artifact = as_agent_artifact(
        AgentArtifact[prompt_adaptor.PromptAdaptorOutput],
        call_agent(
            prompt_adaptor.AGENT,
            stage_id=PAPER_SCOPE,
            attempt=1,
            context=prompt_adaptor.context(run.paper_id, abstract_and_methods(text)),
            session=run.agents,
        ),
    )
    output = artifact.output
    applied, refused = [], []
    for mod in output.modifications:
        reason = prompts.review_modification(mod, limits=run.agents.limits)
        if reason is None:
            applied.append(mod.model_dump())
        else:
            refused.append({"modification": mod.model_dump(), "reason": reason})
    atomic_write_json(
        out_json,
        {
            "domain_analysis": output.domain_analysis.model_dump(),
            "applied": applied,
            "refused": refused,
            "paper_flags": flags,
            "provenance": artifact.provenance,
        },
    )
    atomic_write_text(out_log, adaptation_log(run.paper_id, applied, refused, flags))
    log_event(
        Path(out_json).parent,
        "prompt_adaptation",
        f"{len(applied)} adaptations applied, {len(refused)} refused; "
        f"{len(flags)} instruction-like passage(s) flagged in the paper",
    )


def adaptation_log(paper_id: str, applied: list, refused: list, flags: list) -> str:
    """What was applied, word for word, what was refused and why, and what was flagged."""
    lines = [f"# Prompt adaptations for {paper_id}", ""]
    for mod in applied:
        lines.append(
            f"- APPLIED {mod['kind']} to `{mod['target_agent']}` "
            f"(confidence {mod['confidence']:.2f}): {mod['reasoning']}"
        )
        if mod["find"]:
            lines.append(f"  - replaced: {mod['find']!r}")
        lines.append(f"  - text: {mod['content']!r}")
    for item in refused:
        mod = item["modification"]
        lines.append(f"- REFUSED {mod['kind']} to `{mod['target_agent']}`: {item['reason']}")
    if not applied and not refused:
        lines.append("- no modifications proposed")
    if flags:
        lines += ["", "## Instruction-like passages in the paper (passed on as data)", ""]
        lines += [f'- {f["field"]}: {f["pattern"]} x{f["count"]}: "{f["excerpt"]}"' for f in flags]
    return "\n".join(lines) + "\n"


def plan_problems(plan: PlannerOutput, paper: Paper) -> list[str]:
    """What code can tell is wrong with a plan, before any reviewer reads it."""
    from reprolab.physics import material_library  # numpy: only when a plan is checked

    problems = []
    ids = [s.stage_id for s in plan.stages]
    if len(set(ids)) != len(ids):
        problems.append(f"stage ids are not unique: {ids}")
    first = plan.stages[0]
    if first.stage_type != StageType.MATERIAL_VALIDATION or not first.stage_id.startswith(
        "stage0_"
    ):
        problems.append("the first stage must be stage0_* of type MATERIAL_VALIDATION")
    if first.dependencies:
        problems.append("stage 0 cannot have dependencies")
    seen: set[str] = set()
    figure_ids = set(mode_results.result_ids(paper))  # figures and tables
    covered: set[str] = set()
    for stage in plan.stages:
        for dep in stage.dependencies:
            if dep not in seen:
                problems.append(
                    f"{stage.stage_id}: dependency '{dep}' is not an earlier stage "
                    f"(earlier: {sorted(seen) or 'none'})"
                )
        if stage.stage_type != StageType.MATERIAL_VALIDATION and ids[0] not in stage.dependencies:
            # Every later stage needs validated materials, so it depends on stage 0.
            transitively = any(d in seen for d in stage.dependencies)
            if not transitively:
                problems.append(f"{stage.stage_id}: must depend (directly or not) on {ids[0]}")
        for fig in stage.target_figures:
            if fig not in figure_ids:
                problems.append(
                    f"{stage.stage_id}: target figure '{fig}' is not in the paper "
                    f"(valid: {sorted(figure_ids)})"
                )
        covered.update(stage.target_figures)
        seen.add(stage.stage_id)
    for fig in sorted(figure_ids - covered):
        problems.append(f"figure '{fig}' is not reproduced by any stage")
    mat_ids = [m.material_id for m in plan.planned_materials]
    if len(set(mat_ids)) != len(mat_ids):
        problems.append(f"material ids are not unique: {mat_ids}")
    for m in plan.planned_materials:
        if m.model == "constant_index" and not m.index:
            problems.append(f"material '{m.material_id}': constant_index needs 'index'")
        problems += material_library.plan_problems(m.model_dump())
    if plan.paper_id != paper.paper_id:
        problems.append(f"plan paper_id '{plan.paper_id}' is not '{paper.paper_id}'")
    return problems


def make_plan(
    run: PaperRun, adaptations_path: str | Path, out_plan: str | Path, replan=None
) -> None:
    """Planner and PlanReviewer in a bounded loop (every attempt kept on disk; at the
    limit a revision_limit gate). `replan` is the supervisor's replan request: its
    reason is the planner's first feedback."""
    from reprolab.steps.review import reviewed_loop

    out_dir = Path(out_plan).parent
    figures = figures_summary(run.paper)

    answers: list[dict] = []  # the user's answers to the planner's questions

    def planner_context(feedback):
        ctx = planner.context(run.paper_id, run.paper.text(), run.paper.meta.domain, figures)
        if feedback:
            ctx["planner_feedback"] = feedback
        if answers:
            ctx["user_answers"] = answers
        return ctx

    first_feedback = None
    if replan:
        last = read_json(replan)["records"][-1]
        first_feedback = f"Replan requested ({last['source']}): {last['reason']}"

    def loop(first_attempt: int, feedback):
        return reviewed_loop(
            run=run,
            stage_id=PAPER_SCOPE,
            stage_dir=out_dir,
            adaptations=load_adaptations(adaptations_path),
            author=planner.AGENT,
            reviewer=plan_reviewer.AGENT,
            limit=run.limits.max_replans + 1,
            author_context=planner_context,
            reviewer_context=lambda art: plan_reviewer.context(art.output_json(), figures),
            code_problems=lambda plan: plan_problems(plan, run.paper),
            name="plan",
            feedback=feedback,
            first_attempt=first_attempt,
        )

    artifact = clarify.settle(  # the planner's questions, answered
        run,
        PAPER_SCOPE,
        planner.AGENT,
        loop(1, first_feedback),
        lambda attempt: loop(attempt, None),
        answers,
    )
    write_plan(out_plan, artifact)
    log_event(out_dir, "plan", "plan approved", stages=len(artifact.output.stages))
