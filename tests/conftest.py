"""Fixtures every test folder shares: the example run once per session, the Slurm
cluster (tests/support/slurm.py), and the suite's own time."""

import os
import shutil
import sys
from pathlib import Path

import pytest

from tests.support import checkout
from tests.support.pipeline import EXAMPLE, REPO, snakemake

sys.path.insert(0, str(REPO))
pytest_plugins = ["tests.support.slurm"]

# Tests never reach a real model: no key may leak in from the environment.
os.environ.pop("ANTHROPIC_API_KEY", None)


@pytest.fixture(scope="session")
def offline_example_run(tmp_path_factory, worker_id) -> Path:
    """The example paper run to the end once per session (replay provider, local jobs,
    the material gate auto-approved): the uninterrupted reference several modules
    compare against. Tests read it; none may change it. The first pytest process that
    asks runs it under a lock in the folder every process of the session shares; the
    others wait and read the same run (one pipeline run a session, not one a process)."""
    import fcntl

    import yaml

    root = tmp_path_factory.getbasetemp()
    if worker_id != "master":
        root = root.parent  # xdist: each process's base folder lies in the session's
    wd = root / "offline_example"
    with open(root / "offline_example.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        finished = root / "offline_example.finished"
        if not finished.exists():
            shutil.rmtree(wd, ignore_errors=True)
            wd.mkdir()
            config = {
                "outputs_dir": "outputs",
                "papers": [{"paper_dir": str(EXAMPLE), "recordings": str(EXAMPLE / "recordings")}],
                "provider": {"kind": "replay"},
                "simulation": {"executor": "local", "max_mpi_ranks": 2},
                "gates": {"auto_approve": ["material_checkpoint"]},
            }
            (wd / "config.yaml").write_text(yaml.safe_dump(config))
            run = snakemake(wd)
            assert run.returncode == 0, run.stderr[-3000:]
            finished.touch()
    return wd


def pytest_collection_modifyitems(config, items):
    """The long files (real Snakemake pipelines, the Slurm cluster) first, each file's
    tests in their own order: two processes taking a file at a time then end on the
    short files together, instead of one pipeline file running alone at the end."""
    long = {
        i.path for i in items if i.get_closest_marker("pipeline") or i.get_closest_marker("slurm")
    }
    items.sort(key=lambda item: item.path not in long)


@pytest.fixture
def example_paper():
    from reprolab.paper import Paper

    return Paper(EXAMPLE)


# The suite's own time is a benchmark (make test must stay under 25 min on 2 cores): a
# whole-suite run writes test_time.{json,md} to .pytest_cache/reprolab/, or to the folder
# REPROLAB_TEST_TIME_DIR names (benchmarks/results/ when the number is to be committed).
# No test writes a tracked file: the session fails if `git status` changed under it.
_DURATIONS: dict[str, float] = {}
_STARTED: list[float] = []


_TREE_BEFORE: list[set[str]] = []


def pytest_sessionstart(session):
    import time

    _STARTED.append(time.time())
    if not hasattr(session.config, "workerinput"):
        _TREE_BEFORE.append(checkout.status(REPO))


def pytest_runtest_logreport(report):
    _DURATIONS[report.nodeid] = _DURATIONS.get(report.nodeid, 0.0) + report.duration


def _whole_suite(config) -> bool:
    args = [a for a in config.args if a not in ("tests", str(REPO / "tests"))]
    return not args and not config.option.keyword and not config.option.markexpr


def pytest_sessionfinish(session, exitstatus):
    import datetime as dt
    import json
    import time

    if hasattr(session.config, "workerinput"):
        return  # an xdist worker: the controller hears every test's report and writes
    written = checkout.written((_TREE_BEFORE or [None])[0], checkout.status(REPO))
    if written:
        listed = "\n  ".join(written)
        print(f"\nthe tests wrote into the checkout (no test may):\n  {listed}")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
    if not _STARTED or not _whole_suite(session.config) or not _DURATIONS:
        return
    wall = round(time.time() - _STARTED[0], 1)
    slowest = sorted(_DURATIONS.items(), key=lambda kv: -kv[1])[:20]
    record = {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "cpus": os.cpu_count(),
        "tests": len(_DURATIONS),
        "exit_status": int(exitstatus),
        "wall_s": wall,
        "workers": getattr(session.config.option, "numprocesses", None) or 1,
        "slowest": [{"test": t, "seconds": round(s, 1)} for t, s in slowest],
    }
    out = Path(os.environ.get("REPROLAB_TEST_TIME_DIR") or REPO / ".pytest_cache" / "reprolab")
    out.mkdir(parents=True, exist_ok=True)
    (out / "test_time.json").write_text(json.dumps(record, indent=2) + "\n")
    lines = [
        "# Test suite time (tests/conftest.py, a whole-suite run with REPROLAB_TEST_TIME_DIR set)",
        "",
        f"{record['date']}: {record['tests']} tests on {record['cpus']} CPUs "
        f"({record['workers']} pytest processes) in "
        f"{wall / 60:.1f} min (exit status {record['exit_status']}; target: under 25 min).",
        "",
        "| slowest tests (setup + call + teardown) | s |",
        "|---|---|",
    ] + [f"| `{t}` | {s:.1f} |" for t, s in slowest]
    (out / "test_time.md").write_text("\n".join(lines) + "\n")
