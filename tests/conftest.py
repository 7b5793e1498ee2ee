import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "papers" / "silica_bragg_2026"
sys.path.insert(0, str(REPO))

REPROLAB = str(Path(sys.executable).with_name("reprolab"))

# Tests never reach a real model: no key may leak in from the environment.
os.environ.pop("ANTHROPIC_API_KEY", None)


def write_config(wd: Path, papers: list[Path] = (EXAMPLE,), **extra) -> None:
    """The config most pipeline tests run with: `papers` replayed from their recordings,
    local jobs of up to 2 ranks, the material gate auto-approved; `extra` sections
    (checks, debug, gates, ...) replace the defaults."""
    import yaml

    config = {
        "outputs_dir": "outputs",
        "papers": [{"paper_dir": str(p)} for p in papers],
        "provider": {"kind": "replay"},
        "simulation": {"executor": "local", "max_mpi_ranks": 2},
        "gates": {"auto_approve": ["material_checkpoint"]},
        **extra,
    }
    (wd / "config.yaml").write_text(yaml.safe_dump(config))


def reprolab_cli(wd: Path, *args: str) -> subprocess.CompletedProcess:
    """`reprolab ARGS --configfile config.yaml` as a user types it in the run's folder."""
    return subprocess.run(
        [REPROLAB, *args, "--configfile", "config.yaml"],
        cwd=wd,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture(scope="session")
def offline_example_run(tmp_path_factory) -> Path:
    """The example paper run to the end once per session (replay provider, local jobs,
    the material gate auto-approved): the uninterrupted reference several modules
    compare against. Tests read it; none may change it."""
    import yaml

    from tests.test_pipeline import snakemake

    wd = tmp_path_factory.mktemp("offline_example")
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
    return wd


@pytest.fixture
def example_paper():
    from reprolab.paper import Paper

    return Paper(EXAMPLE)


# The suite's own time is a benchmark (make test must stay under 20 min on 2 cores):
# a whole-suite run writes benchmarks/results/test_time.{json,md}; partial runs do not.
_DURATIONS: dict[str, float] = {}
_STARTED: list[float] = []


def pytest_sessionstart(session):
    import time

    _STARTED.append(time.time())


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
    out = REPO / "benchmarks" / "results"
    out.mkdir(parents=True, exist_ok=True)
    (out / "test_time.json").write_text(json.dumps(record, indent=2) + "\n")
    lines = [
        "# Test suite time (written by tests/conftest.py on a whole-suite run)",
        "",
        f"{record['date']}: {record['tests']} tests on {record['cpus']} CPUs "
        f"({record['workers']} pytest processes) in "
        f"{wall / 60:.1f} min (exit status {record['exit_status']}; target: under 20 min).",
        "",
        "| slowest tests (setup + call + teardown) | s |",
        "|---|---|",
    ] + [f"| `{t}` | {s:.1f} |" for t, s in slowest]
    (out / "test_time.md").write_text("\n".join(lines) + "\n")
