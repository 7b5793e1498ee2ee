"""Every design and config field the user documentation (README.md and docs/*.md) names
is one the schemas accept (the docs once named `symmetric_outputs`, which the design
model refused)."""

import re
from pathlib import Path

import pytest
import yaml
from pydantic import ValidationError

from agents.simulation_designer import SimulationDesign
from reprolab.physics.thresholds import DISCREPANCY_THRESHOLDS

REPO = Path(__file__).parents[1]
# The README points into docs/, where the fields are documented: both are read.
# docs/paper-format.md documents metadata.yaml, not the config (tests/core/test_paper_format.py).
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
DOCS = [p for p in DOCS if p.name != "paper-format.md"]
README = "\n".join(p.read_text(encoding="utf-8") for p in DOCS)
FILE = re.compile(r"\.(py|md|json|jsonl|yaml|txt|png|sh|smk|html|csv)$")  # file names, not fields


def schema_keys(node, prefix="") -> set[str]:
    """Every dotted property path of a JSON schema (items and combinators followed)."""
    out = set()
    if not isinstance(node, dict):
        return out
    for key, sub in (node.get("properties") or {}).items():
        out |= {prefix + key} | schema_keys(sub, f"{prefix}{key}.")
    for key in ("items", "additionalProperties"):
        out |= schema_keys(node.get(key), prefix)
    for key in ("oneOf", "anyOf", "allOf"):
        for sub in node.get(key) or []:
            out |= schema_keys(sub, prefix)
    return out


def test_design_fields_in_the_docs_are_design_fields():
    named = set(re.findall(r"design `([a-z_]+)`", README))
    assert "symmetric_outputs" in named
    assert named <= set(SimulationDesign.model_fields), named - set(SimulationDesign.model_fields)
    rec = REPO / "examples/papers/silica_bragg_2026/recordings/stage1_single_slab"
    design = yaml.safe_load((rec / "simulation_designer.a2.yaml").read_text())["output"]
    design["symmetric_outputs"] = [["T_fwd", "T_bwd"]]
    assert SimulationDesign.model_validate(design).symmetric_outputs == [["T_fwd", "T_bwd"]]
    design["symmetric_outputs"] = [["T_fwd", "T_bwd", "R"]]
    with pytest.raises(ValidationError, match="symmetric_outputs.0"):
        SimulationDesign.model_validate(design)


def test_config_fields_in_the_docs_are_in_the_config_schema():
    keys = schema_keys(yaml.safe_load((REPO / "workflow/schemas/config.schema.yaml").read_text()))
    top = {k for k in keys if "." not in k}
    tokens = set(re.findall(r"`([a-z][a-z0-9_]*(?:\.[a-z0-9_]+)*)`", README))
    dotted = {t for t in tokens if "." in t and t.split(".")[0] in top and not FILE.search(t)}
    limits = {t for t in tokens if re.match(r"(max|min)_[a-z_]+$|memory_safety_factor$", t)}
    limits -= {b.metric for b in DISCREPANCY_THRESHOLDS}  # comparison metrics (docs/checks.md)
    limits -= {"max_rel"}  # a band's largest relative error, cited by the analyst
    assert len(dotted) > 10 and len(limits) > 8  # the documentation really is read
    assert sorted(dotted - keys) == []
    assert sorted(limits - {k.rsplit(".", 1)[-1] for k in keys}) == []
