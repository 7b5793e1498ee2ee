"""The gallery's Mie sphere (mie_sphere_2026: the scattering efficiency Q_sca of a
lossless sphere, n = 1.5, r = 0.5 µm, against the size parameter x = 2πr/λ, its truth
the Mie series) through the real pipeline offline: real Snakemake, real Meep in 3D (two
mirror planes), the replay recordings, and the convergence evidence from the coarser
runs (`checks.convergence: true`; the default `convergence_method: auto` picks
`coarse` for a 3D stage: reruns at 0.75 and 0.55 of the resolution).

The correct run is SUCCESS on the paper's size-parameter axis (the run writes
wavelength_um: converted through the paper's scatterer_radius), passes the lossless
sphere's net-flux check and the normalisation bound, and its estimated grid error is
small. Wrong on purpose, reusing the run (no simulation again): Q_sca divided by 4πr²
instead of πr² fails the normalisation bound on the run's own record and is not SUCCESS
in the comparison. (Half the resolution and a radius 10 % off: the planted runs of
tests/physics/test_mie_sphere_planted.py.)
"""

from __future__ import annotations

import csv
import importlib.util
import math
import shutil
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from reprolab.fileio import read_json
from reprolab.paper import Paper
from reprolab.physics.bounds import bound_checks
from reprolab.physics.record_checks import load_record
from reprolab.steps.compare import compare_stage
from tests.support.pipeline import snakemake, write_config

REPO = Path(__file__).parents[2]
PAPER = "mie_sphere_2026"
EXAMPLE = REPO / "examples" / "papers" / PAPER
STAGE = "stage1_mie_efficiency"
FILE = "mie_efficiency.csv"

pytestmark = pytest.mark.pipeline


def _mie():
    spec = importlib.util.spec_from_file_location("mie_data", EXAMPLE / "make_paper_data.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def mie_run(tmp_path_factory) -> Path:
    wd = tmp_path_factory.mktemp("mie")
    write_config(wd, [EXAMPLE], checks={"convergence": True})
    started = time.time()
    run = snakemake(wd)
    print(f"mie sphere with coarse convergence: {time.time() - started:.0f} s")
    report = wd / "outputs" / PAPER / f"REPRODUCTION_REPORT_{PAPER}.md"
    assert run.returncode == 0 and report.is_file(), run.stderr[-3000:]
    return wd


def stage_dir(wd: Path) -> Path:
    return wd / "outputs" / PAPER / "stages" / STAGE


def rows(path: Path) -> list[dict[str, float]]:
    with open(path, newline="") as fh:
        return [{k: float(v) for k, v in r.items()} for r in csv.DictReader(fh)]


def test_q_sca_is_reproduced_on_the_size_parameter_axis(mie_run):
    stage = stage_dir(mie_run)
    assert read_json(stage / "verdict.json")["status"] == "completed_success"
    print(f"stage run: {read_json(stage / 'result.json')['runtime_seconds']:.0f} s")
    (fig,) = read_json(stage / "comparison.json")["figures"]
    assert fig["classification"] == "SUCCESS"
    (curve,) = fig["curves"]
    assert curve["x_column"] == "wavelength_um" and curve["coverage"] == 1.0
    assert curve["metrics"]["rms_rel"] < 0.01 and curve["metrics"]["max_abs_rel"] < 0.03
    # against the series itself at the run's own size parameters (x = 2πr/λ)
    mie = _mie()
    errors = []
    for row in rows(stage / "run" / FILE):
        x = 2 * math.pi * 0.5 / row["wavelength_um"]
        errors.append(row["Q_sca"] / mie.mie_efficiencies(1.5, x)[0] - 1)
    print(f"Meep vs Mie: max relative error {max(map(abs, errors)):.4f}")
    assert len(errors) == 25 and max(map(abs, errors)) < 0.03
    report = (mie_run / "outputs" / PAPER / f"REPRODUCTION_REPORT_{PAPER}.md").read_text()
    assert "| Overall classification | **SUCCESS** |" in report
    # the run used the two mirror planes its design states
    sims = load_record(stage / "run")
    assert len(sims) == 2
    for sim in sims:
        assert sim["dimensions"] == 3
        mirrors = {(s["kind"], s["direction"], s["phase"]) for s in sim["symmetries"]}
        assert {(k, d) for k, d, _ in mirrors} == {("Mirror", 0), ("Mirror", 1)}, mirrors


def test_the_correct_run_passes_its_checks(mie_run):
    checks = read_json(stage_dir(mie_run) / "checks.json")
    found = {c["name"]: c for c in checks["checks"]}
    assert not [c for c in found.values() if c["status"] == "fail"], found
    net = found[f"net_flux_lossless:{FILE}"]
    assert net["status"] == "pass" and net["value"] < 4e-3, net
    for col in ("Q_sca", "Q_abs"):
        bound = found[f"bound:cross_section_normalisation:{FILE}:{col}"]
        assert bound["status"] == "pass" and bound["value"] == pytest.approx(1, abs=0.02)
    for name in ("built:geometry_as_declared", "built:resolution_ppw", "bound:closed_box_balance"):
        assert found[name]["status"] == "pass", found[name]


def test_the_convergence_evidence_is_present(mie_run):
    stage = stage_dir(mie_run)
    conv = read_json(stage / "convergence.json")
    assert conv["status"] == "converged", conv
    (variant,) = conv["variants"]
    assert variant["id"] == "resolution_coarse" and variant["ran"], variant
    assert conv["method"] == "coarse", conv.get("method")  # auto's choice in 3D
    for scale in ("0.75", "0.55"):
        result = read_json(stage / f"convergence_{scale}x" / "result.json")
        assert result["exit_code"] == 0
        print(f"coarse rerun {scale}x: {result['runtime_seconds']:.0f} s")
    (q,) = [q for q in conv["quantities"] if q["name"] == "fig1/qsca pointwise max change"]
    # the bound (Xing & Stern's factor at the observed order, 1.75 x 1.5 % = 2.7 %) under
    # the 4 % limit, over its 2 % warn level; the run is 1.2 % from the Mie series
    assert q["status"] == "warn" and q["error_estimate"] < 0.04, q
    assert q["error_estimate"] >= q["richardson_error"] * 1.6, q
    assert 1.0 <= q["order"] <= 4.0, q  # Yee's second order, give or take the staircase
    print(f"grid error bound {q['error_estimate']:.4f}, observed order {q['order']:.2f}")


def test_q_sca_over_four_pi_r2_is_not_success(mie_run, tmp_path):
    """The finished stage copied, its Q_sca divided by 4 (4πr² instead of πr²): the
    record's normalisation bound fails naming the factor, and the comparison is not
    SUCCESS; the correct copy is unchanged by the same judgement."""
    stage = tmp_path / STAGE
    shutil.copytree(stage_dir(mie_run), stage, symlinks=True)
    design = read_json(stage / "design.json")["output"]
    path = stage / "run" / FILE
    text = path.read_text().splitlines()
    out = [text[0]]
    for line in text[1:]:
        lam, q_sca, q_abs = line.split(",")
        out.append(f"{lam},{float(q_sca) / 4:.8g},{q_abs}")
    path.write_text("\n".join(out) + "\n")
    found = {c.name: c for c in bound_checks(stage / "run", design)}
    bound = found[f"bound:cross_section_normalisation:{FILE}:Q_sca"]
    assert bound.status == "fail" and bound.value == pytest.approx(0.25, abs=0.01), bound
    assert found[f"bound:cross_section_normalisation:{FILE}:Q_abs"].status == "pass"
    run = SimpleNamespace(paper=Paper(EXAMPLE))
    compare_stage(run, stage / "design.json", stage / "checks.json", stage / "c.json")
    (fig,) = read_json(stage / "c.json")["figures"]
    assert fig["classification"] == "FAILURE"
    right = {c.name: c for c in bound_checks(stage_dir(mie_run) / "run", design)}
    assert right[f"bound:cross_section_normalisation:{FILE}:Q_sca"].status == "pass"
