"""Per-stage steps: design and code (with review loops), run, checks, comparison,
analysis and verdict. Each writes its artifacts atomically into the stage folder."""

from __future__ import annotations

import ast
import json
from pathlib import Path

from agents import (
    code_generator,
    code_reviewer,
    design_reviewer,
    simulation_designer,
    supervisor,
)
from agents.code_generator import GeneratedCode
from agents.common import StageType
from agents.planner import PlannerOutput, PlanStage
from agents.runner import OUTPUT_MODELS, call_agent
from agents.simulation_designer import SimulationDesign
from reprolab import checks as checks_mod
from reprolab import compare, eligibility, gates, lint, sandbox, stage_run
from reprolab import thresholds as th
from reprolab.errors import GateError, StageBlockedError
from reprolab.events import log_event
from reprolab.fileio import (
    atomic_write_json,
    atomic_write_text,
    read_json,
    sha256_file,
    validate_as,
)
from reprolab.planning import load_adaptations, load_plan
from reprolab.settings import PaperRun

OK_STATUSES = ("completed_success", "completed_partial")
STATUS_BY_CLASS = {
    "SUCCESS": "completed_success",
    "PARTIAL": "completed_partial",
    "FAILURE": "completed_failed",
}


def plan_stage(plan: PlannerOutput, stage_id: str) -> PlanStage:
    for stage in plan.stages:
        if stage.stage_id == stage_id:
            return stage
    valid = ", ".join(s.stage_id for s in plan.stages)
    raise StageBlockedError(f"stage '{stage_id}' is not in the plan (valid: {valid})")


def stage_materials(stage: PlanStage, plan: PlannerOutput, validated: str | Path | None) -> list:
    """Stage 0 designs from planned materials; later stages only from validated ones."""
    if stage.stage_type == StageType.MATERIAL_VALIDATION:
        return [m.model_dump() for m in plan.planned_materials]
    return read_json(validated)["materials"]


def design_problems(design: SimulationDesign, stage: PlanStage, run: PaperRun, mats) -> list[str]:
    problems = []
    if design.stage_id != stage.stage_id:
        problems.append(f"design is for '{design.stage_id}', not '{stage.stage_id}'")
    known = {m["material_id"] for m in mats}
    for mid in design.materials:
        if mid not in known:
            problems.append(f"material '{mid}' is not available (valid: {sorted(known)})")
    outputs = {o.file: o for o in design.output_specifications}
    covered = set()
    for fo in design.figure_outputs:
        if fo.figure_id not in stage.target_figures:
            problems.append(
                f"figure_outputs: '{fo.figure_id}' is not a target of this stage "
                f"(targets: {stage.target_figures})"
            )
            continue
        curves = {c.curve_id for c in run.paper.figure(fo.figure_id).curves}
        if fo.curve_id not in curves:
            problems.append(
                f"figure_outputs: {fo.figure_id} has no curve '{fo.curve_id}' "
                f"(valid: {sorted(curves)})"
            )
        spec = outputs.get(fo.file)
        if spec is None:
            problems.append(f"figure_outputs: '{fo.file}' is not in output_specifications")
        else:
            for col in (fo.x_column, fo.y_column):
                if col not in spec.columns:
                    problems.append(
                        f"figure_outputs: column '{col}' is not in {fo.file} "
                        f"(columns: {spec.columns})"
                    )
        covered.add((fo.figure_id, fo.curve_id))
    for fig_id in stage.target_figures:
        for curve in run.paper.figure(fig_id).curves:
            if (fig_id, curve.curve_id) not in covered:
                problems.append(f"no output reproduces {fig_id} curve '{curve.curve_id}'")
    return problems


def reviewed_loop(
    *,
    run: PaperRun,
    stage_id: str,
    stage_dir: Path,
    adaptations: list,
    author: str,
    reviewer: str,
    limit: int,
    author_context,
    reviewer_context,
    code_problems,
    name: str,
    feedback: str | None = None,
    first_attempt: int = 1,
    gate_name: str | None = None,
) -> dict:
    """Author → code checks → reviewer, `limit` attempts per round, all kept on disk.

    At the limit an ask_user gate opens on the last attempt: approve takes it as it
    is, edit replaces it (validated like an agent's output), reject starts another
    round with the user's note as feedback. Rerunning after an answer replays the
    earlier attempts from the agent cache (no new calls) up to the gate.
    """
    attempt, round_no = first_attempt - 1, 1
    while True:
        for _ in range(limit):
            attempt += 1
            artifact = call_agent(
                author,
                stage_id=stage_id,
                attempt=attempt,
                context=author_context(feedback),
                session=run.agents,
                adaptations=adaptations,
            )
            atomic_write_json(stage_dir / f"{name}.r{attempt}.json", artifact)
            problems = code_problems(artifact["output"])
            review = call_agent(
                reviewer,
                stage_id=stage_id,
                attempt=attempt,
                context=reviewer_context(artifact["output"]),
                session=run.agents,
                adaptations=adaptations,
            )
            review["code_problems"] = problems
            atomic_write_json(stage_dir / f"{name}_review.r{attempt}.json", review)
            if review["output"]["verdict"] == "approve" and not problems:
                log_event(run.out_dir, name, f"{stage_id}: {name} approved at attempt {attempt}")
                return artifact
            feedback = "\n".join(
                [review["output"].get("feedback", "")]
                + [f"- (checked in code) {p}" for p in problems]
            ).strip()
            log_event(run.out_dir, name, f"{stage_id}: {name} attempt {attempt} revised")
        decided = revision_limit_gate(
            run, stage_id, stage_dir, name, author, artifact, attempt, round_no, feedback, gate_name
        )
        if decided is not None:
            problems = code_problems(decided["output"])
            if problems:
                raise GateError(
                    f"{decided['provenance']['decision_file']}: the {name} you accepted fails the "
                    "checks made on every attempt:\n"
                    + "\n".join(f"  - {p}" for p in problems)
                    + "\nFix field 'revised_data' and run again."
                )
            return decided
        feedback = f"The user rejected attempt {attempt}: {feedback}"
        round_no += 1


def revision_limit_gate(
    run: PaperRun,
    stage_id,
    stage_dir,
    name,
    author,
    artifact,
    attempt,
    round_no,
    feedback,
    gate_name=None,
) -> dict | None:
    """Ask the user about the last attempt; None means rejected (another round)."""
    gate_id = f"{stage_id}.{gate_name or name}_limit" + (f".{round_no}" if round_no > 1 else "")
    sha = gates.content_sha256(artifact["output"])
    checkpoint = gates.Checkpoint(
        gate_id=gate_id,
        kind="revision_limit",
        paper_id=run.paper_id,
        stage_id=stage_id,
        sha256=sha,
        question=(
            f"The {name} of {stage_id} still needs revision after {attempt} attempts. "
            f"approve: use attempt {attempt} as it is; edit: give your own version in "
            f"'revised_data'; reject: {attempt} more attempts with your note as feedback."
        ),
        options=["approve", "edit", "reject"],
        payload={
            "last_attempt": str(stage_dir / f"{name}.r{attempt}.json"),
            "last_review": str(stage_dir / f"{name}_review.r{attempt}.json"),
            "feedback": feedback,
        },
        answer_file=str(gates.gate_decision_path(run.out_dir, gate_id)),
        answer_example={"action": "approve", "sha256": sha, "note": ""},
    )
    decision = gates.resolve_gate(run.out_dir, checkpoint, run.gate_wait_s)
    answer = checkpoint.answer_file
    if decision.action == "reject":
        gates.log_interaction(
            run.out_dir,
            checkpoint.question,
            decision,
            f"{name} rejected; another round",
            kind="revision_limit",
        )
        if not decision.note.strip():
            raise GateError(f"{answer}: a reject needs a 'note' (it is the agent's feedback)")
        return None
    if decision.action == "edit":
        if decision.revised_data is None:
            raise GateError(f"{answer}: action 'edit' needs field 'revised_data'")
        output = validate_as(
            OUTPUT_MODELS[author], decision.revised_data, f"{answer} (field 'revised_data')"
        )
        result = {
            "output": output.model_dump(mode="json"),
            "provenance": {
                "agent": author,
                "source": "user_edit",
                "stage_id": stage_id,
                "attempt": attempt,
                "edited_from_sha256": sha,
                "decision_file": answer,
                "note": decision.note,
            },
        }
        impact = f"{name} replaced by the user's edit"
    else:
        result = dict(artifact)
        result["user_decision"] = {"decision_file": answer, "note": decision.note}
        result.setdefault("provenance", {})["decision_file"] = answer
        impact = f"{name} attempt {attempt} accepted by the user"
    gates.log_interaction(run.out_dir, checkpoint.question, decision, impact, kind="revision_limit")
    log_event(run.out_dir, "gate", f"{stage_id}: {impact}")
    return result


def invalidation_feedback(invalidation: str | Path | None) -> str | None:
    """Why this stage is being redone (backtrack, user, material gate), for the designer."""
    if not invalidation:
        return None
    records = read_json(invalidation)["records"]
    return "This stage is being redone. " + " ".join(
        f"Reason ({r['source']}): {r['reason']}" for r in records[-1:]
    )


def design_stage(
    run,
    plan_path,
    adaptations_path,
    stage_id,
    dep_verdicts,
    validated,
    out_design,
    invalidation=None,
    hierarchy_verdicts=(),
) -> None:
    plan = load_plan(plan_path)
    stage = plan_stage(plan, stage_id)
    reason = eligibility.blocked_reason(
        stage,
        [read_json(p) for p in dep_verdicts],
        [read_json(p) for p in hierarchy_verdicts],
        eligibility.spent_seconds(run.out_dir),
        run.total_runtime_budget_s,
    )
    if reason:
        block(run, out_design, stage_id, reason)
        return
    mats = stage_materials(stage, plan, validated)
    figures = [run.paper.figure(f).model_dump() for f in stage.target_figures]
    assumptions = [a.model_dump() for a in plan.assumptions]
    artifact = reviewed_loop(
        run=run,
        stage_id=stage_id,
        stage_dir=Path(out_design).parent,
        adaptations=load_adaptations(adaptations_path),
        author=simulation_designer.AGENT,
        reviewer=design_reviewer.AGENT,
        limit=run.limits.max_design_revisions,
        author_context=lambda fb: simulation_designer.context(
            stage.model_dump(),
            assumptions,
            mats,
            figures,
            fb,
            extracted_parameters=[p.model_dump() for p in plan.extracted_parameters],
            paper_domain=run.paper.meta.domain,
        ),
        reviewer_context=lambda out: design_reviewer.context(stage.model_dump(), out, mats),
        code_problems=lambda out: (
            design_problems(SimulationDesign.model_validate(out), stage, run, mats)
            + lint.problems(static_findings(SimulationDesign.model_validate(out), mats, None, run))
        ),
        name="design",
        feedback=invalidation_feedback(invalidation),
    )
    artifact["materials"] = mats
    atomic_write_json(out_design, artifact)


def code_problems(code: GeneratedCode, design: SimulationDesign) -> list[str]:
    problems = []
    try:
        ast.parse(code.code)
    except SyntaxError as exc:
        return [f"code does not parse: line {exc.lineno}: {exc.msg}"]
    for spec in design.output_specifications:
        if spec.file not in code.expected_outputs:
            problems.append(f"expected_outputs lacks '{spec.file}' from the design")
    if design.sweep is not None and "REPROLAB_SWEEP_VALUE" not in code.code:
        problems.append(
            f"the design sweeps '{design.sweep.parameter}': the script must run one point, "
            "reading its value from os.environ['REPROLAB_SWEEP_VALUE'] (JSON)"
        )
    # Network, subprocess, eval/exec, blocking calls, paths outside the stage dir.
    problems += sandbox.static_problems(code.code)
    return problems


def block(run, out_path, stage_id: str, reason: str) -> None:
    """Write this step's blocked artifact (the stage does not run; the report says why)."""
    atomic_write_json(out_path, eligibility.blocked_artifact(stage_id, reason))
    log_event(run.out_dir, "blocked", f"{stage_id}: {reason}", file=str(out_path))


def passed_on_block(run, out_path, *inputs) -> bool:
    """True (and the blocked artifact written) when an input of this step is blocked."""
    blocked = eligibility.blocked_in(*inputs)
    if blocked:
        atomic_write_json(out_path, blocked)
    return blocked is not None


def code_loop(run, design_art: dict, stage_dir: Path, adaptations: list, **loop_args) -> dict:
    """CodeGenerator ⇄ CodeReviewer with the code checks, for a first version or a fix."""
    design = SimulationDesign.model_validate(design_art["output"])
    mats = design_art["materials"]
    return reviewed_loop(
        run=run,
        stage_id=design.stage_id,
        stage_dir=stage_dir,
        adaptations=adaptations,
        author=code_generator.AGENT,
        reviewer=code_reviewer.AGENT,
        limit=run.limits.max_code_revisions,
        author_context=lambda fb: code_generator.context(design_art["output"], mats, fb),
        reviewer_context=lambda out: code_reviewer.context(design_art["output"], out["code"], mats),
        code_problems=lambda out: (
            code_problems(GeneratedCode.model_validate(out), design)
            + lint.problems(static_findings(design, mats, out["code"], run))
        ),
        name="code",
        **loop_args,
    )


def generate_code(run, design_path, adaptations_path, out_code_json, out_script) -> None:
    if passed_on_block(run, out_code_json, design_path):
        atomic_write_text(out_script, "# blocked: this stage does not run (see code.json)\n")
        return
    design_art = read_json(design_path)
    artifact = code_loop(
        run, design_art, Path(out_code_json).parent, load_adaptations(adaptations_path)
    )
    atomic_write_text(out_script, artifact["output"]["code"])
    atomic_write_json(out_code_json, artifact)


def run_simulation(run, code_json, script, design_path, plan_path, out_result) -> None:
    """Sandbox check, then one job (or a job array for a sweep); see reprolab.stage_run.

    A failed run (crash, timeout, refused script: failure.action regenerate_code) or a
    run whose deterministic checks fail has its code regenerated and reviewed with the
    error as feedback, then runs again: below `limits.max_execution_failures` /
    `max_physics_failures` per stage. At the execution limit the user is asked; at the
    physics limit the run goes on to the supervisor flagged physics_stuck. Failed runs
    are kept under failed_runs/, regenerated code as code.rN.json and
    simulation.fixN.py; result.json names the code that produced it."""
    if passed_on_block(run, out_result, design_path, code_json):
        return
    design_art = read_json(design_path)
    design = SimulationDesign.model_validate(design_art["output"])
    stage = plan_stage(load_plan(plan_path), design.stage_id)
    stage_dir = Path(out_result).parent
    estimate_s = design.performance_estimate.runtime_seconds
    if estimate_s > stage.runtime_budget_minutes * 60:
        block(
            run,
            out_result,
            design.stage_id,
            f"the design's runtime estimate ({estimate_s:.0f} s) does not fit the stage's "
            f"budget ({stage.runtime_budget_minutes * 60:.0f} s)",
        )
        return
    code_path, script_path = Path(code_json), Path(script)
    counts = {"execution": 0, "physics": 0}
    limits = {
        "execution": run.limits.max_execution_failures,
        "physics": run.limits.max_physics_failures,
    }
    repairs, user_rounds = [], 0
    while True:
        kept = stage_dir / "failed_runs" / f"f{len(repairs) + 1}"
        record = reuse_failed_run(kept, script_path, stage_dir / "run")
        if record is None:
            record = stage_run.run_stage(
                design,
                stage.runtime_budget_minutes,
                run.config.get("simulation", {}),
                script_path,
                stage_dir,
            )
        record.update(stage_id=design.stage_id, code_artifact=str(code_path))
        record.update(script=str(script_path), script_sha256=sha256_file(script_path))
        kind, feedback = repair_needed(run, record, design_art, code_path, stage_dir)
        if kind is None:
            break
        counts[kind] += 1
        if "reused_from" not in record:  # counted when it happened, not again on resume
            count_failure(run, design.stage_id, kind, record, feedback)
            archive_run(stage_dir / "run", kept, record)
        if counts[kind] >= limits[kind]:
            if kind == "physics":
                record["physics_stuck"] = True
                log_event(
                    run.out_dir,
                    "simulation",
                    f"{design.stage_id}: physics checks failed {counts[kind]} times; "
                    "the supervisor decides",
                )
                break
            note = execution_limit_gate(run, design.stage_id, record, counts, user_rounds)
            if note is None:
                break  # the user accepts the failed run: checks and supervisor judge it
            user_rounds += 1
            counts["execution"] = 0  # the seed: a user's guidance is a fresh start
            feedback = f"{feedback}\nThe user says: {note}"
        previous = read_json(code_path).get("provenance", {}).get("attempt", 0)
        code_path, script_path = regenerate_code(
            run, design_art, stage_dir, feedback, len(repairs) + 1, previous + 1
        )
        repairs.append({"failed_run": str(kept), "kind": kind, "feedback": feedback})
    record.update(
        repairs=repairs,
        execution_failures=counts["execution"],
        physics_failures=counts["physics"],
    )
    atomic_write_json(out_result, record)
    failure = record.get("failure")
    log_event(
        run.out_dir,
        "simulation",
        f"{design.stage_id}: "
        + (failure["summary"] if failure else f"ran in {record['runtime_seconds']} s"),
        job_id=record["job_id"],
    )


def repair_needed(run, record, design_art, code_path, stage_dir) -> tuple[str | None, str]:
    """("execution" | "physics", feedback) when the code should be regenerated."""
    failure = record.get("failure")
    if failure:
        if failure.get("action") != "regenerate_code":
            return None, ""  # resources, the cluster or the user: code cannot fix it
        return "execution", (
            f"The simulation failed ({failure['kind']}): {failure['summary']}\n"
            f"Last lines of its log:\n{failure.get('log_tail', '')[-1500:]}"
        )
    code = GeneratedCode.model_validate(read_json(code_path)["output"])
    checks = checks_for(run, record, design_art, code, stage_dir / "run")
    failed = [c for c in checks["checks"] if c["status"] == "fail"]
    if not failed:
        return None, ""
    return "physics", "The run finished but failed these physics checks:\n" + "\n".join(
        f"- {c['name']}: {c.get('detail') or ''} (value {c.get('value')}, "
        f"threshold {c.get('threshold')})"
        for c in failed
    )


def count_failure(run, stage_id, kind, record, feedback) -> None:
    """The paper's failure log; its execution lines are the never-reset total."""
    entry = {
        "stage_id": stage_id,
        "kind": kind,
        "failure": (record.get("failure") or {}).get("kind"),
        "job_id": record.get("job_id"),
        "feedback": feedback[:500],
    }
    with open(run.out_dir / "run_failures.jsonl", "a", encoding="utf-8") as fh:
        fh.write(json.dumps(entry) + "\n")
    log_event(run.out_dir, "simulation", f"{stage_id}: {kind} failure; {feedback[:200]}")


def reuse_failed_run(kept: Path, script_path: Path, run_dir: Path) -> dict | None:
    """A run kept by an earlier pass of this step (before it stopped at a gate) with the
    same script is not run again: its record and files are restored."""
    import shutil

    recorded = kept / "result.json"
    if not recorded.is_file():
        return None
    record = read_json(recorded)
    if record.get("script_sha256") != sha256_file(script_path):
        return None
    if run_dir.exists():
        shutil.rmtree(run_dir)
    shutil.copytree(kept, run_dir, ignore=shutil.ignore_patterns("result.json"))
    return {**record, "reused_from": str(kept)}


def archive_run(run_dir: Path, kept: Path, record: dict) -> None:
    """Keep a failed run (its files and record) before the next attempt clears run/."""
    import shutil

    if kept.exists():
        shutil.rmtree(kept)
    kept.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(run_dir, kept)
    atomic_write_json(kept / "result.json", record)


def regenerate_code(run, design_art, stage_dir: Path, feedback: str, n: int, first: int):
    """Code generator and reviewer again; attempts numbered on from the code that failed
    (the same numbers when this step resumes after a gate, so replays and the cache hit)."""
    artifact = code_loop(
        run,
        design_art,
        stage_dir,
        load_adaptations(run.out_dir / "prompt_adaptations.json"),
        feedback=feedback,
        first_attempt=first,
        gate_name=f"code_fix{n}",
    )
    code_path, script_path = stage_dir / f"code.fix{n}.json", stage_dir / f"simulation.fix{n}.py"
    atomic_write_text(script_path, artifact["output"]["code"])
    atomic_write_json(code_path, artifact)
    return code_path, script_path


def execution_limit_gate(run, stage_id, record, counts, user_rounds) -> str | None:
    """Ask the user after `max_execution_failures`: approve accepts the failed run;
    reject with a note regenerates the code with the note (counter reset)."""
    failure = record["failure"]
    gate_id = f"{stage_id}.execution_limit" + (f".{user_rounds + 1}" if user_rounds else "")
    sha = gates.content_sha256({"failure": failure, "job_id": record.get("job_id")})
    checkpoint = gates.Checkpoint(
        gate_id=gate_id,
        kind="execution_limit",
        paper_id=run.paper_id,
        stage_id=stage_id,
        sha256=sha,
        question=(
            f"The simulation of {stage_id} failed {counts['execution']} times; last: "
            f"{failure['summary']}. It may need less memory (lower resolution, smaller "
            "cell), more time, or a different approach. approve: go on with the failed "
            "run (the stage fails); reject: regenerate the code with your 'note' as "
            "guidance."
        ),
        options=["approve", "reject"],
        actions=["approve", "reject"],
        payload={"failure": failure, "job_id": record.get("job_id")},
        answer_file=str(gates.gate_decision_path(run.out_dir, gate_id)),
        answer_example={"action": "reject", "sha256": sha, "note": "halve the resolution"},
    )
    decision = gates.resolve_gate(run.out_dir, checkpoint, run.gate_wait_s)
    if decision.action == "reject" and not decision.note.strip():
        raise GateError(f"{checkpoint.answer_file}: a reject needs a 'note' (the guidance)")
    gates.log_interaction(
        run.out_dir,
        checkpoint.question,
        decision,
        "code regenerated with the user's note"
        if decision.action == "reject"
        else "failed run accepted",
        kind="execution_limit",
    )
    return decision.note if decision.action == "reject" else None


def run_history(result_path: Path) -> dict:
    """What the supervisor hears about the run's repairs (physics_stuck: seed's flag)."""
    record = read_json(result_path) if result_path.is_file() else {}
    return {
        "execution_failures": record.get("execution_failures", 0),
        "physics_failures": record.get("physics_failures", 0),
        "physics_stuck": record.get("physics_stuck", False),
    }


def code_that_ran(record: dict, code_json: str | Path) -> Path:
    """The code artifact of the final run (a regenerated one after a repair)."""
    return Path(record.get("code_artifact") or code_json)


def reported_band(design: SimulationDesign, run: PaperRun) -> tuple[float, float] | None:
    """(f_min, f_max) in c/a that the stage reports: the x range of the paper's curves it
    reproduces, when the x column is a wavelength or frequency (else None)."""
    freqs = []
    for fo in design.figure_outputs:
        try:
            xp, _ = run.paper.curve_data(fo.figure_id, fo.curve_id)
        except Exception:  # noqa: BLE001 - a bad figure reference is design_problems' finding
            continue
        freqs += checks_mod.reported_frequencies(fo.x_column, list(xp), design.unit_length_um) or []
    return (min(freqs), max(freqs)) if freqs else None


def resolution_env_required(run: PaperRun) -> bool:
    """Convergence reruns and quick-check mode scale the resolution through the env."""
    cfg = run.config
    return bool(cfg.get("checks", {}).get("convergence") or cfg.get("debug", {}).get("enabled"))


def static_findings(design: SimulationDesign, mats: list, code: str | None, run: PaperRun):
    """The lint's findings on a design (and its code), numbers and thresholds included."""
    d = design.model_dump()
    findings = lint.design_findings(d, mats, reported_band(design, run))
    if code is not None:
        findings += lint.code_findings(code, d, need_resolution_env=resolution_env_required(run))
    return findings


def checks_for(run, record: dict, design_art: dict, code: GeneratedCode, workdir: Path) -> dict:
    """The run-time checks plus the static lint of one run (what checks.json holds)."""
    design = SimulationDesign.model_validate(design_art["output"])
    by_id = {m["material_id"]: m for m in design_art["materials"]}
    lossless = all(by_id.get(m, {}).get("lossless", True) for m in design.materials)
    return checks_mod.run_checks(
        record,
        workdir,
        code.expected_outputs,
        lossless,
        design=design_art["output"],
        static=static_findings(design, design_art["materials"], code.code, run),
    )


def run_checks(run, result_path, code_json, design_path, out_checks) -> None:
    """Run-time checks plus the static lint, one checks.json; a diagnosis page on failure."""
    blocked = eligibility.blocked_in(result_path)
    if blocked:
        atomic_write_json(out_checks, {**blocked, "verdict": "blocked", "checks": []})
        return
    record = read_json(result_path)
    design_art = read_json(design_path)
    code_art = read_json(code_that_ran(record, code_json))
    code = GeneratedCode.model_validate(code_art["output"])
    workdir = Path(result_path).parent / "run"
    result = checks_for(run, record, design_art, code, workdir)
    result["stage_id"] = design_art["output"]["stage_id"]
    result["code_artifact"] = str(code_that_ran(record, code_json))
    if result["verdict"] == "fail":
        page = checks_mod.write_diagnosis(result, record, workdir, Path(out_checks).parent)
        if page:
            result["diagnosis"] = str(page)
    atomic_write_json(out_checks, result)


def compare_stage(run, design_path, checks_path, out_comparison) -> None:
    from reprolab import plots  # matplotlib only where plots are drawn

    blocked = eligibility.blocked_in(design_path, checks_path)
    if blocked:
        atomic_write_json(out_comparison, {**blocked, "figures": []})
        return
    design = SimulationDesign.model_validate(read_json(design_path)["output"])
    stage_dir = Path(out_comparison).parent
    checks = read_json(checks_path)
    figures = {}
    for fo in design.figure_outputs:
        fig = figures.setdefault(fo.figure_id, {"figure_id": fo.figure_id, "curves": []})
        xp, yp = run.paper.curve_data(fo.figure_id, fo.curve_id)
        path = stage_dir / "run" / fo.file
        entry = {"curve_id": fo.curve_id, "file": fo.file}
        try:
            cols = checks_mod.read_numeric_csv(path)
            xs, ys = cols[fo.x_column], cols[fo.y_column]
        except (OSError, KeyError, IndexError) as exc:
            entry.update(
                error=f"cannot read {fo.file} columns: {exc}", classes={"missing": "FAILURE"}
            )
            fig["curves"].append(entry)
            continue
        entry.update(compare.compare_curve(xp, yp, xs, ys))
        entry["classes"] = compare.classify_curve(entry)
        entry["sim"] = {"x": xs, "y": ys}
        fig["curves"].append(entry)
    for fig in figures.values():
        classes = [c for curve in fig["curves"] for c in curve["classes"].values()]
        fig["classification"] = th.worst(classes)
        fig["overlay"] = plots.overlay(
            run.paper, fig, stage_dir / f"overlay_{fig['figure_id']}.png"
        )
        for curve in fig["curves"]:
            curve.pop("sim", None)
    atomic_write_json(
        out_comparison,
        {
            "stage_id": design.stage_id,
            "checks_verdict": checks["verdict"],
            "figures": list(figures.values()),
            "thresholds": [b.__dict__ for b in th.DISCREPANCY_THRESHOLDS],
        },
    )


def stage_status(
    stage: PlanStage, checks: dict, comparison: dict, validation: dict | None = None
) -> tuple[str, str]:
    """Decided in code: a hard check failure, a run the validators failed, or a
    FAILURE figure fails the stage."""
    if checks["verdict"] == "fail":
        failed = [c["name"] for c in checks["checks"] if c["status"] == "fail"]
        return "completed_failed", f"checks failed: {', '.join(failed)}"
    if validation is not None and validation["verdict"] == "fail":
        said = [
            f"{k}: {validation[k]['output']['verdict']}"
            for k in ("execution", "physics")
            if validation[k]["output"]["verdict"] == "fail"
        ]
        return "completed_failed", f"run validation failed ({', '.join(said)})"
    classes = {f["figure_id"]: f["classification"] for f in comparison["figures"]}
    missing = [f for f in stage.target_figures if f not in classes]
    if missing:
        return "completed_failed", f"target figures not reproduced: {missing}"
    overall = th.worst(list(classes.values())) if classes else "SUCCESS"
    return STATUS_BY_CLASS[overall], ", ".join(f"{k}: {v}" for k, v in classes.items())


def revision_counts(stage_dir: Path) -> dict:
    """Attempts used so far, counted from the attempt files kept on disk."""
    return {
        name: len(list(stage_dir.glob(f"{name}.r*.json")))
        for name in ("design", "code", "analysis")
    }


def read_jsonl(path: Path) -> list[dict]:
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def stage_verdict(
    run,
    plan_path,
    checks_path,
    comparison_path,
    analysis_path,
    validation_path,
    adaptations_path,
    out_verdict,
):
    plan = load_plan(plan_path)
    blocked = eligibility.blocked_in(checks_path, comparison_path, analysis_path)
    if blocked:
        reason = blocked["blocked"]["reason"]
        atomic_write_json(
            out_verdict,
            {
                "stage_id": blocked["stage_id"],
                "status": "blocked",
                "reason": reason,
                "supervisor_verdict": None,
            },
        )
        log_event(run.out_dir, "verdict", f"{blocked['stage_id']}: blocked ({reason})")
        return
    comparison = read_json(comparison_path)
    checks = read_json(checks_path)
    validation = read_json(validation_path)
    analysis = read_json(analysis_path)
    stage = plan_stage(plan, comparison["stage_id"])
    status, reason = stage_status(stage, checks, comparison, validation)
    # Other stages only: a rerun must not see this stage's previous verdict.
    progress = [
        {"stage_id": v["stage_id"], "status": v["status"]}
        for v in map(read_json, sorted((run.out_dir / "stages").glob("*/verdict.json")))
        if v["stage_id"] != stage.stage_id
    ]
    artifact = call_agent(
        supervisor.AGENT,
        stage_id=stage.stage_id,
        attempt=1,
        context=supervisor.context(
            {"summary": plan.summary, "stages": [s.stage_id for s in plan.stages]},
            {
                "stage_id": stage.stage_id,
                "status": status,
                "reason": reason,
                "run_validation": validation["verdict"],
                "analysis_check": analysis.get("comparison_check"),
                **run_history(Path(checks_path).parent / "result.json"),
            },
            analysis["output"],
            progress,
            figure_comparisons=[
                {"figure_id": f["figure_id"], "classification": f["classification"]}
                for f in comparison["figures"]
            ],
            revision_counts=revision_counts(Path(out_verdict).parent),
            backtrack_suggestion=validation.get("backtrack_suggestion"),
            user_interactions=read_jsonl(run.out_dir / "user_interactions.jsonl"),
        ),
        session=run.agents,
        adaptations=load_adaptations(adaptations_path),
    )
    verdict = artifact["output"]["verdict"]
    user_note = None
    previous = progress_by_time(run.out_dir, stage.stage_id)
    if status == "completed_failed" and previous and previous[-1]["status"] == status:
        log_event(
            run.out_dir,
            "supervisor",
            f"{stage.stage_id}: second consecutive stage failure (after "
            f"{previous[-1]['stage_id']}); replanning (supervisor said {verdict})",
        )
        verdict = "replan_needed"
    if verdict == "replan_needed":
        verdict = replan(run, stage, artifact["output"].get("feedback") or reason)
    if verdict == "backtrack_to_stage":
        verdict = backtrack(
            run, plan, stage, artifact["output"], validation.get("backtrack_suggestion")
        )
    if verdict == "ask_user" and stage.stage_type != StageType.MATERIAL_VALIDATION:
        decision = supervisor_gate(run, stage, status, reason, artifact["output"])
        verdict, user_note = "ok_continue", decision.note
        if decision.action == "reject":
            status, reason = "completed_failed", f"stopped by the user: {decision.note}"
    if stage.stage_type == StageType.MATERIAL_VALIDATION and verdict != "ask_user":
        # The material checkpoint is mandatory whatever the supervisor says.
        log_event(
            run.out_dir,
            "supervisor",
            f"{stage.stage_id}: supervisor said {verdict}; material checkpoint enforced",
        )
        verdict = "ask_user"
    atomic_write_json(
        out_verdict,
        {
            "stage_id": stage.stage_id,
            "status": status,
            "reason": reason,
            "supervisor_verdict": verdict,
            "supervisor": artifact,
            "user_note": user_note,
        },
    )
    log_event(run.out_dir, "verdict", f"{stage.stage_id}: {status} ({reason})")


def ancestors(plan: PlannerOutput, stage_id: str) -> list[str]:
    """The stage and every stage it depends on, directly or not, in plan order."""
    by_id = {s.stage_id: s for s in plan.stages}
    seen, todo = set(), [stage_id]
    while todo:
        sid = todo.pop()
        if sid not in seen:
            seen.add(sid)
            todo += by_id[sid].dependencies
    return [s.stage_id for s in plan.stages if s.stage_id in seen]


def backtrack_decision(suggestion: dict | None, done: int, limit: int) -> str:
    """The seed's supervisor decision matrix: accept, ask_user or reject (handle the
    problem in this stage). A backtrack without PhysicsSanity's suggestion counts as
    significant with high confidence."""
    severity = (suggestion or {}).get("severity", "significant")
    confidence = (suggestion or {}).get("confidence", "high")
    if done >= limit:
        return "ask_user"
    if severity == "minor":
        return "reject"
    return "accept" if confidence == "high" else "ask_user"


def backtrack(
    run: PaperRun,
    plan: PlannerOutput,
    stage: PlanStage,
    output: dict,
    suggestion: dict | None = None,
) -> str:
    """Apply a supervisor's backtrack_to_stage, decided in code: the target must be this
    stage or one it depends on, and the paper may backtrack `limits.max_backtracks`
    times. A valid backtrack invalidates the target (so the next run of the same
    command reruns it and its dependents, nothing else) and stops this branch; an
    invalid one or one over the limit becomes an ask_user verdict."""
    target = output.get("backtrack_target")
    valid = ancestors(plan, stage.stage_id)
    done = [b for b in read_jsonl(run.out_dir / "backtracks.jsonl") if b["to"] != "plan"]
    decision = backtrack_decision(suggestion, len(done), run.limits.max_backtracks)
    if decision != "accept" and target in valid:
        log_event(
            run.out_dir,
            "supervisor",
            f"{stage.stage_id}: backtrack to {target}: {decision} (suggestion "
            f"{(suggestion or {}).get('severity')}/{(suggestion or {}).get('confidence')}, "
            f"{len(done)} of {run.limits.max_backtracks} done)",
        )
        return "ok_continue" if decision == "reject" else "ask_user"
    if target not in valid:
        log_event(
            run.out_dir,
            "supervisor",
            f"{stage.stage_id}: backtrack target {target!r} refused (valid: {valid}); asking",
        )
        return "ask_user"
    reason = output.get("feedback") or "(no feedback)"
    entry = {"from": stage.stage_id, "to": target, "reason": reason, "number": len(done) + 1}
    gates.invalidate_stage(
        run.out_dir, target, reason, source=f"supervisor of {stage.stage_id} (backtrack)"
    )
    with open(run.out_dir / "backtracks.jsonl", "a", encoding="utf-8") as fh:
        fh.write(json.dumps(entry) + "\n")
    redo = [s.stage_id for s in plan.stages if target in ancestors(plan, s.stage_id)]
    raise StageBlockedError(
        f"BACKTRACK {entry['number']}/{run.limits.max_backtracks}: the supervisor of "
        f"{stage.stage_id} sends paper '{run.paper_id}' back to {target}: {reason}\n"
        f"  {target} is invalidated; run the same command again to redo {', '.join(redo)}."
    )


def supervisor_gate(run: PaperRun, stage: PlanStage, status: str, reason: str, output: dict):
    """The supervisor asks the user: approve goes on, reject stops this stage (failed)."""
    done = len(read_jsonl(run.out_dir / "backtracks.jsonl"))
    gate_id = f"{stage.stage_id}.supervisor" + (f".round{done + 1}" if done else "")
    sha = gates.content_sha256({"status": status, "reason": reason, "supervisor": output})
    checkpoint = gates.Checkpoint(
        gate_id=gate_id,
        kind="supervisor_ask_user",
        paper_id=run.paper_id,
        stage_id=stage.stage_id,
        sha256=sha,
        question=(
            f"The supervisor of {stage.stage_id} ({status}: {reason}) asks you: "
            f"{output.get('feedback') or 'how to go on?'} approve: go on with the next "
            "stages; reject: stop here (this stage counts as failed; give the reason in "
            "'note')."
        ),
        options=["approve", "reject"],
        actions=["approve", "reject"],
        payload={"status": status, "reason": reason, "supervisor": output},
        answer_file=str(gates.gate_decision_path(run.out_dir, gate_id)),
        answer_example={"action": "approve", "sha256": sha, "note": ""},
    )
    decision = gates.resolve_gate(run.out_dir, checkpoint, run.gate_wait_s)
    gates.log_interaction(
        run.out_dir,
        checkpoint.question,
        decision,
        "stage stopped by the user" if decision.action == "reject" else "went on",
        kind="supervisor_ask_user",
    )
    return decision


def progress_by_time(out_dir: Path, stage_id: str) -> list[dict]:
    """Other stages' verdicts in the order they were written."""
    paths = [p for p in (out_dir / "stages").glob("*/verdict.json") if p.parent.name != stage_id]
    return [read_json(p) for p in sorted(paths, key=lambda p: p.stat().st_mtime_ns)]


def replan(run: PaperRun, stage: PlanStage, reason: str) -> str:
    """Request a new plan (at most `limits.max_replans` per paper; then ask the user):
    replan_request.json is an input of the plan checkpoint, so the next run of the same
    command replans with the reason as feedback and redoes what the new plan needs."""
    path = run.out_dir / "replan_request.json"
    records = read_json(path)["records"] if path.is_file() else []
    if len(records) >= run.limits.max_replans:
        log_event(
            run.out_dir,
            "supervisor",
            f"{stage.stage_id}: replan refused: limits.max_replans={run.limits.max_replans} "
            "reached; asking",
        )
        return "ask_user"
    records.append({"reason": reason, "source": f"supervisor of {stage.stage_id}"})
    atomic_write_json(path, {"records": records})
    with open(run.out_dir / "backtracks.jsonl", "a", encoding="utf-8") as fh:
        fh.write(json.dumps({"from": stage.stage_id, "to": "plan", "reason": reason}) + "\n")
    raise StageBlockedError(
        f"REPLAN {len(records)}/{run.limits.max_replans}: the supervisor of {stage.stage_id} "
        f"asks for a new plan of paper '{run.paper_id}': {reason}\n"
        "  Run the same command again: the plan is redone, then every stage it changes."
    )
