"""The example paper through the real Anthropic SDK, over HTTP, against a fake
Messages API that answers from the replay recordings.

It must produce the same artifacts as the offline replay run, account every
token of the scripted usage, show each agent only the fields it may see, and
serve a rerun of identical calls from the cache without reaching the server.
"""

import json
import os
import re
import sys
from pathlib import Path

import pytest
import yaml

from agents.ledger import DEFAULT_PRICES, cost_usd
from agents.providers import Usage
from tests.support.fake_llm import FakeLLMServer, FromRecordings
from tests.support.pipeline import EXAMPLE, snakemake

pytestmark = pytest.mark.pipeline
SNAKEMAKE = str(Path(sys.executable).with_name("snakemake"))
PAPER = "silica_bragg_2026"
# A sentence of the paper's Results section: only the planner reads the whole paper.
RESULTS_SENTENCE = "The index contrast with Ta₂O₅ is"

# What each agent may see (the least context its role needs), as data blocks.
ALLOWED_FIELDS = {
    "prompt_adaptor": {"paper_id", "paper_text_summary"},
    "planner": {"paper_id", "paper_text", "paper_domain", "paper_figures"},
    "plan_reviewer": {"plan", "paper_figures"},
    "simulation_designer": {
        "current_stage",
        "assumptions",
        "extracted_parameters",
        "paper_domain",
        "materials",
        "target_figures",
        "reviewer_feedback",
    },
    "design_reviewer": {"current_stage", "design", "materials"},
    "code_generator": {"design", "validated_materials", "reviewer_feedback"},
    "code_reviewer": {"design", "code", "validated_materials"},
    "execution_validator": {
        "stage_id",
        "exit_code",
        "stdout",
        "stderr",
        "output_files",
        "expected_outputs",
        "failure",
        "deterministic_checks",
    },
    "physics_sanity": {
        "current_stage",
        "paper_domain",
        "simulation_code",
        "output_data_files",
        "deterministic_checks",
    },
    "results_analyzer": {
        "current_stage",
        "comparison",
        "checks",
        "target_figures",
        "run_validation",
        "reviewer_feedback",
    },
    "comparison_validator": {
        "figure_comparisons",
        "analysis_summary",
        "per_figure",
        "discrepancies",
        "target_figures",
        "recomputed_mismatches",
    },
    "supervisor": {
        "plan_summary",
        "progress",
        "current_stage_summary",
        "figure_comparisons",
        "analysis",
        "systematic_discrepancies",
        "revision_counts",
        "backtrack_suggestions",
        "user_interactions",
    },
}


def make_workdir(root: Path, provider: dict) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    config = {
        "outputs_dir": "outputs",
        "papers": [{"paper_dir": str(EXAMPLE)}],
        "provider": provider,
        "simulation": {"executor": "local", "max_mpi_ranks": 2},
        "gates": {"auto_approve": ["material_checkpoint"]},
    }
    (root / "config.yaml").write_text(yaml.safe_dump(config))
    return root


@pytest.fixture(scope="module")
def runs(tmp_path_factory, offline_example_run):
    root = tmp_path_factory.mktemp("api")
    offline = offline_example_run  # the same config with the replay provider
    with FakeLLMServer(FromRecordings(EXAMPLE / "recordings")) as server:
        live = make_workdir(
            root / "live",
            {"kind": "anthropic", "model": "claude-opus-4-5", "base_url": server.url},
        )
        env = {**os.environ, "ANTHROPIC_API_KEY": "test-key-not-real"}
        result = snakemake(live, env=env)
        assert result.returncode == 0, result.stderr[-3000:]
        first_requests = list(server.requests)
        # Rerun the last stage's analysis and verdict with unchanged inputs: from the cache.
        stage = f"outputs/{PAPER}/stages/stage3_pairs_sweep"
        for target in ("analysis.json", "verdict.json"):
            rerun = snakemake(live, f"{stage}/{target}", "--force", env=env)
            assert rerun.returncode == 0, rerun.stderr[-3000:]
        yield {
            "offline": offline / "outputs" / PAPER,
            "live": live / "outputs" / PAPER,
            "requests": first_requests,
            "requests_after_rerun": list(server.requests),
        }


def agent_artifacts(out: Path) -> dict[str, dict]:
    found = {}
    for path in sorted(out.rglob("*.json")):
        data = json.loads(path.read_text())
        if isinstance(data, dict) and "provenance" in data and "output" in data:
            found[str(path.relative_to(out))] = data["output"]
    return found


def test_same_artifacts_as_the_offline_run(runs):
    offline, live = agent_artifacts(runs["offline"]), agent_artifacts(runs["live"])
    assert len(offline) > 30 and offline == live
    for stage in sorted((runs["offline"] / "stages").iterdir()):
        a = json.loads((stage / "verdict.json").read_text())
        b = json.loads((runs["live"] / "stages" / stage.name / "verdict.json").read_text())
        assert (a["status"], a["reason"]) == (b["status"], b["reason"])
        assert (stage / "simulation.py").read_bytes() == (
            runs["live"] / "stages" / stage.name / "simulation.py"
        ).read_bytes()


def test_every_call_went_through_the_sdk(runs):
    calls = [r["headers"]["x-reprolab-call"] for r in runs["requests"]]
    assert len(calls) == len(set(calls)) == len(list((EXAMPLE / "recordings").glob("*/*.yaml")))
    assert all(r["path"] == "/v1/messages" for r in runs["requests"])
    for r in runs["requests"]:
        auth = r["headers"].get("x-api-key") or r["headers"]["authorization"]
        assert auth.endswith("test-key-not-real")
    prov = json.loads((runs["live"] / "plan.json").read_text())["provenance"]
    assert prov["provider"] == "anthropic" and prov["source"] == "api"


def test_metrics_are_right_to_the_token(runs):
    entries = [
        json.loads(line) for line in (runs["live"] / "metrics.jsonl").read_text().splitlines()
    ]
    api = [e for e in entries if e["source"] == "api"]
    assert len(api) == len(runs["requests"])
    want = Usage()
    cost = 0.0
    for path in (EXAMPLE / "recordings").glob("*/*.yaml"):
        usage = Usage(**yaml.safe_load(path.read_text())["usage"])
        want = want + usage
        cost += cost_usd(usage, DEFAULT_PRICES["claude-opus-4-5"])
    total = json.loads((runs["live"] / "cost_summary.json").read_text())["total"]
    for key, value in want.__dict__.items():
        assert sum(e[key] for e in api) == value == total[key]
    assert total["cost_usd"] == pytest.approx(cost, abs=1e-6)


def test_rerun_of_identical_calls_reaches_no_server(runs):
    assert len(runs["requests_after_rerun"]) == len(runs["requests"])
    events = (runs["live"] / "events.jsonl").read_text()
    hits = [json.loads(line) for line in events.splitlines() if "agent_cache_hit" in line]
    # results_analyzer + comparison_validator (analysis) and the supervisor (verdict)
    assert sorted(h["message"].split("/")[2] for h in hits) == [
        "comparison_validator",
        "results_analyzer",
        "supervisor",
    ]
    verdict = json.loads((runs["live"] / "stages/stage3_pairs_sweep/verdict.json").read_text())
    assert verdict["supervisor"]["provenance"]["source"] == "cache"


def test_each_agent_sees_exactly_its_fields(runs):
    seen: dict[str, set[str]] = {}
    for request in runs["requests"]:
        agent = request["headers"]["x-reprolab-call"].split("/")[2]
        text = json.dumps(request["json"]["messages"], ensure_ascii=False)
        fields = set(re.findall(r'<data name=\\"([a-z_]+)\\">', text))
        assert fields <= ALLOWED_FIELDS[agent], (agent, fields - ALLOWED_FIELDS[agent])
        seen.setdefault(agent, set()).update(fields)
        has_results = RESULTS_SENTENCE in text
        assert has_results == (agent == "planner"), agent
    assert set(seen) == set(ALLOWED_FIELDS)
    for agent, fields in seen.items():
        # Optional fields appear only on revision; everything else was sent.
        assert ALLOWED_FIELDS[agent] - fields <= {"reviewer_feedback"}, agent
