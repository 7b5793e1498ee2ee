"""`reprolab demo` as a user sees it in a terminal (a pseudo-terminal here), at the
default verbosity, with real Snakemake, real Meep and the replay recordings: the whole
output fits on two screens, each step ends in one line with "n of N", a status line
rewritten in place names each running simulation with its local job and elapsed
time, and the last lines name both report files of both papers."""

import os
import pty
import re
import select
import time
from pathlib import Path

import pytest

from tests.support.pipeline import REPO, REPROLAB

pytestmark = pytest.mark.pipeline
SCREEN_LINES = 50  # a terminal window; the demo must fit on two


def run_in_pty(cmd: list[str], cwd: Path, timeout_s: float) -> tuple[int, str]:
    pid, fd = pty.fork()
    if pid == 0:  # the child: a terminal is its stdout
        os.chdir(cwd)
        os.execv(cmd[0], cmd)
    chunks, deadline = [], time.time() + timeout_s
    while time.time() < deadline:
        ready, _, _ = select.select([fd], [], [], 5)
        if not ready:
            continue
        try:
            data = os.read(fd, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    else:
        os.kill(pid, 9)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), b"".join(chunks).decode(errors="replace")


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """The checkout seen from an empty folder (its own outputs/), `reprolab demo` run."""
    wd = tmp_path_factory.mktemp("demo")
    for entry in REPO.iterdir():
        if entry.name not in ("outputs", ".snakemake", ".git", ".venv", ".pytest_cache"):
            (wd / entry.name).symlink_to(entry)
    (wd / "outputs").mkdir()
    started = time.time()
    code, text = run_in_pty([REPROLAB, "demo"], wd, 1500)
    (wd / "console.txt").write_text(text)  # what the user saw, kept for a failing assert
    return code, text, wd, time.time() - started


def test_demo_console_fits_two_screens_and_shows_progress(demo):
    code, text, wd, seconds = demo
    print(f"reprolab demo in a pty: {seconds:.0f} s")
    assert code == 0, text[-4000:]
    lines = text.replace("\r\n", "\n").split("\n")
    assert len(lines) <= 2 * SCREEN_LINES, "\n".join(lines)
    assert "reason:" not in text and "jobid:" not in text  # Snakemake's rule blocks: read only
    done = [ln for ln in lines if re.search(r"\[\s*\d+ of \d+\] done ", ln)]
    assert len(done) >= 20
    last = re.search(r"\[\s*(\d+) of (\d+)\] done ", done[-1])
    assert last[1] == last[2]  # the count reaches its total
    assert re.search(r"\] start simulate silica_bragg_2026 / stage1_single_slab", text)
    # the status line, rewritten in place while a simulation runs
    assert re.search(r"\r\x1b\[Krunning: [^\r\n]*simulate [^\r\n]*\(local job \d+, running", text)
    for paper in ("silica_bragg_2026", "ag_etalon_2026"):
        md = wd / "outputs" / paper / f"REPRODUCTION_REPORT_{paper}.md"
        assert f"reprolab: report: {md.resolve()} (and {md.with_suffix('.html').resolve()})" in text
    assert "index of the campaign's reports" in lines[-2] + lines[-1]


def test_demo_reports_read_like_physics(demo):
    """The two bundled examples' reports: units in the tables' headers, no Python value
    in a cell, no 0/0, the etalon's PARTIAL explained by its figures compared by eye."""
    code, _, wd, _ = demo
    assert code == 0
    reports = {
        p: (wd / "outputs" / p / f"REPRODUCTION_REPORT_{p}.md").read_text()
        for p in ("silica_bragg_2026", "ag_etalon_2026")
    }
    for text in reports.values():
        assert "0/0" not in text and "{'" not in text
        assert not re.search(r"\| (True|False|None) \|", text)
        assert "| curve | RMS diff (dimensionless) | max abs diff (dimensionless) |" in text
    ag = reports["ag_etalon_2026"]
    assert "| Why PARTIAL | fig3, fig4 have no digitized data and were compared by eye" in ag
    assert "every figure with digitized data (fig1, fig2) is SUCCESS |" in ag
    assert "| eps_re |" in ag and "no features to compare" in ag
    assert "| curve | feature | x paper (nm) | x reproduced (nm) |" in ag
    assert re.search(r"\| T \| peak \| 689\.\d+ \| 689\.\d+ \|", ag)  # nm, as the figure
    assert "visual: PARTIAL (qualitative, by eye)" in ag
    silica = reports["silica_bragg_2026"]
    assert "| curve | feature | x paper (µm) |" in silica
