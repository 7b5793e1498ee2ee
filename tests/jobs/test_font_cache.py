"""A sandboxed run gets matplotlib's font list from the user's cache instead of
scanning the fonts again, and cannot touch that cache."""

import json
import sys

import pytest

from reprolab.jobs import bwrap, font_cache
from reprolab.jobs.launch import SimulationJob, run_job

PLOT = """
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
fig = plt.figure()
fig.text(0.5, 0.5, "x")
fig.savefig("x.png")
"""


@pytest.fixture
def user_cache(tmp_path, monkeypatch):
    """The user's own matplotlib cache, with its font list built by font_cache."""
    cache = tmp_path / "user_mpl"
    monkeypatch.setenv("MPLCONFIGDIR", str(cache))
    lists = font_cache.font_lists(sys.executable)
    assert lists and lists[0].parent == cache, lists
    return lists[0]


def sandboxed(tmp_path, code: str) -> tuple[SimulationJob, dict]:
    run = tmp_path / "run"
    run.mkdir()
    (run / "simulation.py").write_text(code)
    job = SimulationJob(script=str(run / "simulation.py"), workdir=str(run), python=sys.executable)
    return job, run_job(job)


def test_a_sandboxed_run_reads_the_font_list_it_was_given(tmp_path, user_cache):
    job, record = sandboxed(tmp_path, PLOT)
    assert record["exit_code"] == 0, record["stderr_tail"]
    assert (tmp_path / "run" / "x.png").stat().st_size > 0
    given = tmp_path / "run" / ".cache" / "matplotlib" / user_cache.name
    # Copied with its mtime; matplotlib rewrites the file only when it scans the fonts.
    assert given.stat().st_mtime_ns == user_cache.stat().st_mtime_ns
    assert given.read_bytes() == user_cache.read_bytes()
    assert json.loads(given.read_text())["ttflist"]


def test_the_run_cannot_write_the_users_font_list(tmp_path, user_cache):
    before = user_cache.read_bytes()
    attack = (
        "import json, os\n"
        f"target = {str(user_cache)!r}\n"
        "try:\n"
        "    open(target, 'w').write(json.dumps({'ttflist': []}))\n"
        "    print('WROTE')\n"
        "except OSError as exc:\n"
        "    print('REFUSED', exc)\n"
        # Its own copy is its own: changing it harms no other run.
        f"open(os.path.join(os.environ['MPLCONFIGDIR'], {user_cache.name!r}), 'w').write('x')\n"
    )
    _, record = sandboxed(tmp_path, attack)
    assert "REFUSED" in record["stdout_tail"] and "WROTE" not in record["stdout_tail"]
    assert user_cache.read_bytes() == before
    # The next run still gets the user's list, not what the last run left in its copy.
    run2 = tmp_path / "run2"
    run2.mkdir()
    assert font_cache.seed(run2 / ".cache" / "matplotlib", sys.executable) == [user_cache.name]
    assert (run2 / ".cache" / "matplotlib" / user_cache.name).read_bytes() == before


def test_a_failed_build_leaves_the_run_to_scan_the_fonts_itself(tmp_path, monkeypatch):
    monkeypatch.setenv("MPLCONFIGDIR", str(tmp_path / "user_mpl"))
    run_cache = tmp_path / "run" / ".cache" / "matplotlib"
    assert font_cache.seed(run_cache, "/bin/false") == []  # no exception, nothing copied
    assert not list((tmp_path / "user_mpl").glob("fontlist-*.json"))
    assert not list((tmp_path / "user_mpl").glob(".reprolab-fontlist-*"))  # no debris
    assert bwrap.mpl_config_dir(tmp_path / "run") == str(run_cache)
