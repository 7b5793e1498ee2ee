"""PDFs of four layouts, written with PyMuPDF as journals print them: two columns, one
column, figures side by side and a full-width figure; vector figures (matplotlib, real
text) and raster ones, ruled tables, equations, captions above and below. Each comes
with what a reader finds in it: every sentence, every table cell, each figure's number,
caption and axis labels."""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from pathlib import Path

import matplotlib
import numpy as np

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pymupdf  # noqa: E402

FONT = str(Path(matplotlib.get_data_path()) / "fonts" / "ttf" / "DejaVuSans.ttf")
W, H = 612, 792
LEFT, RIGHT = pymupdf.Rect(50, 0, 296, 0), pymupdf.Rect(316, 0, 562, 0)
FULL = pymupdf.Rect(50, 0, 562, 0)


@dataclass
class Expected:
    sentences: list[str] = field(default_factory=list)
    cells: list[str] = field(default_factory=list)
    figures: dict[str, dict] = field(default_factory=dict)  # fid -> caption/x/y/right
    headings: list[str] = field(default_factory=list)


class Sheet:
    """A PDF being written page by page, and what it says."""

    def __init__(self):
        self.doc = pymupdf.open()
        self.page = None
        self.want = Expected()

    def new_page(self):
        self.page = self.doc.new_page(width=W, height=H)

    def text(self, col, y0, text, size=9.0, sentences=True) -> float:
        """A paragraph in column `col` from `y0`; returns where the next one starts."""
        lines = max(1, int(len(text) * size * 0.55 / col.width) + 1)
        rect = pymupdf.Rect(col.x0, y0, col.x1, y0 + (lines + 1) * size * 1.35)
        left = self.page.insert_textbox(rect, text, fontsize=size, fontname="dj", fontfile=FONT)
        assert left >= 0, f"paragraph does not fit: {text[:40]}"
        if sentences:
            self.want.sentences += [s.strip() for s in text.split(". ") if s.strip()]
        return rect.y1 - left + size * 0.8

    def heading(self, col, y0, text, size=13.0) -> float:
        self.want.headings.append(text)
        at = (col.x0, y0 + size)
        self.page.insert_text(at, text, fontsize=size, fontname="dj", fontfile=FONT)
        return y0 + size * 2.0

    def caption(self, col, y0, fid, text) -> float:
        self.want.figures.setdefault(fid, {})["caption"] = text
        return self.text(col, y0, text, size=8.0, sentences=False)

    def figure(self, rect, plot, raster=False):
        fig = plt.figure(figsize=(rect.width / 72, rect.height / 72))
        with matplotlib.rc_context({"pdf.fonttype": 42, "font.size": 7}):
            plot(fig)
            fig.tight_layout(pad=0.3)
            buf = io.BytesIO()
            fig.savefig(buf, format="png" if raster else "pdf", dpi=150)
        plt.close(fig)
        if raster:
            self.page.insert_image(rect, stream=buf.getvalue())
        else:
            self.page.show_pdf_page(rect, pymupdf.open("pdf", buf.getvalue()), 0)

    def table(self, x0, y0, rows, col_w=58, ruled=True) -> float:
        h = 13
        for i, row in enumerate(rows):
            for j, cell in enumerate(row):
                pos = (x0 + j * col_w + 3, y0 + i * h + 9.5)
                self.page.insert_text(pos, cell, fontsize=7.5, fontname="dj", fontfile=FONT)
                self.want.cells.append(cell)
        n, m = len(rows), len(rows[0])
        for i in range(n + 1):
            self.page.draw_line((x0, y0 + i * h), (x0 + m * col_w, y0 + i * h), width=0.6)
        if ruled:
            for j in range(m + 1):
                self.page.draw_line((x0 + j * col_w, y0), (x0 + j * col_w, y0 + n * h), width=0.6)
        return y0 + n * h + 8

    def save(self, path: Path) -> Expected:
        self.doc.save(path)
        return self.want


LORENTZ = [
    ["Term", "f", "ωp (eV)", "γ (eV)"],
    ["Drude", "0.845", "9.01", "0.048"],
    ["L1", "0.065", "9.01", "3.886"],
    ["L2", "0.124", "9.01", "0.452"],
]
PARA = (
    "The film is deposited on a fused silica substrate and measured at normal incidence. "
    "Its thickness was kept at 45 nm for every sample in this series. "
    "The spectra were normalized to a silver mirror of known reflectance."
)


def spectrum(x_label="Wavelength (nm)", y_label="Transmittance, reflectance"):
    def plot(fig):
        ax = fig.add_subplot()
        lam = np.linspace(400, 900, 80)
        ax.plot(lam, 0.5 + 0.4 * np.cos(lam / 40), label="T")
        ax.plot(lam, 0.4 - 0.3 * np.cos(lam / 40), label="R")
        ax.set_xlabel(x_label)
        ax.set_ylabel(y_label)
        ax.legend(loc="upper right")

    return plot


def permittivity(fig):
    ax = fig.add_subplot()
    e = np.linspace(1.5, 4, 60)
    ax.plot(e, -30 / e**2, label=r"Re $\varepsilon$")
    ax.set_xlabel("Photon energy (eV)")
    ax.set_ylabel(r"Re $\varepsilon$")
    right = ax.twinx()
    right.plot(e, 0.3 + 0.2 * e, "r--", label=r"Im $\varepsilon$")
    right.set_ylabel(r"Im $\varepsilon$")
    ax.legend(loc="lower right")


def sweep(fig):
    ax = fig.add_subplot()
    r = np.linspace(0.2, 0.45, 8)
    ax.plot(r, 1e3 * (1 + 10 * (r - 0.2)), "o-", label="Q")
    ax.set_xlabel("Radius r/a")
    ax.set_ylabel("Quality factor Q")


def field_map(fig):
    ax = fig.add_subplot()
    x = np.linspace(-1, 1, 60)
    ax.imshow(np.exp(-np.add.outer(x**2, x**2) * 4), extent=(-1, 1, -1, 1))
    ax.set_xlabel("x (µm)")
    ax.set_ylabel("y (µm)")


def two_column(path: Path) -> Expected:
    """Title and abstract across the page, then two columns: a vector figure with its
    caption below in the left column and sentences with numbers right under it; an
    equation and a ruled table with its caption above in the right column; on page 2
    a full-width two-axis figure with its caption above, and a bullet that names a
    figure without being its caption."""
    s = Sheet()
    s.new_page()
    y = s.heading(FULL, 40, "Optical constants of thin silver films", 16)
    y = s.text(FULL, y, "C. Writer and D. Reader, Institute of Optics.")
    y = s.heading(FULL, y, "Abstract", 11)
    y = s.text(FULL, y, "We measure thin silver films and fit a Lorentz-Drude model to them.")
    top = y
    y = s.heading(LEFT, top, "1. Methods", 11)
    y = s.text(LEFT, y, PARA)
    s.figure(pymupdf.Rect(LEFT.x0 + 10, y, LEFT.x1, y + 150), spectrum())
    s.want.figures["fig1"] = {"x": "Wavelength (nm)", "y": "Transmittance, reflectance"}
    y = s.caption(LEFT, y + 154, "fig1", "Fig. 1. Transmittance and reflectance of a 45 nm film.")
    y = s.text(LEFT, y, "The fitted slope is 0.42 nm/K and the intercept is 612.3 nm.")
    y = s.text(LEFT, y, "The penetration depth is 23 nm at 650 nm, where n = 0.05 + 4.28i.")
    y = s.heading(RIGHT, top, "2. Model", 11)
    y = s.text(RIGHT, y, "The permittivity is a Drude term plus two Lorentz oscillators.")
    y = s.text(RIGHT, y, "ε(ω) = 1 − f0 ωp² / (ω² + iγ0ω) + Σj fj ωp² / (ωj² − ω² − iγjω)   (1)")
    y = s.text(RIGHT, y, "Table 1. Lorentz-Drude parameters of silver.", size=8.0)
    y = s.table(RIGHT.x0, y, LORENTZ)
    y = s.text(RIGHT, y, "These parameters reproduce the measured spectra within 2 percent.")
    s.new_page()
    y = s.caption(FULL, 50, "fig2", "Fig. 2. Permittivity of the silver film from the fit.")
    s.figure(pymupdf.Rect(120, y, 480, y + 200), permittivity)
    s.want.figures["fig2"] |= {"x": "Photon energy (eV)", "y": "Re ε", "right": "Im ε"}
    y += 215
    y = s.heading(LEFT, y, "3. Results", 11)
    y = s.text(LEFT, y, "• Figure 2 shows the real and imaginary parts of the permittivity.")
    s.text(RIGHT, y - 22, "Losses grow toward the blue, as the interband edge nears 3.9 eV.")
    return s.save(path)


def one_column(path: Path) -> Expected:
    """One column: a raster field map (caption below), a vector sweep drawn with
    markers (caption below), a table with rules only across (caption above)."""
    s = Sheet()
    s.new_page()
    y = s.heading(FULL, 40, "Whispering-gallery modes of a silicon disk", 16)
    y = s.text(FULL, y, "A disk of radius 1.2 µm supports modes with Q above 10000 at 1550 nm.")
    y = s.heading(FULL, y, "Results", 12)
    y = s.text(FULL, y, PARA)
    s.figure(pymupdf.Rect(170, y, 440, y + 170), field_map, raster=True)
    s.want.figures["fig1"] = {}
    y = s.caption(FULL, y + 174, "fig1", "Figure 1: Intensity of the fundamental mode.")
    y = s.text(FULL, y, "The mode is confined within 0.3 µm of the rim.")
    s.figure(pymupdf.Rect(170, y, 440, y + 170), sweep)
    s.want.figures["fig2"] = {"x": "Radius r/a", "y": "Quality factor Q"}
    y = s.caption(FULL, y + 174, "fig2", "Figure 2: Quality factor versus radius.")
    y = s.text(FULL, y, "Table 1: Modes of the disk.", size=8.0)
    rows = [["m", "λ (nm)", "Q"], ["12", "1548.2", "12000"], ["13", "1502.7", "15500"]]
    y = s.table(80, y, rows, col_w=70, ruled=False)
    s.text(FULL, y, "The azimuthal order m = 13 mode has the highest Q of 15500.")
    return s.save(path)


def side_by_side(path: Path) -> Expected:
    """Two figures side by side, one per column, captions below; then two panels (a)
    and (b) of one figure with its caption below them, and a table with its caption
    below it."""
    s = Sheet()
    s.new_page()
    y = s.heading(FULL, 40, "Gratings for second-harmonic light", 16)
    y = s.text(FULL, y, "We compare two gratings of period 400 nm and 450 nm.")
    s.figure(pymupdf.Rect(LEFT.x0, y, LEFT.x1, y + 140), spectrum("Wavelength (µm)", "T"))
    s.figure(pymupdf.Rect(RIGHT.x0, y, RIGHT.x1, y + 140), field_map, raster=True)
    s.want.figures["fig1"] = {"x": "Wavelength (µm)", "y": "T"}
    s.want.figures["fig2"] = {}
    s.caption(LEFT, y + 146, "fig1", "Fig. 1: Transmittance of the grating of period 400 nm.")
    y = s.caption(RIGHT, y + 146, "fig2", "Fig. 2: Field at the second-harmonic peak.")
    y = s.text(FULL, y + 6, "The peak of the second grating lies 35 nm to the red.")
    s.figure(pymupdf.Rect(60, y, 290, y + 130), sweep)
    s.figure(pymupdf.Rect(300, y, 550, y + 130), spectrum("Angle (deg)", "Efficiency"))
    caption = "Fig. 3: (a) Q versus radius. (b) Efficiency versus angle."
    y = s.caption(FULL, y + 136, "fig3", caption)
    # two plots under one caption: one entry per panel, each with its own axes
    s.want.figures["fig3a"] = {"caption": caption, "x": "Radius r/a", "y": "Quality factor Q"}
    s.want.figures["fig3b"] = {"caption": caption, "x": "Angle (deg)", "y": "Efficiency"}
    del s.want.figures["fig3"]
    y = s.table(80, y, [["Period (nm)", "Peak (nm)"], ["400", "812"], ["450", "847"]], col_w=80)
    s.text(FULL, y, "Table 1: Peaks of the two gratings.", size=8.0)
    return s.save(path)


def long_paper(path: Path) -> Expected:
    """Two pages of two columns with text flowing from column to column, a figure
    whose caption is above it, numbered equations, and a reference list."""
    s = Sheet()
    s.new_page()
    y = s.heading(FULL, 40, "Bragg mirrors of tantalum oxide", 16)
    top = s.text(FULL, y, "Quarter-wave stacks of Ta2O5 and SiO2 reflect above 99 percent.")
    y = top
    for i in range(5):
        y = s.text(LEFT, y, f"Paragraph {i + 1} of the left column. " + PARA)
    y = top
    y = s.text(RIGHT, y, "The stack reflectance at the design wavelength is given by")
    y = s.text(RIGHT, y, "R = ((1 − (nH/nL)^(2N))/(1 + (nH/nL)^(2N)))²   (2)")
    y = s.caption(RIGHT, y, "fig1", "Fig. 1 | Reflectance of six pairs at normal incidence.")
    s.figure(pymupdf.Rect(RIGHT.x0, y, RIGHT.x1, y + 150), spectrum("Wavelength (nm)", "R"))
    s.want.figures["fig1"] |= {"x": "Wavelength (nm)", "y": "R"}
    y = s.text(RIGHT, y + 160, "The stop band is 120 nm wide around 650 nm.")
    s.new_page()
    y = s.heading(LEFT, 50, "References", 11)
    for i in range(4):
        ref = f"[{i + 1}] A. Author, Journal of Optics {10 + i}, {100 * i + 7} (2020)."
        y = s.text(LEFT, y, ref)
    s.text(RIGHT, 50, "Acknowledgements: we thank the workshop for the samples.")
    return s.save(path)


LAYOUTS = {f.__name__: f for f in (two_column, one_column, side_by_side, long_paper)}
