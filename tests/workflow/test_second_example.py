"""The second bundled example (ag_etalon_2026: a Lorentz-Drude silver etalon) through
the real pipeline offline, in a campaign of two papers as `reprolab demo` runs them:
real Snakemake, real Meep, the replay recordings. Every figure is classified (the two
with data SUCCESS, the two without qualitative and marked so in the report, the field map
drawn from the simulation's HDF5 beside the paper's image), stage 0
ran no simulation and needed no FDTD parameters, key values stated in nm are read off a
column in µm, and the campaign's index links the reports.

The campaign's second paper is a copy of the etalon whose recordings are missing: it
stops at its first agent call (a second full paper would add minutes), so the index
is the one the workflow writes when a run stops (linking a final and a PARTIAL
report); a dry run shows the index rule a finished campaign runs (`make demo` runs it
in test_install)."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest
import yaml

from reprolab.report.index import write_index
from reprolab.steps.campaign import write_campaign_index
from tests.support.builders import copy_paper
from tests.support.pipeline import snakemake

REPO = Path(__file__).parents[2]
AG = REPO / "examples" / "papers" / "ag_etalon_2026"
PAPER, COPY = "ag_etalon_2026", "ag_etalon_copy"

pytestmark = pytest.mark.pipeline


def stopping_paper(dest: Path) -> Path:
    """The etalon under another paper_id with no recordings: it stops at once."""
    copy_paper(dest, AG)
    meta = dest / "metadata.yaml"
    meta.write_text(meta.read_text().replace(f"paper_id: {PAPER}", f"paper_id: {COPY}"))
    (dest / "recordings").mkdir()
    return dest


@pytest.fixture(scope="module")
def campaign(tmp_path_factory):
    wd = tmp_path_factory.mktemp("campaign")
    config = {
        "outputs_dir": "outputs",
        "papers": [{"paper_dir": str(AG)}, {"paper_dir": str(stopping_paper(wd / COPY))}],
        "provider": {"kind": "replay"},
        "simulation": {"executor": "local", "max_mpi_ranks": 2},
        "gates": {"auto_approve": ["material_checkpoint"]},
    }
    (wd / "config.yaml").write_text(yaml.safe_dump(config))
    started = time.time()
    run = snakemake(wd)
    print(f"campaign (the etalon, a paper that stops): {time.time() - started:.0f} s")
    assert run.returncode != 0  # the copy stops; the etalon goes on to its report
    assert "no replay recording for agent 'prompt_adaptor', stage 'paper'" in run.stderr
    assert (wd / "outputs" / PAPER / f"REPRODUCTION_REPORT_{PAPER}.md").is_file(), run.stderr[
        -3000:
    ]
    return wd


def comparisons(wd: Path) -> dict[str, dict]:
    out = wd / "outputs"
    return {
        fig["figure_id"]: fig
        for path in sorted((out / PAPER / "stages").glob("*/comparison.json"))
        for fig in json.loads(path.read_text())["figures"]
    }


def test_every_figure_classified_the_one_without_data_qualitative(campaign):
    figs = comparisons(campaign)
    assert {k: f["classification"] for k, f in figs.items()} == {
        "fig1": "SUCCESS",
        "fig2": "SUCCESS",
        "fig3": "PARTIAL",
        "fig4": "PARTIAL",
    }
    assert figs["fig3"]["qualitative"] and not figs["fig2"].get("qualitative")
    # the two-axis figure: both curves compared, Im ε on the right axis
    assert {c["curve_id"] for c in figs["fig1"]["curves"]} == {"eps_re", "eps_im"}
    report = (campaign / "outputs" / PAPER / f"REPRODUCTION_REPORT_{PAPER}.md").read_text()
    section = report.split("### fig3")[1].split("###")[0]
    assert "**PARTIAL** (qualitative: no digitized data, compared visually)" in section
    (row,) = [ln for ln in report.splitlines() if ln.startswith("| fig3 | stage1_etalon |")]
    assert "qualitative" in row
    assert "| fig2 | stage1_etalon | **SUCCESS** |" in report


def test_the_correct_run_strikes_nothing_and_quotes_every_agent(campaign):
    """On the example's correct run no true sentence is struck or marked, and every
    quoted line is an agent's labelled commentary (and there is some)."""
    report = (campaign / "outputs" / PAPER / f"REPRODUCTION_REPORT_{PAPER}.md").read_text()
    assert "~~" not in report and "[unchecked]" not in report and "Contradicted" not in report
    quoted = [ln for ln in report.splitlines() if ln.lstrip().startswith(">")]
    label = "'s commentary (the agent's words, not checked by code):** "
    assert len(quoted) >= 6 and all(label in ln for ln in quoted), quoted


def test_field_map_drawn_beside_the_papers_image(campaign):
    """fig4: the simulation's HDF5 map, its maximum found by code where the paper's text
    puts it (9.2 |E0|^2 at the spacer's centre near 690 nm), drawn on the paper's scale."""
    fig4 = comparisons(campaign)["fig4"]
    assert fig4["qualitative"] and fig4["field_map"]
    (curve,) = fig4["curves"]
    assert curve["file"] == "etalon_field.h5" and "error" not in curve
    numbers = curve["field_map"]
    assert abs(numbers["x_at_max"]) < 5 and 680 < numbers["y_at_max"] < 700  # nm
    assert numbers["max"] == pytest.approx(9.155, rel=0.02)
    report = (campaign / "outputs" / PAPER / f"REPRODUCTION_REPORT_{PAPER}.md").read_text()
    section = report.split("### fig4")[1].split("###")[0]
    assert "| paper | reproduced field map (the paper's axes and colour scale) |" in section
    assert "fig4_paper.png" in section and "overlay_fig4.png" in section
    assert "etalon_spectrum.png" not in section  # the stage's spectrum plot is not the map


def test_key_values_in_nm_read_off_the_reproduction(campaign):
    (t_curve,) = [c for c in comparisons(campaign)["fig2"]["curves"] if c["curve_id"] == "T"]
    by_kind = {kv["kind"]: kv for kv in t_curve["key_values"]}
    assert 689.0 < by_kind["x_of_max"]["sim"] < 690.5  # nm, from a wavelength_um column
    assert {kv["class"] for kv in t_curve["key_values"]} == {"SUCCESS"}


def test_material_stage_ran_no_simulation(campaign):
    stage0 = campaign / "outputs" / PAPER / "stages" / "stage0_material_validation"
    design = json.loads((stage0 / "design.json").read_text())["output"]
    assert design["runs_simulation"] is False and design["resolution"] is None
    checks = {
        c["name"]: c["status"] for c in json.loads((stage0 / "checks.json").read_text())["checks"]
    }
    assert checks["lint:no_simulation"] == "pass"
    assert not any(name.startswith("built:") for name in checks)  # nothing was built
    assert not (stage0 / "run" / "as_built.json").exists()
    assert not (stage0 / "run.record" / "as_built.json").exists()
    report = (campaign / "outputs" / PAPER / f"REPRODUCTION_REPORT_{PAPER}.md").read_text()
    assert "| stage0_material_validation | 1D | no simulation (material models evaluated) |" in (
        report
    )


def test_campaign_index_links_both_reports(campaign):
    out = campaign / "outputs"
    index = (out / "REPORTS_INDEX.md").read_text()
    (done,) = [ln for ln in index.splitlines() if f"({PAPER}/REPRODUCTION_REPORT_{PAPER}.md)" in ln]
    assert "| [report]" in done and "| PARTIAL | 2 / 2 / 0 | 2 |" in done
    partial = f"[PARTIAL report (did not finish)]({COPY}/REPRODUCTION_REPORT_{COPY}.PARTIAL.md)"
    (stopped,) = [ln for ln in index.splitlines() if partial in ln]
    assert "| – | 0 / 0 / 0 | 0 |" in stopped  # nothing compared: no class claimed
    page = (out / "REPORTS_INDEX.html").read_text()
    hrefs = re.findall(r'href="([^"]+)"', page)
    assert sorted(hrefs) == sorted(
        [
            f"{COPY}/REPRODUCTION_REPORT_{COPY}.PARTIAL.html",
            f"{PAPER}/REPRODUCTION_REPORT_{PAPER}.html",
        ]
    )
    assert all((out / h).is_file() for h in hrefs)
    # a finished campaign gets the index from its own rule, after every report
    dry = snakemake(campaign, "-n")
    assert dry.returncode == 0, dry.stderr[-2000:]
    assert re.search(r"^(local)?rule report_index:$", dry.stdout, re.M), dry.stdout[-2000:]


def test_index_of_a_campaign_that_stopped(tmp_path):
    """The onerror path: a PARTIAL report is linked as such, a paper without any report
    is listed; a single paper gets no index (its report is the page)."""
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "REPRODUCTION_REPORT_a.PARTIAL.md").write_text("# PARTIAL")
    (tmp_path / "b").mkdir()
    text = write_index(tmp_path, ["a", "b"]).read_text()
    assert "[PARTIAL report (did not finish)](a/REPRODUCTION_REPORT_a.PARTIAL.md)" in text
    assert "| b | no report yet | – |" in text
    html = (tmp_path / "REPORTS_INDEX.html").read_text()
    assert 'href="a/REPRODUCTION_REPORT_a.PARTIAL.html"' in html
    single = {"outputs_dir": str(tmp_path / "one"), "papers": [{"paper_dir": str(AG)}]}
    assert write_campaign_index(single) is None
    assert not (tmp_path / "one").exists()
