"""Agents' prose as the report prints it: after the code's verdict, always as a quoted
block labelled as the agent's commentary, which code did not check (`commentary`), so
that no sentence an agent wrote is ever printed as the project's statement, however it
is worded. Inside it the audit's flags stay: every number marked by whether a
structured claim backs it, and text the code contradicts struck through under a
warning. The flags come from keyword and number matching and may miss a rewording; the
label does not depend on them."""

from __future__ import annotations

from pathlib import Path

from reprolab.artifacts import load_analysis, load_comparison
from reprolab.errors import InputFileError
from reprolab.fileio import read_json
from reprolab.physics import claims

UNCHECKED = "[unchecked]"
# The label of every piece of agent prose in the report (and the test's anchor).
COMMENTARY_LABEL = "{author}'s commentary (the agent's words, not checked by code)"


def given_of(stage_dir: Path | None) -> tuple[float, ...]:
    """The numbers a stage's design and the approved materials state
    (`claims.given_numbers`); none without a stage folder."""
    if stage_dir is None:
        return ()
    sources = []
    for path in (stage_dir / "design.json", stage_dir.parent.parent / "validated_materials.json"):
        try:
            data = read_json(path)
        except (OSError, ValueError, InputFileError):
            continue
        sources.append(data.get("output", data) if isinstance(data, dict) else data)
    return claims.given_numbers(*sources)


def stage_dir_of(comparison: dict) -> Path | None:
    """The stage folder of a comparison (its figures' overlays sit in it)."""
    overlay = next(
        (f.get("overlay") for f in comparison.get("figures", []) if f.get("overlay")), None
    )
    return Path(overlay).parent if overlay else None


def stage_audit(stage_dir: Path, figures: dict | None = None) -> dict | None:
    """The audit of a stage's analysis against its comparison (None when absent);
    `figures`: figure comparisons as the report counts them, replacing the file's."""
    try:  # absent, blocked or unreadable: no audit
        analysis = load_analysis(stage_dir / "analysis.json")
        comparison = load_comparison(stage_dir / "comparison.json").to_json()
    except InputFileError:
        return None
    figs = [(figures or {}).get(f["figure_id"], f) for f in comparison.get("figures", [])]
    comparison = {**comparison, "figures": figs}
    return claims.audit_analysis(analysis.output_json(), comparison, given_of(stage_dir))


def commentary(author: str, body: str, indent: str = "") -> list[str]:
    """A piece of agent prose (already marked by `render` or `checked`) as one quoted
    paragraph under its label: whitespace collapsed, so that no line of it can leave the
    quote (a heading, a table row or a list it wrote is text inside it)."""
    flat = " ".join((body or "").split())
    if not flat:
        return []
    return [f"{indent}> **{COMMENTARY_LABEL.format(author=author)}:** {flat}"]


def section_of(audit: dict | None, name: str) -> dict | None:
    if audit is None:
        return None
    return next((s for s in audit["sections"] if s["section"] == name), None)


def _marked_numbers(text: str, numbers: list[dict]) -> str:
    out, last = [], 0
    for m, n in zip(claims.NUMBER.finditer(text), numbers, strict=False):
        out.append(text[last : m.end()])
        if n["status"] == "unchecked":
            out.append(f" {UNCHECKED}")
        elif n["status"] == "contradicted":
            out.append(" [contradicted]")
        last = m.end()
    return "".join(out) + text[last:]


def render(text: str, audit_section: dict | None) -> str:
    """One piece of prose with its marks; contradicted text is struck through."""
    if not text:
        return text
    if audit_section is None:
        audit_section = claims.audit_text(text, [], None, set())  # no claims: all unchecked
    if audit_section["status"] == "contradicted":
        why = "; ".join(audit_section["details"])
        return f"**⚠ Contradicted by the code's numbers ({why}); not standing:** ~~{text}~~"
    marked = _marked_numbers(text, audit_section["numbers"])
    if any(n["status"] == "unchecked" for n in audit_section["numbers"]):
        marked += f" *(numbers marked {UNCHECKED} are backed by no claim the code checked)*"
    return marked


def supervisor_section(
    output: dict, comparison: dict, status: str, overall: str | None = None
) -> dict:
    """The audit of a supervisor's feedback (claims, classification, status words, the
    whole paper's class), with the numbers its stage's design states as given."""
    given = given_of(stage_dir_of(comparison))
    return claims.audit_supervisor(output, comparison, status, overall, given)["sections"][0]


def supervisor_text(output: dict, comparison: dict, status: str, overall: str | None = None) -> str:
    """The supervisor's feedback as the report prints it, after the code's verdict: struck
    through when it contradicts the code, its unclaimed numbers marked, and a feedback
    that gives no classification on a stage the code did not judge SUCCESS said so,
    whatever else its audit found."""
    text = output.get("feedback") or ""
    section = supervisor_section(output, comparison, status, overall)
    rendered = render(text, section)
    if section["status"] == "contradicted" or not text:
        return rendered
    unclassified = [d for d in section["details"] if d.startswith("gives no classification")]
    if unclassified:
        rendered += f" *(unchecked: the supervisor {unclassified[0]})*"
    return rendered


def checked(text: str, check: dict | None) -> str:
    """Supervisor prose kept elsewhere (a backtrack's or replan's reason) with the check
    made when it was written: struck when the code contradicted it."""
    if not check or check.get("status") != "contradicted":
        return text
    why = "; ".join(check.get("details") or [])
    return f"**⚠ Contradicted by the code ({why}); not standing:** ~~{text}~~"
