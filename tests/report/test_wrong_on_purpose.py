"""Wrong-on-purpose variants of the example: each is reported as not SUCCESS, and no
prose that contradicts the code stands unmarked in the rendered report sections.

Reads the session's finished example run (conftest.offline_example_run) and re-judges
copies of its stages: the paper's curve shifted 3 %, its peak heights scaled 0.8, the
simulated spectrum off by a factor 2 (a normalisation mistake), and the slab built 10 %
thicker than its design declares (the stage's own script rerun through the sandbox's
entry point: a few seconds of 1D Meep). The recorded analyses, with their claims for
the correct run, are rendered with the new comparison, and every sentence of them is
checked: none that the code contradicts stands unmarked.
"""

from __future__ import annotations

import csv
import re
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest

from reprolab.fileio import atomic_write_json, read_json
from reprolab.jobs import launch
from reprolab.paper import Paper
from reprolab.physics import checks as checks_mod
from reprolab.physics import claims
from reprolab.report import markdown, prose
from reprolab.steps.compare import compare_stage
from reprolab.steps.verdict import STATUS_BY_CLASS
from tests.support.builders import copy_paper

EXAMPLE = Path(__file__).parents[2] / "examples" / "papers" / "silica_bragg_2026"
STAGE = {"fig2": "stage1_single_slab", "fig3": "stage2_bragg_mirror"}


def edit_csv(path: Path, column: str, fn) -> None:
    with open(path, newline="") as fh:
        rows = list(csv.reader(fh))
    i = rows[0].index(column)
    for row in rows[1:]:
        row[i] = repr(fn(float(row[i])))
    with open(path, "w", newline="") as fh:
        csv.writer(fh).writerows(rows)


def judge(example: Path, tmp: Path, fig_id: str, paper_edit=None, run_edit=None):
    """Copy the paper and the figure's stage, apply the edits, compare again, render."""
    paper_dir = tmp / "paper"
    copy_paper(paper_dir)
    if paper_edit:
        paper_edit(paper_dir / "data")
    stage = STAGE[fig_id]
    stage_dir = tmp / stage
    shutil.copytree(example / "stages" / stage, stage_dir)
    if run_edit:
        run_edit(stage_dir / "run")
    run = SimpleNamespace(paper=Paper(paper_dir))
    compare_stage(
        run, stage_dir / "design.json", stage_dir / "checks.json", stage_dir / "comparison.json"
    )
    comparison = read_json(stage_dir / "comparison.json")
    analysis = read_json(stage_dir / "analysis.json")["output"]
    (fig,) = comparison["figures"]
    # the code's status of the stage re-judged (the recorded supervisor's words kept)
    checks = read_json(stage_dir / "checks.json")
    failed = [c["name"] for c in checks["checks"] if c["status"] == "fail"]
    status = "completed_failed" if failed else STATUS_BY_CLASS[fig["classification"]]
    reason = (
        f"checks failed: {', '.join(failed)}" if failed else f"{fig_id}: {fig['classification']}"
    )
    verdict = {**read_json(stage_dir / "verdict.json"), "status": status, "reason": reason}
    narrative = next(n["narrative"] for n in analysis["per_figure"])
    rows = [(fig_id, stage, fig)]
    md = markdown.figure_section(fig_id, "title", stage, fig, [], narrative)
    md += markdown.discrepancies_section({stage: analysis}, {stage: comparison})
    md += markdown.conclusions_section([verdict], rows)
    md += markdown.executive_summary(
        rows, 4, [verdict], {}, {"auto_approved": True, "sha256": "0" * 64}, ""
    )
    md += markdown.checks_section({stage: read_json(stage_dir / "checks.json")}, tmp)
    return fig, analysis, "\n".join(md)


def unmarked_prose_left(md: str, analysis: dict, comparison_fig: dict) -> list[str]:
    """Prose the code contradicts that the rendered text still shows as if it stood:
    a contradicted piece outside ~~strike-through~~, or a cited number with no mark."""
    standing = re.sub(r"~~.*?~~", "", md, flags=re.S)
    given = prose.given_of(prose.stage_dir_of({"figures": [comparison_fig]}))
    audit = claims.audit_analysis(analysis, {"figures": [comparison_fig]}, given)
    texts = {"summary": analysis["summary"]}
    texts |= {f"figure:{n['figure_id']}": n["narrative"] for n in analysis["per_figure"]}
    texts |= {
        f"discrepancy:{i}": f"{d['description']} Likely cause: {d['likely_cause']}"
        for i, d in enumerate(analysis["discrepancies"])
    }
    left = []
    for s in audit["sections"]:
        text = texts[s["section"]]
        if s["status"] == "contradicted" and text in standing:
            left.append(f"{s['section']} stands unmarked: {text[:80]}")
        for n in s["numbers"]:
            marked = f"{n['text']} [" in md
            if n["status"] not in ("checked", "given") and not marked and text in standing:
                left.append(f"{s['section']}: '{n['text']}' without a mark")
    return left


@pytest.fixture(scope="module")
def example(offline_example_run) -> Path:
    return offline_example_run / "outputs" / "silica_bragg_2026"


def test_the_example_itself_renders_with_every_number_checked(example, tmp_path):
    fig, analysis, md = judge(example, tmp_path, "fig3")
    assert fig["classification"] == "SUCCESS"
    assert "[unchecked]" not in md.split("## 6.")[0] and "Contradicted" not in md
    assert "Figures reproduced (SUCCESS only) | 1 of 4" in md


def test_the_clean_report_marks_nothing_and_strikes_nothing(example):
    """The example's own report, as the pipeline wrote it: no number marked unchecked
    (the design's n = 2.10 is the set-up's, not a claim), no note, nothing struck, no
    figure below SUCCESS; its HTML holds no literal strike marks."""
    md = (example / "REPRODUCTION_REPORT_silica_bragg_2026.md").read_text()
    assert "[unchecked]" not in md and "unchecked:" not in md
    assert "~~" not in md and "Contradicted" not in md
    assert "PARTIAL" not in md.split("## 4. Summary Table")[1].split("Classification")[0]
    quoted = [ln for ln in md.splitlines() if ln.lstrip().startswith(">")]
    label = "'s commentary (the agent's words, not checked by code):** "
    assert quoted and all(label in ln for ln in quoted)  # agents' words: only quoted
    html = (example / "REPRODUCTION_REPORT_silica_bragg_2026.html").read_text()
    assert "~~" not in html


def shift_3_percent(data: Path) -> None:
    edit_csv(data / "fig3_R.csv", "wavelength_um", lambda x: 1.03 * x)


def heights_scaled(data: Path) -> None:
    edit_csv(data / "fig2_T.csv", "T", lambda y: 0.8 * y)


def normalisation_off(run: Path) -> None:
    edit_csv(run / "slab_spectrum.csv", "T", lambda y: 0.5 * y)


def slab_built_thicker(run: Path) -> None:
    """The stage's own script with its slab 0.88 µm instead of the 0.80 µm its design
    declares, rerun through the sandbox's entry point; checks.json judged again."""
    stage_dir = run.parent
    script = stage_dir / "simulation.py"
    code = script.read_text()
    assert "SLAB_THICKNESS_UM = 0.80" in code
    script.write_text(code.replace("SLAB_THICKNESS_UM = 0.80", "SLAB_THICKNESS_UM = 0.88"))
    shutil.rmtree(run)
    run.mkdir()
    record = launch.run_job(
        launch.SimulationJob(script=str(script), workdir=str(run), timeout_s=300)
    )
    assert record["exit_code"] == 0, record.get("stderr_tail")
    design = read_json(stage_dir / "design.json")["output"]
    result = checks_mod.run_checks(record, run, ["slab_spectrum.csv"], True, design=design)
    atomic_write_json(stage_dir / "checks.json", {**read_json(stage_dir / "checks.json"), **result})


@pytest.mark.parametrize(
    ("fig_id", "paper_edit", "run_edit", "metric"),
    [
        ("fig3", shift_3_percent, None, "feature_shift_rel"),
        ("fig2", heights_scaled, None, "feature_height_rel"),
        ("fig2", None, normalisation_off, "feature_height_rel"),
        ("fig2", None, slab_built_thicker, "feature_shift_rel"),
    ],
    ids=["paper_shifted_3pc", "heights_scaled_0.8", "normalisation_factor_2", "slab_10pc_thick"],
)
def test_wrong_variant_is_not_success_and_no_prose_stands(
    example, tmp_path, fig_id, paper_edit, run_edit, metric
):
    fig, analysis, md = judge(example, tmp_path, fig_id, paper_edit, run_edit)
    assert fig["classification"] == "FAILURE"
    assert any(c["classes"].get(metric) == "FAILURE" for c in fig["curves"])
    assert "classification **FAILURE**" in md
    assert "Figures reproduced (SUCCESS only) | 0 of 4" in md
    assert "0 of 1 simulated target figures reproduced (SUCCESS)" in md
    assert "Contradicted by the code's numbers" in md  # the recorded claims no longer hold
    assert unmarked_prose_left(md, analysis, fig) == []
    assert "Why FAILURE (the code's metrics):" in md
    # the recorded supervisor's praise of the stage does not stand beside a failed stage
    verdict = read_json(example / "stages" / STAGE[fig_id] / "verdict.json")
    feedback = verdict["supervisor"]["output"]["feedback"]
    assert feedback not in re.sub(r"~~.*?~~", "", md, flags=re.S), feedback
    # the metric behind it, with the feature that set it or why it was not computed
    why = [line for line in md.splitlines() if line.startswith("- `") and metric in line]
    assert why and all(", set by " in line or "not computed (" in line for line in why), why
    if run_edit is slab_built_thicker:  # the check's row says what failed
        assert "**fail** `built:geometry_as_declared`" in md
        assert "tantala slab thickness" in md.split("## Physics and execution checks")[1]


def test_normalisation_factor_2_fails_the_energy_balance(example, tmp_path):
    stage_dir = tmp_path / "stage"
    shutil.copytree(example / "stages" / STAGE["fig2"], stage_dir)
    normalisation_off(stage_dir / "run")
    design = read_json(stage_dir / "design.json")["output"]
    record = read_json(stage_dir / "result.json")
    result = checks_mod.run_checks(
        record, stage_dir / "run", ["slab_spectrum.csv"], True, design=design
    )
    by_name = {c["name"]: c["status"] for c in result["checks"]}
    assert by_name["energy_conservation:slab_spectrum.csv"] == "fail"


@pytest.mark.parametrize(("declared", "status"), [(0.8, "pass"), (0.82, "fail")])
def test_simulated_dimension_against_the_design(example, tmp_path, declared, status):
    """A design that says 0.82 µm beside a script that built 0.80 µm (the probe's 200 nm
    spacer in a 180 nm design) fails before any comparison."""
    stage_dir = example / "stages" / STAGE["fig2"]
    design = read_json(stage_dir / "design.json")["output"]
    design["declared_dimensions"] = [{"name": "slab", "value": declared}]
    record = read_json(stage_dir / "result.json")
    result = checks_mod.run_checks(
        record, stage_dir / "run", ["slab_spectrum.csv"], True, design=design
    )
    by_name = {c["name"]: c["status"] for c in result["checks"]}
    assert by_name["built:geometry_as_declared"] == status
