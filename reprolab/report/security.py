"""What the report says about security: how generated code was isolated (first table)
and the instruction-like passages found in the paper."""

from __future__ import annotations

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


def flagged_passages_section(out_dir: Path) -> list[str]:
    """Instruction-like passages found in the paper (text and metadata), each pattern once
    per field; they reached the agents only as data."""
    path = Path(out_dir) / "prompt_adaptations.json"
    flags = read_json(path).get("paper_flags", []) if path.is_file() else []
    if not flags:
        return []
    md = [
        "## Instruction-like passages in the paper",
        "",
        "Passed to the agents only inside data blocks; read them before trusting the verdict.",
        "",
    ]
    for f in flags:
        excerpt = " ".join(str(f["excerpt"]).replace("`", "'").split())
        md.append(f"- **{f['pattern']}** in `{f['field']}` ({f['count']}x): `{excerpt}`")
    return [*md, ""]
