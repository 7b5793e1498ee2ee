"""What the report says about security: how generated code was isolated (first table)
and the instruction-like passages found in the paper and in what the agents were given."""

from __future__ import annotations

import json
from pathlib import Path

from reprolab.fileio import read_json


def sandbox_row(results: dict) -> str:
    """How generated code was isolated; any job without the OS sandbox is said in bold."""
    modes = {_isolation(r) for r in results.values()}
    if "unsafe_none" in modes:
        return (
            "| Sandbox | **NO OS SANDBOX: generated code ran with the pipeline's rights "
            "(simulation.sandbox.isolation: unsafe_none)** |"
        )
    if modes <= {"bwrap", "refused", "not_run"}:
        return "| Sandbox | bubblewrap (namespaces; the run folder the only writable path) |"
    return f"| Sandbox | not recorded for every job ({', '.join(sorted(modes))}) |"


def _isolation(record: dict) -> str:
    for source in (record, record.get("sandbox") or {}, record.get("job") or {}):
        if source.get("isolation"):
            return source["isolation"]
    points = [_isolation(p) for p in record.get("points") or []]
    if "unsafe_none" in points:
        return "unsafe_none"
    command = record.get("command") or []
    if command:  # what actually ran (a sweep's record keeps its first point's command)
        return "bwrap" if any(Path(str(c)).name == "bwrap" for c in command) else "unsafe_none"
    if not points and record.get("exit_code") is None and "command" in record:
        return "not_run"  # refused before it ran (static checks)
    return points[0] if points else "unknown"


def paper_flags(out_dir: Path) -> list[dict]:
    """Instruction-like passages found in the paper (text, captions, metadata)."""
    path = Path(out_dir) / "prompt_adaptations.json"
    return read_json(path).get("paper_flags", []) if path.is_file() else []


PAPER_CONTEXT = {
    "paper_text",
    "paper_text_summary",
    "paper_title",
    "paper_domain",
    "paper_figures",
    "target_figures",
    "figures",
}
"""Agent context fields that carry the paper itself (scanned whole in `adapt_prompts`)."""


def agent_input_flags(out_dir: Path) -> list[dict]:
    """Instruction-like passages found in agents' inputs (user notes and answers, reviewer
    feedback, figure captions the agents were shown) and logged as `injection_suspected`
    events: one entry per (field, pattern, excerpt) with the calls that carried it;
    what the paper's own scan listed already is left out."""
    path = Path(out_dir) / "events.jsonl"
    if not path.is_file():
        return []
    flags = paper_flags(out_dir)
    listed = {(f["pattern"], f["excerpt"]) for f in flags}
    paper_patterns = {f["pattern"] for f in flags}
    found: dict[tuple, dict] = {}
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue  # a torn line: the event log is append-only
        if not isinstance(event, dict) or event.get("kind") != "injection_suspected":
            continue
        key = (str(event.get("field")), str(event.get("pattern")), str(event.get("excerpt")))
        if key[1:] in listed or (_root(key[0]) in PAPER_CONTEXT and key[1] in paper_patterns):
            continue  # the paper's own scan lists it (an agent saw part of the same text)
        entry = found.setdefault(
            key, {"field": key[0], "pattern": key[1], "excerpt": key[2], "calls": []}
        )
        call = str(event.get("message", "")).split(":", 1)[0]
        if call and call not in entry["calls"]:
            entry["calls"].append(call)
    return list(found.values())


def _root(field: str) -> str:
    return field.split(".", 1)[0].split("[", 1)[0]


def _shown(excerpt) -> str:
    return " ".join(str(excerpt).replace("`", "'").split())


def flagged_passages_section(out_dir: Path) -> list[str]:
    """Instruction-like passages found in the paper (text, captions and metadata), each
    pattern once per field, and those found in other agent inputs; they reached the
    agents only as data."""
    flags, inputs = paper_flags(out_dir), agent_input_flags(out_dir)
    md = []
    if flags:
        md += [
            "## Instruction-like passages in the paper",
            "",
            "Passed to the agents only inside data blocks; read them before trusting the verdict.",
            "",
        ]
        for f in flags:
            md.append(
                f"- **{f['pattern']}** in `{f['field']}` ({f['count']}x): `{_shown(f['excerpt'])}`"
            )
        md.append("")
    if inputs:
        md += [
            "## Instruction-like passages in agent inputs",
            "",
            "Found in what the agents were given besides the paper (notes, answers, feedback, "
            "captions); passed on only inside data blocks.",
            "",
        ]
        for f in inputs:
            calls = ", ".join(f["calls"][:5]) + (" ..." if len(f["calls"]) > 5 else "")
            md.append(
                f"- **{f['pattern']}** in `{f['field']}` ({len(f['calls'])} call(s): "
                f"{calls}): `{_shown(f['excerpt'])}`"
            )
        md.append("")
    return md
