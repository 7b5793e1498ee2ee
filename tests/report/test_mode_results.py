"""Tables and band diagrams through the steps: compared from a run-time record on disk,
recomputed, cited, judged by the verdict and shown in the report (a paper with the
table and band-diagram accessors, as a small fake)."""

from pathlib import Path
from types import SimpleNamespace

import pytest

from reprolab.physics import claims, compare
from reprolab.report import markdown
from reprolab.steps import mode_results
from reprolab.steps.verdict import stage_status
from tests.physics import test_bands as tb
from tests.physics import test_modes as tm
from tests.support.builders import write_record


class FakePaper:
    """The paper accessors of results about modes: one band diagram, one table."""

    def __init__(self, folder, table):
        self.folder = Path(folder)
        self._table = table
        axes = SimpleNamespace(left=SimpleNamespace(label="ωa/2πc", unit="c/a"), right=None)
        self._fig = SimpleNamespace(
            figure_id="fig2",
            title="TM bands",
            image="fig2.png",
            x_axis=SimpleNamespace(label="Wavevector"),
            y_axes=axes,
            curves=[],
            model_dump=lambda: {"figure_id": "fig2", "title": "TM bands"},
        )
        self.meta = SimpleNamespace(figures=[self._fig], tables=[table], unit_length=None)

    def is_table(self, rid):
        return rid == self._table["table_id"]

    def table(self, rid):
        assert self.is_table(rid)
        return self._table

    def band_diagram(self, rid):
        return tb.DIAGRAM if rid == "fig2" else None

    def band_points(self, rid):
        return tb.points()

    def figure(self, rid):
        if rid != "fig2":
            raise KeyError(f"no figure '{rid}' (valid: fig2)")
        return self._fig

    def result_ids(self):
        return ["fig2", self._table["table_id"]]


def stage_with_record(tmp_path, q5=120):
    run_dir = tmp_path / "stage1" / "run"
    run_dir.mkdir(parents=True)
    sims = tb.record() + tm.record(q5=q5)
    write_record(run_dir, sims)
    return run_dir.parent


def compared(tmp_path, q5=120):
    stage_dir = stage_with_record(tmp_path, q5)
    run = SimpleNamespace(paper=FakePaper(tmp_path, tm.TABLE))
    design = SimpleNamespace(mode_results=["fig2", "tab1"], figure_outputs=[])
    return mode_results.compare_mode_results(run, design, stage_dir)


def test_mode_results_compared_from_the_record_with_overlays(tmp_path):
    band, table = compared(tmp_path)
    assert band["figure_id"] == "fig2" and band["classification"] == "SUCCESS"
    assert table["figure_id"] == "tab1" and table["classification"] == "SUCCESS"
    for entry in (band, table):
        png = Path(entry["overlay"])
        assert png.name == f"overlay_{entry['figure_id']}.png"
        assert png.read_bytes()[:4] == b"\x89PNG"
    assert band["k_path_labels"] == [[0, "Γ"], [1, "X"], [2, "M"], [3, "Γ"]]
    assert compare.recompute_comparison({"figures": [band, table]}, {}) == []


def test_no_record_compares_nothing_and_fails(tmp_path):
    (tmp_path / "stage1" / "run").mkdir(parents=True)
    run = SimpleNamespace(paper=FakePaper(tmp_path, tm.TABLE))
    design = SimpleNamespace(mode_results=["tab1", "fig9"])
    table, unknown = mode_results.compare_mode_results(run, design, tmp_path / "stage1")
    assert table["classification"] == "FAILURE" and table["missing"] == 2
    assert "no run-time record" in table["note"]
    assert unknown["classification"] == "FAILURE" and "neither a table" in unknown["error"]


def test_a_tampered_classification_does_not_recompute(tmp_path):
    band, table = compared(tmp_path, q5=240)
    assert table["classification"] == "FAILURE"
    assert compare.recompute_comparison({"figures": [band, table]}, {}) == []
    table["classification"] = "SUCCESS"
    q = next(v for v in table["rows"][0]["values"] if v["name"] == "Q")
    q["class"] = "SUCCESS"
    problems = compare.recompute_comparison({"figures": [band, table]}, {})
    assert any("Q of {'m': 5} stored SUCCESS" in p for p in problems)
    assert any("classification stored SUCCESS, recomputed" in p for p in problems)
    band["bands"][0]["class"] = "FAILURE"
    assert any(
        "band 1 stored FAILURE" in p for p in compare.recompute_comparison({"figures": [band]}, {})
    )


def test_table_and_band_numbers_are_claims_the_analyst_can_cite(tmp_path):
    comparison = {"figures": compared(tmp_path, q5=240)}
    numbers = compare.comparison_numbers(comparison)
    assert numbers["tab1/m=5.Q.measured"] == 240
    assert numbers["fig2/band1.points"] == 13
    said = [
        {"figure_id": "tab1", "curve_id": "m=5", "quantity": "Q.measured", "value": 240},
        {"figure_id": "tab1", "curve_id": "m=5", "quantity": "Q.measured", "value": 120},
        {"figure_id": "fig2", "curve_id": "gap1", "quantity": "upper", "value": 0.5},
        {"figure_id": "tab1", "curve_id": "m=9", "quantity": "Q.measured", "value": 1},
    ]
    status = [c["status"] for c in claims.judge_claims(said, comparison)]
    assert status == ["ok", "contradicted", "ok", "unknown"]


def test_the_verdict_judges_a_table_target(tmp_path):
    comparison = {"figures": compared(tmp_path, q5=240)}
    stage = SimpleNamespace(target_figures=["fig2", "tab1"])
    status, reason = stage_status(stage, {"verdict": "pass", "checks": []}, comparison)
    assert status == "completed_failed" and "tab1: FAILURE" in reason
    stage = SimpleNamespace(target_figures=["fig2", "tab2"])
    assert "not reproduced: ['tab2']" in stage_status(stage, {"verdict": "pass"}, comparison)[1]


def test_a_table_target_reads_as_a_result_without_image(tmp_path):
    paper = FakePaper(tmp_path, tm.TABLE)
    assert mode_results.result_meta(paper, "tab1")["kind"] == "table"
    assert mode_results.result_image(paper, "tab1") is None
    assert mode_results.result_image(paper, "fig2") == tmp_path / "fig2.png"
    assert mode_results.result_ids(paper) == ["fig2", "tab1"]
    assert mode_results.k_labels(paper)["X"] == [0.5, 0, 0]


@pytest.mark.parametrize("q5", [120, 3e8])
def test_the_report_shows_a_table_and_a_band_diagram(tmp_path, q5):
    band, table = compared(tmp_path, q5=q5)
    md = "\n".join(markdown.figure_section("tab1", "WGM", "stage1", table, [], ""))
    assert "| labels | value | stated | measured | error | status | class |" in md
    assert "| m = 5 | frequency | 0.3012 c/a | 0.3012 c/a | +0 % | match | SUCCESS |" in md
    if q5 == 120:
        assert "| m = 5 | Q | 120 | 120 | ×1 (log10 +0.000) | match | SUCCESS |" in md
    else:  # a lossless mode's Q is never a number
        assert "| m = 5 | Q | 120 | above what this run can measure (> " in md
        assert "above_measurable" in md and "3e+08" not in md
    md = "\n".join(markdown.figure_section("fig2", "TM bands", "stage1", band, [], ""))
    assert "| band | points | missing | RMS rel. | max rel. | class |" in md
    assert "| 1 | 13 | 0 | 0.00% | 0.00% | SUCCESS |" in md
    assert "| 1 | 0.35–0.5 | 0.35–0.5 |" in md
    assert "omega = 0" in md


def test_the_report_step_places_a_table_and_a_band_diagram(tmp_path):
    from reprolab.steps.report import figure_comparison

    band, table = compared(tmp_path, q5=3e8)
    paper = FakePaper(tmp_path, tm.TABLE)
    (tmp_path / "fig2.png").write_bytes(Path(band["overlay"]).read_bytes())
    records = SimpleNamespace(designs={"stage1": {}}, analyses={"stage1": {"per_figure": []}})
    out_dir = tmp_path / "report"
    (out_dir / "assets").mkdir(parents=True)
    run = SimpleNamespace(paper=paper)
    md = "\n".join(
        figure_comparison(run, records, ("tab1", "stage1", table), out_dir / "assets", out_dir)
    )
    assert "![tab1: paper against run](../stage1/overlay_tab1.png)" in md
    assert "above_measurable" in md and "classification **FAILURE**" in md
    md = "\n".join(
        figure_comparison(run, records, ("fig2", "stage1", band), out_dir / "assets", out_dir)
    )
    assert (out_dir / "assets" / "fig2_paper.png").is_file()
    assert "![fig2 overlay](../stage1/overlay_fig2.png)" in md and "| band | points |" in md


def test_the_summary_table_shows_band_and_mode_errors(tmp_path):
    band, table = compared(tmp_path)
    rows = [("fig2", "stage1", band), ("tab1", "stage1", table)]
    md = "\n".join(markdown.summary_table(rows))
    assert "| fig2 | stage1 | **SUCCESS** | 0.00% | 0.00% | – |" in md
    assert "| tab1 | stage1 | **SUCCESS** | – | – | 0.00% |" in md
    assert "`q_log10`" in md and "`band_max_rel`" in md  # the thresholds table lists them


def test_the_compare_step_writes_mode_results_beside_the_curves(tmp_path, monkeypatch):
    from reprolab.fileio import read_json
    from reprolab.steps import compare as compare_step

    stage = stage_with_record(tmp_path, q5=240)
    (stage / "design.json").write_text("{}")
    (stage / "checks.json").write_text('{"verdict": "pass", "checks": []}')
    design = SimpleNamespace(stage_id="stage1", figure_outputs=[], mode_results=["tab1", "fig2"])
    monkeypatch.setattr(compare_step, "load_design", lambda _p: SimpleNamespace(output=design))
    run = SimpleNamespace(paper=FakePaper(tmp_path, tm.TABLE))
    compare_step.compare_stage(
        run, stage / "design.json", stage / "checks.json", stage / "comparison.json"
    )
    written = read_json(stage / "comparison.json")
    got = {f["figure_id"]: f for f in written["figures"]}
    assert got["tab1"]["classification"] == "FAILURE" and got["fig2"]["classification"] == "SUCCESS"
    assert {t["metric"] for t in written["thresholds"]} >= {"q_log10", "band_rms_rel"}
    assert compare.recompute_comparison(written, {}) == []
