import pytest

from agents.planner import PlannerOutput
from agents.providers import AgentRequest, RecordingError, ReplayProvider
from agents.runner import call_agent
from tests.conftest import EXAMPLE


def request(agent="planner", stage="paper", attempt=1):
    return AgentRequest(
        agent=agent, paper_id="p", stage_id=stage, attempt=attempt, system="", user=""
    )


def test_missing_recording_names_agent_stage_attempt(tmp_path):
    with pytest.raises(RecordingError) as exc:
        ReplayProvider(tmp_path).complete(request(attempt=7), PlannerOutput)
    msg = str(exc.value)
    assert "agent 'planner'" in msg and "stage 'paper'" in msg and "attempt 7" in msg


def test_invalid_recording_names_field(tmp_path):
    (tmp_path / "paper").mkdir()
    (tmp_path / "paper" / "planner.a1.yaml").write_text(
        "agent: planner\nstage_id: paper\nattempt: 1\noutput:\n  paper_id: p\n  title: t\n"
    )
    with pytest.raises(RecordingError) as exc:
        ReplayProvider(tmp_path).complete(request(), PlannerOutput)
    assert "field 'summary'" in str(exc.value) and "planner.a1.yaml" in str(exc.value)


def test_recording_for_another_agent_is_refused(tmp_path):
    (tmp_path / "paper").mkdir()
    (tmp_path / "paper" / "planner.a1.yaml").write_text(
        "agent: supervisor\nstage_id: paper\noutput: {}\n"
    )
    with pytest.raises(RecordingError, match="agent='supervisor'"):
        ReplayProvider(tmp_path).complete(request(), PlannerOutput)


def test_every_example_recording_validates():
    from agents.runner import OUTPUT_MODELS

    recordings = sorted((EXAMPLE / "recordings").glob("*/*.yaml"))
    assert len(recordings) >= 20
    provider = ReplayProvider(EXAMPLE / "recordings")
    for path in recordings:
        agent, attempt = path.stem.rsplit(".a", 1)
        provider.complete(request(agent, path.parent.name, int(attempt)), OUTPUT_MODELS[agent])


def test_call_agent_records_provenance(example_paper):
    from agents import prompt_adaptor

    art = call_agent(
        prompt_adaptor.AGENT,
        paper_id=example_paper.paper_id,
        stage_id="paper",
        attempt=1,
        context=prompt_adaptor.context(example_paper.paper_id, "abstract"),
        provider=ReplayProvider(EXAMPLE / "recordings"),
    )
    prov = art["provenance"]
    assert prov["agent"] == "prompt_adaptor" and prov["provider"] == "replay"
    assert len(prov["prompt_sha256"]) == 64
