"""The convergence step: rerun a stage at twice the resolution and estimate the error."""

from __future__ import annotations

import os
from pathlib import Path

from reprolab.fileio import atomic_write_json, read_json
from reprolab.physics.convergence import quantities
from reprolab.physics.lint import RESOLUTION_SCALE_ENV


def run_convergence(run, design_path, code_json, plan_path, out_json) -> None:
    """The `convergence` rule: the 2x rerun and the estimate (convergence.json)."""
    from agents.simulation_designer import SimulationDesign
    from reprolab.artifacts import load_plan, plan_stage
    from reprolab.jobs import stage_run
    from reprolab.steps.blocking import passed_on_block

    if passed_on_block(run, out_json, design_path):
        return
    design = SimulationDesign.model_validate(read_json(design_path)["output"])
    code = read_json(code_json)["output"]["code"]
    stage_dir = Path(out_json).parent
    result = {"stage_id": design.stage_id, "scale": 2, "quantities": [], "note": ""}
    if RESOLUTION_SCALE_ENV not in code:
        result["note"] = f"the script ignores {RESOLUTION_SCALE_ENV}: no 2x rerun possible"
    elif not design.figure_outputs:
        result["note"] = "the stage reproduces no curve: nothing to compare"
    else:
        stage = plan_stage(load_plan(plan_path), design.stage_id)
        os.environ[RESOLUTION_SCALE_ENV] = "2"
        record = stage_run.run_stage(
            design,
            stage.runtime_budget_minutes * 4,  # 2x resolution: ~4x (1D) to 16x (3D) the time
            run.config.get("simulation", {}),
            stage_dir / "simulation.py",
            stage_dir / "convergence_2x",
        )
        # The rerun's own record beside its run folder, for provenance and its log.
        atomic_write_json(stage_dir / "convergence_2x" / "result.json", record)
        result["runtime_seconds"] = record.get("runtime_seconds")
        if record.get("failure") or record.get("exit_code"):
            result["note"] = f"the 2x rerun failed: {record.get('failure') or record['exit_code']}"
        else:
            result["quantities"] = quantities(
                [fo.model_dump() for fo in design.figure_outputs],
                stage_dir / "run",
                stage_dir / "convergence_2x" / "run",
            )
    atomic_write_json(out_json, result)
