import atexit
import contextlib
import os
import re
import shlex
import sys
from pathlib import Path

from snakemake.exceptions import IncompleteCheckpointException

from reprolab.artifacts import load_design, load_plan, plan_rerun_note
from reprolab.steps.eligibility import hierarchy_stages, priority_of
from reprolab.errors import ReproLabError
from reprolab.fileio import lock_outputs_dir
from reprolab.smk import cached_json, cached_paper
from reprolab.settings import (
    apply_executor,
    figure_x_ranges,
    paper_entries,
    simulation_params,
    stated_results,
)

# Pydantic looks up plugins in every installed package's metadata at its first model
# (~15 ms a step job); this workflow uses none. Jobs inherit it.
os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
DEBUG = config.get("debug", {}).get("enabled", False)
if DEBUG:
    # A quick check never stands in for a full run's files: its own tree, lower resolution.
    config["outputs_dir"] = f"{config.get('outputs_dir', 'outputs')}/debug"
    os.environ.update(
        REPROLAB_RESOLUTION_SCALE=str(config["debug"].get("resolution_factor", 0.5))
    )
# checks.convergence: true | auto (the default) | false. Not false: every simulation
# stage has a convergence step, whose code reruns it when the policy asks
# (reprolab.steps.convergence), and its verdict judges the result.
CONVERGENCE = config.get("checks", {}).get("convergence", "auto") is not False
PAPERS = paper_entries(config, load=cached_paper)
OUT = config.get("outputs_dir", "outputs")
PAPER_OUT = f"{OUT}/{{paper}}"
STAGE_OUT = f"{OUT}/{{paper}}/stages/{{stage}}"
AUTO_APPROVE = config.get("gates", {}).get("auto_approve", [])
SIMULATION_SETTINGS = f"{OUT}/.settings/simulation.json"


wildcard_constraints:
    paper=r"[A-Za-z0-9_]+",
    stage=r"stage\d+_[a-z0-9_]+",
    figure=r"[A-Za-z0-9_]+",


def paper_of(wildcards):
    """Built once per paper per invocation (reprolab.smk.cached_paper)."""
    return cached_paper(PAPERS[wildcards.paper]["paper_dir"])


def get_paper_files(wildcards):
    """The paper's metadata and every file it refers to (the report shows them all)."""
    paper = paper_of(wildcards)
    return [str(paper.metadata_path)] + [
        str(paper.folder / rel) for rel in paper.referenced_files()
    ]


def get_paper_text(wildcards):
    """What prompt adaptation and planning read: the metadata and the paper's text
    (not the figures' images or digitized data, so editing those does not replan)."""
    paper = paper_of(wildcards)
    return [str(paper.metadata_path), str(paper.folder / paper.meta.paper_text)]


def figure_stamps(wildcards, kind):
    """[file, mtime in ns, size] of the paper's metadata and the figure's digitized
    CSVs ("data"), or of its image ("image"): a touched file counts as changed, as it
    does for Snakemake's own edges."""
    paper = paper_of(wildcards)
    fig = paper.figure(wildcards.figure)
    if kind == "image":
        names = [fig.image]
    else:
        names = [paper.metadata_path.name] + [
            c.digitized for c in fig.curves if c.digitized
        ]
    stamps = []
    for rel in names:
        st = os.stat(paper.folder / rel)
        stamps.append([rel, st.st_mtime_ns, st.st_size])
    return stamps


def get_figure_stamps(wildcards, kind="data"):
    """This stage's figures' stamp files (rules figure_data, figure_image)."""
    return [
        f"{OUT}/{wildcards.paper}/.inputs/{f}.{kind}.json"
        for f in stage_figures(wildcards)
    ]


def get_image_stamps(wildcards):
    return get_figure_stamps(wildcards, "image")


def stage_figures(wildcards):
    """The figures this stage reproduces: the plan's target figures, and those its
    design compares once the design exists."""
    figures = set(find_stage(wildcards).target_figures)
    design = Path(stage_file(wildcards, wildcards.stage, "design.json"))
    if design.is_file():
        with contextlib.suppress(OSError, ReproLabError):  # blocked, or being rewritten
            output = cached(load_design, design).output
            figures |= {fo.figure_id for fo in output.figure_outputs}
    known = {f.figure_id for f in paper_of(wildcards).meta.figures}
    return sorted(figures & known)


def get_figure_data(wildcards):
    """The metadata, what it states of this stage's figures and tables, and the
    digitized CSVs of its figures only."""
    paper = paper_of(wildcards)
    files = [str(paper.metadata_path)]
    targets = set(find_stage(wildcards).target_figures) | set(stage_figures(wildcards))
    files += [
        f"{OUT}/{wildcards.paper}/.inputs/{r}.stated.json"
        for r in sorted(targets & set(paper.result_ids()))
    ]
    for fig_id in stage_figures(wildcards):
        curves = paper.figure(fig_id).curves  # a curve without data is compared by eye
        files += [str(paper.folder / c.digitized) for c in curves if c.digitized]
    return files


def get_figure_images(wildcards):
    paper = paper_of(wildcards)
    return [str(paper.folder / paper.figure(f).image) for f in stage_figures(wildcards)]


def get_figure_x(wildcards):
    return [
        f"{OUT}/{wildcards.paper}/.inputs/{f}.x_range.json"
        for f in stage_figures(wildcards)
    ]


def simulate_threads(wildcards, input):
    """The cores the stage's job starts here (MPI ranks x sweep points at once; 1 on
    Slurm), so that --cores counts them (reprolab.jobs.stage_run.declared_cores)."""
    from reprolab.jobs.stage_run import declared_cores

    return declared_cores(input.design, config.get("simulation") or {})


def get_replan_request(wildcards):
    """Written by a supervisor's replan (reprolab.steps.backtrack.replan): replans when newer."""
    path = Path(f"{OUT}/{wildcards.paper}/replan_request.json")
    return [str(path)] if path.is_file() else []


def get_plan(wildcards):
    """The plan (a checkpoint: stages are known only once it exists)."""
    try:
        return checkpoints.plan.get(paper=wildcards.paper).output.plan
    except IncompleteCheckpointException:
        if workflow.dryrun:
            note_replan(wildcards.paper)
        raise


REPLAN_NOTES = {}


def note_replan(paper):
    """A dry run cannot list what follows a plan that is to be redone: say so, once,
    at its end. Snakemake asks for the plan before it knows whether the plan job
    reruns (the first look always finds it missing), so the note waits for the DAG."""
    if not REPLAN_NOTES:
        atexit.register(say_replans)
    # Absolute: at exit Snakemake is back in the directory it was started in.
    REPLAN_NOTES[paper] = Path(f"{OUT}/{paper}/plan.json").resolve()


def say_replans():
    """The note for each paper whose plan job the dry run really lists."""
    try:
        dag = workflow.dag
        redone = {
            getattr(job.wildcards, "paper", None)
            for job in dag.jobs
            if job.rule.name == "plan" and dag.needrun(job)
        }
    except Exception:  # no DAG: the run stopped before building it
        return
    for paper in sorted(set(REPLAN_NOTES) & redone):
        text = plan_rerun_note(paper, REPLAN_NOTES[paper])
        if text:
            print(text, file=sys.stderr, flush=True)


def get_plan_kept(wildcards):
    """The plan as a stage's step reads it: after the plan checkpoint, but a rewritten
    plan.json alone redoes nothing; the stage's own entry (stage_inputs) does."""
    return ancient(get_plan(wildcards))


# Read by every agent step; a rerun of adapt_prompts that gives the same adaptations
# redoes nothing (stage_inputs carries what a stage's design reads of them).
ADAPTATIONS_KEPT = ancient(f"{PAPER_OUT}/prompt_adaptations.json")


def stage_inputs_value(wildcards):
    """What a stage's design reads of the plan and the prompt adaptations: its own
    plan entry (as plan.json holds it) and the adaptations' content (not their
    provenance or times)."""
    path = f"{OUT}/{wildcards.paper}/prompt_adaptations.json"
    adaptations = {k: v for k, v in cached_json(path).items() if k != "provenance"}
    stage = find_stage(wildcards).model_dump(mode="json", exclude_unset=True)
    return {"stage": stage, "adaptations": adaptations}


READ = {}


def cached(load, path):
    """An artifact's reader (reprolab.artifacts), once per version of its file: input
    functions ask for the plan hundreds of times per paper."""
    st = os.stat(path)
    key = (load.__name__, str(path), st.st_mtime_ns, st.st_size)
    if key not in READ:
        READ[key] = load(path)
    return READ[key]


def plan_stages(wildcards):
    return cached(load_plan, get_plan(wildcards)).stages


def find_stage(wildcards):
    for stage in plan_stages(wildcards):
        if stage.stage_id == wildcards.stage:
            return stage
    raise ValueError(
        f"stage '{wildcards.stage}' is not in the plan of paper '{wildcards.paper}'"
    )


def stage_file(wildcards, stage_id, name):
    return f"{OUT}/{wildcards.paper}/stages/{stage_id}/{name}"


def stage_priority(wildcards):
    """The supervisor's change_priority: its first choice highest, else 0 (plan order)."""
    return priority_of(f"{OUT}/{wildcards.paper}", wildcards.stage)


def get_design_inputs(wildcards):
    stage = find_stage(wildcards)
    inputs = {
        "plan": get_plan_kept(wildcards),
        "adaptations": ancient(f"{OUT}/{wildcards.paper}/prompt_adaptations.json"),
        # Rewritten only when this stage's plan entry or the adaptations change.
        "stage_inputs": f"{OUT}/{wildcards.paper}/.inputs/{wildcards.stage}.stage.json",
        "figure_x": get_figure_x(wildcards),
        # A dependency's verdict orders the stages (eligibility reads it) but its rewrite
        # alone (e.g. a changed digitized value re-judged) does not redo this stage;
        # a redone dependency (new design, so new code: invalidate, backtrack, a touched
        # design.json) does. Its code.json, not design.json: Snakemake does not rerun a
        # design job for a newer design.json of another stage by mtime alone.
        "deps": [
            ancient(stage_file(wildcards, dep, "verdict.json"))
            for dep in stage.dependencies
        ],
        "dep_code": [
            stage_file(wildcards, dep, "code.json") for dep in stage.dependencies
        ],
    }
    if stage.stage_type != "MATERIAL_VALIDATION":
        inputs["validated"] = f"{OUT}/{wildcards.paper}/validated_materials.json"
    # The validation hierarchy (reprolab.steps.eligibility): lower levels' verdicts are edges too.
    lower = hierarchy_stages(plan_stages(wildcards), stage)
    inputs["hierarchy"] = [
        ancient(stage_file(wildcards, s, "verdict.json")) for s in lower
    ]
    inputs["hierarchy_code"] = [stage_file(wildcards, s, "code.json") for s in lower]
    # Written by a backtrack, the material gate or `reprolab invalidate`: once it is
    # newer than design.json, this stage and all that depend on it rerun.
    invalidation = stage_file(wildcards, wildcards.stage, "invalidation.json")
    if Path(invalidation).is_file():
        inputs["invalidation"] = invalidation
    return inputs


def get_stage0_for_gate(wildcards):
    """What the material gate waits for: stage 0's verdict orders it (a re-judged or
    re-simulated stage 0 does not ask again); stage 0's code, rewritten when stage 0 is
    redone (a new design), reruns it, and a changed payload then asks again."""
    stage0 = plan_stages(wildcards)[0].stage_id
    return {
        "stage0": ancient(stage_file(wildcards, stage0, "verdict.json")),
        "stage0_code": stage_file(wildcards, stage0, "code.json"),
    }


def get_gate_decision(wildcards):
    """The user's decision file once it exists; editing it reruns the gate."""
    path = Path(f"{OUT}/{wildcards.paper}/gates/material_checkpoint.json")
    if "material_checkpoint" in AUTO_APPROVE or path.is_file():
        return [str(path)]
    return []


def get_report_inputs(wildcards):
    stages = [s.stage_id for s in plan_stages(wildcards)]
    return {
        "plan": get_plan(wildcards),
        "paper": get_paper_files(wildcards),
        "validated": f"{OUT}/{wildcards.paper}/validated_materials.json",
        "verdicts": [stage_file(wildcards, s, "verdict.json") for s in stages],
        "comparisons": [stage_file(wildcards, s, "comparison.json") for s in stages],
        "analyses": [stage_file(wildcards, s, "analysis.json") for s in stages],
        "results": [stage_file(wildcards, s, "result.json") for s in stages],
        "designs": [stage_file(wildcards, s, "design.json") for s in stages],
        "checks": [stage_file(wildcards, s, "checks.json") for s in stages],
        "convergence": [
            stage_file(wildcards, s.stage_id, "convergence.json")
            for s in plan_stages(wildcards)
            if CONVERGENCE and s.stage_type != "MATERIAL_VALIDATION"
        ],
    }


def get_debug_inputs(wildcards):
    """Stage 0 and the first simulation stage only (quick-check mode)."""
    stages = [s.stage_id for s in plan_stages(wildcards)][:2]
    return {
        "plan": get_plan(wildcards),
        "validated": f"{OUT}/{wildcards.paper}/validated_materials.json",
        "checks": [stage_file(wildcards, s, "checks.json") for s in stages],
        "designs": [stage_file(wildcards, s, "design.json") for s in stages],
        "comparison": stage_file(wildcards, stages[-1], "comparison.json"),
        "result": stage_file(wildcards, stages[-1], "result.json"),
    }


def all_targets():
    """The report per paper, or the quick-check summary in debug mode."""
    if DEBUG:
        return expand(f"{OUT}/{{paper}}/debug_summary.json", paper=PAPERS)
    reports = expand(f"{OUT}/{{paper}}/REPRODUCTION_REPORT_{{paper}}.md", paper=PAPERS)
    # A campaign's index (report.smk) links every paper's report.
    return reports + ([f"{OUT}/REPORTS_INDEX.md"] if len(PAPERS) > 1 else [])


def lock_outputs_or_stop(outputs_dir):
    """Held for the whole run; a second run on the same outputs stops with one line."""
    try:
        lock_outputs_dir(outputs_dir)
    except ReproLabError as err:
        print(f"[reprolab] {err}", file=sys.stderr)
        raise SystemExit(1) from None


# Papers whose report exists: only these flag it for `snakemake --report` (report.smk).
REPORTED = [
    p for p in PAPERS if Path(f"{OUT}/{p}/REPRODUCTION_REPORT_{p}.md").is_file()
]


def papers_regex(ids):
    """A wildcard constraint matching exactly these paper ids (none: matches nothing)."""
    return "|".join(re.escape(p) for p in ids) or "(?!x)x"


def write_partial_reports_on_error(argv):
    """Every stop has a report: a PARTIAL one for each paper that did not finish."""
    from reprolab.steps.report import write_partial_reports  # only when a run failed

    write_partial_reports(config, shlex.join(argv))
    # A campaign's index links the PARTIAL reports too.
    from reprolab.steps.campaign import write_index_after_error

    write_index_after_error(config)


def get_stage_convergence(wildcards):
    """The stage's convergence.json for its verdict (checks.convergence not false; no
    material stage): an under-resolved run stands only if its rerun converged."""
    if not CONVERGENCE or find_stage(wildcards).stage_type == "MATERIAL_VALIDATION":
        return []
    return stage_file(wildcards, wildcards.stage, "convergence.json")
