"""The report prints agents' prose after the code's verdict, marked: a number no claim
backs is [unchecked], a contradicted piece is struck through under a warning, and the
summary counts only SUCCESS as reproduced."""

from __future__ import annotations

from reprolab.physics import claims
from reprolab.report import markdown, prose


def fig(classification: str, rms: float = 0.01) -> dict:
    curve = {"curve_id": "R", "rms_abs": rms, "max_abs": 0.02, "metrics": {}, "features": []}
    return {"figure_id": "fig3", "classification": classification, "curves": [curve]}


def test_unclaimed_number_is_marked_and_claimed_one_is_not():
    comparison = {"figures": [fig("SUCCESS")]}
    judged = claims.judge_claims(
        [{"figure_id": "fig3", "curve_id": "R", "quantity": "rms_abs", "value": 0.01}],
        comparison,
    )
    audit = claims.audit_text("RMS 0.01, shifted about 0.24 nm.", judged, "SUCCESS", {"SUCCESS"})
    text = prose.render("RMS 0.01, shifted about 0.24 nm.", audit)
    assert "0.01," in text and "0.01 [" not in text
    assert "0.24 [unchecked] nm" in text


def test_contradicted_text_is_struck_through_never_printed_as_standing():
    comparison = {"figures": [fig("FAILURE", rms=0.2)]}
    said = "The figure is a SUCCESS with RMS 0.01."
    judged = claims.judge_claims(
        [{"figure_id": "fig3", "curve_id": "R", "quantity": "rms_abs", "value": 0.01}],
        comparison,
    )
    audit = claims.audit_text(said, judged, "FAILURE", {"FAILURE"})
    text = prose.render(said, audit)
    assert text.startswith("**⚠ Contradicted") and f"~~{said}~~" in text
    assert "calls it SUCCESS, code says FAILURE" in text and "computed: 0.2" in text


def test_conclusions_count_only_success_and_mark_the_supervisor():
    verdict = {
        "stage_id": "stage2_x",
        "status": "completed_failed",
        "reason": "fig3: FAILURE",
        "supervisor_verdict": "ok_continue",
        "supervisor": {"output": {"feedback": "A SUCCESS with sub-0.1 % peak errors."}},
    }
    rows = [("fig3", "stage2_x", fig("FAILURE")), ("fig2", "stage1_x", fig("SUCCESS"))]
    md = "\n".join(markdown.conclusions_section([verdict], rows))
    final = md.index("Final statement (code)")
    assert final < md.index("stage2_x")  # the code's verdict first
    assert "1 of 2 simulated target figures reproduced (SUCCESS)" in md
    assert "~~A SUCCESS with sub-0.1 % peak errors.~~" in md
    summary = "\n".join(
        markdown.executive_summary(
            rows, 4, [verdict], {}, {"auto_approved": True, "sha256": "0" * 64}, ""
        )
    )
    assert "| Figures reproduced (SUCCESS only) | 1 of 4 |" in summary


def test_checks_section_shows_what_meep_built():
    checks = {
        "stage1_x": {
            "verdict": "fail",
            "checks": [
                {
                    "name": "built:resolution_ppw",
                    "status": "fail",
                    "value": 9.1,
                    "threshold": "",
                    "detail": "",
                },
                {
                    "name": "built:field_decay",
                    "status": "pass",
                    "value": 3e-11,
                    "threshold": "",
                    "detail": "",
                },
            ],
        },
        "stage0_m": {"verdict": "pass", "checks": []},
    }
    from pathlib import Path

    md = "\n".join(markdown.checks_section(checks, Path(".")))
    assert "### As built (run-time record)" in md
    assert "| stage1_x | 9.1 (fail) | – | 3e-11 (pass) | – | – |" in md
    assert "| stage0_m | –" not in md  # no record: no row
