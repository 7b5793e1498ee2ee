"""`reprolab new-paper` on PDFs set as four journals set them (tests/support/journal_pdfs:
REVTeX-, Optica-, ACS- and IEEE-like): every number-bearing sentence kept with its
numbers and exponents, no running header or page number in the text, every table a
markdown table and offered as `tables:` or key values with the units of its headings,
one entry per figure panel with its axis labels, and each vector curve read off the
PDF's paths within 1 % of the data it was drawn from."""

import csv
import re

import numpy as np
import pymupdf
import pytest
import yaml

from reprolab.cli import main
from reprolab.cli.pdf_intake import MAX_PIXELS
from tests.support.journal_pdfs import LAYOUTS, TITLE


def squeeze(text: str) -> str:
    """Text without whitespace or table rules: a PDF states no spaces, only gaps."""
    return re.sub(r"[\s|]+", "", text)


@pytest.fixture(scope="module", params=sorted(LAYOUTS))
def made(request, tmp_path_factory):
    tmp = tmp_path_factory.mktemp(request.param)
    want = LAYOUTS[request.param](tmp / "paper.pdf")
    out = tmp / "folder"
    assert main(["new-paper", str(tmp / "paper.pdf"), "--id", "p", "--out", str(out)]) == 0
    return want, out


def test_every_number_kept_and_no_running_head(made):
    want, out = made
    md = (out / "paper.md").read_text()
    lost = [s for s in want.sentences if squeeze(s) not in squeeze(md)]
    assert len(want.sentences) > 30 and not lost, lost
    assert "2.1 × 10⁴" in md and "Q_i" in md and "n_eff" in md and "1.53×10⁵" in md
    for running in set(want.running):
        assert not re.search(rf"(?m)^{re.escape(running)}$", md), running
    assert not re.search(r"\b[a-z]{2,}- *\n", md)  # no word left broken at a line end
    for heading in want.headings[1:]:  # the sections, in larger type or in bold
        assert re.search(rf"(?m)^##+ {re.escape(heading)}$", md), heading


def test_tables_are_tables_with_units(made):
    want, out = made
    md = (out / "paper.md").read_text()
    for table in want.tables:
        for row in table["rows"]:
            assert f"| {' | '.join(row)} |" in md, row
    meta = yaml.safe_load((out / "metadata.yaml").read_text())
    (modes,) = meta["tables"]
    assert modes["labels"] == ["m"]
    assert [c["measure"] for c in modes["columns"]] == [
        "mode_wavelength",
        "mode_frequency",
        "quality_factor",
    ]
    assert [c["unit"] for c in modes["columns"]] == ["nm", "THz", "1"]
    assert modes["rows"][0] == {"m": 112, "wavelength": 1550.2, "frequency": 193.39, "Q": 2.1e4}
    kv = {k["quantity"]: (k["value"], k["unit"]) for k in meta["key_values"]}
    assert kv["Film thickness"] == (800, "nm") and kv["Ring radius"] == (20, "µm")
    assert kv["Resolution (pixels per µm)"][0] == 40


def test_panels_labels_and_curves_from_paths(made):
    want, out = made
    meta = yaml.safe_load((out / "metadata.yaml").read_text())
    figs = {f["figure_id"]: f for f in meta["figures"]}
    expected = {}
    for fid, fig in want.figures.items():
        panels = fig["panels"]
        for i, panel in enumerate(panels):
            expected[fid + ("abcd"[i] if len(panels) > 1 else "")] = (panel, fig["raster"])
    assert sorted(figs) == sorted(expected)
    assert meta["title"] == TITLE  # set on two lines, read as one
    for fid, (panel, raster) in expected.items():
        fig = figs[fid]
        assert fig["caption"] == want.figures[fid[:4]]["caption"]
        if raster:  # a raster figure: nothing read from it, all to fill in
            assert fig["x_axis"]["label"].startswith("TODO: ")
            continue
        assert fig["x_axis"]["label"] == f"TODO confirm: {panel['x']}"
        assert fig["y_axes"]["left"]["label"] == f"TODO confirm: {panel['y']}"
        found = fig["curves"]
        assert len(found) == len(panel["curves"])
        for curve, (name, (x, y)) in zip(found, panel["curves"].items(), strict=True):
            if len(panel["curves"]) > 1:  # named by its legend entry
                assert curve["label"] == f"TODO confirm: {name}"
            path = out / curve["digitized"].removeprefix("TODO confirm: ")
            rows = list(csv.reader(path.open()))
            assert rows[0] == ["x", "y"] and len(rows) > 5
            xs, ys = np.array(rows[1:], dtype=float).T
            span = np.ptp(y)
            assert np.all((xs >= x.min() - 0.01 * np.ptp(x)) & (xs <= x.max() + 0.01 * np.ptp(x)))
            if panel.get("log_y"):
                err = np.abs(ys / np.exp(np.interp(xs, x, np.log(y))) - 1)
                assert err.max() < 0.01, err.max()
            else:
                assert np.abs(ys - np.interp(xs, x, y)).max() < 0.01 * span


def test_check_names_an_exponent_flattened(made):
    """The account of every line is the guard: an exponent turned into plain digits in
    paper.md (10⁴ into 104) is named by `check` with its page."""
    _, out = made
    md = out / "paper.md"
    text = md.read_text()
    try:
        md.write_text(text.replace("2.1 × 10⁴ at the resonance", "2.1 × 104 at the resonance"))
        problems = []
        from reprolab.cli.pdf_intake import unplaced

        problems = [m for _, m in unplaced(out) if "2.1 × 10⁴" in m]
        assert problems and "is not in paper.md" in problems[0]
    finally:
        md.write_text(text)
    assert not unplaced(out)


def test_a_huge_page_renders_within_the_pixel_cap(tmp_path):
    """A tiny PDF with one page of 200 × 200 inches and a drawing covering it: the
    figure is rendered at the dpi that keeps it under MAX_PIXELS, not at 150 dpi
    (which would be 900 million pixels)."""
    doc = pymupdf.open()
    page = doc.new_page(width=14400, height=14400)
    page.draw_rect(pymupdf.Rect(1000, 1000, 9000, 9000), color=(0, 0, 0), fill=(0.5, 0.5, 1))
    page.insert_text((1000, 9500), "Fig. 1. A large square.", fontsize=200)
    doc.save(tmp_path / "huge.pdf")
    assert (tmp_path / "huge.pdf").stat().st_size < 5000
    out = tmp_path / "huge"
    assert main(["new-paper", str(tmp_path / "huge.pdf"), "--id", "h", "--out", str(out)]) == 0
    (image,) = (out / "figures").iterdir()
    pix = pymupdf.Pixmap(str(image))
    assert 1_000_000 < pix.width * pix.height <= MAX_PIXELS


def test_a_figure_without_data_is_offered_the_digitizer(made):
    """The raster figures are named in the skeleton's header with the command that
    digitizes them from their image."""
    want, out = made
    header = (out / "metadata.yaml").read_text().split("\npaper_id:")[0]
    raster = [fid for fid, fig in want.figures.items() if fig["raster"]]
    assert f"No curve data was read from {', '.join(raster)}." in header
    for fid in raster:
        assert f"reprolab digitize figures/{fid}.png --x PIXEL=VALUE" in header


def test_digitize_a_raster_curve_from_calibration_and_colour(tmp_path, capsys):
    """A raster plot (matplotlib PNG of a known curve, with a legend of another colour
    inside the frame): two calibration points per axis, read where the ticks are drawn,
    and the curve's colour give the curve within 1 % of its range; a log axis too; bad
    options are named."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t = np.linspace(0, 10, 200)
    y = 1e3 * np.exp(-t / 3)
    for log in (False, True):
        fig, ax = plt.subplots(figsize=(5, 3.5), dpi=120)
        ax.plot(t, y, color="#d62728", lw=1.5, label="decay")
        ax.plot(t, 0.5 * y, color="#1f77b4", lw=1.5, label="other")
        ax.legend(loc="upper right")
        if log:
            ax.set_yscale("log")
        fig.canvas.draw()
        height = fig.bbox.height

        def pixel(x, v, ax=ax, height=height):
            px, py = ax.transData.transform((x, v))
            return px, height - py

        png = tmp_path / f"plot{log}.png"
        fig.savefig(png, dpi=120)
        plt.close(fig)
        (x0, _), (x1, _) = pixel(2, 1e3), pixel(8, 1e3)
        (_, y0), (_, y1) = pixel(0, 10 if log else 100), pixel(0, 1000 if log else 800)
        args = ["digitize", str(png), "--x", f"{x0:.2f}=2", f"{x1:.2f}=8"]
        args += ["--y", f"{y0:.2f}={10 if log else 100}", f"{y1:.2f}={1000 if log else 800}"]
        args += ["--color", "#d62728", "--out", str(tmp_path / "c.csv")]
        assert main(args + (["--log-y"] if log else [])) == 0, capsys.readouterr().err
        rows = list(csv.reader((tmp_path / "c.csv").open()))
        xs, ys = np.array(rows[1:], dtype=float).T
        inside = (xs >= 0) & (xs <= 10)  # the legend's sample of the colour is not the curve
        truth = 1e3 * np.exp(-xs[inside] / 3)
        err = np.abs(np.log(ys[inside] / truth)) if log else np.abs(ys[inside] - truth) / np.ptp(y)
        assert len(xs) > 100 and err.max() < 0.01, err.max()
    assert main(args[:-2] + ["--color", "red", "--out", str(tmp_path / "d.csv")]) == 2
    assert "'red' is not a colour; valid: #RRGGBB" in capsys.readouterr().err
    bad = [a if a != f"{x1:.2f}=8" else "8" for a in args]
    assert main(bad) == 2
    assert "'8' is not PIXEL=VALUE" in capsys.readouterr().err


def test_confirmed_folder_and_the_report_names_intake_digitized_figures(made):
    """The skeleton, its TODOs confirmed (the raster figures left out), passes `check`;
    the report's line names the figures whose curves new-paper read off the PDF, and
    no line appears once the curves are the paper's own data."""
    import shutil

    from reprolab.paper import Paper
    from reprolab.report.markdown import intake_digitized_note
    from tests.support.paper_pdf import confirm

    want, made_out = made
    out = made_out.parent / "confirmed"
    shutil.rmtree(out, ignore_errors=True)
    shutil.copytree(made_out, out)
    meta = confirm(yaml.safe_load((out / "metadata.yaml").read_text()))
    meta |= {"authors": ["E. Author"], "domain": "integrated photonics"}
    meta["figures"] = [f for f in meta["figures"] if not want.figures[f["figure_id"][:4]]["raster"]]
    for fig in meta["figures"]:
        fig["y_axes"]["left"] |= {"quantity": "dimensionless", "unit": "1"}
        for c in fig["curves"]:
            c["label"] = c["label"].removeprefix("TODO confirm: ")
    (out / "metadata.yaml").write_text(yaml.safe_dump(meta, allow_unicode=True))
    (out / "intake_text.json").unlink()  # raster figures' text was left out with them
    md = (out / "paper.md").read_text()  # the equation kept as an image, typed as text
    (out / "paper.md").write_text(re.sub(r"!\[TODO: type this equation[^\n]*", "E = m (4)", md))
    assert main(["check", str(out)]) == 0
    paper = Paper(out)
    ids = [f.figure_id for f in paper.meta.figures]
    (line, _) = intake_digitized_note(paper, ids)
    assert "fig1: measured (reprolab new-paper), model (reprolab new-paper)" in line
    assert "fig2a: curve_1 (reprolab new-paper)" in line and "fig2b" in line
    for fig in meta["figures"]:
        for c in fig["curves"]:
            c.pop("digitized_by")
    (out / "metadata.yaml").write_text(yaml.safe_dump(meta, allow_unicode=True))
    assert intake_digitized_note(Paper(out), ids) == []


def test_an_unreadable_equation_is_an_image_with_a_todo(made, capsys):
    """An equation whose glyphs come without characters is kept as an image of itself,
    linked from paper.md with a TODO that `check` lists as one item; typed as text, the
    item is gone."""
    want, out = made
    md_path = out / "paper.md"
    md = md_path.read_text()
    links = re.findall(r"!\[TODO: type this equation of page (\d) as text\]\((figures/[^)]+)\)", md)
    assert len(links) == want.unreadable_equations == 1
    assert (out / links[0][1]).read_bytes().startswith(b"\x89PNG")
    capsys.readouterr()
    main(["check", str(out)])
    err = capsys.readouterr().err
    assert f"TODO: type this equation of page {links[0][0]} as text: {links[0][1]}" in err
    assert "7 problem(s)" not in err and "8 problem(s)" in err  # one item more, at most 15
    try:
        md_path.write_text(re.sub(r"!\[TODO: type this equation[^\n]*", "E(x) = mc^2 (4)", md))
        main(["check", str(out)])
        assert "type this equation" not in capsys.readouterr().err
    finally:
        md_path.write_text(md)
