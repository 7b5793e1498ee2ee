"""`reprolab doctor` checks that the configured provider can answer for every paper
(replay: its recordings; a new paper without any is told to run with a live model),
and names the package that provides each missing launcher command."""

import pytest

from agents.providers import AgentRequest, RecordingError, ReplayProvider
from reprolab.cli import doctor
from tests.support.builders import copy_paper
from tests.support.pipeline import EXAMPLE


def test_replay_config_with_a_paper_without_recordings_is_a_fix(tmp_path):
    new = copy_paper(tmp_path / "new_paper")  # no recordings/
    config = {
        "provider": {"kind": "replay"},
        "papers": [{"paper_dir": str(EXAMPLE)}, {"paper_dir": str(new)}],
    }
    ok, missing = doctor.check_papers_answerable(config)
    assert ok.ok and ok.name == f"recordings {EXAMPLE.name}"
    assert not missing.ok and missing.needed and missing.name == "recordings new_paper"
    assert "provider.kind replay, but 1 recording(s)" in missing.detail
    assert "provider.kind: anthropic" in missing.fix and "ANTHROPIC_API_KEY" in missing.fix
    (new / "recordings").mkdir()
    (new / "recordings" / "paper").mkdir()
    (missing,) = doctor.check_papers_answerable({**config, "papers": config["papers"][1:]})
    assert not missing.ok and "reprolab check-recordings" in missing.detail
    # a live provider answers any paper: its key is check_api_key's
    assert doctor.check_papers_answerable({**config, "provider": {"kind": "anthropic"}}) == []


@pytest.mark.parametrize(
    ("launcher", "package"),
    [("srun --mpi=pmix -n {ranks}", "slurm-client"), ("mpirun -np {ranks}", "openmpi-bin")],
)
def test_a_missing_launcher_names_its_own_package(monkeypatch, launcher, package):
    monkeypatch.setenv("PATH", "/nonexistent")
    check = doctor.check_launcher(launcher, 2)
    assert not check.ok and package in check.fix
    if package == "slurm-client":
        assert "OpenMPI" not in check.fix


def test_the_missing_recording_message_says_how_to_run_a_new_paper(tmp_path):
    request = AgentRequest("planner", "new_paper", "paper", 1, "system", "user")
    with pytest.raises(RecordingError) as err:
        ReplayProvider(tmp_path).load(request)
    text = str(err.value)
    assert "A new paper has none: run it with a live model (provider.kind: anthropic" in text
    assert "export ANTHROPIC_API_KEY=..." in text
