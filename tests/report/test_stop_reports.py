"""Every stop has a report; every question can be answered.

A campaign through real Snakemake: the example paper, already finished (copied
from the session's offline run with its Snakemake metadata), and a long paper
whose Results section overflows the planner's window. The long paper waits at an
answerable gate with a PARTIAL report; the finished paper keeps its report; the
Snakemake report of the campaign is made; `reprolab answer ... stop` ends the long
paper with a PARTIAL report that says so.
"""

import json
import shutil
from pathlib import Path

import pytest
import yaml

from tests.support.builders import copy_paper
from tests.support.pipeline import EXAMPLE, snakemake
from tests.support.pipeline import reprolab_cli as cli

pytestmark = pytest.mark.pipeline
DONE = "silica_bragg_2026"
LONG = "long_results_2026"
GATE = "context.paper.planner.a1"
ASKS = "ambiguous_2026"  # its planner asks a question
QUESTION = {
    "question_id": "Q1",
    "kind": "parameter_confirmation",
    "question": "The paper gives no thickness for the single slab of Fig. 1; use 200 nm?",
    "options": ["200 nm (a quarter wave at 550 nm)", "500 nm"],
    "proposed": "200 nm",
    "confidence": 0.4,
    "impact": "high",
}


def long_paper(dest: Path) -> Path:
    copy_paper(dest, paper_id=LONG)
    text = (dest / "paper.md").read_text()
    results = "## 2. Results"
    long = results + "\n\n" + "The measured reflectance rises with the pair count. " * 300
    (dest / "paper.md").write_text(text.replace(results, long))
    return dest


def asking_paper(dest: Path) -> Path:
    """The example, renamed, whose planner asks QUESTION first and plans after the answer."""
    copy_paper(dest, recordings=True, paper_id=ASKS)
    rec = dest / "recordings" / "paper"
    for agent in ("planner", "plan_reviewer"):  # attempt 2: after the answer
        data = yaml.safe_load((rec / f"{agent}.a1.yaml").read_text()) | {"attempt": 2}
        (rec / f"{agent}.a2.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    data = yaml.safe_load((rec / "planner.a1.yaml").read_text())
    data["output"]["questions"] = [QUESTION]
    (rec / "planner.a1.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
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
            {"paper_dir": str(asking_paper(wd / ASKS))},
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
    (wd / "answers.json").write_text(json.dumps({"answers": {"Q1": "180 nm, from Fig. 1"}}))
    runs["clarified"] = cli(wd, "edit", ASKS, "clarification.paper", "--file", "answers.json")
    runs["stopped"] = snakemake(
        wd, f"outputs/{LONG}/REPRODUCTION_REPORT_{LONG}.md", f"outputs/{ASKS}/plan.json"
    )
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


def test_quiet_console_prints_only_steps_errors_waits(campaign):
    """`reprolab run --verbosity quiet` on this campaign's real Snakemake output."""
    from reprolab.cli import QuietConsole

    wd, runs = campaign
    console = QuietConsole()
    raw = runs["first"].stderr.splitlines(keepends=True)
    shown = [line for line in map(console, raw) if line is not None]
    assert f"done: adapt_prompts (paper={LONG})\n" in shown
    assert any(line.startswith("[reprolab] WAITING FOR YOU") for line in shown)
    assert any(f"reprolab answer {LONG} {GATE} OPTION" in line for line in shown)
    assert any(f"{LONG} did not finish: PARTIAL report" in line for line in shown)
    allowed = ("done: ", "[reprolab]", "  ", "Error in rule", "WorkflowError", "At least one")
    for line in shown:
        assert line.startswith(allowed), line
    noise = ("rule ", "localrule ", "checkpoint ", "    input:", "    jobid:", "RuleException")
    assert not any(line.startswith(noise) for line in shown)
    assert len(shown) < len(raw) / 3


def test_a_planner_question_is_a_gate_whose_answer_reaches_the_planner(campaign):
    wd, runs = campaign
    first = runs["first"]
    assert f"WAITING FOR YOU: clarification 'clarification.paper' of paper '{ASKS}'" in (
        first.stderr
    )
    assert "WAITING: clarification.paper (clarification)" in runs["status"].stdout
    assert runs["clarified"].returncode == 0, runs["clarified"].stderr
    out = wd / "outputs" / ASKS
    plan = json.loads((out / "plan.json").read_text())
    assert plan["user_answers"] == [
        {"question": QUESTION["question"], "answer": "180 nm, from Fig. 1", "by": "user"}
    ]
    assert plan["provenance"]["attempt"] == 2  # the planner was asked again, with the answer
    first_plan = json.loads((out / "plan.r1.json").read_text())
    assert first_plan["provenance"]["context_sha256"] != plan["provenance"]["context_sha256"]
    [entry] = [json.loads(x) for x in (out / "user_interactions.jsonl").read_text().splitlines()]
    assert entry["interaction_type"] == "clarification"
    assert entry["context"]["questions"][0]["options"] == QUESTION["options"]
    assert entry["alternatives"] == ["approve"]  # what else was offered
