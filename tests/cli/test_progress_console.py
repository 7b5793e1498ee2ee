"""The console at verbosity normal: Snakemake's output read, not shown; one line per
step's start and end with n of N and the paper and stage; a status line naming each
running simulation with its local job, elapsed time and Meep's own progress; and
`reprolab status` showing a local simulation that runs."""

import subprocess
import sys
import time
from pathlib import Path

import pytest

from reprolab.cli import control
from reprolab.cli.progress import ProgressConsole, Screen, running_simulation

SNAKEFILE = """
rule all:
    input: expand("out/{paper}/{stage}.txt", paper=["p1"], stage=["s1", "s2"])

rule simulate:
    output: "out/{paper}/{stage}.txt"
    shell: "sleep 0.3; echo hi > {output}"
"""
MEEP = (
    "on time step 200 (time=5), 0.01 s/step\n"
    "Meep progress: 12.5/50.0 = 25.0% done in 4.0s, 12.0s to go\n"
)


@pytest.fixture
def snakemake_log(tmp_path) -> list[str]:
    (tmp_path / "Snakefile").write_text(SNAKEFILE)
    exe = Path(sys.executable).with_name("snakemake")
    proc = subprocess.run(
        [str(exe), "--cores", "2", "-d", str(tmp_path), "-s", str(tmp_path / "Snakefile")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    return (proc.stdout + proc.stderr).splitlines(keepends=True)


def shown(console, lines) -> list[str]:
    return "".join(filter(None, map(console, lines))).splitlines()


def test_one_line_per_step_start_and_end(snakemake_log, tmp_path):
    assert len(snakemake_log) > 40  # Snakemake's own: header, job stats, rule blocks
    out = shown(ProgressConsole(tmp_path, tty=False), snakemake_log)
    starts = [ln for ln in out if " start " in ln]
    ends = [ln for ln in out if " done " in ln]
    assert len(starts) == 3 and len(ends) == 3 and len(out) == 6, out
    assert any(ln.startswith("[  1 of 3] start simulate p1 / s") for ln in starts)
    assert {ln.split(" (")[0] for ln in ends} >= {"[  3 of 3] done  all"}
    assert any(ln.startswith("[  1 of 3] done  simulate p1 / s") for ln in ends)
    # on a terminal the other steps' starts live in the status line only
    tty = shown(ProgressConsole(tmp_path, tty=True), snakemake_log)
    assert len(tty) == 5 and sum(" start simulate" in ln for ln in tty) == 2


def test_a_running_local_simulation_is_named_with_its_job_and_meep_progress(tmp_path):
    sleeper = subprocess.Popen(["sleep", "30"])
    try:
        stage = tmp_path / "outputs" / "p1" / "stages" / "s1"
        (stage / "submitit").mkdir(parents=True)
        (stage / "submitit" / f"{sleeper.pid}_0_log.err").write_text("")
        (stage / "run").mkdir()
        (stage / "run" / "stdout.txt").write_text(MEEP)
        found = running_simulation(stage)
        assert found.startswith(f"local job {sleeper.pid}, running 0m0")
        assert found.endswith("Meep progress: 12.5/50.0 = 25.0% done in 4.0s")
        (stage / "run" / "stdout.txt").write_text(
            MEEP + "on time step 900 (time=29.1), 0.01 s/step\n"
        )
        assert running_simulation(stage).endswith("Meep at time step 900 (t = 29.1)")
        console = ProgressConsole(tmp_path / "outputs", tty=True)
        block = ["localrule simulate:\n", "    jobid: 7\n", "    wildcards: paper=p1, stage=s1\n"]
        shown(console, [*block, "[Thu Nov 26 13:41:32 2026]\n"])
        status = console.status()
        assert status.startswith("running: simulate p1 / s1 0m0")
        assert f"(local job {sleeper.pid}, running" in status and "time step 900" in status
        line = control.stage_line(tmp_path / "outputs" / "p1", "s1")
        assert f"simulating: local job {sleeper.pid}, running 0m0" in line
        assert "pending" not in line
        (stage / "result.json").write_text("{}")  # collected: no longer running
        assert running_simulation(stage) is None
    finally:
        sleeper.kill()
        sleeper.wait()
    (stage / "result.json").unlink()
    time.sleep(0.1)
    assert running_simulation(stage) is None  # the process is gone


def test_the_status_line_is_wiped_before_a_permanent_line():
    class Buf(list):
        def write(self, s):
            self.append(s)

        def flush(self):
            pass

    buf = Buf()
    screen = Screen(buf, tty=True)
    screen.status("running: simulate p1 / s1 0m05s")
    screen.write("[  2 of 9] done  design p1 / s1 (0m03s)\n")
    assert "".join(buf) == (
        "\r\033[Krunning: simulate p1 / s1 0m05s\r\033[K[  2 of 9] done  design p1 / s1 (0m03s)\n"
    )


def test_settings_rules_are_counted_not_listed(snakemake_log, tmp_path):
    # the same log, its steps renamed to a rule that only writes a setting
    renamed = [ln.replace("rule simulate", "rule figure_data") for ln in snakemake_log]
    out = shown(ProgressConsole(tmp_path, tty=False), renamed)
    assert not [ln for ln in out if "figure_data" in ln], out
    assert [ln.split(" (")[0] for ln in out if " done " in ln] == ["[  3 of 3] done  all"]


def test_a_total_that_grows_is_said_and_an_error_is_shown_once(tmp_path):
    """n of N grows as the plan's stages are known: one line says so. A step's error
    that Snakemake repeats in its summary is shown once (with its continuation)."""
    console = ProgressConsole(tmp_path, tty=False)
    lines = [
        "8 of 8 steps (100%) done\n",
        "8 of 66 steps (12%) done\n",
        "[reprolab] stage1 failed: the run timed out\n",
        "  go on: reprolab approve p stage1.run_failure.1\n",
        "Error in rule simulate:\n",
        "[reprolab] stage1 failed: the run timed out\n",
        "  go on: reprolab approve p stage1.run_failure.1\n",
        "Error in rule simulate:\n",
        "9 of 103 steps (9%) done\n",
    ]
    out = shown(console, lines)
    grew = [ln for ln in out if "steps in all now" in ln]
    assert grew == [
        "[reprolab] 66 steps in all now, not 8: the plan's stages (or a rerun's) add "
        "their steps as they are known",
        "[reprolab] 103 steps in all now, not 66: the plan's stages (or a rerun's) add "
        "their steps as they are known",
    ]
    assert sum("stage1 failed" in ln for ln in out) == 1
    assert sum("go on:" in ln for ln in out) == 1
    assert sum(ln == "Error in rule simulate:" for ln in out) == 1


def test_a_lone_simulation_is_timed_from_its_rule_and_shown_while_it_runs(tmp_path, monkeypatch):
    """Snakemake prints a step's block and then nothing until it ends: the step is
    timed from its block and named by the status line while it runs."""
    now = [1000.0]
    monkeypatch.setattr(time, "time", lambda: now[0])
    console = ProgressConsole(tmp_path, tty=False)
    block = [
        "rule simulate:\n",
        "    jobid: 7\n",
        "    wildcards: paper=p1, stage=s1\n",
    ]
    shown(console, block)
    now[0] += 23
    assert console.status().startswith("running: simulate p1 / s1 0m23s")
    out = shown(
        console, ["\n", "Finished jobid: 7 (Rule: simulate)\n", "1 of 2 steps (50%) done\n"]
    )
    assert any(ln.endswith("done  simulate p1 / s1 (0m23s)") for ln in out), out


def test_the_first_status_comes_early_off_a_terminal(tmp_path):
    from reprolab.cli.progress import Ticker

    class Stream:
        text = ""

        def write(self, t):
            Stream.text += t

        def flush(self):
            pass

    console = ProgressConsole(tmp_path, tty=False)
    shown(console, ["rule simulate:\n", "    jobid: 3\n", "    wildcards: paper=p, stage=s\n"])
    ticker = Ticker(console, Screen(Stream(), tty=False))
    ticker.FIRST_STATUS_S = 0.3
    ticker.start()
    time.sleep(1.0)
    ticker.halt.set()
    assert "running: simulate p / s" in Stream.text


def test_status_names_the_config_of_the_run_in_progress(tmp_path, monkeypatch):
    """`reprolab demo` runs config/demo.yaml; a plain `reprolab status` reads
    config/config.yaml and says which config the running pipeline uses."""
    monkeypatch.chdir(tmp_path)
    assert control.running_config_line("config/config.yaml") == ""
    with control.run_in_progress("config/demo.yaml"):
        line = control.running_config_line("config/config.yaml")
        assert "uses config/demo.yaml" in line
        assert "reprolab status --configfile config/demo.yaml" in line
        assert control.running_config_line("config/demo.yaml").endswith("uses config/demo.yaml")
    assert not control.RUN_MARKER.exists() and control.running_config_line("x.yaml") == ""


def test_the_docs_squeue_command_shows_whole_job_names():
    """Plain squeue prints 8 characters of a name (`reprolab` for every job); the
    command the docs give shows a long paper's convergence rerun whole."""
    import re

    from reprolab.jobs import submit

    docs = (Path(__file__).resolve().parents[2] / "docs" / "slurm.md").read_text()
    assert submit.SQUEUE_COMMAND in docs
    width = int(re.search(r"%\.(\d+)j", submit.SQUEUE_COMMAND)[1])
    name = submit.job_name(
        "plasmonic_nanodisk_array_2026", "stage2_transmission-convergence_2x", "/o"
    )
    assert len(name) <= width
