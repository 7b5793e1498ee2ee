"""PDF intake on the four journal-like layouts the tests write (tests/support/journal_pdfs):
what `reprolab new-paper` keeps (number-bearing sentences, tables as markdown tables,
running heads left out, figure entries, vector panels with both axis labels, curves read
off the paths and their worst error, the items `check` lists) and its time; and, where a
Python with pymupdf4llm is named (`--compare-python`; it is not a project dependency),
the same text measures for pymupdf4llm's markdown of the same PDFs.

    .venv/bin/python benchmarks/pdf_intake.py [--compare-python /path/to/python]

Writes benchmarks/results/pdf_intake.json and .md."""

from __future__ import annotations

import argparse
import contextlib
import csv
import io
import json
import platform
import re
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from reprolab.cli import main  # noqa: E402
from reprolab.fileio import atomic_write_text  # noqa: E402
from tests.support.journal_pdfs import LAYOUTS  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"
SUP = str.maketrans("0123456789+-−", "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁻")
LLM = (
    "import sys, pymupdf4llm; "
    "sys.stdout.write(pymupdf4llm.to_markdown(sys.argv[1], header=False, footer=False))"
)


def squeeze(text: str) -> str:
    return re.sub(r"[\s|]+", "", text)


def text_measures(md: str, want) -> dict:
    flat = squeeze(md)
    lost = [s for s in want.sentences if squeeze(s) not in flat]
    tables = sum(
        all(f"| {' | '.join(r)} |" in re.sub(r"\|(?=\S)|(?<=\S)\|", " | ", md) for r in t["rows"])
        for t in want.tables
    )
    running = {r for r in want.running if len(r) > 3}
    return {
        "sentences": len(want.sentences),
        "sentences_lost": len(lost),
        "lost_examples": lost[:3],
        "tables_as_tables": f"{tables}/{len(want.tables)}",
        "running_heads_in_text": sum(1 for r in running if re.search(rf"(?m)^{re.escape(r)}", md)),
    }


def curve_error(out: Path, meta: dict, want) -> tuple[int, int, float]:
    """(vector panels, of them with both labels, worst curve error in % of its range)."""
    panels = labelled = 0
    worst = 0.0
    figs = {f["figure_id"]: f for f in meta["figures"]}
    for fid, fig in want.figures.items():
        if fig["raster"]:
            continue
        for i, panel in enumerate(fig["panels"]):
            entry = figs.get(fid + ("abcd"[i] if len(fig["panels"]) > 1 else ""))
            panels += 1
            if not entry:
                continue
            labels = (entry["x_axis"]["label"], entry["y_axes"]["left"]["label"])
            labelled += labels == (f"TODO confirm: {panel['x']}", f"TODO confirm: {panel['y']}")
            for c, (x, y) in zip(entry["curves"], panel["curves"].values(), strict=False):
                path = out / str(c.get("digitized", "")).removeprefix("TODO confirm: ")
                if not path.is_file():
                    worst = float("inf")
                    continue
                xs, ys = np.array(list(csv.reader(path.open()))[1:], dtype=float).T
                if panel.get("log_y"):
                    err = np.abs(ys / np.exp(np.interp(xs, x, np.log(y))) - 1)
                else:
                    err = np.abs(ys - np.interp(xs, x, y)) / np.ptp(y)
                worst = max(worst, 100 * float(err.max()))
    return panels, labelled, worst


def ours(pdf: Path, out: Path, want) -> dict:
    start = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        assert main(["new-paper", str(pdf), "--id", "bench", "--out", str(out)]) == 0
    seconds = time.perf_counter() - start
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        main(["check", str(out)])
    items = len([ln for ln in err.getvalue().splitlines() if ln.startswith(str(out))])
    meta = yaml.safe_load((out / "metadata.yaml").read_text())
    expected = sum(len(f["panels"]) if not f["raster"] else 1 for f in want.figures.values())
    panels, labelled, worst = curve_error(out, meta, want)
    return {
        **text_measures((out / "paper.md").read_text(), want),
        "seconds": round(seconds, 2),
        "figure_entries": f"{len(meta['figures'])} for {expected} figures and panels",
        "vector_panels_labelled": f"{labelled}/{panels}",
        "worst_curve_error_percent": round(worst, 3),
        "check_items": items,
    }


def pymupdf4llm(python: str, pdf: Path, want) -> dict:
    start = time.perf_counter()
    run = subprocess.run([python, "-c", LLM, str(pdf)], capture_output=True, text=True)
    if run.returncode:
        return {"error": run.stderr[-300:]}
    md = re.sub(r"<sup>([-+−0-9]+)</sup>", lambda m: m[1].translate(SUP), run.stdout)
    return {**text_measures(md, want), "seconds": round(time.perf_counter() - start, 2)}


def markdown(data: dict) -> str:
    rows = ["# PDF intake on four journal-like layouts", "", f"{data['date']}, {data['machine']}"]
    rows += ["", "| layout | reader | sentences lost | tables as tables | running heads in "]
    rows[-1] += (
        "text | figure entries | vector panels labelled | worst curve error | check items | s |"
    )
    rows.append("|---" * 10 + "|")
    for name, r in data["layouts"].items():
        for reader, m in r.items():
            if "error" in m:
                rows.append(f"| {name} | {reader} | error: {m['error'][:60]} |" + " |" * 7)
                continue
            rows.append(
                f"| {name} | {reader} | {m['sentences_lost']} of {m['sentences']} | "
                f"{m['tables_as_tables']} | {m['running_heads_in_text']} | "
                f"{m.get('figure_entries', '-')} | {m.get('vector_panels_labelled', '-')} | "
                + (
                    f"{m['worst_curve_error_percent']} % | "
                    if "worst_curve_error_percent" in m
                    else "- | "
                )
                + f"{m.get('check_items', '-')} | {m['seconds']} |"
            )
    return "\n".join(rows) + "\n"


def run(compare_python: str | None) -> dict:
    data = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": f"{platform.machine()}, {platform.python_version()}",
        "layouts": {},
    }
    with tempfile.TemporaryDirectory() as tmp:
        for name, make in LAYOUTS.items():
            pdf = Path(tmp) / f"{name}.pdf"
            want = make(pdf)
            data["layouts"][name] = {"reprolab": ours(pdf, Path(tmp) / name, want)}
            if compare_python:
                data["layouts"][name]["pymupdf4llm"] = pymupdf4llm(compare_python, pdf, want)
    return data


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--compare-python", help="a Python with pymupdf4llm installed")
    args = parser.parse_args()
    result = run(args.compare_python)
    atomic_write_text(RESULTS / "pdf_intake.json", json.dumps(result, indent=1) + "\n")
    atomic_write_text(RESULTS / "pdf_intake.md", markdown(result))
    sys.stdout.write(markdown(result))
