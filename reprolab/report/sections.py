"""Report sections about the figures and what the agents said of them: metrics and
features per figure, the summary table, discrepancies and conclusions. Agents' prose is
printed after the code's verdict, with every number it cites marked by whether a
structured claim backs it (`reprolab.physics.claims`)."""

from __future__ import annotations

from pathlib import Path

from reprolab.physics import thresholds as th
from reprolab.report import prose
from reprolab.report.fmt import _fmt, classification_tally, table_header


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
            f"| {curve_id} | {kv.get('quantity') or kv['kind']} | {_fmt(kv['value'], '.5g')}{unit}"
            f" | {_fmt(kv.get('sim'), '.5g')}{unit if kv.get('sim') is not None else ''} | "
            f"{_fmt(kv.get('rel_error'), '%')} | {kv.get('class') or '–'} |"
        )
    return md


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
        *key_value_table(fig),
    ]
    if narrative:
        audit = prose.stage_audit(Path(fig["overlay"]).parent) if fig.get("overlay") else None
        text = prose.render(narrative, prose.section_of(audit, f"figure:{fig_id}"))
        md += ["", f"*Analysis (ResultsAnalyzer), after the code's verdict above:* {text}"]
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


def discrepancies_section(analyses: dict, comparisons: dict | None = None) -> list[str]:
    """The analyst's systematic discrepancies across all stages, in one table, each
    with its numbers checked against the analysis's claims and the code's classes."""
    from reprolab.physics import claims

    md = ["## 5. Systematic Discrepancies", ""]
    rows = []
    for stage_id, a in analyses.items():
        comparison = (comparisons or {}).get(stage_id) or {"figures": []}
        audit = claims.audit_analysis(a, comparison) if comparisons is not None else None
        for i, d in enumerate(a["discrepancies"]):
            section = prose.section_of(audit, f"discrepancy:{i}")
            text = prose.render(f"{d['description']} Likely cause: {d['likely_cause']}", section)
            rows.append(f"| {d['figure_id']} | {d['quantity']} | {d['severity']} | {text} |")
    if not rows:
        return [*md, "None identified by the analysis.", ""]
    header = table_header("figure", "quantity", "severity", "description and cause")
    return [*md, *header, *rows, ""]


def _stage_conclusion(verdict: dict, comparison: dict) -> str:
    if verdict["status"] == "blocked":
        return f"- `{verdict['stage_id']}`: not run, blocked ({verdict['reason']})."
    said = prose.supervisor_text(verdict["supervisor"]["output"], comparison, verdict["status"])
    return (
        f"- `{verdict['stage_id']}`: **{verdict['status']}** ({verdict['reason']}). "
        f"Supervisor ({verdict['supervisor_verdict']}): {said}"
    )


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
        + " Its reasons, checked against the code, are in the Conclusions.",
        "",
    ]
    if not_run:
        lines += [
            f"To go on anyway: delete `{end['file']}`, run `reprolab invalidate "
            f'{end["paper_id"]} {not_run[0]} --reason "..."`, then the same command again.',
            "",
        ]
    return lines


def conclusions_section(verdicts: list[dict], figure_rows: list[tuple]) -> list[str]:
    """The code's numbers first, then each stage's verdict with the supervisor's word
    (checked against the stage's comparison: claims, classification, status words)."""
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
        "digitized data; the prose below is the agents', marked where no checked claim backs "
        "it and struck through where the code contradicts it.",
        "",
        *paper_end_banner(verdicts)[:2],
        *(_stage_conclusion(v, by_stage.get(v["stage_id"], {"figures": []})) for v in verdicts),
        "",
    ]
