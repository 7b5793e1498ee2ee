"""The report step: REPRODUCTION_REPORT_<paper_id>.md and its HTML view, from the files."""

from __future__ import annotations

import json
import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from agents.planner import PlannerOutput
from reprolab.artifacts import (
    load_analysis,
    load_checks,
    load_comparison,
    load_design,
    load_plan,
    load_result,
    load_verdict,
)
from reprolab.fileio import atomic_write_text, read_json
from reprolab.report import discretisation, partial, verdicts, wording
from reprolab.report import html as report_html
from reprolab.report.markdown import (
    assumptions_section,
    checks_section,
    conclusions_section,
    convergence_section,
    cost_section,
    discrepancies_section,
    drawn_reproduction,
    executive_summary,
    figure_comparisons_section,
    figure_section,
    gate_decisions_section,
    history_section,
    intake_digitized_note,
    own_plot,
    paper_end_banner,
    side_by_side,
    stage_dir_of,
    summary_table,
    title_section,
)
from reprolab.report.security import flagged_passages_section
from reprolab.steps import eligibility, mode_results


@dataclass(frozen=True)
class RunRecords:
    """What the pipeline wrote for one paper. Blocked stages (dependency failed, hierarchy,
    budget) left blocked artifacts only, so they are absent from results, analyses, designs
    and checks; their verdicts say why."""

    plan: PlannerOutput
    validated: dict
    verdicts: list[dict]
    comparisons: dict[str, dict]
    results: dict[str, dict]
    analyses: dict[str, dict]
    designs: dict[str, dict]
    checks_by_stage: dict[str, dict]


def agent_outputs_by_stage(paths, load) -> dict[str, dict]:
    """stage id -> the agent's output (as its file holds it) of the stages not blocked."""
    arts = [load(p) for p in paths if not eligibility.blocked_in(p)]
    return {a.output.stage_id: a.output_json() for a in arts}


def read_records(inputs) -> RunRecords:
    """Every artifact read and validated by its reader (reprolab.artifacts), kept as the
    JSON its file holds: what the report's sections read."""
    ran = [load_result(p) for p in inputs.results]
    ran_ids = {r.stage_id for r in ran if not r.blocked}
    verdicts_read = [load_verdict(p).to_json() for p in inputs.verdicts]
    by_stage = {v["stage_id"]: v for v in verdicts_read}
    # each figure counted as its stage's verdict allows, in every section alike
    comparisons = {
        c.stage_id: verdicts.capped_comparison(c.to_json(), by_stage.get(c.stage_id))
        for c in map(load_comparison, inputs.comparisons)
    }
    return RunRecords(
        plan=load_plan(inputs.plan),
        validated=read_json(inputs.validated),
        verdicts=verdicts_read,
        comparisons=comparisons,
        results={r.stage_id: r.to_json() for r in ran if r.stage_id in ran_ids},
        analyses=agent_outputs_by_stage(inputs.analyses, load_analysis),
        designs=agent_outputs_by_stage(inputs.designs, load_design),
        checks_by_stage=judged_checks(inputs, ran_ids),
    )


def judged_checks(inputs, ran_ids: set) -> dict[str, dict]:
    """Each run stage's checks as its verdict judged them: with its convergence result
    (an under-resolved run its converged rerun excused shows as excused, not failed)."""
    from reprolab.steps.convergence import judged_with_convergence

    paths = getattr(inputs, "convergence", [])
    paths = [paths] if isinstance(paths, str) else paths
    conv = {Path(p).parent.name: p for p in paths}
    out = {}
    for path in getattr(inputs, "checks", []):
        c = load_checks(path)
        if c.stage_id in ran_ids:
            out[c.stage_id] = judged_with_convergence(c.to_json(), None, conv.get(c.stage_id))[0]
    return out


def figures_in_plan_order(records: RunRecords) -> list[tuple[str, str, dict]]:
    """(figure id, stage id, figure comparison) for every figure a stage compared."""
    return [
        (fig["figure_id"], stage.stage_id, fig)
        for stage in records.plan.stages
        for fig in records.comparisons.get(stage.stage_id, {}).get("figures", [])
    ]


def all_assumptions(records: RunRecords) -> list[dict]:
    """The plan's assumptions, then those each design added, tagged with its stage."""
    assumptions = [a.model_dump() for a in records.plan.assumptions]
    for sid, design in records.designs.items():
        assumptions += [
            dict(a, assumption_id=f"{a['assumption_id']} ({sid})")
            for a in design["new_assumptions"]
        ]
    return assumptions


def stages_run(records: RunRecords) -> list[tuple[str, dict, dict]]:
    """(stage id, design, result) of the stages that ran, in plan order; blocked ones are
    listed with their reason in the executive summary."""
    return [
        (stage.stage_id, records.designs[stage.stage_id], records.results[stage.stage_id])
        for stage in records.plan.stages
        if stage.stage_id in records.results
    ]


def analysis_narrative(analysis: dict, fig_id: str) -> str:
    return next((n["narrative"] for n in analysis["per_figure"] if n["figure_id"] == fig_id), "")


def figure_comparison(
    run, records: RunRecords, row: tuple[str, str, dict], assets: Path, out_dir: Path
) -> list[str]:
    """One figure: the paper's image copied beside the report, the simulation's own plot
    (or one drawn from its outputs when it wrote none), the overlay, metrics, narrative."""
    fig_id, stage_id, fig = row
    narrative = analysis_narrative(records.analyses[stage_id], fig_id)
    if fig.get("kind") == "table":  # no image in the paper: the table itself
        table = run.paper.table(fig_id) if mode_results.is_table(run.paper, fig_id) else None
        title = getattr(table, "title", "") or fig_id
        overlay = fig.get("overlay")
        rel = overlay and os.path.relpath(Path(overlay).resolve(), out_dir.resolve())
        images = [f"![{fig_id}: paper against run]({rel})"] if overlay else []
        grid = discretisation.agreement_lines(fig, stage_dir_of(fig) if overlay else None)
        return figure_section(fig_id, title, stage_id, fig, images, narrative, grid)
    meta = run.paper.figure(fig_id)
    if not fig.get("field_map") and not fig.get("kind"):  # curves' numbers in the axis units
        fig = wording.in_axis_units(run.paper, fig)
    paper_img = assets / f"{fig_id}_paper{Path(meta.image).suffix}"
    shutil.copyfile(run.paper.folder / meta.image, paper_img)
    design = records.designs[stage_id]
    # A field map's reproduction is the map code drew on the paper's scale (the overlay).
    reproduction = None
    if not fig.get("field_map") and not fig.get("kind"):  # a band diagram: its overlay
        stage_dir = stage_dir_of(fig)
        reproduction = own_plot(design, stage_dir) or drawn_reproduction(
            run.paper, design, fig, assets
        )
    images = side_by_side(fig_id, paper_img, reproduction, fig, out_dir)
    stage_dir = stage_dir_of(fig) if fig.get("overlay") else None
    grid = discretisation.agreement_lines(fig, stage_dir)
    section = figure_section(fig_id, meta.title, stage_id, fig, images, narrative, grid)
    if stage_dir:  # the estimated discretisation error beside the numbers
        section += discretisation.error_lines(fig_id, stage_dir)
    return section


def read_interactions(out_dir: Path) -> list[dict]:
    interactions = out_dir / "user_interactions.jsonl"
    if not interactions.is_file():
        return []
    return [json.loads(line) for line in interactions.read_text().splitlines()]


def write_markdown_and_html(md: list[str], out_report: Path, out_html, paper_id: str) -> None:
    text = "\n".join(md)
    atomic_write_text(out_report, text)
    if out_html:
        atomic_write_text(
            out_html,
            report_html.markdown_to_html(
                text, out_report.parent, f"Reproduction report: {paper_id}"
            ),
        )


def write_report(run, inputs, out_report, out_html=None) -> None:
    """Every section in reading order: verdict first, then how it was simulated, the
    evidence figure by figure, and what the checks, the gates and the history add."""
    out_report = Path(out_report)
    out_dir = out_report.parent
    assets = out_dir / "report_assets"
    assets.mkdir(exist_ok=True)
    records = read_records(inputs)
    figure_rows = figures_in_plan_order(records)

    md = title_section(run)
    md += paper_end_banner(records.verdicts)  # the supervisor ended it: said first
    md += executive_summary(
        figure_rows,
        len(mode_results.result_ids(run.paper)),
        records.verdicts,
        records.results,
        records.validated,
        records.plan.summary,
    )
    md += assumptions_section(
        records.validated["materials"], all_assumptions(records), stages_run(records)
    )
    md += figure_comparisons_section(
        [figure_comparison(run, records, row, assets, out_dir) for row in figure_rows]
    )
    md += summary_table(figure_rows)
    md += intake_digitized_note(run.paper, [row[0] for row in figure_rows])
    md += discrepancies_section(records.analyses, records.comparisons)
    md += conclusions_section(records.verdicts, figure_rows, records.validated)
    md += checks_section(records.checks_by_stage, out_dir)
    md += convergence_section(out_dir)
    md += cost_section(out_dir, records.results)
    md += gate_decisions_section(read_interactions(out_dir))
    md += flagged_passages_section(out_dir)
    md += history_section(out_dir, records.results)
    md += partial.context_section(out_dir)  # what agents were not shown: never silent
    write_markdown_and_html(md, out_report, out_html, run.paper_id)
    partial.remove_partial(out_dir)


def write_partial_reports(config: dict, command: str) -> list[Path]:
    """After a run that ended with an error: a PARTIAL report for every paper that did
    not reach a current final report (the workflow's onerror)."""
    from reprolab.settings import paper_entries

    outputs = Path(config.get("outputs_dir", "outputs"))
    written = []
    for paper_id in paper_entries(config):
        try:
            path = partial.write_partial_report(outputs / paper_id, command)
        except Exception as exc:  # noqa: BLE001 - the run's own error is what matters
            print(
                f"[reprolab] {paper_id}: no PARTIAL report ({type(exc).__name__}: {exc})",
                file=sys.stderr,
            )
            continue
        if path is not None:
            written.append(path)
            print(f"[reprolab] {paper_id} did not finish: PARTIAL report {path}", file=sys.stderr)
    return written
