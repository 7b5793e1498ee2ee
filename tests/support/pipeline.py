"""Paths and commands the tests share: the repository, the example paper, a run's
config, and Snakemake and `reprolab` as a user types them."""

import subprocess
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "papers" / "silica_bragg_2026"
AG_EXAMPLE = REPO / "examples" / "papers" / "ag_etalon_2026"
PAPER = EXAMPLE.name
SNAKEMAKE = str(Path(sys.executable).with_name("snakemake"))
REPROLAB = str(Path(sys.executable).with_name("reprolab"))


def write_config(wd: Path, papers: list[Path] = (EXAMPLE,), **extra) -> None:
    """The config most pipeline tests run with: `papers` replayed from their recordings,
    local jobs of up to 2 ranks, the material gate auto-approved; `extra` sections
    (checks, debug, gates, ...) replace the defaults."""
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


def snakemake(workdir: Path, *extra: str, env: dict | None = None) -> subprocess.CompletedProcess:
    cmd = snakemake_cmd(workdir, *extra)
    return subprocess.run(cmd, capture_output=True, text=True, timeout=900, env=env)


def snakemake_cmd(workdir: Path, *extra: str) -> list[str]:
    """The command a user runs in `workdir` (its config.yaml), with `extra` options."""
    return [
        SNAKEMAKE,
        "--snakefile",
        str(REPO / "Snakefile"),
        "--directory",
        str(workdir),
        "--configfile",
        str(workdir / "config.yaml"),
        "--cores",
        "2",
        "--keep-going",
        *extra,
    ]


def run_to_report(wd: Path, paper_dir: Path, paper_id: str, what: str) -> Path:
    """One example paper through the whole pipeline offline in `wd`, to its report; the
    time it took printed (pytest -s) as `what`."""
    import time

    write_config(wd, [paper_dir])
    started = time.time()
    run = snakemake(wd)
    print(f"{what}: {time.time() - started:.0f} s")
    report = wd / "outputs" / paper_id / f"REPRODUCTION_REPORT_{paper_id}.md"
    assert run.returncode == 0 and report.is_file(), run.stderr[-3000:]
    return wd
