"""Every stop has a report: a paper that failed, waits, was stopped or blocked gets
`REPRODUCTION_REPORT_<paper>.PARTIAL.md` (and .html), marked PARTIAL at the top,
saying what ran, what did not and why, and the command to go on.

Written when a Snakemake run ends with an error (the workflow's `onerror`); the
final report step removes it. A final report older than the partial one is
from an earlier run and is never shown as current (`report_state`).
"""

from __future__ import annotations

import json
from pathlib import Path

from reprolab.artifacts import load_plan, load_verdict
from reprolab.fileio import atomic_write_text, read_json
from reprolab.gates import protocol
from reprolab.report import html as report_html

PARTIAL_MARK = "# PARTIAL REPORT"
STOPPED_FILE = "stopped.json"
ERROR_PREFIXES = ("[reprolab] ", "WorkflowError", "Traceback (most recent call last)")


def final_path(out_dir: Path) -> Path:
    return Path(out_dir) / f"REPRODUCTION_REPORT_{Path(out_dir).name}.md"


def partial_path(out_dir: Path) -> Path:
    return Path(out_dir) / f"REPRODUCTION_REPORT_{Path(out_dir).name}.PARTIAL.md"


def report_state(out_dir: Path) -> tuple[str, Path | None]:
    """("final" | "partial" | "none", the report to show). A final report is current
    unless a partial one was written after it (a later run stopped before its end)."""
    final, partial = final_path(out_dir), partial_path(out_dir)
    if final.is_file() and not (
        partial.is_file() and partial.stat().st_mtime > final.stat().st_mtime
    ):
        return "final", final
    if partial.is_file():
        return "partial", partial
    return "none", None


def failed_steps(out_dir: Path) -> list[tuple[str, str]]:
    """(step log, its error line) of each step whose last try failed: a step rewrites its
    log on every try, so an error line in it is the latest outcome."""
    found = []
    for log in sorted(Path(out_dir).rglob("logs/*.log")):
        try:
            lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            continue
        error = next((line for line in lines if line.startswith(ERROR_PREFIXES)), None)
        if error is not None:
            if error.startswith("Traceback"):
                error = lines[-1] if lines else error  # the exception's own line
            found.append((str(log.relative_to(out_dir)), error.removeprefix("[reprolab] ")))
    return found


def stage_states(out_dir: Path) -> list[tuple[str, str]]:
    """(stage id, what happened) in plan order; empty without a plan."""
    plan = Path(out_dir) / "plan.json"
    if not plan.is_file():
        return []
    states = []
    for stage in load_plan(plan).stages:
        sd = Path(out_dir) / "stages" / stage.stage_id
        if (sd / "verdict.json").is_file():
            v = load_verdict(sd / "verdict.json")
            state = f"{v.status}: {v.reason}"
        elif (sd / "result.json").is_file():
            state = "simulated; checks, analysis or verdict did not finish"
        elif (sd / "design.json").is_file():
            state = "designed; code or simulation did not finish"
        else:
            state = "not run"
        states.append((stage.stage_id, state))
    return states


def context_left_out(out_dir: Path) -> list[str]:
    """What was left out of an agent's context, from every agent artifact's provenance."""
    notes = []
    for path in sorted(Path(out_dir).rglob("*.json")):
        if "gates" in path.parts or path.stat().st_size > 2_000_000:
            continue
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        prov = data.get("provenance") if isinstance(data, dict) else None
        if isinstance(prov, dict):
            for note in prov.get("context_left_out") or []:
                notes.append(f"{prov.get('agent')} ({prov.get('stage_id')}): {note}")
    return notes


def context_section(out_dir: Path) -> list[str]:
    """The report's record of what agents did not see (never silent)."""
    notes = context_left_out(out_dir)
    if not notes:
        return []
    return ["## Context left out of agent prompts", "", *[f"- {n}" for n in notes], ""]


def why_lines(out_dir: Path) -> list[str]:
    lines = []
    stopped = Path(out_dir) / STOPPED_FILE
    if stopped.is_file():
        lines.append(f"- **Stopped**: {read_json(stopped)['reason']}")
    for cp in protocol.pending_gates(out_dir):
        lines.append(
            f"- **Waiting for you**: {cp.kind.replace('_', ' ')} `{cp.gate_id}`: "
            f"{cp.question.splitlines()[0]} Answer: `{protocol.answer_command(cp)}`"
        )
    for log, error in failed_steps(out_dir):
        if error.startswith(("WAITING FOR YOU", "stopped by")):
            continue  # said above, as a wait or a stop
        lines.append(f"- **Failed** ({log}): {error.splitlines()[0][:400]}")
    return lines or ["- The run ended before this paper's report (see the run's messages)."]


def partial_markdown(out_dir: Path, command: str) -> str:
    out_dir = Path(out_dir)
    states = stage_states(out_dir)
    md = [
        PARTIAL_MARK,
        "",
        f"**This reproduction of `{out_dir.name}` did not finish: what follows is what "
        "ran so far. It is not a reproduction verdict.**",
        "",
        "## Why it stopped",
        "",
        *why_lines(out_dir),
        "",
        "## What ran",
        "",
    ]
    if (out_dir / "plan.json").is_file():
        md += ["| stage | state |", "|---|---|", *[f"| {s} | {st} |" for s, st in states]]
    else:
        md.append("No plan was made: no stage ran.")
    cost = out_dir / "cost_summary.json"
    if cost.is_file():
        total = read_json(cost)["total"]
        spent = total.get("cost_text") or f"${total.get('cost_usd', 0.0):.4f}"
        md += ["", f"Agent cost so far: {spent} ({total.get('paid_calls', 0)} paid calls)."]
    md += ["", *context_section(out_dir)]
    md += [
        "## To go on",
        "",
        "Answer or fix what is above, then run again:",
        "",
        f"    {command}",
        "",
    ]
    return "\n".join(md)


def write_partial_report(out_dir: Path, command: str) -> Path | None:
    """Write the PARTIAL report unless the paper's final report is current and complete
    (a paper that finished in a campaign where another failed keeps its report)."""
    out_dir = Path(out_dir)
    if not out_dir.is_dir():
        return None
    unfinished = (
        failed_steps(out_dir)
        or protocol.pending_gates(out_dir)
        or (out_dir / STOPPED_FILE).is_file()
    )
    if final_path(out_dir).is_file() and not unfinished:
        return None
    path = partial_path(out_dir)
    text = partial_markdown(out_dir, command)
    atomic_write_text(path, text)
    atomic_write_text(
        path.with_suffix(".html"),
        report_html.markdown_to_html(text, out_dir, f"PARTIAL reproduction report: {out_dir.name}"),
    )
    return path


def remove_partial(out_dir: Path) -> None:
    """The final report supersedes the partial one."""
    for path in (partial_path(out_dir), partial_path(out_dir).with_suffix(".html")):
        path.unlink(missing_ok=True)
