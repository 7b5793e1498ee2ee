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
