"""Section builders of the markdown report: summary, assumptions, figures side by side,
discrepancies, conclusions, checks, convergence, gates, history and cost. Agents' prose is
printed after the code's verdict, with every number it cites marked by whether a
structured claim backs it (`reprolab.report.prose`, `reprolab.physics.claims`)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from agents.ledger import summarize
from reprolab.fileio import read_json
from reprolab.physics import grid_convergence as gc
from reprolab.physics import thresholds as th
from reprolab.report import comparison_notes, cost, lines_table, prose, verdicts, why, wording
from reprolab.report import modes as modes_report
from reprolab.report.fmt import cell, classification_tally, table_header
from reprolab.report.security import sandbox_row


def _rel(path: str | Path, start: Path) -> str:
    return os.path.relpath(Path(path).resolve(), start.resolve())


def history_section(out_dir: Path, results: dict) -> list[str]:
    """Backtracks, replans and repaired runs: what the pipeline redid and why."""
    lines = []
    backtracks = out_dir / "backtracks.jsonl"
    if backtracks.is_file():
        for line in backtracks.read_text(encoding="utf-8").splitlines():
            b = json.loads(line)
            what = "replan" if b["to"] == "plan" else f"backtrack to `{b['to']}`"
            reason = prose.checked(b["reason"], b.get("supervisor_check"))
            lines.append(f"- {what} asked by the supervisor of `{b['from']}`; its reason:")
            lines += [*prose.commentary("Supervisor", reason, indent="  "), ""]
    for stage_id, r in results.items():
        for n, repair in enumerate(r.get("repairs", []), start=1):
            fixed = out_dir / "stages" / stage_id / f"simulation.fix{n}.py"
            kept = _rel(repair["failed_run"], out_dir)
            lines.append(wording.repair_line(stage_id, repair, fixed, kept))
        if r.get("physics_stuck"):
            lines.append(f"- `{stage_id}`: physics checks kept failing; the supervisor decided")
    if not lines:
        return []
    return ["## Backtracks, replans and repaired runs", "", *lines, ""]


def stage_dir_of(fig: dict) -> Path:
    return Path(fig["overlay"]).parent


def own_plot(design: dict, stage_dir: Path) -> Path | None:
    """The simulation's own plot (the first PNG among the design's outputs), if written."""
    from reprolab import run_files

    for spec in design.get("output_specifications", []):
        if spec["file"].endswith(".png") and run_files.is_image(stage_dir / "run", spec["file"]):
            return stage_dir / "run" / spec["file"]
    return None


def drawn_reproduction(paper, design: dict, fig: dict, assets: Path) -> Path | None:
    """The reproduced curves drawn by code from the stage's outputs, for a stage whose
    script wrote no plot of its own."""
    from reprolab import run_files
    from reprolab.physics.checks import read_output_csv
    from reprolab.report import plots

    curves = {}
    for fo in design.get("figure_outputs", []):
        run_dir = stage_dir_of(fig) / "run"
        if fo["figure_id"] != fig["figure_id"] or run_files.size_of(run_dir, fo["file"]) is None:
            continue
        cols = read_output_csv(run_dir, fo["file"])
        if fo["x_column"] in cols and fo["y_column"] in cols:
            # on the paper's x axis (a run's wavelength_um drawn as a size parameter)
            x = paper.x_in_figure_units(fig["figure_id"], fo["x_column"], cols[fo["x_column"]])
            curves[fo["curve_id"]] = (x, cols[fo["y_column"]])
    if not curves:
        return None
    out = assets / f"{fig['figure_id']}_reproduced.png"
    if getattr(paper.figure(fig["figure_id"]), "polar", None) is not None:
        from reprolab.report import polar_plot

        return Path(polar_plot.polar_reproduction(paper, fig["figure_id"], curves, out))
    return Path(plots.reproduction(paper, fig["figure_id"], curves, out))


def side_by_side(fig_id, paper_img: Path, own: Path | None, fig: dict, out_dir: Path) -> list[str]:
    cols = [("paper", f"![{fig_id} in the paper]({_rel(paper_img, out_dir)})")]
    if own is not None:
        cols.append(
            (
                "reproduction (the simulation's plot)",
                f"![{fig_id} reproduced]({_rel(own, out_dir)})",
            )
        )
    if fig.get("overlay"):  # a result that could not be compared has none
        cols.append(
            (
                "reproduced field map (the paper's axes and colour scale)"
                if fig.get("field_map")
                else "overlay on the paper's digitized data",
                f"![{fig_id} overlay]({_rel(fig['overlay'], out_dir)})",
            )
        )
    return [*table_header(*(c[0] for c in cols)), "| " + " | ".join(c[1] for c in cols) + " |"]


def title_section(run) -> list[str]:
    return [
        f"# Reproduction report: {run.paper.meta.title}",
        "",
        f"Paper id `{run.paper_id}` · domain: {run.paper.meta.domain} · "
        # the configured kind: the report step holds no API key and makes no call
        f"agents: provider `{run.config.get('provider', {}).get('kind', 'replay')}`",
        "",
    ]


def _material_approval_row(validated: dict) -> str:
    """Says plainly when no person approved the material data (demo configuration)."""
    approval = (
        "**AUTO-APPROVED by configuration (demo)**, not by a person"
        if validated["auto_approved"]
        else f"approved by {validated['approved_by']}"
    )
    return f"| Material checkpoint | {approval} (data sha256 `{validated['sha256'][:12]}…`) |"


def executive_summary(
    figure_rows: list[tuple],
    paper_figure_count: int,
    verdicts: list[dict],
    results: dict,
    validated: dict,
    plan_summary: str,
) -> list[str]:
    """One table a reader can stop at: the verdict, what ran, what did not and why."""
    overall, counts = classification_tally(figure_rows)
    sim_seconds = sum(r["runtime_seconds"] for r in results.values())
    stages = ", ".join(f"{v['stage_id']} {v['status']}" for v in verdicts)
    return [
        "## 1. Executive Summary",
        "",
        "| Overall assessment | |",
        "|---|---|",
        f"| Overall classification | **{overall}** |",
        f"| Figures reproduced (SUCCESS only) | {counts['SUCCESS']} of {paper_figure_count} |",
        f"| Figures compared | {len(figure_rows)} of {paper_figure_count} |",
        f"| SUCCESS / PARTIAL / FAILURE | {counts['SUCCESS']} / {counts['PARTIAL']} / "
        f"{counts['FAILURE']} |",
        f"| Stages | {len(verdicts)}: {stages} |",
        f"| Simulation wall time | {sim_seconds:.1f} s in {len(results)} jobs |",
        *(
            f"| Not run: {v['stage_id']} | blocked: {v['reason']} |"
            for v in verdicts
            if v["status"] == "blocked"
        ),
        *(f"| Why PARTIAL | {why} |" for why in [wording.partial_reason(figure_rows)] if why),
        _material_approval_row(validated),
        sandbox_row(results),
        "",
        *prose.commentary("Planner", plan_summary),
        "",
    ]


def materials_table(materials: list[dict]) -> list[str]:
    md = table_header("material", "model", "source", "lossless", "max k in band (dimensionless)")
    for m in materials:
        model = m["model"] + (f" (n = {m['index']})" if m.get("index") else "")
        md.append(
            f"| {m['name']} | {model} | {m['source']} | {wording.yes_no(m['lossless'])} | "
            f"{cell(m['max_k'])} |"
        )
    return md


def assumptions_table(assumptions: list[dict]) -> list[str]:
    md = table_header("id", "assumption", "source")
    for a in assumptions:
        md.append(f"| {a['assumption_id']} | {a['description']} | {a['source']} |")
    return md


def numerical_parameters_table(stage_rows: list[tuple[str, dict, dict]]) -> list[str]:
    """Per stage run: (stage id, design, result), what a reader needs to rerun it."""
    md = table_header(
        "stage",
        "dims",
        "resolution (px/a)",
        "boundaries (PML in a)",
        "source fcen ± fwidth/2 (c/a)",
        "MPI ranks",
        "runtime (s)",
    )
    for stage_id, d, r in stage_rows:
        if d.get("runs_simulation") is False:  # a stage-0 material evaluation
            grid = "no simulation (material models evaluated) | — | —"
        else:
            grid = (
                f"{d['resolution']} | {boundaries_text(d)} | "
                f"{d['source_fcen']} ± {d['source_fwidth'] / 2:g}"
            )
        md.append(
            f"| {stage_id} | {d['dimensions']}D | {grid} | {r['mpi_ranks']} | "
            f"{r['runtime_seconds']:.1f} |"
        )
    return md


def boundaries_text(design: dict) -> str:
    """The cell's boundaries as designed: `PML 1.0` for a design that gives only a PML
    thickness (every axis), else one entry per axis (`x: Bloch, y: Bloch`)."""
    bounds = design.get("boundaries") or []
    if not bounds:
        t = design.get("pml_thickness")
        return f"PML {t:g}" if t else "none"
    words = {"pml": "PML", "bloch": "Bloch", "metallic": "metallic", "none": "none"}
    parts = []
    for b in bounds:
        t = b.get("thickness") or (design.get("pml_thickness") if b["kind"] == "pml" else None)
        parts.append(f"{b['axis']}: {words.get(b['kind'], b['kind'])}" + (f" {t:g}" if t else ""))
    return ", ".join(parts)


def assumptions_section(
    materials: list[dict], assumptions: list[dict], stage_rows: list[tuple[str, dict, dict]]
) -> list[str]:
    return [
        "## 2. Simulation Assumptions",
        "",
        "### 2.1 Materials",
        "",
        *materials_table(materials),
        "",
        "### 2.2 Modelling assumptions",
        "",
        *assumptions_table(assumptions),
        "",
        "### 2.3 Numerical parameters",
        "",
        *numerical_parameters_table(stage_rows),
    ]


def feature_table(fig: dict) -> list[str]:
    """Matched peaks/dips: positions, relative shift and widths at half prominence."""
    rows = [(c["curve_id"], f) for c in fig["curves"] for f in c.get("features", [])]
    if not rows:
        return []
    x = f" ({wording.unit_words(fig['x_unit'])})" if fig.get("x_unit") else ""
    md = [
        "",
        *table_header(
            "curve",
            "feature",
            f"x paper{x}",
            f"x reproduced{x}",
            "shift (rel.)",
            f"width paper{x}",
            f"width reproduced{x}",
        ),
    ]
    for curve_id, f in rows:
        md.append(
            f"| {curve_id} | {f['kind']} | {cell(f['x_paper'], '.5g')} | "
            f"{cell(f['x_sim'], '.5g')} | {cell(f['shift_rel'], '%')} | "
            f"{cell(f.get('width_paper'))} | {cell(f.get('width_sim'))} |"
        )
    return md


def key_value_table(fig: dict) -> list[str]:
    """The paper's headline numbers (metadata key_values) as read off the reproduction,
    each with its relative error and class (they count in the figure's classification)."""
    rows = [(c["curve_id"], kv) for c in fig["curves"] for kv in c.get("key_values", [])]
    if not rows:
        return []
    band = th.KEY_VALUE
    md = [
        "",
        f"Key values the paper states (SUCCESS up to {band.acceptable:.0%} relative error, "
        f"PARTIAL up to {band.investigate:.0%}):",
        "",
        *table_header("curve", "key value", "paper", "reproduced", "error (rel.)", "class"),
    ]
    for curve_id, kv in rows:
        unit = "" if kv.get("unit") in (None, "", "1") else f" {kv['unit']}"
        md.append(
            f"| {curve_id} | {kv.get('quantity') or kv['kind']} | {cell(kv['value'], '.5g')}{unit}"
            f" | {cell(kv.get('sim'), '.5g')}{unit if kv.get('sim') is not None else ''} | "
            f"{cell(kv.get('rel_error'), '%')} | {kv.get('class') or '–'} |"
        )
    return md


def _curve_metrics_row(curve: dict) -> str:
    if "error" in curve:
        return f"| {curve['curve_id']} | – | – | – | – | FAILURE: {curve['error']} |"
    if curve.get("qualitative"):  # no digitized data: the figure is compared by eye
        classes = wording.classes_text(curve["classes"])
        return f"| {curve['curve_id']} | – | – | – | – | {classes} (qualitative, by eye) |"
    feats = curve["features"]
    unit = f" {curve['y_unit']}" if curve.get("y_unit") not in (None, "1") else ""
    return (
        f"| {curve['curve_id']} | {cell(curve['rms_abs'])}{unit} | "
        f"{cell(curve['max_abs'])}{unit} | {cell(curve['metrics']['feature_shift_rel'], '%')} | "
        f"{wording.features_cell(feats)} | {wording.metric_classes(curve)} |"
    )


def y_units(fig: dict) -> str:
    """The y unit the differences are in: one for the table, or each curve's own."""
    # a curve compared in dB (a polar pattern) differs in dB, whatever its axis' unit
    found = {"dB" if c.get("compared_as") == "db" else c.get("y_unit") for c in fig["curves"]}
    if len(found) == 1 and None not in found:
        return wording.unit_words(found.pop())
    return "in its curve's y unit"


def curve_metrics_table(fig: dict) -> list[str]:
    """Per curve: differences, feature shift and the class each metric earned."""
    return [
        *table_header(
            "curve",
            f"RMS diff ({y_units(fig)})",
            f"max abs diff ({y_units(fig)})",
            "peak/dip shift (rel.)",
            "features matched",
            "class per metric",
        ),
        *(_curve_metrics_row(c) for c in fig["curves"]),
    ]


def figure_section(
    fig_id: str,
    title: str,
    stage_id: str,
    fig: dict,
    images: list[str],
    narrative: str,
    grid_lines: list[str] | None = None,
) -> list[str]:
    """One figure: the code's verdict and numbers, then the analyst's words as its
    commentary (`grid_lines`: the code's sentence on the discretisation error)."""
    md = [
        f"### {fig_id}: {title}",
        "",
        f"Stage `{stage_id}` · classification **{fig['classification']}**"
        + " (qualitative: no digitized data, compared visually)" * bool(fig.get("qualitative"))
        + verdicts.capped_note(fig),
        "",
        *(grid_lines or []),
        *images,
        "",
        *(
            modes_report.mode_tables(fig)
            if fig.get("kind") in modes_report.MODE_KINDS
            else [
                *curve_metrics_table(fig),
                *why.why_lines(fig),
                *feature_table(fig),
                *lines_table.line_table(fig),
                *comparison_notes.scale_lines(fig),
                *comparison_notes.reference_lines(fig),
                *key_value_table(fig),
            ]
        ),
    ]
    if narrative:
        stage_dir = Path(fig["overlay"]).parent if fig.get("overlay") else None
        audit = prose.stage_audit(stage_dir, {fig_id: fig}) if stage_dir else None
        text = prose.render(narrative, prose.section_of(audit, f"figure:{fig_id}"))
        md += ["", *prose.commentary("ResultsAnalyzer", text)]
    return [*md, ""]


def figure_comparisons_section(figure_sections: list[list[str]]) -> list[str]:
    return [
        "",
        "## 3. Figure-by-Figure Comparisons",
        "",
        *(line for section in figure_sections for line in section),
    ]


def _worst_metric(metrics: list[dict], key: str):
    values = [m.get(key) for m in metrics if m.get(key) is not None]
    return max(values) if values else None


def summary_table(figure_rows: list[tuple]) -> list[str]:
    """Each figure's worst curve per metric, beside the thresholds that classed it."""
    md = [
        "## 4. Summary Table",
        "",
        *table_header("figure", "stage", "classification", "RMS / max", "max abs / max", "shift"),
    ]
    for fig_id, stage_id, fig in figure_rows:
        metrics = [c.get("metrics", {}) for c in fig["curves"]]
        worst = " | ".join(
            cell(_worst_metric(metrics, key), "%")
            for key in ("rms_rel", "max_abs_rel", "feature_shift_rel")
        )
        if fig.get("kind") in modes_report.MODE_KINDS:
            worst = modes_report.summary_cells(fig)
        qual = " (qualitative: compared visually, no digitized data)" * bool(fig.get("qualitative"))
        qual += verdicts.capped_note(fig)
        md.append(f"| {fig_id} | {stage_id} | **{fig['classification']}**{qual} | {worst} |")
    md += ["", "Classification thresholds (canonical, `reprolab/physics/thresholds.py`):", ""]
    return [*md, th.format_thresholds_table(), ""]


def intake_digitized_note(paper, fig_ids: list[str]) -> list[str]:
    """A line naming the figures judged from curves that ReproLab digitized (from the
    PDF's paths or the figure's image) rather than data the paper or a person gave."""
    found = []
    for fig_id in fig_ids:
        if paper.is_table(fig_id):
            continue
        made = [c for c in paper.figure(fig_id).curves if c.digitized and c.digitized_by]
        if made:
            names = ", ".join(f"{c.curve_id} (reprolab {c.digitized_by})" for c in made)
            found.append(f"{fig_id}: {names}")
    if not found:
        return []
    return [
        "Judged from curves that ReproLab digitized, not data the paper gave (as faithful as "
        "that reading; see each figure's CSV): " + "; ".join(found) + ".",
        "",
    ]


def discrepancies_section(analyses: dict, comparisons: dict | None = None) -> list[str]:
    """The analyst's systematic discrepancies across all stages, one entry each: the
    code's class of its figure, the row's structured severity and direction checked
    against that figure's comparison, then its words as the analyst's commentary."""
    from reprolab.physics import claims

    md = ["## 5. Systematic Discrepancies", ""]
    rows = []
    for stage_id, a in analyses.items():
        comparison = (comparisons or {}).get(stage_id) or {"figures": []}
        figs = {f["figure_id"]: f for f in comparison.get("figures", [])}
        given = prose.given_of(prose.stage_dir_of(comparison))
        audit = claims.audit_analysis(a, comparison, given) if comparisons is not None else None
        for i, d in enumerate(a["discrepancies"]):
            section = prose.section_of(audit, f"discrepancy:{i}")
            fig = figs.get(d["figure_id"])
            cls = fig["classification"] if fig else "not compared"
            checked = "; ".join(claims.discrepancy_fields(d, fig))
            said = prose.render(f"{d['description']} Likely cause: {d['likely_cause']}", section)
            said += f" (what differs, in its words: {d['quantity']})"
            rows += [
                f"- **{d['figure_id']}** (code: {cls}): {checked}",
                *prose.commentary("ResultsAnalyzer", said, indent="  "),
            ]
    if not rows:
        return [*md, "None identified by the analysis.", ""]
    return [*md, *rows, ""]


# What code did after the supervisor's verdict, in words (the verdict as acted on).
NEXT_WORDS = {
    "ok_continue": "the pipeline went on",
    "backtrack_to_stage": "a stage was redone (see the history)",
    "replan_needed": "the paper was replanned (see the history)",
    "change_priority": "the remaining stages were reordered",
    "should_stop": "the paper was stopped here",
    "all_complete": "the paper was ended here",
}


def next_words(verdict: dict, validated: dict | None) -> str:
    """What followed the stage's verdict; at the material checkpoint, who answered it."""
    said = verdict.get("supervisor_verdict")
    if said == "ask_user":
        if validated and validated.get("auto_approved"):
            return "the material checkpoint, AUTO-APPROVED by configuration, not by a person"
        if validated:
            return f"the material checkpoint, approved by {validated.get('approved_by')}"
        return "a question to the user"
    words = NEXT_WORDS.get(said or "", f"the supervisor chose {said}")
    note = verdict.get("user_note")
    return words + (f" (the user's note: {note})" if note else "")


def _stage_conclusion(
    verdict: dict, comparison: dict, overall: str | None = None, validated: dict | None = None
) -> list[str]:
    if verdict["status"] == "blocked":
        return [f"- `{verdict['stage_id']}`: not run, blocked ({verdict['reason']})."]
    output = verdict["supervisor"]["output"]
    said = prose.supervisor_text(output, comparison, verdict["status"], overall)
    return [
        f"- `{verdict['stage_id']}`: **{verdict['status']}** ({verdict['reason']}); next: "
        f"{next_words(verdict, validated)}.",
        *prose.commentary("Supervisor", said, indent="  "),
    ]


def paper_end(verdicts: list[dict]) -> dict | None:
    """The supervisor's end of the paper (should_stop or all_complete) while it holds: a
    user who went on deleted its file (the verdict keeps the record of it)."""
    ends = [v["paper_end"] for v in verdicts if v.get("paper_end")]
    return next((e for e in ends if Path(e.get("file", "")).is_file()), None)


def paper_end_banner(verdicts: list[dict]) -> list[str]:
    """Said at the top of the report: the supervisor ended the paper, and what did not
    run because of it (the report is then PARTIAL); its reasons are in the Conclusions."""
    end = paper_end(verdicts)
    if end is None:
        return []
    not_run = [v["stage_id"] for v in verdicts if v["status"] == "blocked"]
    what = "stopped this paper" if end["verdict"] == "should_stop" else "ended this paper"
    lines = [
        f"**{'PARTIAL: ' if not_run else ''}the supervisor of `{end['stage_id']}` {what} "
        f"({end['verdict']}); "
        + (f"not run: {', '.join(not_run)}.**" if not_run else "every stage of the plan ran.**")
        + " Its reasons (the supervisor's commentary) are in the Conclusions.",
        "",
    ]
    if not_run:
        lines += [
            f"To go on anyway: delete `{end['file']}`, run `reprolab invalidate "
            f'{end["paper_id"]} {not_run[0]} --reason "..."`, then the same command again.',
            "",
        ]
    return lines


def conclusions_section(
    stage_verdicts: list[dict], figure_rows: list[tuple], validated: dict | None = None
) -> list[str]:
    """The code's numbers first, then each stage's verdict and what followed it, with the
    supervisor's words as its commentary (flagged against the stage's comparison:
    claims, classification, status words)."""
    overall, counts = classification_tally(figure_rows)
    by_stage: dict[str, dict] = {}
    for _, stage_id, fig in figure_rows:
        by_stage.setdefault(stage_id, {"figures": []})["figures"].append(fig)
    return [
        "## 6. Conclusions",
        "",
        f"**Final statement (code):** {counts['SUCCESS']} of {len(figure_rows)} simulated "
        f"target figures reproduced (SUCCESS); overall classification **{overall}** "
        f"({counts['SUCCESS']} SUCCESS, {counts['PARTIAL']} PARTIAL, {counts['FAILURE']} "
        "FAILURE). Numbers are computed by code from the simulation outputs and the paper's "
        "digitized data; the quoted prose below is the agents' commentary, which code did "
        "not check: it is not this report's statement (it is marked where no checked claim "
        "backs a number and struck through where code found it contradicted).",
        "",
        *paper_end_banner(stage_verdicts)[:2],
        *(
            line
            for v in stage_verdicts
            for line in _stage_conclusion(
                v, by_stage.get(v["stage_id"], {"figures": []}), overall, validated
            )
        ),
        "",
    ]


def gate_decisions_section(interactions: list[dict]) -> list[str]:
    """Who answered each gate, and whether the configuration answered for a person."""
    md = ["## Gate decisions", ""]
    for entry in interactions:
        resp = entry["user_response"]
        md.append(
            f"- {entry['id']} {entry['interaction_type']} at {entry['timestamp']}: "
            f"{resp['action']} by {resp['answered_by']}"
            + (" (AUTO-APPROVED by config)" if resp.get("auto") else "")
            + f" — {entry['impact']}"
        )
    return [*md, ""]


def _value(v) -> str:
    return cell(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else "–"


def _check_note(x: dict) -> str:
    """A check not passed, with what it found: a failure always says what failed (its
    detail beside its threshold), a skipped check why it could not judge, a warning its
    threshold or detail."""
    detail = " ".join((x.get("detail") or "").split()).replace("|", "\\|")
    threshold = x.get("threshold") or ""
    if x["status"] in ("fail", "skip") and detail:
        why = f"{detail[:200]}" + (f"; limit {threshold}" if threshold else "")
    else:
        why = threshold or detail[:80]
    excused = f", excused by {x['excused_by']}" if x.get("excused_by") else ""
    return f"**{x['status']}** `{x['name']}` = {_value(x['value'])} ({why}){excused}"


def checks_section(checks_by_stage: dict, out_dir: Path) -> list[str]:
    """Every stage's deterministic checks: verdict, and each check not passed with its
    number and threshold (docs/checks.md)."""
    if not checks_by_stage:
        return []
    md = ["## Physics and execution checks", ""]
    md += table_header("stage", "verdict", "checks passed", "warnings and failures")
    for sid, c in checks_by_stage.items():
        bad = [x for x in c["checks"] if x["status"] != "pass"]
        passed = len(c["checks"]) - len(bad)
        notes = "; ".join(_check_note(x) for x in bad)
        if c.get("diagnosis"):
            notes += f"; diagnosis: {_rel(c['diagnosis'], out_dir)}"
        md.append(f"| {sid} | {c['verdict']} | {passed}/{len(c['checks'])} | {notes or '–'} |")
    md += ["", "A check that fails fails its stage; no agent verdict overrides it.", ""]
    return md + as_built_table(checks_by_stage)


# The run-time record's measurements the report shows per stage (checks named built:*).
AS_BUILT_COLUMNS = (
    ("built:resolution_ppw", "pixels per wavelength (densest material)"),
    ("built:pml_thickness", "thinnest PML (wavelengths)"),
    ("built:field_decay", "spectra left to change (else field energy end/peak)"),
    ("built:source_bandwidth", "farthest monitored frequency (·fwidth)"),
    ("built:geometry_as_declared", "declared dimensions not built"),
)


def as_built_table(checks_by_stage: dict) -> list[str]:
    """What Meep built and measured, per stage, from the run-time record (as_built.json)."""
    rows = []
    for sid, c in checks_by_stage.items():
        by_name = {x["name"]: x for x in c["checks"]}
        if not any(name in by_name for name, _ in AS_BUILT_COLUMNS):
            continue
        cells = [
            f"{_value(by_name[n]['value'])} ({by_name[n]['status']})" if n in by_name else "–"
            for n, _ in AS_BUILT_COLUMNS
        ]
        rows.append(f"| {sid} | " + " | ".join(cells) + " |")
    if not rows:
        return []
    head = table_header("stage", *(label for _, label in AS_BUILT_COLUMNS))
    return ["### As built (run-time record)", "", *head, *rows, ""]


def convergence_section(out_dir: Path) -> list[str]:
    """Each stage's convergence decision on one line, then its reruns' quantities in a
    compact table (coarser runs: both runs' values, the estimated error at the run's
    resolution and the observed order)."""
    files = [
        p
        for p in sorted(out_dir.glob("stages/*/convergence.json"))
        if not read_json(p).get("blocked")
    ]
    if not files:
        return []
    md = ["## Convergence (resolution and, for resonances, PML varied)", ""]
    for path in files:
        conv = read_json(path)
        said = conv.get("note") or conv.get("reason") or ""
        extra = conv.get("extra_meep_seconds")
        cost = f"; {extra:.1f} extra Meep seconds" if extra else ""
        status = conv.get("status", "")
        said = said if said.startswith("not needed") else f"{status}: {said}" if said else status
        md += [f"**`{conv['stage_id']}`**: {said}{cost}", ""]
        if conv.get("quantities"):
            md += table_header("rerun", "quantity", "value → rerun", "change (limit)", "status")
            md += [
                f"| {q.get('variant', 'resolution_2x')} | {q['name']} | "
                f"{cell(q['value_n'], '.6g')} → {_rerun_values(q)} | "
                f"{_change_text(q)} ({q.get('limit', '')}) | "
                + (
                    f"reported ({q['status']}), not judged |"
                    if q.get("reported")
                    else f"{q['status']} |"
                )
                for q in conv["quantities"]
            ]
            md.append("")
    md += [
        f"`checks.convergence`: auto verifies a stage under {th.PPW_AS_BUILT.warn:g} pixels "
        "per wavelength (as built) and every stage that ran Harminv. `resolution_coarse`: "
        "two coarser runs and, per quantity, the bound on the run's error (GCI: the "
        "Richardson estimate with the observed order p times a safety factor, "
        f"{gc.safety_factor(2.0):g} at p = 2, up to {gc.GCI_SAFETY:g} where no order is "
        "observed); "
        "`resolution_2x`: the change at twice the resolution. A bound or change above "
        f"{th.CONVERGENCE_FRACTION:g} of the SUCCESS level of the band that classifies the "
        "quantity fails the stage (pointwise: max \\|y' − y\\| / max \\|y\\| on the "
        f"figure's x grid after the shift a converged position may have, fail above "
        f"{th.CONVERGENCE_POINTWISE.fail:g}, the unshifted change reported; Harminv Q above "
        f"{th.CONVERGENCE_Q.fail:g}); a run under {th.PPW_AS_BUILT.fail:g} pixels per "
        "wavelength stands only when its resolution evidence converged.",
        "",
    ]
    return md


def _rerun_values(q: dict) -> str:
    """The rerun's value, or each coarser run's with its resolution factor."""
    if "values_coarse" not in q:
        return cell(q["value_2n"], ".6g")
    pairs = zip(q.get("scales", []), q["values_coarse"], q.get("changes_coarse", []), strict=False)
    return "; ".join(
        f"{s:g}x: {cell(v, '.6g') if v is not None else 'change ' + cell(c)}" for s, v, c in pairs
    )


def _change_text(q: dict) -> str:
    """The change, or the estimated error with its observed order (and a note)."""
    if "values_coarse" not in q:
        return cell(q.get("change", q["error_estimate"]))
    order = f"p = {q['order']:.2f}" if q.get("order") is not None else "p not determined"
    if "richardson_error" not in q:  # written before the bound was judged
        return f"est. error {cell(q['error_estimate'])} ({order}, GCI {cell(q.get('gci'))})"
    return (
        f"error bound {cell(q['error_estimate'])} ({cell(q['safety_factor'])} x Richardson "
        f"{cell(q['richardson_error'])}, {order})"
    )


def read_metrics(out_dir: Path) -> list[dict]:
    path = out_dir / "metrics.jsonl"
    if not path.is_file():
        return []
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if line:
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:
                continue
    return out


def cost_section(out_dir: Path, results: dict) -> list[str]:
    """Agent tokens and cost (metrics.jsonl, one JSON per agent call) and simulation time."""
    metrics = read_metrics(out_dir)
    md = ["## Cost and runtime", ""]
    md += table_header("item", "value")
    total = summarize(metrics)["total"]
    md += [
        f"| agent calls recorded | {len(metrics)} ({total['paid_calls']} paid, "
        f"{total['cache_hits']} from the cache, {total['replays']} replayed) |",
        f"| paid input / output tokens | {total['input_tokens']} / {total['output_tokens']} |",
        # Money actually spent; a model without a price is said so, never shown as $0.
        f"| agent cost | {total['cost_text']} |",
    ]
    for sid, r in results.items():
        md.append(f"| simulation {sid} | {r.get('runtime_seconds', 0):.1f} s |")
        if r.get("job_size"):  # sized before submission: estimated against actual use
            md.append(f"| job size {sid} | {cost.job_size_line(r['job_size'])} |")
    total = sum(r.get("runtime_seconds") or 0 for r in results.values())
    md += [f"| simulation total | {total:.1f} s |", ""]
    md += cost.preset_rows(metrics)
    md += cost.by_agent_rows(metrics)
    if not metrics:
        md += ["No metrics.jsonl: agent calls were not metered in this run.", ""]
    return md
