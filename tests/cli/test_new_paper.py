"""`reprolab new-paper`: a PDF the test builds (matplotlib, real text and a vector
plot) becomes a paper folder whose skeleton `reprolab check` refuses until its TODOs
are resolved, and accepts once a person (here: code) has confirmed them."""

import io
import re

import matplotlib
import numpy as np
import pytest
import yaml
from matplotlib.backends.backend_pdf import PdfPages
from PIL import Image

from reprolab.cli import main
from reprolab.paper import Paper
from tests.support.paper_pdf import EXAMPLE, confirm, example_as_pdf, example_from_its_pdf, page


def png_bytes(size=(4, 3)) -> bytes:
    """A real (tiny) PNG image."""
    buf = io.BytesIO()
    Image.new("RGB", size, (200, 30, 30)).save(buf, format="PNG")
    return buf.getvalue()


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
    for field in ("authors[0]", "domain"):
        assert f"field '{field}' still has a TODO marker" in err
    # the figure's ten markers are one item of what is left, naming each field
    (fig_line,) = [ln for ln in err.splitlines() if "field 'figures[0]' still has" in ln]
    assert "still has 10 TODO markers (x_axis.label 'TODO confirm: Wavelength (nm)';" in fig_line
    assert "x_axis.unit 'TODO confirm: nm'" in fig_line
    assert "curves[1].label 'TODO confirm: R'" in fig_line
    assert "3 problem(s)" in err

    meta = confirm(meta)
    meta |= {"authors": ["A. Author", "B. Author"], "domain": "thin-film optics"}
    meta["figures"][0]["y_axes"]["left"] |= {"quantity": "dimensionless", "unit": "1"}
    # the curves read off the plot, proposed: T within 1 % of the function drawn
    lam, t = np.loadtxt(
        out / meta["figures"][0]["curves"][0]["digitized"], delimiter=",", skiprows=1
    ).T
    assert np.abs(t - (0.6 + 0.4 * np.cos(lam / 20) ** 2)).max() < 0.01 * 0.4
    # the person's own data for T instead; R's proposal deleted
    (out / "data" / "fig2_T.csv").write_text("wavelength_nm,T\n450,0.9\n460,0.8\n")
    for c in meta["figures"][0]["curves"]:
        c.pop("digitized_by")
    meta["figures"][0]["curves"][0]["digitized"] = "data/fig2_T.csv"
    del meta["figures"][0]["curves"][1]["digitized"]
    (out / "metadata.yaml").write_text(yaml.safe_dump(meta, allow_unicode=True))
    assert main(["check", str(out)]) == 0, capsys.readouterr().err
    paper = Paper(out)
    assert paper.curve_data("fig2", "T", x_column="wavelength_um")[0] == [0.45, 0.46]
    assert not paper.figure("fig2").digitized  # R has no data: compared by eye only


def test_markdown_source_and_refusals(pdf_path, tmp_path, capsys):
    src = tmp_path / "mine.md"
    (tmp_path / "plot.png").write_bytes(png_bytes())
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


def test_example_from_its_pdf_is_the_example_the_recordings_replay(tmp_path, capsys):
    """new-paper finds every figure of the example's PDF with its number, caption, axis
    labels and legend, and its whole text with the section headings; confirming the
    skeleton and adding the digitized CSVs gives a folder with the example's figures,
    axes and curves, which its recordings fit. (tests/workflow/test_pipeline.py runs the
    pipeline on exactly this folder.)"""
    pdf = tmp_path / "silica.pdf"
    example_as_pdf(pdf)
    skel = tmp_path / "skeleton"
    assert main(["new-paper", str(pdf), "--id", "silica_bragg_2026", "--out", str(skel)]) == 0
    meta = yaml.safe_load((skel / "metadata.yaml").read_text())
    example = Paper(EXAMPLE).meta
    assert [f["figure_id"] for f in meta["figures"]] == [f.figure_id for f in example.figures]
    for found, fig in zip(meta["figures"], example.figures, strict=True):
        assert found["title"] == fig.title
        assert found["x_axis"]["label"] == f"TODO confirm: {fig.x_axis.label}"
        assert found["y_axes"]["left"]["label"] == f"TODO confirm: {fig.y_axes.left.label}"
        assert [c["label"] for c in found["curves"]] == [
            f"TODO confirm: {c.label}" for c in fig.curves
        ]
    md = (skel / "paper.md").read_text()
    headings = [ln for ln in md.splitlines() if ln.startswith("#")]
    assert headings == [
        f"# {example.title.replace('Ta2O5', 'Ta₂O₅').replace('SiO2', 'SiO₂')}",
        "## Abstract",
        "## 1. Methods",
        "## 2. Results",
        "## 3. Conclusion",
        "## References",
    ]
    assert "0.5655 to 0.7655 µm" in md  # a number the comparison and checks rely on
    # each plot's curves read off its paths, within 1 % of the data they were drawn from
    for found, fig in zip(meta["figures"], example.figures, strict=True):
        for c, want in zip(found["curves"], fig.curves, strict=True):
            assert c["digitized_by"] == "new-paper"
            rows = (skel / c["digitized"].removeprefix("TODO confirm: ")).read_text().split()
            xs, ys = np.array([r.split(",") for r in rows[1:]], dtype=float).T
            x, y = (np.array(v) for v in Paper(EXAMPLE).curve_data(fig.figure_id, want.curve_id))
            order = np.argsort(x)
            err = np.abs(ys - np.interp(xs, x[order], y[order])) / max(np.ptp(y), 1e-12)
            assert err.max() < 0.01, (fig.figure_id, want.curve_id, err.max())

    out = example_from_its_pdf(tmp_path / "made")
    capsys.readouterr()
    assert main(["check-recordings", str(out), "--recordings", str(EXAMPLE / "recordings")]) == 0
    made = Paper(out).meta
    for a, b in zip(made.figures, example.figures, strict=True):
        assert (a.x_axis, a.y_axes, a.curves) == (b.x_axis, b.y_axes, b.curves)


def test_a_pdf_without_pymupdf_is_a_clear_error(pdf_path, tmp_path, capsys, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "pymupdf", None)  # as if it were not installed
    out = tmp_path / "p"
    assert main(["new-paper", str(pdf_path), "--id", "p", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "reading a PDF needs PyMuPDF (pip install pymupdf" in err
    assert "give the paper as markdown (.md)" in err and not out.exists()


def test_untrusted_markdown_copies_only_image_files_beside_it(tmp_path, capsys):
    """Figure references that leave the markdown's folder, follow a link or name a file
    that is not an image by its content are refused, each with a line naming it; only
    real images beside the markdown are copied, typed by their content."""
    home = tmp_path / "home"
    src_dir = home / "inbox" / "paper"
    (src_dir / "img").mkdir(parents=True)
    secret = home / ".bashrc"
    secret.write_text("export API_KEY=sk-secret\n")
    outside = tmp_path / "elsewhere.png"
    outside.write_bytes(png_bytes())  # a real image, but not beside the markdown
    (src_dir / "link.png").symlink_to(outside)
    (src_dir / "notes.png").write_text("export API_KEY=sk-secret\n")  # an image by name only
    (src_dir / "img" / "plot").write_bytes(png_bytes((5, 5)))  # an image without a suffix
    (src_dir / "ok.png").write_bytes(png_bytes())
    refs = [
        str(outside),  # absolute
        "../../.bashrc",  # leaves the folder
        "img/../../../.bashrc",
        "link.png",  # a symbolic link
        "notes.png",  # text named .png
        "img/plot",  # a PNG without a suffix: copied as .png
        "ok.png",
        "file:///etc/passwd",
    ]
    src = src_dir / "paper.md"
    src.write_text("# Paper\n\n" + "".join(f"![Fig. {i}: c]({r})\n" for i, r in enumerate(refs)))
    out = tmp_path / "made"
    assert main(["new-paper", str(src), "--id", "made", "--out", str(out)]) == 0
    err = capsys.readouterr().err
    figures = sorted(p.name for p in (out / "figures").iterdir())
    assert figures == ["fig6.png", "fig7.png"], figures
    assert (out / "figures" / "fig6.png").read_bytes() == (src_dir / "img" / "plot").read_bytes()
    for p in (out / "figures").iterdir():
        assert Image.open(p).format == "PNG"
    copied = b"".join(p.read_bytes() for p in out.rglob("*") if p.is_file())
    assert b"sk-secret" not in copied
    meta = yaml.safe_load((out / "metadata.yaml").read_text())
    images = [f["image"] for f in meta["figures"]]
    assert images[5:7] == ["figures/fig6.png", "figures/fig7.png"]
    for i, ref in enumerate(refs):
        if i in (5, 6):
            continue
        assert images[i].startswith(f"TODO: {ref} was refused"), images[i]
        assert f"figure {i + 1} '{ref}' refused, not copied" in err
    assert "an absolute path or URL" in err and "'..' leaves the markdown's folder" in err
    assert "is a symbolic link" in err and "its content is not an image" in err
    capsys.readouterr()
    assert main(["check", str(out)]) == 1  # the TODOs stay until a person resolves them
