"""Builders for the inputs many tests start from: a copy of an example paper (renamed
where a campaign needs two), and the smallest design a job accepts."""

import json
import shutil
from pathlib import Path

import yaml

from tests.support.pipeline import EXAMPLE


def copy_paper(
    dest: Path, source: Path = EXAMPLE, *, recordings: bool = False, paper_id: str | None = None
) -> Path:
    """`source` copied to `dest`, without its recordings unless asked; renamed to
    `paper_id` (metadata and the recorded outputs that name their paper) when given."""
    ignore = None if recordings else shutil.ignore_patterns("recordings")
    shutil.copytree(source, dest, ignore=ignore)
    if paper_id:
        meta = yaml.safe_load((dest / "metadata.yaml").read_text())
        meta["paper_id"] = paper_id
        (dest / "metadata.yaml").write_text(yaml.safe_dump(meta, sort_keys=False))
        for path in (dest / "recordings").rglob("*.yaml") if recordings else ():
            path.write_text(path.read_text().replace(source.name, paper_id))
    return dest


def minimal_design(stage_id: str = "stage1_x", **fields) -> dict:
    """The smallest valid SimulationDesign of a 1D stage that writes `out.csv`: a job's
    script stands in for Meep, so only what the job machinery reads matters. `fields`
    replace or add top-level fields (a `sweep`, another `performance_estimate`)."""
    return {
        "stage_id": stage_id,
        "summary": "a script standing in for Meep",
        "dimensions": 1,
        "unit_length_um": 1.0,
        "resolution": 10,
        "pml_thickness": 1.0,
        "source_fcen": 1.0,
        "source_fwidth": 0.5,
        "geometry": "none",
        "output_specifications": [{"file": "out.csv", "columns": ["x"], "description": "x"}],
        "performance_estimate": {"runtime_seconds": 5, "memory_mb": 100, "mpi_ranks": 1},
        **fields,
    }


def write_record(run_dir: Path, sims: list[dict]) -> Path:
    """A run-time record as the launcher leaves it: beside the run folder, never in it."""
    from reprolab.physics import record_store

    home = record_store.record_home(run_dir)
    home.mkdir(parents=True, exist_ok=True)
    path = home / record_store.RECORD_FILE
    path.write_text(json.dumps({"version": 1, "simulations": sims}))
    return path
