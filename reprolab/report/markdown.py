"""Section builders of the markdown report: summary, assumptions, figures side by side,
discrepancies, conclusions, checks, convergence, gates, history and cost."""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

from reprolab.fileio import read_json
from reprolab.physics import thresholds as th
from reprolab.report.security import sandbox_row


def _fmt(value, spec=".3g") -> str:
    if value is None:
        return "–"
    if isinstance(value, float) and value != value:
        return "n/a"
    if spec == "%":
        return f"{value * 100:.2g} %"
    return format(value, spec)


def _rel(path: str | Path, start: Path) -> str:
    return os.path.relpath(Path(path).resolve(), start.resolve())


def table_header(*names: str) -> list[str]:
    return ["| " + " | ".join(names) + " |", "|" + "---|" * len(names)]


def overall_classification(figure_classes: list[str]) -> str:
    return th.worst(figure_classes) if figure_classes else "FAILURE"


def history_section(out_dir: Path, results: dict) -> list[str]:
    """Backtracks, replans and repaired runs: what the pipeline redid and why."""
    lines = []
    backtracks = out_dir / "backtracks.jsonl"
    if backtracks.is_file():
        for line in backtracks.read_text(encoding="utf-8").splitlines():
            b = json.loads(line)
            what = "replan" if b["to"] == "plan" else f"backtrack to `{b['to']}`"
            lines.append(f"- {what} asked by the supervisor of `{b['from']}`: {b['reason']}")
    for stage_id, r in results.items():
        for repair in r.get("repairs", []):
            lines.append(
                f"- `{stage_id}`: a run failed ({repair['kind']}); the code was regenerated "
                f"with the error (failed run kept in `{_rel(repair['failed_run'], out_dir)}`)"
            )
        if r.get("physics_stuck"):
            lines.append(f"- `{stage_id}`: physics checks kept failing; the supervisor decided")
    if not lines:
        return []
    return ["## Backtracks, replans and repaired runs", "", *lines, ""]


def stage_dir_of(fig: dict) -> Path:
    return Path(fig["overlay"]).parent


def own_plot(design: dict, stage_dir: Path) -> Path | None:
    """The simulation's own plot (the first PNG among the design's outputs), if written."""
    for spec in design.get("output_specifications", []):
        path = stage_dir / "run" / spec["file"]
        if spec["file"].endswith(".png") and path.is_file():
            return path
    return None


def drawn_reproduction(paper, design: dict, fig: dict, assets: Path) -> Path | None:
    """The reproduced curves drawn by code from the stage's outputs, for a stage whose
    script wrote no plot of its own."""
    from reprolab.physics.checks import read_numeric_csv
    from reprolab.report import plots

    curves = {}
    for fo in design.get("figure_outputs", []):
        path = stage_dir_of(fig) / "run" / fo["file"]
        if fo["figure_id"] != fig["figure_id"] or not path.is_file():
            continue
        cols = read_numeric_csv(path)
        if fo["x_column"] in cols and fo["y_column"] in cols:
            curves[fo["curve_id"]] = (cols[fo["x_column"]], cols[fo["y_column"]])
    if not curves:
        return None
    out = assets / f"{fig['figure_id']}_reproduced.png"
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
    cols.append(
        (
            "overlay on the paper's digitized data",
            f"![{fig_id} overlay]({_rel(fig['overlay'], out_dir)})",
        )
    )
    return [*table_header(*(c[0] for c in cols)), "| " + " | ".join(c[1] for c in cols) + " |"]


def feature_table(fig: dict) -> list[str]:
    """Matched peaks/dips: positions, relative shift and widths at half prominence."""
    rows = [(c["curve_id"], f) for c in fig["curves"] for f in c.get("features", [])]
    if not rows:
        return []
    md = [
        "",
        *table_header(
            "curve",
            "feature",
            "x paper",
            "x reproduced",
            "shift (rel.)",
            "width paper",
            "width reproduced",
        ),
    ]
    for curve_id, f in rows:
        md.append(
            f"| {curve_id} | {f['kind']} | {_fmt(f['x_paper'], '.5g')} | "
            f"{_fmt(f['x_sim'], '.5g')} | {_fmt(f['shift_rel'], '%')} | "
            f"{_fmt(f.get('width_paper'))} | {_fmt(f.get('width_sim'))} |"
        )
    return md


def classification_tally(figure_rows: list[tuple]) -> tuple[str, Counter]:
    """The overall class and the count per class, so that the summary and the
    conclusions state the same numbers."""
    classes = [fig["classification"] for _, _, fig in figure_rows]
    return overall_classification(classes), Counter(classes)


def title_section(run) -> list[str]:
    return [
        f"# Reproduction report: {run.paper.meta.title}",
        "",
        f"Paper id `{run.paper_id}` · domain: {run.paper.meta.domain} · "
        f"agents: provider `{run.agents.provider.name}`",
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
        f"| Figures reproduced | {len(figure_rows)} of {paper_figure_count} |",
        f"| SUCCESS / PARTIAL / FAILURE | {counts['SUCCESS']} / {counts['PARTIAL']} / "
        f"{counts['FAILURE']} |",
        f"| Stages | {len(verdicts)}: {stages} |",
        f"| Simulation wall time | {sim_seconds:.1f} s in {len(results)} jobs |",
        *(
            f"| Not run: {v['stage_id']} | blocked: {v['reason']} |"
            for v in verdicts
            if v["status"] == "blocked"
        ),
        _material_approval_row(validated),
        sandbox_row(results),
        "",
        plan_summary,
        "",
    ]


def materials_table(materials: list[dict]) -> list[str]:
    md = table_header("material", "model", "source", "lossless", "max k in band")
    for m in materials:
        model = m["model"] + (f" (n = {m['index']})" if m.get("index") else "")
        md.append(
            f"| {m['name']} | {model} | {m['source']} | {m['lossless']} | {_fmt(m['max_k'])} |"
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
        "PML (a)",
        "source fcen ± fwidth/2 (c/a)",
        "MPI ranks",
        "runtime (s)",
    )
    for stage_id, d, r in stage_rows:
        md.append(
            f"| {stage_id} | {d['dimensions']}D | {d['resolution']} | {d['pml_thickness']} | "
            f"{d['source_fcen']} ± {d['source_fwidth'] / 2:g} | {r['mpi_ranks']} | "
            f"{r['runtime_seconds']:.1f} |"
        )
    return md


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


def _curve_metrics_row(curve: dict) -> str:
    if "error" in curve:
        return f"| {curve['curve_id']} | – | – | – | – | FAILURE: {curve['error']} |"
    if curve.get("qualitative"):  # no digitized data: the figure is compared by eye
        return f"| {curve['curve_id']} | – | – | – | – | {curve['classes']} (qualitative) |"
    feats = curve["features"]
    matched = sum(1 for f in feats if f["x_sim"] is not None)
    classes = ", ".join(f"{k}: {v}" for k, v in curve["classes"].items())
    return (
        f"| {curve['curve_id']} | {_fmt(curve['rms_abs'])} | {_fmt(curve['max_abs'])} | "
        f"{_fmt(curve['metrics']['feature_shift_rel'], '%')} | "
        f"{matched}/{len(feats)} | {classes} |"
    )


def curve_metrics_table(fig: dict) -> list[str]:
    """Per curve: differences, feature shift and the class each metric earned."""
    return [
        *table_header(
            "curve",
            "RMS diff",
            "max abs diff",
            "peak/dip shift (rel.)",
            "features matched",
            "class per metric",
        ),
        *(_curve_metrics_row(c) for c in fig["curves"]),
    ]


def figure_section(
    fig_id: str, title: str, stage_id: str, fig: dict, images: list[str], narrative: str
) -> list[str]:
    md = [
        f"### {fig_id}: {title}",
        "",
        f"Stage `{stage_id}` · classification **{fig['classification']}**"
        + " (qualitative: no digitized data, compared visually)" * bool(fig.get("qualitative")),
        "",
        *images,
        "",
        *curve_metrics_table(fig),
        *feature_table(fig),
    ]
    if narrative:
        md += ["", f"*Analysis (ResultsAnalyzer):* {narrative}"]
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
            _fmt(_worst_metric(metrics, key), "%")
            for key in ("rms_rel", "max_abs_rel", "feature_shift_rel")
        )
        qual = " (qualitative: compared visually, no digitized data)" * bool(fig.get("qualitative"))
        md.append(f"| {fig_id} | {stage_id} | **{fig['classification']}**{qual} | {worst} |")
    md += ["", "Classification thresholds (canonical, `reprolab/physics/thresholds.py`):", ""]
    return [*md, th.format_thresholds_table(), ""]


def discrepancies_section(analyses: dict) -> list[str]:
    """The analyst's systematic discrepancies across all stages, in one table."""
    discrepancies = [d for a in analyses.values() for d in a["discrepancies"]]
    md = ["## 5. Systematic Discrepancies", ""]
    if not discrepancies:
        return [*md, "None identified by the analysis.", ""]
    md += table_header("figure", "quantity", "severity", "description", "likely cause")
    for d in discrepancies:
        md.append(
            f"| {d['figure_id']} | {d['quantity']} | {d['severity']} | {d['description']} | "
            f"{d['likely_cause']} |"
        )
    return [*md, ""]


def _stage_conclusion(verdict: dict) -> str:
    if verdict["status"] == "blocked":
        return f"- `{verdict['stage_id']}`: not run, blocked ({verdict['reason']})."
    return (
        f"- `{verdict['stage_id']}`: {verdict['status']} ({verdict['reason']}). Supervisor "
        f"({verdict['supervisor_verdict']}): {verdict['supervisor']['output']['feedback']}"
    )


def conclusions_section(verdicts: list[dict], figure_rows: list[tuple]) -> list[str]:
    """Each stage's verdict with the supervisor's word, then the numbers the code found."""
    overall, counts = classification_tally(figure_rows)
    return [
        "## 6. Conclusions",
        "",
        *(_stage_conclusion(v) for v in verdicts),
        "",
        f"**Final statement:** {len(figure_rows)} target figures were simulated; overall "
        f"classification **{overall}** ({counts['SUCCESS']} SUCCESS, {counts['PARTIAL']} PARTIAL, "
        f"{counts['FAILURE']} FAILURE). Numbers above are computed by code from the simulation "
        "outputs and the paper's digitized data; prose is the agents'.",
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
    return _fmt(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else "–"


def checks_section(checks_by_stage: dict, out_dir: Path) -> list[str]:
    """Every stage's deterministic checks: verdict, and each check not passed with its
    number and threshold (PHYSICS_CHECKS.md)."""
    if not checks_by_stage:
        return []
    md = ["## Physics and execution checks", ""]
    md += table_header("stage", "verdict", "checks passed", "warnings and failures")
    for sid, c in checks_by_stage.items():
        bad = [x for x in c["checks"] if x["status"] != "pass"]
        passed = len(c["checks"]) - len(bad)
        notes = "; ".join(
            f"**{x['status']}** `{x['name']}` = {_value(x['value'])} "
            f"({x['threshold'] or x['detail'][:80]})"
            for x in bad
        )
        if c.get("diagnosis"):
            notes += f"; diagnosis: {_rel(c['diagnosis'], out_dir)}"
        md.append(f"| {sid} | {c['verdict']} | {passed}/{len(c['checks'])} | {notes or '–'} |")
    md += ["", "A check that fails fails its stage; no agent verdict overrides it.", ""]
    return md


def convergence_section(out_dir: Path) -> list[str]:
    files = [
        p
        for p in sorted(out_dir.glob("stages/*/convergence.json"))
        if not read_json(p).get("blocked")
    ]
    if not files:
        return []
    md = ["## Convergence (rerun at twice the resolution)", ""]
    md += table_header(
        "stage", "quantity", "value at N", "value at 2N", "estimated error (Richardson)", "status"
    )
    for path in files:
        conv = read_json(path)
        for q in conv.get("quantities", []):
            md.append(
                f"| {conv['stage_id']} | {q['name']} | {_fmt(q['value_n'], '.6g')} | "
                f"{_fmt(q['value_2n'], '.6g')} | {_fmt(q['error_estimate'])} | {q['status']} |"
            )
        if conv.get("note"):
            md.append(f"| {conv['stage_id']} | – | – | – | – | {conv['note']} |")
    md += [
        "",
        f"Estimated discretisation error of the N run = \\|q(2N) − q(N)\\| / "
        f"{th.CONVERGENCE_RICHARDSON_DIVISOR:g} (second-order scheme); warn above "
        f"{th.CONVERGENCE_TOLERANCE:g} relative.",
        "",
    ]
    return md


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
    tin = sum(int(m.get("input_tokens") or 0) for m in metrics)
    tout = sum(int(m.get("output_tokens") or 0) for m in metrics)
    cost = sum(float(m.get("cost_usd") or 0) for m in metrics)
    md += [
        f"| agent calls recorded | {len(metrics)} |",
        f"| input / output tokens | {tin} / {tout} |",
        f"| agent cost | {cost:.4f} USD |",
    ]
    for sid, r in results.items():
        md.append(f"| simulation {sid} | {r.get('runtime_seconds', 0):.1f} s |")
    total = sum(r.get("runtime_seconds") or 0 for r in results.values())
    md += [f"| simulation total | {total:.1f} s |", ""]
    if not metrics:
        md += ["No metrics.jsonl: agent calls were not metered in this run.", ""]
    return md
