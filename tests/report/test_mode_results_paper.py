"""Results about modes read through the real paper format: Meep's ring tutorial table
and a rod lattice's band diagram (tests/core/test_paper_modes.py), compared with records
that measured them, their key values included."""

from types import SimpleNamespace

import pytest

from reprolab.paper import Paper
from reprolab.physics import compare
from reprolab.steps import mode_results
from tests.core.test_paper_modes import BANDS, RING, RODS, band_csv, write_paper
from tests.support.builders import write_record


def mode(freq, q):
    decay = -freq / (2 * q) if q > 0 else 0.0
    return {"freq": freq, "Q": q, "decay": decay, "amp": 0.5, "error": 1e-8}


def stage(tmp_path, sims):
    run_dir = tmp_path / "stage1" / "run"
    run_dir.mkdir(parents=True)
    write_record(run_dir, sims)
    return run_dir.parent


def compared(paper, stage_dir, ids):
    design = SimpleNamespace(mode_results=ids)
    return mode_results.compare_mode_results(SimpleNamespace(paper=paper), design, stage_dir)


def ring_record(q_high=1677):
    found = [mode(0.11810, 80.7), mode(0.14716, 316), mode(0.17525, q_high)]
    return [
        {"index": 0, "k_point": None, "runs": [{"sim_time": 300.0, "harminv": [{"modes": found}]}]}
    ]


@pytest.mark.parametrize(("q_high", "expected"), [(1677, "SUCCESS"), (2 * 1677, "FAILURE")])
def test_the_ring_table_and_its_key_values(tmp_path, q_high, expected):
    paper = Paper(write_paper(tmp_path / "ring", RING))
    (entry,) = compared(paper, stage(tmp_path, ring_record(q_high)), ["tab1"])
    assert entry["kind"] == "table" and entry["classification"] == expected
    assert [r["matched"]["freq"] for r in entry["rows"]] == [0.1181, 0.14716, 0.17525]
    imag = entry["rows"][0]["values"][1]
    assert imag["measure"] == "other" and imag["status"] == "not_compared"
    kvs = {kv["quantity"]: kv for kv in entry["key_values"]}
    assert kvs["frequency of the highest-Q mode"]["class"] == "SUCCESS"
    highest = kvs["highest Q"]  # found through its row (0.17525), not the nearest Q
    assert highest["sim"] == q_high and highest["class"] == expected
    assert compare.recompute_comparison({"figures": [entry]}, {}) == []
    assert compare.comparison_numbers({"figures": [entry]})["tab1/key_values.highest Q"] == q_high


def rods_record(scale=1.0):
    """A run at Γ, X and M that found the digitized bands (Γ: omega = 0 not returned,
    bands 2 and 3 one mode)."""
    runs = []
    for x, k in ((0, [0, 0, 0]), (1, [0.5, 0, 0]), (2, [0.5, 0.5, 0])):
        freqs = sorted({f * scale for px, f, _ in BANDS if px == x and f > 0})
        found = [mode(f, 1e9) for f in freqs]
        runs.append({"sim_time": 200.0, "k_point": k, "harminv": [{"modes": found}]})
    return [{"index": 0, "k_point": [0.5, 0.5, 0], "runs": runs}]


@pytest.mark.parametrize(("scale", "expected"), [(1.0, "SUCCESS"), (1.02, "PARTIAL")])
def test_the_rods_band_diagram_and_its_key_values(tmp_path, scale, expected):
    paper = Paper(write_paper(tmp_path / "rods", RODS, band_csv()))
    (entry,) = compared(paper, stage(tmp_path, rods_record(scale)), ["fig2"])
    assert entry["kind"] == "band_diagram" and entry["classification"] == expected, entry
    assert entry["missing"] == []
    at_gamma = [p for p in entry["points"] if p["k_path"] == 0 and p["band"] in (2, 3)]
    assert len(at_gamma) == 2 and all(p["degenerate"] for p in at_gamma)
    kvs = {kv["quantity"]: kv for kv in entry["key_values"]}
    assert kvs["band 1 at X"]["labels"] == {"k": "X", "band": 1}
    assert kvs["band 1 at X"]["sim"] == pytest.approx(0.28 * scale)
    assert kvs["gap-midgap ratio"]["sim"] == pytest.approx(100 * 2 * 0.12 / 0.764)
    assert kvs["gap lower edge"]["class"] == expected  # 2 % off: PARTIAL
    assert kvs["gap-midgap ratio"]["class"] == "SUCCESS"  # a uniform shift keeps the ratio
    assert (tmp_path / "stage1" / "overlay_fig2.png").is_file()
    assert compare.recompute_comparison({"figures": [entry]}, {}) == []


def test_an_id_the_paper_does_not_have_is_a_failure_naming_it(tmp_path):
    paper = Paper(write_paper(tmp_path / "rods", RODS, band_csv()))
    (entry,) = compared(paper, stage(tmp_path, rods_record()), ["fig9"])
    assert entry["classification"] == "FAILURE" and "'fig9' in mode_results" in entry["error"]


def test_the_report_shows_a_result_that_could_not_be_compared(tmp_path):
    from reprolab.steps.report import figure_comparison

    paper = Paper(write_paper(tmp_path / "rods", RODS, band_csv()))
    (entry,) = compared(paper, stage(tmp_path, rods_record()), ["fig9"])
    records = SimpleNamespace(designs={"stage1": {}}, analyses={"stage1": {"per_figure": []}})
    md = "\n".join(
        figure_comparison(
            SimpleNamespace(paper=paper), records, ("fig9", "stage1", entry), tmp_path, tmp_path
        )
    )
    assert "FAILURE: 'fig9' in mode_results is neither a table nor" in md


def test_the_compare_step_with_a_real_design_and_paper(tmp_path):
    from agents.simulation_designer import SimulationDesign
    from reprolab.fileio import read_json
    from reprolab.steps.compare import compare_stage
    from tests.support.builders import minimal_design

    paper = Paper(write_paper(tmp_path / "rods", RODS, band_csv()))
    stage_dir = stage(tmp_path, rods_record())
    design = SimulationDesign.model_validate(
        minimal_design("stage1_bands", dimensions=2, mode_results=["fig2"])
    )
    (stage_dir / "design.json").write_text('{"output": ' + design.model_dump_json() + "}")
    (stage_dir / "checks.json").write_text('{"verdict": "pass", "checks": []}')
    run = SimpleNamespace(paper=paper)
    out = stage_dir / "comparison.json"
    compare_stage(run, stage_dir / "design.json", stage_dir / "checks.json", out)
    (entry,) = read_json(out)["figures"]
    assert entry["figure_id"] == "fig2" and entry["classification"] == "SUCCESS"
    assert compare.recompute_comparison(read_json(out), {}) == []
