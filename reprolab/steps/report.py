"""The report step: REPRODUCTION_REPORT_<paper_id>.md and its HTML view, from the files."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

from reprolab.artifacts import load_plan
from reprolab.fileio import atomic_write_text, read_json
from reprolab.physics import thresholds as th
from reprolab.report import html as report_html
from reprolab.report.markdown import (
    _fmt,
    checks_section,
    convergence_section,
    cost_section,
    drawn_reproduction,
    feature_table,
    history_section,
    overall_classification,
    own_plot,
    side_by_side,
    stage_dir_of,
    table_header,
)


def write_report(run, inputs, out_report, out_html=None) -> None:
    out_report = Path(out_report)
    out_dir = out_report.parent
    assets = out_dir / "report_assets"
    assets.mkdir(exist_ok=True)
    plan = load_plan(inputs.plan)
    validated = read_json(inputs.validated)
    verdicts = [read_json(p) for p in inputs.verdicts]
    comparisons = {c["stage_id"]: c for c in map(read_json, inputs.comparisons)}
    # Blocked stages (dependency failed, hierarchy, budget) left blocked artifacts only.
    ran = [read_json(p) for p in inputs.results]
    ran_ids = {r["stage_id"] for r in ran if not r.get("blocked")}
    analyses = {
        a["output"]["stage_id"]: a["output"]
        for a in map(read_json, inputs.analyses)
        if not a.get("blocked")
    }
    results = {r["stage_id"]: r for r in ran if r["stage_id"] in ran_ids}
    designs = {
        d["output"]["stage_id"]: d["output"]
        for d in map(read_json, inputs.designs)
        if not d.get("blocked")
    }
    checks_by_stage = {
        c["stage_id"]: c
        for c in map(read_json, getattr(inputs, "checks", []))
        if c["stage_id"] in ran_ids
    }

    figure_rows = []  # (figure_id, stage_id, fig_result)
    for stage in plan.stages:
        for fig in comparisons.get(stage.stage_id, {}).get("figures", []):
            figure_rows.append((fig["figure_id"], stage.stage_id, fig))
    classes = [f["classification"] for _, _, f in figure_rows]
    counts = Counter(classes)
    overall = overall_classification(classes)
    sim_seconds = sum(r["runtime_seconds"] for r in results.values())

    md: list[str] = [f"# Reproduction report: {run.paper.meta.title}", ""]
    md += [
        f"Paper id `{run.paper_id}` · domain: {run.paper.meta.domain} · "
        f"agents: provider `{run.agents.provider.name}`",
        "",
    ]

    # 1. Executive summary
    md += ["## 1. Executive Summary", "", "| Overall assessment | |", "|---|---|"]
    md += [
        f"| Overall classification | **{overall}** |",
        f"| Figures reproduced | {len(figure_rows)} of {len(run.paper.meta.figures)} |",
        f"| SUCCESS / PARTIAL / FAILURE | {counts['SUCCESS']} / {counts['PARTIAL']} / "
        f"{counts['FAILURE']} |",
        f"| Stages | {len(verdicts)}: "
        + ", ".join(f"{v['stage_id']} {v['status']}" for v in verdicts)
        + " |",
        f"| Simulation wall time | {sim_seconds:.1f} s in {len(results)} jobs |",
        *(
            f"| Not run: {v['stage_id']} | blocked: {v['reason']} |"
            for v in verdicts
            if v["status"] == "blocked"
        ),
        "| Material checkpoint | "
        + (
            "**AUTO-APPROVED by configuration (demo)**, not by a person"
            if validated["auto_approved"]
            else f"approved by {validated['approved_by']}"
        )
        + f" (data sha256 `{validated['sha256'][:12]}…`) |",
        "",
        plan.summary,
        "",
    ]

    # 2. Assumptions
    md += ["## 2. Simulation Assumptions", "", "### 2.1 Materials", ""]
    md += ["| material | model | source | lossless | max k in band |", "|---|---|---|---|---|"]
    for m in validated["materials"]:
        model = m["model"] + (f" (n = {m['index']})" if m.get("index") else "")
        md.append(
            f"| {m['name']} | {model} | {m['source']} | {m['lossless']} | {_fmt(m['max_k'])} |"
        )
    md += ["", "### 2.2 Modelling assumptions", "", "| id | assumption | source |", "|---|---|---|"]
    assumptions = [a.model_dump() for a in plan.assumptions]
    for sid, design in designs.items():
        assumptions += [
            dict(a, assumption_id=f"{a['assumption_id']} ({sid})")
            for a in design["new_assumptions"]
        ]
    for a in assumptions:
        md.append(f"| {a['assumption_id']} | {a['description']} | {a['source']} |")
    md += [
        "",
        "### 2.3 Numerical parameters",
        "",
        *table_header(
            "stage",
            "dims",
            "resolution (px/a)",
            "PML (a)",
            "source fcen ± fwidth/2 (c/a)",
            "MPI ranks",
            "runtime (s)",
        ),
    ]
    for stage in plan.stages:
        if stage.stage_id not in results:
            continue  # blocked: listed with its reason in the executive summary
        d, r = designs[stage.stage_id], results[stage.stage_id]
        md.append(
            f"| {stage.stage_id} | {d['dimensions']}D | {d['resolution']} | {d['pml_thickness']} | "
            f"{d['source_fcen']} ± {d['source_fwidth'] / 2:g} | {r['mpi_ranks']} | "
            f"{r['runtime_seconds']:.1f} |"
        )

    # 3. Figure by figure
    md += ["", "## 3. Figure-by-Figure Comparisons", ""]
    for fig_id, stage_id, fig in figure_rows:
        meta = run.paper.figure(fig_id)
        paper_img = assets / f"{fig_id}_paper{Path(meta.image).suffix}"
        shutil.copyfile(run.paper.folder / meta.image, paper_img)
        md += [
            f"### {fig_id}: {meta.title}",
            "",
            f"Stage `{stage_id}` · classification **{fig['classification']}**",
            "",
            *side_by_side(
                fig_id,
                paper_img,
                own_plot(designs[stage_id], stage_dir_of(fig))
                or drawn_reproduction(run.paper, designs[stage_id], fig, assets),
                fig,
                out_dir,
            ),
            "",
            *table_header(
                "curve",
                "RMS diff",
                "max abs diff",
                "peak/dip shift (rel.)",
                "features matched",
                "class per metric",
            ),
        ]
        for c in fig["curves"]:
            if "error" in c:
                md.append(f"| {c['curve_id']} | – | – | – | – | FAILURE: {c['error']} |")
                continue
            feats = c["features"]
            matched = sum(1 for f in feats if f["x_sim"] is not None)
            cls = ", ".join(f"{k}: {v}" for k, v in c["classes"].items())
            md.append(
                f"| {c['curve_id']} | {_fmt(c['rms_abs'])} | {_fmt(c['max_abs'])} | "
                f"{_fmt(c['metrics']['feature_shift_rel'], '%')} | "
                f"{matched}/{len(feats)} | {cls} |"
            )
        md += feature_table(fig)
        narrative = next(
            (n["narrative"] for n in analyses[stage_id]["per_figure"] if n["figure_id"] == fig_id),
            "",
        )
        if narrative:
            md += ["", f"*Analysis (ResultsAnalyzer):* {narrative}"]
        md.append("")

    # 4. Summary table
    md += [
        "## 4. Summary Table",
        "",
        *table_header("figure", "stage", "classification", "RMS / max", "max abs / max", "shift"),
    ]
    for fig_id, stage_id, fig in figure_rows:
        ms = [c.get("metrics", {}) for c in fig["curves"]]

        def worst_metric(key, ms=ms):
            vals = [m.get(key) for m in ms if m.get(key) is not None]
            return max(vals) if vals else None

        md.append(
            f"| {fig_id} | {stage_id} | **{fig['classification']}** | "
            f"{_fmt(worst_metric('rms_rel'), '%')} | "
            f"{_fmt(worst_metric('max_abs_rel'), '%')} | "
            f"{_fmt(worst_metric('feature_shift_rel'), '%')} |"
        )
    md += ["", "Classification thresholds (canonical, `reprolab/physics/thresholds.py`):", ""]
    md += [th.format_thresholds_table(), ""]

    # 5. Systematic discrepancies
    md += ["## 5. Systematic Discrepancies", ""]
    discrepancies = [d for a in analyses.values() for d in a["discrepancies"]]
    if discrepancies:
        md += [
            *table_header("figure", "quantity", "severity", "description", "likely cause"),
        ]
        for d in discrepancies:
            md.append(
                f"| {d['figure_id']} | {d['quantity']} | {d['severity']} | {d['description']} | "
                f"{d['likely_cause']} |"
            )
    else:
        md.append("None identified by the analysis.")
    md.append("")

    # 6. Conclusions
    md += ["## 6. Conclusions", ""]
    for v in verdicts:
        if v["status"] == "blocked":
            md.append(f"- `{v['stage_id']}`: not run, blocked ({v['reason']}).")
            continue
        md.append(
            f"- `{v['stage_id']}`: {v['status']} ({v['reason']}). Supervisor "
            f"({v['supervisor_verdict']}): {v['supervisor']['output']['feedback']}"
        )
    md += [
        "",
        f"**Final statement:** {len(figure_rows)} target figures were simulated; overall "
        f"classification **{overall}** ({counts['SUCCESS']} SUCCESS, {counts['PARTIAL']} PARTIAL, "
        f"{counts['FAILURE']} FAILURE). Numbers above are computed by code from the simulation "
        "outputs and the paper's digitized data; prose is the agents'.",
        "",
        *checks_section(checks_by_stage, out_dir),
        *convergence_section(out_dir),
        *cost_section(out_dir, results),
        "## Gate decisions",
        "",
    ]
    interactions = out_dir / "user_interactions.jsonl"
    if interactions.is_file():
        for line in interactions.read_text().splitlines():
            entry = json.loads(line)
            resp = entry["user_response"]
            md.append(
                f"- {entry['id']} {entry['interaction_type']} at {entry['timestamp']}: "
                f"{resp['action']} by {resp['answered_by']}"
                + (" (AUTO-APPROVED by config)" if resp.get("auto") else "")
                + f" — {entry['impact']}"
            )
    md.append("")
    md += history_section(out_dir, results)
    text = "\n".join(md)
    atomic_write_text(out_report, text)
    if out_html:
        atomic_write_text(
            out_html,
            report_html.markdown_to_html(text, out_dir, f"Reproduction report: {run.paper_id}"),
        )
