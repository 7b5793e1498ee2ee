"""`reprolab new-paper`: a PDF the test builds (matplotlib, real text and a vector
plot) becomes a paper folder whose skeleton `reprolab check` refuses until its TODOs
are resolved, and accepts once a person (here: code) has confirmed them."""

import re
import shutil
from pathlib import Path

import matplotlib
import pytest
import yaml

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.backends.backend_pdf import PdfPages  # noqa: E402

from reprolab.cli import main  # noqa: E402
from reprolab.paper import Paper  # noqa: E402

EXAMPLE = Path(__file__).parents[1] / "examples" / "papers" / "silica_bragg_2026"


def page(pdf, texts, plot=None):
    fig = plt.figure(figsize=(8.5, 11))
    fig.patch.set_visible(False)  # as in a journal PDF: no page-sized background
    for y, text, size in texts:
        fig.text(0.1, y, text, fontsize=size)
    if plot:
        plot(fig.add_axes([0.15, 0.55, 0.7, 0.3]))
    pdf.savefig(fig)
    plt.close(fig)


def spectra(ax):
    lam = np.linspace(450, 950, 120)
    ax.plot(lam, 0.6 + 0.4 * np.cos(lam / 20) ** 2, label="T")
    ax.plot(lam, 0.4 - 0.4 * np.cos(lam / 20) ** 2, label="R")
    ax.set_xlabel("Wavelength (nm)")
    ax.set_ylabel("Transmittance, reflectance")
    ax.legend()


@pytest.fixture(scope="module")
def pdf_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("pdf") / "slab.pdf"
    with matplotlib.rc_context({"pdf.fonttype": 42}), PdfPages(path) as pdf:
        page(
            pdf,
            [
                (0.92, "Resonant transmission of a thin slab", 18),
                (0.88, "A. Author, B. Author", 10),
                (0.83, "Abstract", 14),
                (0.80, "We compute the transmittance of a free-standing slab.", 10),
                (0.73, "1. Methods", 14),
                (0.70, "The slab has index 2.1 and thickness 0.8 um in air.", 10),
            ],
        )
        page(
            pdf,
            [
                (0.47, "Fig. 2: Transmittance and reflectance of the slab.", 10),
                (0.45, "Solid lines: transfer matrix.", 10),
                (0.40, "2. Results", 14),
                (0.37, "The maxima of T reach unity.", 10),
            ],
            spectra,
        )
    return path


def confirm(value):
    """What a person does with the skeleton: keep what was found, fill in the rest."""
    if isinstance(value, dict):
        return {k: confirm(v) for k, v in value.items()}
    if isinstance(value, list):
        return [confirm(v) for v in value]
    if isinstance(value, str) and value.startswith("TODO confirm: "):
        return value.removeprefix("TODO confirm: ")
    if isinstance(value, str) and value.startswith("TODO_confirm_"):
        return value.removeprefix("TODO_confirm_")
    return value


def test_pdf_to_checked_paper_folder(pdf_path, tmp_path, capsys):
    out = tmp_path / "slab_2026"
    assert main(["new-paper", str(pdf_path), "--id", "slab_2026", "--out", str(out)]) == 0
    md = (out / "paper.md").read_text()
    assert md.startswith("# Resonant transmission of a thin slab\n")
    assert "\n## Abstract\n" in md and "\n## 1. Methods\n" in md and "\n## 2. Results\n" in md
    assert "Fig. 2: Transmittance and reflectance of the slab." in md
    assert not re.search(r"^(500|0\.8|Wavelength \(nm\))$", md, re.M)  # the plot's own text
    png = (out / "figures" / "fig2.png").read_bytes()
    assert png.startswith(b"\x89PNG") and len(png) > 10_000

    meta = yaml.safe_load((out / "metadata.yaml").read_text())
    (fig,) = meta["figures"]
    assert fig["figure_id"] == "fig2" and fig["image"] == "figures/fig2.png"
    assert fig["title"] == "Transmittance and reflectance of the slab"
    assert fig["caption"].endswith("Solid lines: transfer matrix.")
    assert fig["x_axis"] == {
        "label": "TODO confirm: Wavelength (nm)",
        "quantity": "TODO confirm: wavelength",
        "unit": "TODO confirm: nm",
    }
    assert fig["y_axes"]["left"]["label"] == "TODO confirm: Transmittance, reflectance"
    assert [c["label"] for c in fig["curves"]] == ["TODO confirm: T", "TODO confirm: R"]

    capsys.readouterr()
    assert main(["check", str(out)]) == 1
    err = capsys.readouterr().err
    for field in ("authors[0]", "domain", "figures[0].x_axis.unit", "figures[0].curves[1].label"):
        assert f"field '{field}' still has a TODO marker" in err
    assert "12 problem(s)" in err

    meta = confirm(meta)
    meta |= {"authors": ["A. Author", "B. Author"], "domain": "thin-film optics"}
    meta["figures"][0]["y_axes"]["left"] |= {"quantity": "dimensionless", "unit": "1"}
    (out / "data").mkdir()
    (out / "data" / "fig2_T.csv").write_text("wavelength_nm,T\n450,0.9\n460,0.8\n")
    meta["figures"][0]["curves"][0]["digitized"] = "data/fig2_T.csv"
    (out / "metadata.yaml").write_text(yaml.safe_dump(meta, allow_unicode=True))
    assert main(["check", str(out)]) == 0, capsys.readouterr().err
    paper = Paper(out)
    assert paper.curve_data("fig2", "T", x_column="wavelength_um")[0] == [0.45, 0.46]
    assert not paper.figure("fig2").digitized  # R has no data: compared by eye only


def test_markdown_source_and_refusals(pdf_path, tmp_path, capsys):
    src = tmp_path / "mine.md"
    (tmp_path / "plot.png").write_bytes(b"\x89PNG fake")
    src.write_text("# My paper\n\n## Results\n\n![Fig. 1: Spectrum](plot.png)\n")
    out = tmp_path / "mine"
    assert main(["new-paper", str(src), "--id", "mine", "--out", str(out)]) == 0
    meta = yaml.safe_load((out / "metadata.yaml").read_text())
    assert meta["title"] == "My paper" and (out / "figures" / "fig1.png").is_file()
    assert meta["figures"][0]["caption"] == "Fig. 1: Spectrum"
    assert meta["figures"][0]["title"] == "Spectrum"
    capsys.readouterr()
    before = (out / "metadata.yaml").read_text()
    assert main(["new-paper", str(pdf_path), "--id", "mine", "--out", str(out)]) == 2
    assert "exists and is not empty; nothing was overwritten" in capsys.readouterr().err
    assert (out / "metadata.yaml").read_text() == before
    assert main(["new-paper", str(src), "--id", "bad id!", "--out", str(tmp_path / "x")]) == 2
    assert "--id 'bad id!' is not letters, digits and _ only" in capsys.readouterr().err
    (tmp_path / "paper.docx").write_text("x")
    assert (
        main(["new-paper", str(tmp_path / "paper.docx"), "--id", "d", "--out", str(tmp_path / "y")])
        == 2
    )
    assert "suffix '.docx' is not one of .pdf, .md, .markdown" in capsys.readouterr().err
    (tmp_path / "broken.pdf").write_text("not a pdf")
    assert (
        main(["new-paper", str(tmp_path / "broken.pdf"), "--id", "b", "--out", str(tmp_path / "z")])
        == 2
    )
    assert "broken.pdf: cannot be read as a PDF" in capsys.readouterr().err
    assert not (tmp_path / "y").exists() and not (tmp_path / "z").exists()


def example_as_pdf(path: Path) -> None:
    """The bundled example as a journal would print it: its text, then each figure as a
    vector plot of its digitized curves with its axis labels and a numbered caption."""
    paper = Paper(EXAMPLE)
    lines = [ln for ln in paper.text().splitlines() if ln.strip()][:12]
    with matplotlib.rc_context({"pdf.fonttype": 42}), PdfPages(path) as pdf:
        texts = [(0.92, lines[0].lstrip("# "), 16)]
        for i, ln in enumerate(lines[1:]):
            size = 13 if ln.startswith("#") else 9
            texts.append((0.88 - 0.03 * i, ln.lstrip("# ")[:90], size))
        page(pdf, texts)
        for n, fig in enumerate(paper.meta.figures, start=1):

            def plot(ax, fig=fig):
                for c in fig.curves:
                    ax.plot(*paper.curve_data(fig.figure_id, c.curve_id), label=c.label)
                ax.set_xlabel(fig.x_axis.label)
                ax.set_ylabel(fig.y_axes.left.label)
                ax.legend()

            page(pdf, [(0.47, f"Fig. {n}: {fig.title}.", 10)], plot)


def test_example_from_its_pdf_is_the_example_the_recordings_replay(tmp_path, capsys):
    """new-paper finds every figure of the example's PDF with its number, caption, axis
    labels and legend; confirming the skeleton and adding the digitized CSVs gives a
    folder with the example's figures, axes and curves, which its recordings fit."""
    pdf = tmp_path / "silica.pdf"
    example_as_pdf(pdf)
    out = tmp_path / "silica_bragg_2026"
    assert main(["new-paper", str(pdf), "--id", "silica_bragg_2026", "--out", str(out)]) == 0
    meta = yaml.safe_load((out / "metadata.yaml").read_text())
    example = Paper(EXAMPLE).meta
    assert [f["figure_id"] for f in meta["figures"]] == [f.figure_id for f in example.figures]
    for found, fig in zip(meta["figures"], example.figures, strict=True):
        assert found["title"] == fig.title
        assert found["x_axis"]["label"] == f"TODO confirm: {fig.x_axis.label}"
        assert found["y_axes"]["left"]["label"] == f"TODO confirm: {fig.y_axes.left.label}"
        assert [c["label"] for c in found["curves"]] == [
            f"TODO confirm: {c.label}" for c in fig.curves
        ]
    meta = confirm(meta)
    meta |= {"authors": example.authors, "domain": example.domain}
    for found, fig in zip(meta["figures"], example.figures, strict=True):
        # what a person supplies: the quantities and units, the curve ids, the data
        found["x_axis"] = fig.x_axis.model_dump(exclude_defaults=True)
        found["y_axes"] = {"left": fig.y_axes.left.model_dump(exclude_defaults=True)}
        for c, want in zip(found["curves"], fig.curves, strict=True):
            c |= {"curve_id": want.curve_id, "digitized": want.digitized}
    shutil.copytree(EXAMPLE / "data", out / "data")
    (out / "metadata.yaml").write_text(yaml.safe_dump(meta, allow_unicode=True))
    capsys.readouterr()
    assert main(["check", str(out)]) == 0, capsys.readouterr().err
    assert main(["check-recordings", str(out), "--recordings", str(EXAMPLE / "recordings")]) == 0
    made = Paper(out).meta
    for a, b in zip(made.figures, example.figures, strict=True):
        assert (a.x_axis, a.y_axes, a.curves) == (b.x_axis, b.y_axes, b.curves)
