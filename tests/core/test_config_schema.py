"""Bad configuration values are refused by the config schema, naming the key.

The Snakefile validates the merged config with `snakemake.utils.validate` against
workflow/schemas/config.schema.yaml before anything runs; these tests call the
same function with the same schema, and one goes through `snakemake -n`.
"""

import copy
import subprocess

import pytest
import yaml
from snakemake.utils import validate

from tests.support.pipeline import EXAMPLE, REPO, SNAKEMAKE

SCHEMA = str(REPO / "workflow/schemas/config.schema.yaml")
GOOD = {"papers": [{"paper_dir": str(EXAMPLE)}], "provider": {"kind": "replay"}}


def with_value(path: str, value) -> dict:
    """GOOD with `value` at the dotted `path` (intermediate objects created)."""
    cfg = copy.deepcopy(GOOD)
    node = cfg
    *parents, leaf = path.split(".")
    for key in parents:
        node = node.setdefault(key, {})
    node[leaf] = value
    return cfg


def refusal(cfg: dict) -> str:
    with pytest.raises(Exception) as info:  # snakemake's WorkflowError wraps jsonschema's
        validate(cfg, SCHEMA)
    return str(info.value)


@pytest.mark.parametrize("name", ["config/config.yaml", "config/demo.yaml", "config/gallery.yaml"])
def test_shipped_configs_are_valid(name):
    validate(yaml.safe_load((REPO / name).read_text()), SCHEMA)


@pytest.mark.parametrize(
    ("path", "value", "says"),
    [
        # negative or zero limits
        ("limits.max_design_revisions", -1, "less than the minimum of 1"),
        ("limits.max_code_revisions", 0, "less than the minimum of 1"),
        ("limits.max_replans", -1, "less than the minimum of 0"),
        ("simulation.max_mpi_ranks", -2, "less than the minimum of 1"),
        ("simulation.max_concurrent_jobs", 0, "less than the minimum of 1"),
        ("simulation.memory_safety_factor", 0, "less than or equal to the minimum of 0"),
        ("simulation.min_memory_mb", 0, "less than the minimum of 64"),
        ("simulation.sandbox.virtual_memory_overhead_mb", -1, "less than the minimum of 0"),
        ("provider.budget.max_usd", -5, "less than or equal to the minimum of 0"),
        ("provider.budget.max_tokens", 0, "less than the minimum of 1"),
        ("provider.timeout_s", 0, "less than or equal to the minimum of 0"),
        ("debug.resolution_factor", 1.5, "greater than the maximum of 1"),
        # wrong types
        ("limits.max_code_revisions", "3", "is not of type 'integer'"),
        ("simulation.max_mpi_ranks", 2.5, "is not of type 'integer'"),
        ("provider.cache", "yes", "is not of type 'boolean'"),
        ("checks.convergence", 1, "is not one of [True, False, 'auto']"),
        ("gates.auto_approve", "material_checkpoint", "is not of type 'array'"),
        # values outside what is valid
        ("simulation.executor", "kubernetes", "is not one of ['local', 'debug', 'slurm']"),
        ("provider.kind", "gpt", "is not one of"),
        ("simulation.mpi_launcher", "mpirun -np 4", "does not match"),
        ("provider.api_key_env", "MY KEY", "does not match"),
        ("provider.base_url", "gpu-node:8000/v1", "does not match"),
        ("outputs_dir", "", "should be non-empty"),
        ("provider.models", {"planer": "claude-sonnet-4-5"}, "is not one of"),
    ],
)
def test_bad_value_refused_with_its_key(path, value, says):
    message = refusal(with_value(path, value))
    assert says in message, message
    keys = path.split(".")
    # jsonschema names where it failed: instance['limits']['max_design_revisions']
    where = "instance" + "".join(f"[{k!r}]" for k in keys)
    if path == "provider.models":  # a bad key name is reported on the mapping
        where = "instance['provider']['models']"
    assert where in message, message


@pytest.mark.parametrize(
    ("cfg", "unexpected", "where"),
    [
        ({**GOOD, "paper": []}, "'paper' was unexpected", "instance:"),
        (with_value("simulation.max_rank", 4), "'max_rank' was unexpected", "['simulation']"),
        (with_value("limits.max_retries", 3), "'max_retries' was unexpected", "['limits']"),
        (
            with_value("simulation.sandbox.netwrk", "off"),
            "'netwrk' was unexpected",
            "['simulation']['sandbox']",
        ),
        (
            {"papers": [{"paper_dir": "x", "recording": "y"}]},
            "'recording' was unexpected",
            "['papers'][0]",
        ),
    ],
)
def test_unknown_key_refused_and_named(cfg, unexpected, where):
    message = refusal(cfg)
    assert "Additional properties are not allowed" in message and unexpected in message, message
    assert where in message, message


def test_missing_or_empty_paper_list_refused():
    assert "'papers' is a required property" in refusal({"provider": {"kind": "replay"}})
    assert "should be non-empty" in refusal({"papers": []})
    assert "'paper_dir' is a required property" in refusal({"papers": [{"recordings": "r"}]})


def test_snakefile_refuses_a_bad_config_before_any_job(tmp_path):
    """The same refusal through `snakemake -n`: the key is named, nothing is written."""
    cfg = with_value("limits.max_design_revisions", -3)
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(cfg))
    run = subprocess.run(
        [
            SNAKEMAKE,
            "--snakefile",
            str(REPO / "Snakefile"),
            "--directory",
            str(tmp_path),
            "--configfile",
            str(tmp_path / "config.yaml"),
            "-n",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode != 0
    out = run.stdout + run.stderr
    assert "-3 is less than the minimum of 1" in out, out[-2000:]
    assert "['limits']['max_design_revisions']" in out, out[-2000:]
    assert not (tmp_path / "outputs").exists()


def schema() -> dict:
    return yaml.safe_load((REPO / "workflow/schemas/config.schema.yaml").read_text())


def test_the_schema_names_the_registry_s_agents():
    """provider.models takes exactly the agents of agents/registry.py, in its order."""
    from agents.registry import AGENTS

    names = schema()["properties"]["provider"]["properties"]["models"]["propertyNames"]["enum"]
    assert names == list(AGENTS)


def test_the_schema_s_limit_defaults_are_the_settings_defaults():
    """The loop limits' defaults are reprolab.settings.Limits'; the schema repeats them
    for the user (and fills them in), and may not differ."""
    from dataclasses import asdict

    from reprolab.settings import Limits

    limits = schema()["properties"]["limits"]["properties"]
    assert {key: entry["default"] for key, entry in limits.items()} == asdict(Limits())


def test_auto_approvable_gates_are_gate_kinds():
    from reprolab.gates.protocol import GateKind

    gates = schema()["properties"]["gates"]["properties"]["auto_approve"]["items"]["enum"]
    assert set(gates) <= {kind.value for kind in GateKind}
