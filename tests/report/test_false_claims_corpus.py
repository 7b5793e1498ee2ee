"""No agent sentence is ever printed as the report's own statement: a corpus of 44
paraphrased false claims of agreement (tests/support/false_claims.py), placed as
narratives, discrepancy rows, supervisor lines, the planner's summary and the
supervisor's reasons under FAILURE and PARTIAL figures, is rendered only inside the
labelled, quoted agent commentary, in the markdown and in the HTML alike, whether or
not the keyword audit flags it. The guarantee is the label, not the flags: a sentence
no keyword catches is still only commentary."""

from __future__ import annotations

import html
import json
import re

import pytest

from reprolab.report import markdown, prose
from reprolab.report.html import markdown_to_html
from tests.support import false_claims

STAGE = "stage2_mirror"
COMMENTARY = re.compile(
    r"^\s*> \*\*(\w+)'s commentary \(the agent's words, not checked by code\):\*\* "
)
MARKS = re.compile(r" \[(?:unchecked|contradicted)\]|~~")


def figure(cls: str) -> dict:
    feature = {
        "kind": "peak",
        "x_paper": 0.6,
        "x_sim": 0.618,
        "shift_rel": 0.03,
        "y_paper": 0.9,
        "y_sim": 0.9,
        "height_rel": 0.0,
        "width_paper": 0.02,
        "width_sim": 0.02,
        "width_rel": 0.0,
    }
    curve = {
        "curve_id": "R",
        "x_column": "wavelength_um",
        "rms_abs": 0.01,
        "max_abs": 0.04,
        "metrics": {"feature_shift_rel": 0.03, "feature_height_rel": 0.0},
        "classes": {"feature_shift_rel": cls, "feature_height_rel": "SUCCESS"},
        "features": [feature],
    }
    return {"figure_id": "fig3", "classification": cls, "curves": [curve]}


STATUS = {"FAILURE": "completed_failed", "PARTIAL": "completed_partial"}


def rendered(cls: str, tmp_path) -> str:
    """Every section that prints agent prose, with the corpus in every place."""
    fig = figure(cls)
    rows = [("fig3", STAGE, fig)]
    md = []
    for text in false_claims.NARRATIVES:
        md += markdown.figure_section("fig3", "title", STAGE, fig, [], text)
    discrepancies = [
        {
            "figure_id": "fig3",
            "quantity": "peak position",
            "description": text,
            "likely_cause": "the finite grid",
            "severity": severity,
        }
        for text in false_claims.DISCREPANCIES
        for severity in ("minor", "significant")
    ]
    analysis = {"summary": "", "per_figure": [], "discrepancies": discrepancies, "claims": []}
    md += markdown.discrepancies_section({STAGE: analysis}, {STAGE: {"figures": [fig]}})
    verdicts = [
        {
            "stage_id": f"{STAGE}_{i}",
            "status": STATUS[cls],
            "reason": f"fig3: {cls}",
            "supervisor_verdict": "ok_continue",
            "supervisor": {"output": {"verdict": "ok_continue", "feedback": text}},
        }
        for i, text in enumerate(false_claims.SUPERVISOR)
    ]
    md += markdown.conclusions_section(verdicts, rows)
    plan_summary, *reasons = false_claims.SUMMARIES
    validated = {"auto_approved": True, "sha256": "0" * 64}
    md += markdown.executive_summary(rows, 4, verdicts, {}, validated, plan_summary)
    with open(tmp_path / "backtracks.jsonl", "w", encoding="utf-8") as fh:
        for to, reason in zip(("plan", "stage1_slab", "plan"), reasons, strict=False):
            fh.write(json.dumps({"from": STAGE, "to": to, "reason": reason}) + "\n")
    md += markdown.history_section(tmp_path, {})
    return "\n".join(md)


def outside_commentary(md: str) -> str:
    """The report's own lines: every line that is not a labelled commentary line."""
    return "\n".join(line for line in md.splitlines() if not COMMENTARY.match(line))


@pytest.mark.parametrize("cls", ["FAILURE", "PARTIAL"])
def test_no_false_claim_is_the_reports_statement(cls, tmp_path):
    assert len(false_claims.ALL) >= 40
    md = rendered(cls, tmp_path)
    plain = MARKS.sub("", md)
    own = MARKS.sub("", outside_commentary(md))
    page = markdown_to_html(md, tmp_path, "t")
    # the page less its quoted blocks (commentary is the only thing the report quotes)
    page_own = html.unescape(re.sub(r"<blockquote>.*?</blockquote>", "", page, flags=re.S))
    quoted = html.unescape(" ".join(re.findall(r"<blockquote>.*?</blockquote>", page, re.S)))
    for text in false_claims.ALL:
        assert text in plain, text  # printed (as commentary), so the test can fail
        assert text not in own, text
        assert text not in page_own, text
        assert text in MARKS.sub("", re.sub(r"</?\w+>", "", quoted)), text


def test_every_quoted_block_carries_the_label(tmp_path):
    """Nothing else is quoted: a block quote in the report is agent commentary."""
    md = rendered("FAILURE", tmp_path)
    quoted = [line for line in md.splitlines() if line.lstrip().startswith(">")]
    assert quoted and all(COMMENTARY.match(line) for line in quoted)
    authors = {COMMENTARY.match(line).group(1) for line in quoted}
    assert authors == {"ResultsAnalyzer", "Supervisor", "Planner"}


def test_agent_prose_cannot_break_out_of_its_quote(tmp_path):
    """A narrative with newlines, a heading and a table row stays one quoted paragraph."""
    sneaky = "Fine.\n\n## Verdict: fig3 is reproduced\n\n| fig3 | SUCCESS |\n"
    md = "\n".join(markdown.figure_section("fig3", "t", STAGE, figure("FAILURE"), [], sneaky))
    assert "## Verdict" not in outside_commentary(md)
    assert "| fig3 | SUCCESS |" not in outside_commentary(md)
    page = markdown_to_html(md, tmp_path, "t")
    assert "<h2>Verdict" not in page and "fig3 is reproduced" in page


def test_the_label_is_prose_commentary_not_a_keyword_list():
    """The commentary label does not depend on the audit: a sentence no keyword flags
    (nothing marked, nothing struck) is labelled all the same."""
    text = "Reproduced: yes."
    section = prose.claims.audit_text(text, [], "FAILURE", {"FAILURE"})
    assert section["status"] == "ok"  # the keyword audit sees nothing wrong here
    (line,) = prose.commentary("ResultsAnalyzer", prose.render(text, section))
    assert COMMENTARY.match(line) and line.endswith(text)
