"""The convergence option end to end: real Snakemake reruns one stage at twice the
resolution (real Meep), and the report renders the Richardson estimate from that file.

Only stage1_single_slab's convergence.json is targeted (a 1D slab, seconds at 2x); the
Bragg stages at 2x would take minutes.
"""

import json
import math

import numpy as np
import pytest
import yaml

from reprolab.physics import thresholds as th
from reprolab.report import html as report_html
from reprolab.report import markdown
from tests.conftest import EXAMPLE
from tests.test_pipeline import PAPER, snakemake

pytestmark = pytest.mark.pipeline
STAGE = "stage1_single_slab"


@pytest.fixture(scope="module")
def converged(tmp_path_factory):
    wd = tmp_path_factory.mktemp("convergence")
    config = {
        "outputs_dir": "outputs",
        "papers": [{"paper_dir": str(EXAMPLE)}],
        "provider": {"kind": "replay"},
        "simulation": {"executor": "local", "max_mpi_ranks": 2},
        "gates": {"auto_approve": ["material_checkpoint"]},
        "checks": {"convergence": True},
    }
    (wd / "config.yaml").write_text(yaml.safe_dump(config))
    target = f"outputs/{PAPER}/stages/{STAGE}/convergence.json"
    run = snakemake(wd, target)
    assert run.returncode == 0, run.stderr[-3000:]
    return wd / "outputs" / PAPER


def test_stage_rerun_at_twice_the_resolution(converged):
    sd = converged / "stages" / STAGE
    conv = json.loads((sd / "convergence.json").read_text())
    assert conv["stage_id"] == STAGE and conv["scale"] == 2 and not conv["note"], conv
    # the rerun really ran at 2x (Meep says so in its log) into its own folder
    rerun = json.loads((sd / "convergence_2x" / "result.json").read_text())
    assert rerun["exit_code"] == 0
    design = json.loads((sd / "design.json").read_text())["output"]
    res = design["resolution"]
    assert f"with resolution {res}\n" in (sd / "run" / "stdout.txt").read_text()
    assert f"with resolution {2 * res}\n" in (sd / "convergence_2x/run/stdout.txt").read_text()
    # positions and values of the Fabry-Perot features at N and 2N, with the estimate
    qs = [q for q in conv["quantities"] if q["value_n"] is not None]
    assert len(qs) >= 4, qs
    points = [q for q in conv["quantities"] if q["name"].endswith("pointwise max change")]
    assert len(points) == 2, points  # T and R
    for point in points:
        assert point["status"] == "pass" and point["relative"] < th.CONVERGENCE_POINTWISE.warn
    for q in qs:
        expected = abs(q["value_2n"] - q["value_n"]) / th.CONVERGENCE_RICHARDSON_DIVISOR
        assert math.isclose(q["error_estimate"], expected, rel_tol=1e-9)
        assert q["status"] in ("pass", "warn")
    positions = [q for q in qs if q["name"].endswith("position")]
    # 800 px/a in a 1D slab: feature positions converged well inside the tolerance
    assert positions and max(q["relative"] for q in positions) < th.CONVERGENCE_TOLERANCE


def test_report_shows_the_estimate(converged):
    """The report's convergence section as the report rule writes it, from that file."""
    md = "\n".join(markdown.convergence_section(converged))
    conv = json.loads((converged / "stages" / STAGE / "convergence.json").read_text())
    assert "## Convergence (rerun at twice the resolution)" in md
    for q in conv["quantities"]:
        if q["value_n"] is None:  # the pointwise change has no single value per run
            assert f"| {STAGE} | {q['name']} | – | – | {q['error_estimate']:.3g} |" in md
            continue
        row = f"| {STAGE} | {q['name']} | {q['value_n']:.6g} | {q['value_2n']:.6g} | "
        assert row + f"{q['error_estimate']:.3g} | {q['status']} |" in md
    page = report_html.markdown_to_html(md, converged, "convergence")
    assert f"{conv['quantities'][0]['error_estimate']:.3g}" in page


@pytest.mark.parametrize(("change", "status"), [(0.001, "pass"), (0.03, "warn"), (0.15, "fail")])
def test_pointwise_change_between_resolutions_fails(change, status):
    """A curve that moves by 0.15 between N and 2N (what under-resolution did in the
    probe) fails; the old feature-only comparison could at most warn."""
    from reprolab.physics.convergence import pointwise

    x = np.linspace(0.4, 0.9, 101)
    y = 0.5 + 0.4 * np.sin(20 * x)
    q = pointwise("fig/T", x, y, x, y + change * np.max(np.abs(y)) * np.cos(20 * x) ** 2)
    assert q["status"] == status
    assert q["relative"] == pytest.approx(change, rel=0.05)
