"""The checks step: run-time physics checks plus the static lint, one checks.json."""

from __future__ import annotations

from pathlib import Path

from agents.code_generator import GeneratedCode
from reprolab.artifacts import (
    Checks,
    DesignArtifact,
    load_code,
    load_design,
    load_result,
    write_checks,
)
from reprolab.physics import checks as checks_mod
from reprolab.steps import eligibility
from reprolab.steps.static import simulates_structure, static_findings


def checks_for(
    run, record: dict, design_art: DesignArtifact, code: GeneratedCode, workdir: Path
) -> dict:
    """The run-time checks plus the static lint of one run (what checks.json holds)."""
    design, mats = design_art.output, design_art.materials
    by_id = {m["material_id"]: m for m in mats}
    lossless = all(by_id.get(m, {}).get("lossless", True) for m in design.materials)
    design_json = design_art.output_json()
    # Whether the stage simulates is the plan's word, not the design's alone.
    design_json["plan_simulates"] = simulates_structure(design, run)
    return checks_mod.run_checks(
        record,
        workdir,
        code.expected_outputs,
        lossless,
        design=design_json,
        static=static_findings(design, mats, code.code, run),
        paper=paper_curves(run, design),
        approved_materials=[m for m in mats if m.get("approved_model")],
    )


def paper_curves(run, design) -> dict:
    """The digitized curves the design's figure outputs reproduce, in their x units
    (the trace refuses an output that repeats one); those without data are left out."""
    out = {}
    paper = getattr(run, "paper", None)
    for fo in design.figure_outputs if paper is not None else []:
        try:
            out[(fo.figure_id, fo.curve_id)] = paper.curve_data(
                fo.figure_id, fo.curve_id, fo.x_column
            )
        except Exception:  # noqa: BLE001 - an unreadable curve is the comparison's to report
            continue
    return out


def run_checks(run, result_path, code_json, design_path, out_checks) -> None:
    """Run-time checks plus the static lint, one checks.json; a diagnosis page on failure."""
    blocked = eligibility.blocked_in(result_path)
    if blocked:
        write_checks(
            out_checks, Checks.model_validate({**blocked, "verdict": "blocked", "checks": []})
        )
        return
    ran = load_result(result_path)
    record = ran.to_json()
    design_art = load_design(design_path)
    code_path = ran.code_that_ran(code_json)
    workdir = Path(result_path).parent / "run"
    result = checks_for(run, record, design_art, load_code(code_path).output, workdir)
    result["stage_id"] = design_art.output.stage_id
    result["code_artifact"] = str(code_path)
    if result["verdict"] == "fail":
        page = failure_diagnosis(result, record, Path(out_checks).parent) or (
            checks_mod.write_diagnosis(result, record, workdir, Path(out_checks).parent)
        )
        if page:
            result["diagnosis"] = str(page)
    write_checks(out_checks, Checks.model_validate(result))


# Runs that failed for the cluster's or the resources' reasons: the diagnosis is the
# failure kind's, never a physics pattern matched in a log the run could not finish.
RUN_FAILURE_ADVICE = {
    "cancelled": (
        "Someone or something outside the pipeline stopped the job (scancel, a kill, "
        "an administrator).",
        "It was resubmitted automatically up to simulation.max_resubmits; answer the "
        "run_failure gate to rerun it.",
    ),
    "preempted": (
        "Higher-priority work took the job's resources.",
        "Resubmitted automatically up to simulation.max_resubmits; a partition or QoS "
        "without preemption (simulation.slurm) avoids it.",
    ),
    "node_failure": (
        "The compute node failed while running the job.",
        "Resubmitted automatically up to simulation.max_resubmits; tell the cluster's "
        "administrators if it repeats.",
    ),
    "timeout": (
        "The run needed more time than the stage's budget gives it.",
        "Approve the run_failure gate to rerun with twice the time, or raise the plan's "
        "runtime budget or lower the resolution.",
    ),
    "out_of_memory": (
        "The run needed more memory than it asked for.",
        "Approve the run_failure gate to rerun with twice the memory, or lower the "
        "resolution or the cell size.",
    ),
    "queue_timeout": (
        "The job waited in the queue longer than simulation.queue_wait_minutes.",
        "Pick a less busy partition (simulation.slurm) or raise queue_wait_minutes, then "
        "approve the run_failure gate.",
    ),
    "unschedulable": (
        "Slurm can never start the job as requested (its reason is in the summary).",
        "Change the request or the partition (simulation.slurm), then approve the "
        "run_failure gate.",
    ),
    "submission_refused": (
        "sbatch refused the job (its words are in the summary).",
        "Change simulation.slurm or the resources asked for, then approve the run_failure gate.",
    ),
    "disk_full": (
        "The disk the run writes to is full or over quota.",
        "Free space or move outputs_dir, then approve the run_failure gate.",
    ),
}


def failure_diagnosis(result: dict, record: dict, stage_dir: Path) -> Path | None:
    """diagnosis.html from the run's failure kind when the cluster or the resources
    stopped it; None for failures of the code or the physics."""
    from reprolab import knowledge
    from reprolab.fileio import atomic_write_text

    failure = record.get("failure") or {}
    advice = RUN_FAILURE_ADVICE.get(failure.get("kind"))
    if advice is None:
        return None
    diag = knowledge.Diagnosis(
        id=failure["kind"],
        pattern=failure["kind"],
        title=f"{failure['kind']} (job {record.get('job_id')})",
        what=failure["summary"],
        cause=advice[0],
        fix=advice[1],
    )
    failed = [c for c in result["checks"] if c["status"] == "fail"]
    page = knowledge.diagnosis_html(
        diag,
        stage_id=result.get("stage_id", stage_dir.name),
        failed=failed,
        log_tail=failure.get("log_tail", ""),
    )
    return atomic_write_text(stage_dir / "diagnosis.html", page)
