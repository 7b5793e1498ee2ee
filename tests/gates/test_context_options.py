"""A context overflow answered with each option, through real Snakemake: the long
paper waits at its gate once; each answer is given with `reprolab answer` in its own
copy of that waiting run, and the next `snakemake` carries it out: a plan is made, and
its provenance says what was left out and why.
(`stop` is answered in tests/report/test_stop_reports.py; the calls themselves are attacked
in tests/agents/test_context_gate.py.)"""

import json
import shutil

import pytest
import yaml

from tests.conftest import EXAMPLE
from tests.conftest import reprolab_cli as cli
from tests.report.test_stop_reports import GATE, LONG, long_paper
from tests.workflow.test_pipeline import snakemake

pytestmark = pytest.mark.pipeline
PLAN = f"outputs/{LONG}/plan.json"
ANSWERS = {
    "methods_only": [],
    "shorten_sections": [],
    "larger_model": ["--model", "claude-sonnet-4-5", "--window", "1000000"],
}


@pytest.fixture(scope="module")
def waiting(tmp_path_factory):
    wd = tmp_path_factory.mktemp("overflow")
    recordings = wd / "recordings"
    shutil.copytree(EXAMPLE / "recordings", recordings)
    for path in recordings.rglob("*.yaml"):  # outputs name their paper
        path.write_text(path.read_text().replace(EXAMPLE.name, LONG))
    config = {
        "outputs_dir": "outputs",
        "papers": [{"paper_dir": str(long_paper(wd / LONG)), "recordings": str(recordings)}],
        "provider": {"kind": "replay", "context_window_tokens": 6000, "max_output_tokens": 1000},
        "simulation": {"executor": "local"},
    }
    (wd / "config.yaml").write_text(yaml.safe_dump(config))
    first = snakemake(wd, PLAN)
    assert first.returncode != 0 and f"'{GATE}'" in first.stderr, first.stderr[-2000:]
    assert not (wd / PLAN).exists()
    return wd


@pytest.fixture(params=sorted(ANSWERS))
def answered(request, waiting, tmp_path):
    """A copy of the waiting run, answered with one option and run again."""
    wd = tmp_path / "run"
    shutil.copytree(waiting, wd, symlinks=True)
    config = yaml.safe_load((wd / "config.yaml").read_text())
    config["papers"][0].update(paper_dir=str(wd / LONG), recordings=str(wd / "recordings"))
    (wd / "config.yaml").write_text(yaml.safe_dump(config))
    option = request.param
    given = cli(wd, "answer", LONG, GATE, option, *ANSWERS[option])
    assert given.returncode == 0, given.stderr
    return option, wd, snakemake(wd, PLAN)


def test_each_answer_is_carried_out_and_said(answered):
    option, wd, rerun = answered
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    prov = json.loads((wd / PLAN).read_text())["provenance"]
    [left_out] = prov["context_left_out"]
    if option == "larger_model":
        assert prov["context_recoveries"] == []  # the whole paper went to the larger model
        assert "model claude-sonnet-4-5 (1000000 tokens)" in left_out
        assert prov["estimated_prompt_tokens"] > 6000  # more than the first model's window
    else:
        assert prov["context_recoveries"] == [option]
        assert "2. Results" in left_out and f"answer to {GATE}" in left_out
    [entry] = [
        json.loads(x)
        for x in (wd / "outputs" / LONG / "user_interactions.jsonl").read_text().splitlines()
        if '"context_overflow"' in x
    ]
    assert entry["user_response"]["option"] == option
    assert option not in entry["alternatives"] and "stop" in entry["alternatives"]
