"""Every stop has a report; every question can be answered (issue 18, items 1, 2, 4).

A campaign through real Snakemake: the example paper, already finished (copied
from the session's offline run with its Snakemake metadata), and a long paper
whose Results section overflows the planner's window. The long paper waits at an
answerable gate with a PARTIAL report; the finished paper keeps its report; the
Snakemake report of the campaign is made; `reprolab answer ... stop` ends the long
paper with a PARTIAL report that says so.
"""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import EXAMPLE
from tests.test_pipeline import snakemake

pytestmark = pytest.mark.pipeline
DONE = "silica_bragg_2026"
LONG = "long_results_2026"
REPROLAB = str(Path(sys.executable).with_name("reprolab"))
GATE = "context.paper.planner.a1"


def cli(wd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [REPROLAB, *args, "--configfile", "config.yaml"],
        cwd=wd,
        capture_output=True,
        text=True,
        timeout=120,
    )


def long_paper(dest: Path) -> Path:
    shutil.copytree(EXAMPLE, dest, ignore=shutil.ignore_patterns("recordings"))
    meta = yaml.safe_load((dest / "metadata.yaml").read_text())
    meta["paper_id"] = LONG
    (dest / "metadata.yaml").write_text(yaml.safe_dump(meta, sort_keys=False))
    text = (dest / "paper.md").read_text()
    results = "## 2. Results"
    long = results + "\n\n" + "The measured reflectance rises with the pair count. " * 300
    (dest / "paper.md").write_text(text.replace(results, long))
    return dest


@pytest.fixture(scope="module")
def campaign(tmp_path_factory, offline_example_run):
    wd = tmp_path_factory.mktemp("campaign")
    done = offline_example_run / "outputs" / DONE
    shutil.copytree(done, wd / "outputs" / DONE)
    shutil.copytree(offline_example_run / ".snakemake" / "metadata", wd / ".snakemake/metadata")
    config = {
        "outputs_dir": "outputs",
        "papers": [
            {"paper_dir": str(EXAMPLE), "recordings": str(EXAMPLE / "recordings")},
            {"paper_dir": str(long_paper(wd / LONG)), "recordings": str(EXAMPLE / "recordings")},
        ],
        "provider": {"kind": "replay", "context_window_tokens": 6000, "max_output_tokens": 1000},
        "simulation": {"executor": "local", "max_mpi_ranks": 2},
        "gates": {"auto_approve": ["material_checkpoint"]},
    }
    (wd / "config.yaml").write_text(yaml.safe_dump(config))
    runs = {"first": snakemake(wd)}
    runs["status"] = cli(wd, "status")
    runs["report"] = snakemake(wd, "--report", str(wd / "campaign.html"))
    runs["answer"] = cli(wd, "answer", LONG, GATE, "stop", "--note", "too long for now")
    runs["stopped"] = snakemake(wd)
    runs["status_after"] = cli(wd, "status", LONG)
    return wd, runs


def partial(wd: Path) -> str:
    return (wd / "outputs" / LONG / f"REPRODUCTION_REPORT_{LONG}.PARTIAL.md").read_text()


def test_overflow_waits_at_an_answerable_gate_with_a_partial_report(campaign, tmp_path):
    wd, runs = campaign
    first = runs["first"]
    assert first.returncode != 0
    assert f"WAITING FOR YOU: context overflow '{GATE}' of paper '{LONG}'" in first.stderr
    assert f"reprolab answer {LONG} {GATE} OPTION" in first.stderr
    status = runs["status"].stdout
    assert f"WAITING: {GATE} (context_overflow)" in status
    assert "- methods_only:" in status and "- stop:" in status


def test_a_finished_paper_keeps_its_report_and_the_campaign_reports(campaign, offline_example_run):
    wd, runs = campaign
    name = f"REPRODUCTION_REPORT_{DONE}.md"
    kept = (wd / "outputs" / DONE / name).read_bytes()
    assert kept == (offline_example_run / "outputs" / DONE / name).read_bytes()
    assert not (wd / "outputs" / DONE / f"REPRODUCTION_REPORT_{DONE}.PARTIAL.md").exists()
    assert runs["report"].returncode == 0, runs["report"].stderr[-2000:]
    assert (wd / "campaign.html").stat().st_size > 10_000


def test_a_stop_answer_ends_the_paper_with_a_partial_report_that_says_so(campaign):
    wd, runs = campaign
    assert runs["answer"].returncode == 0, runs["answer"].stderr
    stopped = runs["stopped"]
    assert stopped.returncode != 0
    assert f"{LONG} did not finish: PARTIAL report" in stopped.stderr
    text = partial(wd)
    assert text.startswith("# PARTIAL REPORT")
    assert f"**Stopped**: stopped by the user's answer to {GATE}" in text
    assert "No plan was made" in text and "## To go on" in text
    assert "snakemake" in text.split("## To go on")[1]
    assert (wd / "outputs" / LONG / f"REPRODUCTION_REPORT_{LONG}.PARTIAL.html").is_file()
    status = runs["status_after"].stdout
    assert "report: PARTIAL (did not finish)" in status
    assert "nothing waits on you" in status
