"""`reprolab run` passes the user's targets and options to Snakemake intact."""

import pytest

import reprolab.cli as cli

SNAKEFILE = """
rule first:
    output: "first.txt"
    shell: "echo first > {output}"

rule wanted:
    output: "wanted.txt"
    shell: "echo {config[verbosity]} > {output}"
"""


@pytest.mark.parametrize("verbosity", ["quiet", "verbose"])
def test_run_with_a_verbosity_keeps_the_target(verbosity, tmp_path, monkeypatch):
    """Real Snakemake: the target is built (not read as a --config entry), the
    default target is not, and the steps see the verbosity asked for."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "Snakefile").write_text(SNAKEFILE)
    (tmp_path / "c.yaml").write_text("papers: []\n")
    code = cli.main(["run", "--configfile", "c.yaml", "--verbosity", verbosity, "wanted.txt"])
    assert code == 0
    assert (tmp_path / "wanted.txt").read_text().strip() == verbosity
    assert not (tmp_path / "first.txt").exists()


def test_the_verbosity_joins_the_users_own_config_values():
    extra = ["--config", "a=1", "--forcerun", "analyze"]
    assert cli.with_config_value(extra, "verbosity=quiet") == [
        "--config",
        "verbosity=quiet",
        "a=1",
        "--forcerun",
        "analyze",
    ]
    assert cli.with_config_value(["t.txt"], "verbosity=quiet") == [
        "--config=verbosity=quiet",
        "t.txt",
    ]
