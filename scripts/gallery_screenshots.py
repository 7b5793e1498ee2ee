"""The docs' screenshots of one figure per kind of the gallery's papers: each paper run
offline through the whole pipeline (replayed agents, real Meep, real Snakemake) in its
own folder under WORKDIR, then its figure's section shot in headless Chromium
(scripts/report_screenshots.py). Minutes per paper on two cores; the Mie sphere (3D,
with its coarser runs) the longest.

    .venv/bin/python scripts/gallery_screenshots.py WORKDIR [KIND ...]
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).parent))
from report_screenshots import shoot  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
SHOTS = REPO / "docs" / "screenshots"
# kind -> (paper, the figure's heading, extra config: the Mie sphere's grid evidence)
KINDS = {
    "table": ("disk_resonator_2026", "### tab1", {}),
    "bands": ("pc_rods_bands_2026", "### fig1", {}),
    "polar": ("dipole_array_pattern_2026", "### fig1", {}),
    "log_axis": ("purcell_mirrors_2026", "### fig1", {}),
    "mie_3d": ("mie_sphere_2026", "### fig1", {"checks": {"convergence": True}}),
}


def run_paper(workdir: Path, paper: str, extra: dict) -> Path:
    """The paper run offline to its report in workdir/paper; the report's path."""
    wd = workdir / paper
    wd.mkdir(parents=True, exist_ok=True)
    config = {
        "outputs_dir": "outputs",
        "papers": [{"paper_dir": str(REPO / "examples" / "papers" / paper)}],
        "provider": {"kind": "replay"},
        "simulation": {"executor": "local", "max_mpi_ranks": 2},
        "gates": {"auto_approve": ["material_checkpoint"]},
        **extra,
    }
    (wd / "config.yaml").write_text(yaml.safe_dump(config))
    snakemake = str(Path(sys.executable).with_name("snakemake"))
    run = subprocess.run(
        [snakemake, "--snakefile", str(REPO / "Snakefile"), "--directory", str(wd)]
        + ["--configfile", str(wd / "config.yaml"), "--cores", "2", "--keep-going"],
        capture_output=True,
        text=True,
    )
    report = wd / "outputs" / paper / f"REPRODUCTION_REPORT_{paper}.md"
    if run.returncode != 0 or not report.is_file():
        raise SystemExit(f"{paper}: the pipeline failed\n{run.stderr[-3000:]}")
    return report


if __name__ == "__main__":
    workdir, *kinds = sys.argv[1:]
    for kind in kinds or KINDS:
        paper, heading, extra = KINDS[kind]
        report = run_paper(Path(workdir), paper, extra)
        print(shoot(report, SHOTS / f"gallery_{kind}.png", heading))
