"""The campaign's index: one page linking every paper's report of a run with several
papers (`outputs/REPORTS_INDEX.md` and `.html`), with what code decided for each.

Each row is read from the paper's files, never from a report's prose: the report that
stands (final, or PARTIAL when a later run stopped before its end), the figures the
stages compared with their classifications (`stages/*/comparison.json`, in plan order),
how many of them were judged by eye (no digitized data: qualitative), and the stages'
statuses. A figure whose stage failed counts as FAILURE here as in the report
(`reprolab.report.verdicts`). A paper with no report yet is listed as such.
"""

from __future__ import annotations

import html
import os
from collections import Counter
from pathlib import Path

from reprolab.artifacts import load_comparison, load_plan, load_verdict, plan_stage_ids
from reprolab.errors import InputFileError
from reprolab.fileio import atomic_write_text
from reprolab.report import partial, verdicts
from reprolab.report.fmt import overall_classification, table_header

INDEX_NAME = "REPORTS_INDEX"
COLUMNS = ("paper", "report", "overall", "SUCCESS / PARTIAL / FAILURE", "qualitative", "stages")


def _stage_ids(out_dir: Path) -> list[str]:
    """The plan's stage order; the stage folders' (sorted) when there is no plan."""
    plan = out_dir / "plan.json"
    if plan.is_file():
        try:
            return plan_stage_ids(plan)
        except InputFileError:
            pass
    return sorted(p.name for p in (out_dir / "stages").glob("*") if p.is_dir())


def _title(out_dir: Path) -> str:
    plan = out_dir / "plan.json"
    try:
        return load_plan(plan).title if plan.is_file() else ""
    except InputFileError:
        return ""


def paper_row(out_dir: Path) -> dict:
    """What the index says of one paper: report state and path, figure classes."""
    state, report = partial.report_state(out_dir)
    classes, qualitative, stages = [], 0, []
    for stage_id in _stage_ids(out_dir):
        stage_dir = out_dir / "stages" / stage_id  # (a blocked stage has a verdict too)
        verdict = None
        if (stage_dir / "verdict.json").is_file():
            verdict = load_verdict(stage_dir / "verdict.json").to_json()
            stages.append(f"{stage_id}: {verdict['status']}")
        if not (stage_dir / "comparison.json").is_file():
            continue
        comparison = load_comparison(stage_dir / "comparison.json").to_json()
        # counted as the report counts it: capped by its stage's verdict
        for fig in verdicts.capped_comparison(comparison, verdict)["figures"]:
            classes.append(fig["classification"])
            qualitative += bool(fig.get("qualitative"))
    return {
        "paper_id": out_dir.name,
        "title": _title(out_dir),
        "state": state,
        "report": report,
        "overall": overall_classification(classes) if classes else None,
        "counts": Counter(classes),
        "qualitative": qualitative,
        "stages": stages,
    }


def _cells(row: dict, base: Path) -> list[tuple[str, str | None]]:
    """(text, link or None) per column."""
    link = os.path.relpath(row["report"], base) if row["report"] else None
    report = {"final": "report", "partial": "PARTIAL report (did not finish)"}.get(
        row["state"], "no report yet"
    )
    counts = row["counts"]
    tally = f"{counts['SUCCESS']} / {counts['PARTIAL']} / {counts['FAILURE']}"
    title = f"{row['paper_id']}: {row['title']}" if row["title"] else row["paper_id"]
    overall = row["overall"] or "–"
    if row["state"] != "final" and row["overall"]:
        overall += " (so far)"
    return [
        (title, None),
        (report, link),
        (overall, None),
        (tally, None),
        (str(row["qualitative"]), None),
        ("; ".join(row["stages"]) or "–", None),
    ]


def index_markdown(rows: list[dict], base: Path) -> str:
    md = [
        "# Reproduction reports",
        "",
        f"{len(rows)} papers in this campaign. Classifications are code's (figure by figure; "
        "a figure without digitized data is compared by eye, qualitative, PARTIAL at most).",
        "",
        *table_header(*COLUMNS),
    ]
    for row in rows:
        cells = [f"[{t}]({href})" if href else t for t, href in _cells(row, base)]
        md.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(md) + "\n"


def index_html(rows: list[dict], base: Path) -> str:
    """A plain page of links to each paper's HTML report (next to its markdown)."""
    head = "".join(f"<th>{html.escape(c)}</th>" for c in COLUMNS)
    body = []
    for row in rows:
        tds = []
        for text, href in _cells(row, base):
            cell = html.escape(text)
            if href:
                cell = f'<a href="{html.escape(str(Path(href).with_suffix(".html")))}">{cell}</a>'
            tds.append(f"<td>{cell}</td>")
        body.append("<tr>" + "".join(tds) + "</tr>")
    return (
        '<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>Reproduction reports</title>'
        "<style>body{font-family:system-ui,sans-serif;margin:2em}td,th{border:1px solid #bbb;"
        "padding:.3em .6em}table{border-collapse:collapse}</style></head><body>"
        f"<h1>Reproduction reports</h1><table><tr>{head}</tr>{''.join(body)}</table>"
        "</body></html>\n"
    )


def write_index(outputs_dir: str | Path, paper_ids: list[str]) -> Path:
    """Write `<outputs>/REPORTS_INDEX.md` and `.html`; return the markdown's path."""
    base = Path(outputs_dir)
    rows = [paper_row(base / pid) for pid in paper_ids]
    out = base / f"{INDEX_NAME}.md"
    atomic_write_text(out, index_markdown(rows, base))
    atomic_write_text(out.with_suffix(".html"), index_html(rows, base))
    return out
