"""REPRODUCTION_REPORT_<paper_id>.md: the seed's six sections, built from the files.

Every number comes from the comparison and check files written by code; agent
prose (analysis narratives, supervisor feedback) is quoted as such.
"""

from __future__ import annotations

import json
import os
import shutil
from collections import Counter
from pathlib import Path

from reprolab import report_html
from reprolab import thresholds as th
from reprolab.fileio import atomic_write_text, read_json
from reprolab.planning import load_plan


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
    md += ["", "Classification thresholds (canonical, `reprolab/thresholds.py`):", ""]
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
    from reprolab import plots
    from reprolab.checks import read_numeric_csv

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
