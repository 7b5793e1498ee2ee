"""Section builders of the markdown report: tables, figures side by side, checks,
convergence, history and cost, each from the files the pipeline wrote."""

from __future__ import annotations

import json
import os
from pathlib import Path

from reprolab.fileio import read_json
from reprolab.physics import thresholds as th


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
