"""The pipeline's decisions (docs/operation.md) on files, through real Snakemake runs and
the `reprolab` CLI.

Scenario recordings are built from the example's: paper A's design of stage 1
needs a revision (the limit is 1, so a revision_limit gate opens), paper B's is
approved at once. A pending gate in A does not stop B; status tells the user how
to answer; a stale or malformed answer is refused with nothing lost; a reject
starts another round; `reprolab invalidate` reruns exactly the stage and its
dependents. A second workdir drives a supervisor backtrack from stage 2 to 1.
"""

import json
import shutil
from pathlib import Path

import pytest
import yaml

from tests.support.builders import copy_paper
from tests.support.pipeline import reprolab_cli as cli
from tests.support.pipeline import snakemake, write_config

pytestmark = pytest.mark.pipeline
STAGE0, STAGE1, STAGE2 = "stage0_material_validation", "stage1_single_slab", "stage2_bragg_mirror"
GATE = f"{STAGE1}.design_limit"


def edit_recording(path: Path, **output) -> None:
    data = yaml.safe_load(path.read_text())
    data["output"].update(output)
    path.write_text(yaml.safe_dump(data, sort_keys=False))


def copy_recording(rec: Path, agent: str, source: int, attempt: int) -> None:
    """The recording of attempt `source`, replayed as attempt `attempt`."""
    data = yaml.safe_load((rec / f"{agent}.a{source}.yaml").read_text()) | {"attempt": attempt}
    (rec / f"{agent}.a{attempt}.yaml").write_text(yaml.safe_dump(data, sort_keys=False))


def target(paper: str, stage: str, name: str = "verdict.json") -> str:
    return f"outputs/{paper}/stages/{stage}/{name}"


@pytest.fixture(scope="module")
def two_papers(tmp_path_factory):
    wd = tmp_path_factory.mktemp("decisions")
    a = copy_paper(wd / "papers" / "paper_a", recordings=True, paper_id="paper_a")
    b = copy_paper(wd / "papers" / "paper_b", recordings=True, paper_id="paper_b")
    rec = b / "recordings" / STAGE1  # B: the revised design is the first one
    for agent in ("simulation_designer", "design_reviewer"):
        copy_recording(rec, agent, 2, 1)
    # B's code gets one review revision: attempt 1 sent back, attempt 2 approved.
    for agent in ("code_generator", "code_reviewer"):
        copy_recording(rec, agent, 1, 2)
    # Attempt 1 (sent back) differs from attempt 2: an identical revision is a duplicate.
    code1 = yaml.safe_load((rec / "code_generator.a1.yaml").read_text())["output"]["code"]
    edit_recording(rec / "code_generator.a1.yaml", code=code1 + "\nUNLABELLED_MONITORS = True\n")
    edit_recording(
        rec / "code_reviewer.a1.yaml",
        verdict="needs_revision",
        issues=[{"severity": "major", "description": "flux regions are not labelled"}],
        feedback="Name the flux monitors so the log says which is which.",
    )
    write_config(wd, [a, b], limits={"max_design_revisions": 1})
    first = snakemake(wd, target("paper_a", STAGE1), target("paper_b", STAGE1))
    return wd, first


def stage_dir(wd: Path, paper: str, stage: str) -> Path:
    return wd / "outputs" / paper / "stages" / stage


def test_a_pending_gate_stops_only_its_own_branch(two_papers):
    wd, first = two_papers
    assert first.returncode != 0
    assert "WAITING FOR YOU: revision limit" in first.stderr
    b1 = stage_dir(wd, "paper_b", STAGE1)
    assert (b1 / "verdict.json").is_file()
    assert json.loads((b1 / "code_review.r1.json").read_text())["output"]["verdict"] == (
        "needs_revision"
    )
    assert json.loads((b1 / "code.json").read_text())["provenance"]["attempt"] == 2
    a1 = stage_dir(wd, "paper_a", STAGE1)
    assert not (a1 / "design.json").exists()
    assert (a1 / "design.r1.json").is_file() and (a1 / "design_review.r1.json").is_file()
    request = json.loads((wd / f"outputs/paper_a/gates/{GATE}.request.json").read_text())
    assert request["kind"] == "revision_limit" and request["options"] == [
        "approve",
        "edit",
        "reject",
    ]


def test_status_shows_what_waits_and_how_to_answer(two_papers):
    wd, _ = two_papers
    run = cli(wd, "status")
    assert run.returncode == 0, run.stderr
    assert f"WAITING: {GATE} (revision_limit)" in run.stdout
    assert f"reprolab approve paper_a {GATE}" in run.stdout
    assert f"reprolab reject paper_a {GATE} --note" in run.stdout
    b_block = run.stdout.split("\npaper_b  ")[1]
    assert "completed_success" in b_block and "nothing waits on you" in b_block
    bad = cli(wd, "approve", "paper_c", GATE)
    assert bad.returncode == 2 and "unknown paper 'paper_c'" in bad.stderr
    bad = cli(wd, "approve", "paper_a", "no_such_gate")
    assert bad.returncode == 2 and GATE in bad.stderr  # lists the pending ones


def test_stale_and_malformed_answers_refused_with_nothing_lost(two_papers):
    wd, _ = two_papers
    a1 = stage_dir(wd, "paper_a", STAGE1)

    def kept():  # attempts are rewritten on a rerun (new time stamp), same content
        return {p.name: json.loads(p.read_text())["output"] for p in a1.glob("*.json")}

    before = kept()
    answer = wd / f"outputs/paper_a/gates/{GATE}.json"
    answer.write_text(json.dumps({"action": "approve", "sha256": "0" * 64}))
    run = snakemake(wd, target("paper_a", STAGE1))
    assert run.returncode != 0 and "0" * 64 in run.stderr
    request = json.loads((wd / f"outputs/paper_a/gates/{GATE}.request.json").read_text())
    assert request["sha256"] in run.stderr  # names both hashes
    answer.write_text('{"action": "approve", "sha256": ')
    run = snakemake(wd, target("paper_a", STAGE1))
    assert run.returncode != 0 and f"{GATE}.json" in run.stderr
    assert "not valid JSON" in run.stderr
    assert kept() == before
    answer.unlink()


def test_reject_starts_another_round_with_the_note(two_papers):
    wd, _ = two_papers
    b_verdict = stage_dir(wd, "paper_b", STAGE1) / "verdict.json"
    b_mtime = b_verdict.stat().st_mtime_ns
    no_note = cli(wd, "reject", "paper_a", GATE)
    assert no_note.returncode == 2 and "--note" in no_note.stderr
    ok = cli(wd, "reject", "paper_a", GATE, "--note", "use the thickness from Table 1")
    assert ok.returncode == 0, ok.stderr
    run = snakemake(wd, target("paper_a", STAGE1), target("paper_b", STAGE1))
    assert run.returncode == 0, run.stderr[-3000:]
    a1 = stage_dir(wd, "paper_a", STAGE1)
    design = json.loads((a1 / "design.json").read_text())
    assert design["provenance"]["attempt"] == 2
    assert (a1 / "design_review.r2.json").is_file()
    assert json.loads((a1 / "verdict.json").read_text())["status"] == "completed_success"
    log = [json.loads(x) for x in (wd / "outputs/paper_a/user_interactions.jsonl").open()]
    assert log[-1]["interaction_type"] == "revision_limit"
    assert log[-1]["user_response"]["action"] == "reject"
    assert b_verdict.stat().st_mtime_ns == b_mtime  # the other paper was not redone
    assert "nothing waits on you" in cli(wd, "status", "paper_a").stdout


def test_invalidate_reruns_exactly_the_stage_and_its_dependents(two_papers):
    wd, _ = two_papers
    s0, s1 = stage_dir(wd, "paper_b", STAGE0), stage_dir(wd, "paper_b", STAGE1)
    before0 = (s0 / "verdict.json").stat().st_mtime_ns
    before1 = json.loads((s1 / "result.json").read_text())["job_id"]
    a_before = (stage_dir(wd, "paper_a", STAGE1) / "verdict.json").stat().st_mtime_ns
    bad = cli(wd, "invalidate", "paper_b", "stage9_nothing", "--reason", "x")
    assert bad.returncode == 2 and STAGE1 in bad.stderr
    ok = cli(wd, "invalidate", "paper_b", STAGE1, "--reason", "source spectrum looked odd")
    assert ok.returncode == 0, ok.stderr
    assert "invalidated" in cli(wd, "status", "paper_b").stdout
    run = snakemake(wd, target("paper_a", STAGE1), target("paper_b", STAGE1))
    assert run.returncode == 0, run.stderr[-3000:]
    assert json.loads((s1 / "result.json").read_text())["job_id"] != before1
    assert (s0 / "verdict.json").stat().st_mtime_ns == before0
    assert (stage_dir(wd, "paper_a", STAGE1) / "verdict.json").stat().st_mtime_ns == a_before
    design = json.loads((s1 / "design.json").read_text())
    assert design["provenance"]["stage_id"] == STAGE1
    assert "source spectrum looked odd" in (wd / "outputs/paper_b/events.jsonl").read_text()


@pytest.fixture(scope="module")
def backtrack(tmp_path_factory):
    """Stage 2's supervisor sends the paper back to stage 1 once; the redone stages
    replay their round-2 recordings (copies of round 1, stage 2 then goes on)."""
    wd = tmp_path_factory.mktemp("backtrack")
    paper = copy_paper(wd / "papers" / "paper_c", recordings=True, paper_id="paper_c")
    rec = paper / "recordings"
    for stage in (STAGE1, STAGE2):
        for path in sorted((rec / stage).glob("*.a*.yaml")):
            shutil.copy(path, path.with_name(path.name.replace(".a", ".round2.a", 1)))
    edit_recording(
        rec / STAGE2 / "supervisor.a1.yaml",
        verdict="backtrack_to_stage",
        backtrack_target=STAGE1,
        feedback="The slab's Fabry-Perot fringes are off; redo stage 1 with a finer grid.",
    )
    write_config(wd, [paper])
    runs = [snakemake(wd, target("paper_c", STAGE2))]
    sd = {s: stage_dir(wd, "paper_c", s) for s in (STAGE0, STAGE1, STAGE2)}
    before = {s: json.loads((d / "result.json").read_text())["job_id"] for s, d in sd.items()}
    stage0_mtime = (sd[STAGE0] / "verdict.json").stat().st_mtime_ns
    runs.append(snakemake(wd, target("paper_c", STAGE2)))
    runs.append(snakemake(wd, target("paper_c", STAGE2)))
    return wd, runs, sd, before, stage0_mtime


def test_backtrack_redoes_stage_1_and_2_not_0(backtrack):
    wd, (first, second, third), sd, before, stage0_mtime = backtrack
    assert first.returncode != 0 and "BACKTRACK 1/2" in first.stderr
    assert "redo stage1_single_slab, stage2_bragg_mirror" in first.stderr
    invalidation = json.loads((sd[STAGE1] / "invalidation.json").read_text())
    assert "finer grid" in invalidation["records"][-1]["reason"]
    assert second.returncode == 0, second.stderr[-3000:]
    after = {s: json.loads((d / "result.json").read_text())["job_id"] for s, d in sd.items()}
    assert after[STAGE0] == before[STAGE0]
    assert after[STAGE1] != before[STAGE1] and after[STAGE2] != before[STAGE2]
    assert (sd[STAGE0] / "verdict.json").stat().st_mtime_ns == stage0_mtime
    verdict = json.loads((sd[STAGE2] / "verdict.json").read_text())
    assert verdict["supervisor_verdict"] == "ok_continue"
    assert verdict["supervisor"]["provenance"]["source"] == "replay"
    design1 = json.loads((sd[STAGE1] / "design.json").read_text())
    assert design1["provenance"]["stage_id"] == STAGE1
    lines = (wd / "outputs/paper_c/backtracks.jsonl").read_text().splitlines()
    assert [json.loads(x)["to"] for x in lines] == [STAGE1]
    assert third.returncode == 0 and "Nothing to be done" in third.stdout + third.stderr


CRASH = "raise RuntimeError('planted: meep.Simulation got an unexpected keyword')\n"


def plant_crash(rec: Path, attempt: int) -> None:
    """Code attempt `attempt` of stage 1 crashes at once; the reviewer approves it."""
    good = yaml.safe_load((rec / "code_generator.a1.yaml").read_text())
    data = {**good, "attempt": attempt}
    # Each crashing attempt differs (a fix identical to the failed script is refused as
    # a duplicate before it runs: tests/agents/test_duplicates.py).
    crash = CRASH.replace("keyword'", f"keyword (attempt {attempt})'")
    data["output"] = {**good["output"], "code": crash + good["output"]["code"]}
    (rec / f"code_generator.a{attempt}.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    copy_recording(rec, "code_reviewer", 1, attempt)


@pytest.fixture(scope="module")
def repairs(tmp_path_factory):
    """paper_d's first script crashes and the regenerated one works; paper_e's crashes
    twice (max_execution_failures), so the user is asked."""
    wd = tmp_path_factory.mktemp("repairs")
    d = copy_paper(wd / "papers" / "paper_d", recordings=True, paper_id="paper_d")
    e = copy_paper(wd / "papers" / "paper_e", recordings=True, paper_id="paper_e")
    for paper, crashing in ((d, (1,)), (e, (1, 2))):
        rec = paper / "recordings" / STAGE1
        for agent in ("code_generator", "code_reviewer"):  # the regenerated code works
            copy_recording(rec, agent, 1, 2)
        for attempt in sorted(crashing, reverse=True):
            plant_crash(rec, attempt)
    # paper_e's accepted failed run is analyzed twice (the analysis of a failed run is
    # sent back once by the analysis checks): the second round replays the first.
    rec = e / "recordings" / STAGE1
    for agent in ("results_analyzer", "comparison_validator"):
        copy_recording(rec, agent, 1, 2)
    write_config(wd, [d, e])
    first = snakemake(wd, target("paper_d", STAGE1), target("paper_e", STAGE1))
    return wd, first


def test_failed_run_is_regenerated_with_the_error(repairs):
    wd, first = repairs
    sd = stage_dir(wd, "paper_d", STAGE1)
    result = json.loads((sd / "result.json").read_text())
    assert result["exit_code"] == 0 and result["execution_failures"] == 1
    assert result["code_artifact"].endswith("code.fix1.json")
    failed = json.loads((sd / "failed_runs/f1/result.json").read_text())
    assert failed["failure"]["kind"] == "python_exception"
    assert "planted" in failed["failure"]["summary"]
    regenerated = json.loads((sd / "code.r2.json").read_text())
    assert "planted" not in regenerated["output"]["code"]
    assert (sd / "simulation.fix1.py").read_text() == regenerated["output"]["code"]
    checks = json.loads((sd / "checks.json").read_text())
    assert checks["verdict"] == "pass" and checks["code_artifact"] == result["code_artifact"]
    verdict = json.loads((sd / "verdict.json").read_text())
    assert verdict["status"] == "completed_success"
    failures = (wd / "outputs/paper_d/run_failures.jsonl").read_text().splitlines()
    assert len(failures) == 1 and json.loads(failures[0])["kind"] == "execution"


def test_repeated_failures_ask_the_user_and_resume_without_rerunning(repairs):
    wd, first = repairs
    gate = f"{STAGE1}.execution_limit"
    assert first.returncode != 0 and "WAITING FOR YOU: execution limit" in first.stderr
    assert f"reprolab approve paper_e {gate}" in cli(wd, "status", "paper_e").stdout
    se = stage_dir(wd, "paper_e", STAGE1)
    assert sorted(p.name for p in (se / "failed_runs").iterdir()) == ["f1", "f2"]
    assert cli(wd, "approve", "paper_e", gate, "--note", "let it fail").returncode == 0
    run = snakemake(wd, target("paper_e", STAGE1))
    result = json.loads((se / "result.json").read_text())
    assert result["failure"]["kind"] == "python_exception"
    assert result["reused_from"].endswith("failed_runs/f2")  # resumed, not rerun
    failures = (wd / "outputs/paper_e/run_failures.jsonl").read_text().splitlines()
    assert len(failures) == 2  # the never-reset total counts each failure once
    verdict = json.loads((se / "verdict.json").read_text())
    assert verdict["status"] == "completed_failed", run.stderr[-2000:]

    # The failed stage blocks its dependents, and the report is still written.
    report = snakemake(wd, "outputs/paper_e/REPRODUCTION_REPORT_paper_e.md")
    assert report.returncode == 0, report.stderr[-3000:]
    for stage in (STAGE2, "stage3_pairs_sweep"):
        verdict = json.loads((stage_dir(wd, "paper_e", stage) / "verdict.json").read_text())
        assert verdict["status"] == "blocked" and "ended" in verdict["reason"]
        assert not (stage_dir(wd, "paper_e", stage) / "run").exists()  # nothing simulated
    md = (wd / "outputs/paper_e/REPRODUCTION_REPORT_paper_e.md").read_text()
    assert f"| Not run: {STAGE2} | blocked: dependency {STAGE1} ended completed_failed" in md
    assert f"- `{STAGE1}`: a run failed (execution)" in md


def test_material_gate_change_database_reruns_stage_0_and_asks_again(tmp_path):
    paper = copy_paper(tmp_path / "papers" / "paper_m", recordings=True, paper_id="paper_m")
    write_config(tmp_path, [paper], gates={"auto_approve": []})
    validated = "outputs/paper_m/validated_materials.json"
    s0 = stage_dir(tmp_path, "paper_m", STAGE0)
    first = snakemake(tmp_path, validated)
    assert first.returncode != 0 and "WAITING FOR YOU: material checkpoint" in first.stderr
    job = json.loads((s0 / "result.json").read_text())["job_id"]
    bad = cli(tmp_path, "reject", "paper_m", "material_checkpoint", "--note", "x", "--verdict", "y")
    assert bad.returncode == 2 and "change_database" in bad.stderr
    note = "use the Malitson fit for SiO2"
    rejected = cli(
        tmp_path, "reject", "paper_m", "material_checkpoint", "--verdict", "change_database",
        "--note", note,
    )  # fmt: skip
    assert rejected.returncode == 0, rejected.stderr
    run = snakemake(tmp_path, validated)
    assert run.returncode != 0 and "change_database recorded" in run.stderr
    assert note in json.loads((s0 / "invalidation.json").read_text())["records"][-1]["reason"]
    assert (tmp_path / "outputs/paper_m/gates/material_checkpoint.answered-1.json").is_file()
    again = snakemake(tmp_path, validated)  # stage 0 redone, then the gate asks again
    assert again.returncode != 0 and "WAITING FOR YOU: material checkpoint" in again.stderr
    assert json.loads((s0 / "result.json").read_text())["job_id"] != job
    assert cli(tmp_path, "approve", "paper_m", "material_checkpoint").returncode == 0
    done = snakemake(tmp_path, validated)
    assert done.returncode == 0, done.stderr[-2000:]
    log = [json.loads(x) for x in (tmp_path / "outputs/paper_m/user_interactions.jsonl").open()]
    assert [e["user_response"]["verdict"] for e in log] == ["change_database", "approve"]


def test_replan_redoes_the_plan_and_the_stages_with_round_2_calls(tmp_path):
    paper = copy_paper(tmp_path / "papers" / "paper_r", recordings=True, paper_id="paper_r")
    rec = paper / "recordings"
    for folder in ("paper", STAGE0, STAGE1):
        for path in sorted((rec / folder).glob("*.a*.yaml")):
            shutil.copy(path, path.with_name(path.name.replace(".a", ".round2.a", 1)))
    edit_recording(
        rec / STAGE1 / "supervisor.a1.yaml",
        verdict="replan_needed",
        feedback="The plan models the slab without its substrate; replan.",
    )
    write_config(tmp_path, [paper])
    goal = target("paper_r", STAGE1)
    first = snakemake(tmp_path, goal)
    assert first.returncode != 0 and "REPLAN 1/2" in first.stderr
    out = tmp_path / "outputs/paper_r"
    assert (
        "substrate" in json.loads((out / "replan_request.json").read_text())["records"][0]["reason"]
    )
    second = snakemake(tmp_path, goal)
    assert second.returncode == 0, second.stderr[-3000:]
    plan = json.loads((out / "plan.json").read_text())
    assert plan["provenance"]["round"] == 2
    verdict = json.loads((stage_dir(tmp_path, "paper_r", STAGE1) / "verdict.json").read_text())
    assert verdict["supervisor_verdict"] == "ok_continue"
    assert verdict["supervisor"]["provenance"]["round"] == 2
    assert "Nothing to be done" in snakemake(tmp_path, goal).stderr


@pytest.fixture(scope="module")
def supervisor_and_physics(tmp_path_factory):
    """paper_p's first stage-1 script flips the sign of R (a physics failure, fixed by
    the regenerated code); paper_s's stage-1 supervisor asks the user."""
    wd = tmp_path_factory.mktemp("supervisor")
    p = copy_paper(wd / "papers" / "paper_p", recordings=True, paper_id="paper_p")
    rec = p / "recordings" / STAGE1
    for agent in ("code_generator", "code_reviewer"):
        copy_recording(rec, agent, 1, 2)
    good = yaml.safe_load((rec / "code_generator.a1.yaml").read_text())["output"]["code"]
    flipped = good.replace("R = -refl_flux / incident_flux", "R = refl_flux / incident_flux")
    assert flipped != good
    edit_recording(rec / "code_generator.a1.yaml", code=flipped)
    s = copy_paper(wd / "papers" / "paper_s", recordings=True, paper_id="paper_s")
    edit_recording(
        s / "recordings" / STAGE1 / "supervisor.a1.yaml",
        verdict="ask_user",
        feedback="The fringe contrast is 10 % below the paper's; is the slab thickness right?",
    )
    write_config(wd, [p, s])
    first = snakemake(wd, target("paper_p", STAGE1), target("paper_s", STAGE1))
    return wd, first


def test_physics_failure_regenerates_the_code_with_the_failed_checks(supervisor_and_physics):
    wd, _ = supervisor_and_physics
    sd = stage_dir(wd, "paper_p", STAGE1)
    result = json.loads((sd / "result.json").read_text())
    assert result["physics_failures"] == 1 and result["execution_failures"] == 0
    assert result["repairs"][0]["kind"] == "physics"
    assert "energy_conservation" in result["repairs"][0]["feedback"]
    assert (sd / "failed_runs/f1/slab_spectrum.csv").is_file()
    assert json.loads((sd / "checks.json").read_text())["verdict"] == "pass"
    assert json.loads((sd / "verdict.json").read_text())["status"] == "completed_success"


def test_supervisor_ask_user_is_a_gate(supervisor_and_physics):
    wd, first = supervisor_and_physics
    gate = f"{STAGE1}.supervisor"
    assert first.returncode != 0 and "WAITING FOR YOU: supervisor ask user" in first.stderr
    assert "fringe contrast" in cli(wd, "status", "paper_s").stdout
    ok = cli(wd, "approve", "paper_s", gate, "--note", "thickness checked: 0.80 um")
    assert ok.returncode == 0, ok.stderr
    run = snakemake(wd, target("paper_s", STAGE1))
    assert run.returncode == 0, run.stderr[-3000:]
    verdict = json.loads((stage_dir(wd, "paper_s", STAGE1) / "verdict.json").read_text())
    assert verdict["supervisor_verdict"] == "ok_continue"
    assert verdict["user_note"] == "thickness checked: 0.80 um"


def test_wait_mode_picks_up_an_answer_without_a_second_run(tmp_path):
    import threading
    import time

    paper = copy_paper(tmp_path / "papers" / "paper_w", recordings=True, paper_id="paper_w")
    write_config(tmp_path, [paper], gates={"auto_approve": [], "wait_timeout_s": 300})
    request = tmp_path / "outputs/paper_w/gates/material_checkpoint.request.json"

    def answer_when_asked():
        for _ in range(1200):
            if request.is_file():
                time.sleep(1)  # the user reads it
                data = json.loads(request.read_text())
                (tmp_path / data["answer_file"]).write_text(json.dumps(data["answer_example"]))
                return
            time.sleep(0.25)

    user = threading.Thread(target=answer_when_asked)
    user.start()
    run = snakemake(tmp_path, "outputs/paper_w/validated_materials.json")
    user.join()
    assert run.returncode == 0, run.stderr[-3000:]
    assert (tmp_path / "outputs/paper_w/validated_materials.json").is_file()
