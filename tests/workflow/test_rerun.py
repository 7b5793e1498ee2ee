"""What a user changes reruns exactly what reads it, and the records stay true.

One finished run of the example paper (its own copy of the paper folder, so
files can be touched and edited); each row of docs/operation.md's table "you change
X -> these steps rerun" is checked with a dry run from that same state (the touched
file's mtime is put back afterwards), then one real rerun after a changed digitized
value.
"""

import json
import os
import re
import shutil
from contextlib import contextmanager
from pathlib import Path

import pytest
import yaml

from reprolab.steps.eligibility import HIERARCHY
from tests.support.pipeline import EXAMPLE, snakemake

pytestmark = pytest.mark.pipeline
PAPER = "silica_bragg_2026"
S0, S1, S2, S3 = (
    "stage0_material_validation",
    "stage1_single_slab",
    "stage2_bragg_mirror",
    "stage3_pairs_sweep",
)
AFTER_CODE = (
    "simulate",
    "check_results",
    "validate_run",
    "compare_figures",
    "analyze",
    "stage_verdict",
    "convergence",  # checks.convergence: auto (its decision feeds the verdict)
)
WHOLE_STAGE = ("design", "generate_code", *AFTER_CODE)
# The convergence step reads the figure's x grid: a changed digitized value recompares
# (its rerun, if any, is kept: the script did not change).
JUDGE = ("compare_figures", "analyze", "stage_verdict", "convergence")


def write_config(wd: Path, **simulation) -> None:
    config = {
        "outputs_dir": "outputs",
        "papers": [{"paper_dir": str(wd / "paper")}],
        "provider": {"kind": "replay"},
        "simulation": {"executor": "local", "max_mpi_ranks": 2, **simulation},
        "gates": {"auto_approve": ["material_checkpoint"]},
    }
    (wd / "config.yaml").write_text(yaml.safe_dump(config))


@pytest.fixture(scope="module")
def done(offline_example_run, tmp_path_factory):
    return copy_of_run(offline_example_run, tmp_path_factory.mktemp("rerun"))


def copy_of_run(offline_example_run: Path, wd: Path) -> Path:
    """A copy of the session's finished example run (mtimes kept) whose paper folder is
    its own, so that files can be touched and edited; Snakemake's records of the run
    are moved to that folder, as if the run had been made there."""
    shutil.copytree(offline_example_run, wd, dirs_exist_ok=True, symlinks=True)
    shutil.copytree(EXAMPLE, wd / "paper", symlinks=True)
    for path in (wd / ".snakemake" / "metadata").iterdir():
        text = path.read_text()
        if str(EXAMPLE) in text:
            st = path.stat()
            path.write_text(text.replace(json.dumps(str(EXAMPLE))[1:-1], str(wd / "paper")))
            os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    write_config(wd)
    return wd


JOB = re.compile(r"^(?:local)?(?:rule|checkpoint) (\w+):$")


def jobs(output: str) -> set[tuple[str, str]]:
    """(rule, stage or '') of every job a (dry) run lists."""
    found, rule = set(), None
    for line in output.splitlines():
        m = JOB.match(line.strip())
        if m:
            rule = m.group(1)
            found.add((rule, ""))
        elif rule and line.strip().startswith("wildcards:"):
            stage = re.search(r"stage=(\w+)", line)
            if stage:
                found.discard((rule, ""))
                found.add((rule, stage.group(1)))
            rule = None
    return found


def dry(wd: Path) -> set[tuple[str, str]]:
    run = snakemake(wd, "-n")
    assert run.returncode == 0, run.stderr[-3000:]
    return jobs(run.stdout + run.stderr)


def expected(stage_rules: dict[str, tuple[str, ...]], *paper_rules: str) -> set:
    want = {(r, s) for s, rules in stage_rules.items() for r in rules}
    return want | {(r, "") for r in (*paper_rules, "report", "all")}


@contextmanager
def touched(path: Path):
    st = path.stat()
    os.utime(path)
    try:
        yield
    finally:
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def test_nothing_changed_nothing_reruns(done):
    run = snakemake(done, "-n")
    assert run.returncode == 0, run.stderr[-3000:]
    assert jobs(run.stdout + run.stderr) == set()
    # The plan is not redone, so the dry run does not say it is.
    assert "[reprolab] dry run: the plan" not in run.stderr


def test_touching_a_figures_data_reruns_only_its_comparison_and_after(done):
    # figure_data: the figure's files' stamps, which carry the edit to its judgement.
    with touched(done / "paper/data/fig2_T.csv"):
        assert dry(done) == expected({S1: JUDGE}, "figure_data")


def test_touching_a_figure_image_reruns_only_its_analysis_and_after(done):
    with touched(done / "paper/figures/fig3.png"):
        assert dry(done) == expected({S2: ("analyze", "stage_verdict")}, "figure_image")


def test_touching_the_paper_text_replans_and_the_dry_run_says_what_may_follow(done):
    # The plan is a checkpoint: the stages after it are decided once it has run, and
    # the dry run says so, naming them, instead of hiding them.
    with touched(done / "paper/paper.md"):
        run = snakemake(done, "-n")
    assert run.returncode == 0, run.stderr[-3000:]
    assert jobs(run.stdout + run.stderr) == expected({}, "adapt_prompts", "plan")
    notes = [n for n in run.stderr.splitlines() if n.startswith("[reprolab] dry run: the plan")]
    assert len(notes) == 1 and all(s in notes[0] for s in (S0, S1, S2, S3)), notes


def rerun_jobs(wd: Path) -> tuple[set, list[dict]]:
    """A real run's jobs, and the agent calls it made (from the metrics ledger)."""
    ledger = wd / "outputs" / PAPER / "metrics.jsonl"
    before = len(ledger.read_text().splitlines())
    run = snakemake(wd)
    assert run.returncode == 0, run.stderr[-3000:]
    calls = [json.loads(line) for line in ledger.read_text().splitlines()[before:]]
    return jobs(run.stdout + run.stderr), calls


def test_a_replan_giving_the_same_plan_redoes_no_stage(done):
    o = done / "outputs" / PAPER
    consent = (o / "user_interactions.jsonl").read_text()
    (done / "paper/paper.md").touch()
    got, calls = rerun_jobs(done)
    assert got == expected({}, "adapt_prompts", "plan")
    assert {c["agent"] for c in calls} == {"prompt_adaptor", "planner", "plan_reviewer"}
    assert (o / "user_interactions.jsonl").read_text() == consent


def test_a_replan_changing_one_stage_redoes_only_it_and_the_stages_after_it(done):
    # The planner now describes the last stage differently (its recorded answer edited).
    recording = done / "paper/recordings/paper/planner.a1.yaml"
    head, last = recording.read_text().split(f"- stage_id: {S3}\n")
    assert "      description: " in last
    last = last.replace("      description: ", "      description: (reworded) ", 1)
    recording.write_text(f"{head}- stage_id: {S3}\n{last}")
    (done / "paper/paper.md").touch()
    assert not downstream(done, S3)
    got, calls = rerun_jobs(done)
    assert got == expected({S3: ("stage_inputs", *WHOLE_STAGE)}, "adapt_prompts", "plan")
    assert {c["stage_id"] for c in calls} == {"paper", S3}


def downstream(wd: Path, stage_id: str) -> set[str]:
    """Stages after `stage_id`: its dependents and higher levels of the hierarchy, in turn."""
    plan = json.loads((wd / "outputs" / PAPER / "plan.json").read_text())["output"]["stages"]
    types = {s["stage_id"]: s["stage_type"] for s in plan}
    edges = {
        s["stage_id"]: set(s["dependencies"])
        | {t for t in types if types[t] in HIERARCHY[s["stage_type"]] and t != s["stage_id"]}
        for s in plan
    }
    found, grew = {stage_id}, True
    while grew:
        more = {s for s, before in edges.items() if before & found} - found
        found |= more
        grew = bool(more)
    return found - {stage_id}


def test_touching_a_design_reruns_its_stage_and_the_stages_after_it(done):
    after = downstream(done, S1)
    assert after and S0 not in after
    with touched(done / "outputs" / PAPER / "stages" / S1 / "design.json"):
        got = dry(done)
    want = {S1: ("generate_code", *AFTER_CODE)} | {s: WHOLE_STAGE for s in after}
    assert got == expected(want)


def test_changing_a_simulation_setting_reruns_the_simulations(done):
    write_config(done, max_mpi_ranks=1)
    try:
        got = dry(done)
    finally:
        write_config(done)
    for stage in (S0, S1, S2, S3):
        assert ("simulate", stage) in got
        assert ("design", stage) not in got and ("generate_code", stage) not in got
    # Where it runs is not what it is: another executor reruns nothing.
    write_config(done, executor="debug")
    try:
        assert dry(done) == set()
    finally:
        write_config(done)


def test_a_changed_digitized_value_reruns_only_that_figures_judgement(done):
    o = done / "outputs" / PAPER
    kept = {p: p.stat().st_mtime_ns for p in o.glob("stages/*/*.json")}
    kept |= {p: p.stat().st_mtime_ns for p in (o / "plan.json", o / "validated_materials.json")}
    consent_before = (o / "user_interactions.jsonl").read_text()
    ledger_before = (o / "metrics.jsonl").read_text().splitlines()
    data = done / "paper/data/fig2_T.csv"
    lines = data.read_text().splitlines()
    x, y = lines[5].split(",")
    lines[5] = f"{x},{float(y) * 0.97:.6f}"
    data.write_text("\n".join(lines) + "\n")
    run = snakemake(done)
    assert run.returncode == 0, run.stderr[-3000:]
    assert jobs(run.stdout + run.stderr) == expected({S1: JUDGE}, "figure_data")
    rewritten = {p for p, ns in kept.items() if p.stat().st_mtime_ns != ns}
    judged = {o / "stages" / S1 / f"{n}.json" for n in ("comparison", "analysis", "verdict")}
    # Only stage 1's judgement (with its analysis attempts): no design, code, run or checks.
    assert judged <= rewritten, rewritten
    assert all(p.parent == o / "stages" / S1 for p in rewritten), rewritten
    assert {p.name.split(".")[0] for p in rewritten} <= {
        "comparison",
        "analysis",
        "verdict",
        "comparison_check",
        "convergence",
    }
    # Agent calls only for the requests that changed: the judgement of stage 1.
    new = [json.loads(line) for line in (o / "metrics.jsonl").read_text().splitlines()]
    new = new[len(ledger_before) :]
    assert new and {e["stage_id"] for e in new} == {S1}
    assert {e["agent"] for e in new} <= {"results_analyzer", "comparison_validator", "supervisor"}
    # Replayed answers are not money spent; the consent log gains no decision nobody made.
    summary = json.loads((o / "cost_summary.json").read_text())
    assert summary["total"]["cost_usd"] == 0 and summary["total"]["paid_calls"] == 0
    assert summary["total"]["replays"] == len(ledger_before) + len(new)
    assert summary["replayed"]["recorded_cost_usd"] > 0
    assert (o / "user_interactions.jsonl").read_text() == consent_before


def test_a_changed_x_range_redoes_that_figures_design(done):
    # Last: the workdir's x-range record changes with it (no test after this one needs it).
    data = done / "paper/data/fig3_R.csv"
    lines = data.read_text().splitlines()
    x, y = lines[1].split(",")
    lines[1] = f"{float(x) * 0.99:.6f},{y}"
    data.write_text("\n".join(lines) + "\n")
    got = dry(done)
    assert ("design", S2) in got and ("compare_figures", S2) in got
    assert not any(stage in (S0, S1) for _, stage in got)


def test_one_run_after_edits_of_every_kind_of_paper_input_leaves_nothing_to_do(
    offline_example_run, tmp_path
):
    # Stage 0's judgement reruns for a metadata edit; the stages after it (behind its
    # verdict, an ordering edge Snakemake does not follow) must rerun in the same run.
    wd = copy_of_run(offline_example_run, tmp_path)
    paper = wd / "paper"
    meta = paper / "metadata.yaml"
    text = meta.read_text()
    for old, new in (
        ('left: {label: "Reflectance R", ', 'left: {label: "Reflectance R (edited)", '),
        ('title: "Transmittance and reflectance', 'title: "Measured transmittance and reflectance'),
        ('label: "n (Sellmeier)"', 'label: "n (Sellmeier fit)"'),
    ):
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    meta.write_text(text)
    data = paper / "data/fig4_Rpeak.csv"
    lines = data.read_text().splitlines()
    x, y = lines[2].split(",")
    lines[2] = f"{x},{float(y) * 0.999:.6f}"
    data.write_text("\n".join(lines) + "\n")
    image = paper / "figures/fig3.png"
    image.write_bytes(image.read_bytes())  # saved again
    (paper / "paper.md").write_text((paper / "paper.md").read_text() + "\n")
    run = snakemake(wd)
    assert run.returncode == 0, run.stderr[-3000:]
    ran = jobs(run.stdout + run.stderr)
    assert {s for rule, s in ran if rule == "stage_verdict"} == {S0, S1, S2, S3}, ran
    # One run reached the state a clean run would: nothing left for a second.
    assert dry(wd) == set()
    o, fresh = wd / "outputs" / PAPER, offline_example_run / "outputs" / PAPER
    for stage in (S0, S1, S2, S3):
        verdict = json.loads((o / "stages" / stage / "verdict.json").read_text())
        want = json.loads((fresh / "stages" / stage / "verdict.json").read_text())
        assert verdict["status"] == want["status"], stage
    report = o / f"REPRODUCTION_REPORT_{PAPER}.md"
    assert all(
        report.stat().st_mtime_ns >= (o / "stages" / s / "comparison.json").stat().st_mtime_ns
        for s in (S0, S1, S2, S3)
    )
