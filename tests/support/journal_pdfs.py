"""PDFs set as four journals set them (a REVTeX-like, an Optica-like, an ACS-like and an
IEEE-like page), written with PyMuPDF from sources kept here: running headers and page
numbers, two columns with words hyphenated at line ends and sentences that run over a
page break, superscripts and subscripts (2.1 × 10⁴, Q_i), display equations, tables
with rules across only (booktabs) and ruled ones, vector figures (matplotlib, real text
and paths; one with two panels) and raster ones. Each comes with what a reader must find
in it: every sentence, every table, every figure with its caption, axis labels per panel
and the data of its curves."""

from __future__ import annotations

import io
import re
from dataclasses import dataclass, field
from pathlib import Path

import matplotlib
import numpy as np

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pymupdf  # noqa: E402

FONTS = Path(matplotlib.get_data_path()) / "fonts" / "ttf"
SUP = str.maketrans("0123456789+-−", "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁻")
MARK = re.compile(r"([\^_])\{([^}]*)\}")


def plain(source: str) -> str:
    """A marked-up source as a reader should get it: `^{4}` as ⁴, `_{eff}` as _eff."""

    def one(m):
        text = m[2]
        if m[1] == "^":
            return text.translate(SUP) if set(text) <= set("0123456789+-−") else f"^({text})"
        return f"_{text}" if text.isalnum() else f"_({text})"

    return MARK.sub(one, source)


@dataclass
class Expected:
    sentences: list[str] = field(default_factory=list)  # each with at least one digit
    tables: list[dict] = field(default_factory=list)  # caption, rows (as read)
    figures: dict[str, dict] = field(default_factory=dict)  # id -> caption, panels, raster
    running: list[str] = field(default_factory=list)  # header and footer text, not the paper's
    headings: list[str] = field(default_factory=list)
    unreadable_equations: int = 0  # set in glyphs without characters: kept as images


@dataclass
class Style:
    name: str
    font: str
    size: float
    columns: int
    header: str  # running header; {page} is the page number
    fig_word: str  # "FIG." / "Fig." / "Figure"
    table_word: str  # "TABLE" / "Table"
    roman_tables: bool = False
    bold_headings: bool = False
    caption_sep: str = "."
    table_caption_above: bool = True
    page: tuple[float, float] = (612, 792)
    margin: float = 54
    gap: float = 18


class Typesetter:
    """Text set line by line into columns, floats at a column's (or page's) top."""

    def __init__(self, style: Style):
        self.s = style
        self.doc = pymupdf.open()
        self.font = pymupdf.Font(fontfile=str(FONTS / style.font))
        self.want = Expected()
        self.page = None
        self.col = 0
        self.new_page()

    # -- pages and columns --------------------------------------------------------------
    def new_page(self):
        w, h = self.s.page
        self.page = self.doc.new_page(width=w, height=h)
        n = self.doc.page_count
        header = self.s.header.format(page=n)
        self.put(self.s.margin, 34, header, 7.0)
        self.put(w / 2 - 5, h - 30, str(n), 8.0)
        self.want.running += [header, str(n)]
        self.col, self.y = 0, 60.0

    def column(self) -> pymupdf.Rect:
        w, h = self.s.page
        m, n = self.s.margin, self.s.columns
        width = (w - 2 * m - (n - 1) * self.s.gap) / n
        x0 = m + self.col * (width + self.s.gap)
        return pymupdf.Rect(x0, self.y, x0 + width, h - 50)

    def full(self) -> pymupdf.Rect:
        w, h = self.s.page
        return pymupdf.Rect(self.s.margin, self.y, w - self.s.margin, h - 50)

    def need(self, height: float):
        """Room for `height` in this column, else the next column or page."""
        if self.y + height <= self.column().y1:
            return
        if self.col + 1 < self.s.columns:
            self.col, self.y = self.col + 1, self.tops[self.col + 1]
        else:
            self.new_page()
            self.tops = [self.y] * self.s.columns

    # -- text ---------------------------------------------------------------------------
    def put(self, x, y, text, size, kind=""):
        shift, scale = {"^": (-0.38, 0.7), "_": (0.22, 0.7)}.get(kind, (0, 1))
        self.page.insert_text(
            (x, y + shift * size),
            text,
            fontsize=size * scale,
            fontname="body",
            fontfile=str(FONTS / self.s.font),
        )
        return self.font.text_length(text, fontsize=size * scale)

    def words(self, source: str) -> list[list[tuple[str, str]]]:
        """Each word as runs (text, '' | '^' | '_')."""
        out = []
        for word in source.split(" "):
            runs, at = [], 0
            for m in MARK.finditer(word):
                if m.start() > at:
                    runs.append((word[at : m.start()], ""))
                runs.append((m[2], m[1]))
                at = m.end()
            if at < len(word):
                runs.append((word[at:], ""))
            out.append(runs)
        return out

    def width(self, runs, size) -> float:
        return sum(self.font.text_length(t, fontsize=size * (0.7 if k else 1)) for t, k in runs)

    def paragraph(self, source: str, size=None, rect=None, centre=False, record=True):
        """A paragraph set in the current column (or `rect`'s width), words hyphenated at
        line ends, running on into the next column or page."""
        size = size or self.s.size
        lead = size * 1.25
        words = self.words(source)
        space = self.font.text_length(" ", fontsize=size)
        while words:
            area = rect or self.column()
            line, used = [], 0.0
            while words:
                w = self.width(words[0], size)
                if used + w <= area.width:
                    line.append(words.pop(0))
                    used += w + space
                    continue
                split = self.hyphenate(words[0], area.width - used, size)
                if split:
                    line.append(split[0])
                    words[0] = split[1]
                break
            if not line:  # a word wider than the column
                line.append(words.pop(0))
            if rect is None:
                self.need(lead)
                area = self.column()
            x = area.x0
            if centre:
                x += (area.width - sum(self.width(r, size) + space for r in line) + space) / 2
            base = self.y + size
            for runs in line:
                for text, kind in runs:
                    x += self.put(x, base, text, size, kind)
                x += space
            self.y += lead
        self.y += size * 0.5
        if record:
            for sentence in re.split(r"(?<=[.!?])\s+(?=[A-Z])", plain(source)):
                if re.search(r"\d", sentence):
                    self.want.sentences.append(sentence)

    def hyphenate(self, runs, room, size):
        """A plain long word split so that its head and a hyphen fill the line."""
        if len(runs) != 1 or runs[0][1] or not re.fullmatch(r"[a-z]{8,}[,.]?", runs[0][0]):
            return None
        word = runs[0][0]
        for k in range(len(word) - 4, 3, -1):
            head = word[:k] + "-"
            if self.font.text_length(head, fontsize=size) <= room:
                return [(head, "")], [(word[k:], "")]
        return None

    def heading(self, text, size=None):
        self.want.headings.append(text)
        self.need(2.2 * self.s.size)
        self.y += 0.4 * self.s.size
        if self.s.bold_headings:  # bold at the body's size, as REVTeX and IEEE set them
            self.page.insert_text(
                (self.column().x0, self.y + self.s.size),
                text,
                fontsize=self.s.size,
                fontname="bold",
                fontfile=str(FONTS / self.s.font.replace(".ttf", "-Bold.ttf")),
            )
        else:
            self.put(self.column().x0, self.y + self.s.size, text, size or self.s.size * 1.25)
        self.y += 1.8 * self.s.size

    def front(self, title, authors, abstract):
        """Title, authors and abstract across the page; then the columns start."""
        self.want.headings.append(title)
        w = self.s.page[0]
        self.paragraph(title, 16, pymupdf.Rect(60, 0, w - 60, 0), centre=True, record=False)
        self.paragraph(authors, 9, pymupdf.Rect(60, 0, w - 60, 0), centre=True, record=False)
        self.paragraph(abstract, self.s.size, self.full(), record=True)
        self.y += 6
        self.tops = [self.y] * self.s.columns

    # -- floats -------------------------------------------------------------------------
    def caption(self, text, rect):
        self.paragraph(text, self.s.size - 1, rect, record=False)

    def figure(self, number: int, text: str, plot, raster=False, wide=False, height=150):
        """A figure at the current place (its whole column, or the page's width at the
        top of a new page), its caption below it."""
        fid = f"fig{number}"
        cap = f"{self.s.fig_word} {number}{self.s.caption_sep} {text}"
        if wide:
            self.new_page()
            area = self.full()
        else:
            self.need(height + 40)
            area = self.column()
        rect = pymupdf.Rect(area.x0, self.y, area.x1, self.y + height)
        fig = plt.figure(figsize=(rect.width / 72, rect.height / 72))
        with matplotlib.rc_context({"pdf.fonttype": 42, "font.size": 7}):
            panels = plot(fig)
            fig.tight_layout(pad=0.3)
            buf = io.BytesIO()
            fig.savefig(buf, format="png" if raster else "pdf", dpi=150)
        plt.close(fig)
        if raster:
            self.page.insert_image(rect, stream=buf.getvalue())
        else:
            self.page.show_pdf_page(rect, pymupdf.open("pdf", buf.getvalue()), 0)
        self.y = rect.y1 + 4
        self.caption(cap, pymupdf.Rect(area.x0, 0, area.x1, 0))
        self.y += 4
        self.want.figures[fid] = {"caption": plain(cap), "panels": panels, "raster": raster}
        if wide:
            self.tops = [self.y] * self.s.columns

    def table(self, number: int, text: str, rows: list[list[str]], widths=None, ruled=False):
        """A table in the current column: caption above (or below), header rule, rules
        across only unless `ruled`."""
        label = self.roman(number) if self.s.roman_tables else str(number)
        cap = f"{self.s.table_word} {label}{self.s.caption_sep} {text}"
        size, h = self.s.size - 1, (self.s.size - 1) * 1.6
        self.need(h * (len(rows) + 3) + 30)
        area = self.column()
        widths = widths or [area.width / len(rows[0])] * len(rows[0])
        if self.s.table_caption_above:
            self.caption(cap, pymupdf.Rect(area.x0, 0, area.x1, 0))
        x0, top = area.x0, self.y
        xs = [x0 + sum(widths[:j]) for j in range(len(widths) + 1)]
        space = self.font.text_length(" ", fontsize=size)
        for i, row in enumerate(rows):
            for j, cell in enumerate(row):
                x = xs[j] + 2
                for runs in self.words(cell):
                    for text, kind in runs:
                        x += self.put(x, top + i * h + size + 2, text, size, kind)
                    x += space
        bottom = top + len(rows) * h + 2
        for y in (top - 1, top + h + 1, bottom):
            self.page.draw_line((xs[0], y), (xs[-1], y), width=0.6)
        if ruled:
            for x in xs:
                self.page.draw_line((x, top - 1), (x, bottom), width=0.6)
        self.y = bottom + 6
        if not self.s.table_caption_above:
            self.caption(cap, pymupdf.Rect(area.x0, 0, area.x1, 0))
        self.y += 4
        self.want.tables.append(
            {"caption": plain(cap), "rows": [[plain(c) for c in r] for r in rows]}
        )

    @staticmethod
    def roman(n: int) -> str:
        return ["", "I", "II", "III", "IV", "V"][n]

    def save(self, path: Path) -> Expected:
        self.doc.save(path)
        return self.want


# -- figures: each returns its panels (axis labels and the curves' data) ----------------
def spectrum_data():
    lam = np.linspace(1540, 1560, 200)
    drop = 1 - 0.8 / (1 + ((lam - 1550.2) / 0.4) ** 2)
    return lam, drop


def transmission(fig):
    ax = fig.add_subplot()
    lam, t = spectrum_data()
    ax.plot(lam, t, color="tab:blue", label="measured")
    ax.plot(lam, 0.9 * t + 0.05, color="tab:red", label="model")
    ax.set_xticks([1540, 1545, 1550, 1555, 1560])
    ax.set_xlabel("Wavelength (nm)")
    ax.set_ylabel("Transmission")
    ax.legend(loc="lower left")
    curves = {"measured": (lam, t), "model": (lam, 0.9 * t + 0.05)}
    return [{"x": "Wavelength (nm)", "y": "Transmission", "curves": curves}]


def two_panels(fig):
    """Two plots drawn as many journals draw them: no box, only the left and bottom axes."""
    a, b = fig.subplots(1, 2)
    for ax in (a, b):
        ax.patch.set_visible(False)
        ax.spines[["top", "right"]].set_visible(False)
    gap = np.linspace(100, 500, 9)
    q = 2.1e4 * np.exp((gap - 100) / 250)
    a.semilogy(gap, q, "o-", color="tab:green")
    a.set_xlabel("Gap (nm)")
    a.set_ylabel("Loaded Q")
    a.text(0.05, 0.9, "(a)", transform=a.transAxes)
    e = np.linspace(1.8, 2.4, 120)
    absorb = np.exp(-(((e - 2.1) / 0.033) ** 2))
    b.plot(e, absorb, color="black")
    b.set_xlabel("Energy (eV)")
    b.set_ylabel("Absorbance (a.u.)")
    b.text(0.05, 0.9, "(b)", transform=b.transAxes)
    return [
        {"x": "Gap (nm)", "y": "Loaded Q", "curves": {"Q": (gap, q)}, "log_y": True},
        {"x": "Energy (eV)", "y": "Absorbance (a.u.)", "curves": {"A": (e, absorb)}},
    ]


def field_map(fig):
    ax = fig.add_subplot()
    x = np.linspace(-2, 2, 80)
    ax.imshow(np.cos(3 * np.hypot(*np.meshgrid(x, x))) ** 2, extent=(-2, 2, -2, 2))
    ax.set_xlabel("x (µm)")
    ax.set_ylabel("y (µm)")
    return [{"x": "x (µm)", "y": "y (µm)", "curves": {}}]


def raster_curve(fig):
    ax = fig.add_subplot()
    t = np.linspace(0, 10, 100)
    ax.plot(t, np.exp(-t / 3), color="tab:red")
    ax.set_xlabel("Time (ps)")
    ax.set_ylabel("Field amplitude")
    return [{"x": "Time (ps)", "y": "Field amplitude", "curves": {"decay": (t, np.exp(-t / 3))}}]


# -- the text ---------------------------------------------------------------------------
BODY = [
    "The microring is patterned in a silicon nitride film of thickness 800 nm and clad "
    "with silica, and its transmission is recorded with a tunable laser swept from 1540 nm "
    "to 1560 nm in steps of 0.1 pm.",
    "From the linewidth of 76 pm we obtain an intrinsic quality factor Q_{i} = 2.1 × 10^{4} "
    "at the resonance wavelength of 1550.2 nm, and the loaded value Q_{L} = 1.53×10^{5} "
    "follows for the undercoupled ring with a gap of 450 nm.",
    "The effective index n_{eff} = 1.82 follows from the free spectral range of 2.3 nm, "
    "and the group index of 2.04 agrees with the simulated dispersion of the waveguide.",
    "Propagation losses of 0.35 dB/cm are consistent with sidewall scattering, which scales "
    "with the roughness squared and contributes most of the photonics platform loss.",
    "The mode volume of 0.8 (λ/n)^{3} and the quality factor give a Purcell factor above "
    "1.9 × 10^{3}, enough for the emitter linewidth of 0.066 eV measured at 2.1 eV.",
    "Thermal tuning shifts the resonance by 0.018 nm/K, and the heater dissipates 12 mW "
    "for one free spectral range, a tuning efficiency comparable with published devices.",
    "Coupling is quantified by the extinction ratio, which reaches 15 dB at a gap of 300 nm "
    "and falls below 3 dB once the gap exceeds 500 nm, as the measurements demonstrate.",
    "Simulations use a grid of 40 pixels per µm and perfectly matched layers 1 µm thick, "
    "with a Courant factor of 0.5 and a run time of 2^{12} periods of the source.",
]
EQUATIONS = [
    "Q^{-1} = Q_{i}^{-1} + Q_{c}^{-1} (1)",
    "T(ω) = 1 − 4γ_{i}γ_{c}/((ω − ω_{0})^{2} + (γ_{i} + γ_{c})^{2}) (2)",
    "Δλ_{FSR} = λ^{2}/(n_{g}L) (3)",
]
MODES = [
    ["m", "λ (nm)", "f (THz)", "Q"],
    ["112", "1550.2", "193.39", "2.1 × 10^{4}"],
    ["113", "1537.9", "194.94", "1.9 × 10^{4}"],
    ["114", "1525.8", "196.49", "1.6 × 10^{4}"],
]
PARAMETERS = [
    ["Parameter", "Value", "Unit"],
    ["Ring radius", "20", "µm"],
    ["Waveguide width", "1.2", "µm"],
    ["Resolution (pixels per µm)", "40", "1/µm"],
    ["Film thickness", "800", "nm"],
]


TITLE = "Loss, coupling and thermal tuning of silicon nitride microring resonators at 1550 nm"


def body(t: Typesetter, start: int, count: int, tag: str):
    for i in range(count):
        text = BODY[(start + i) % len(BODY)]
        t.paragraph(f"{text} In run {tag}{i + 1} the settings of section {start + i + 1} apply.")


def paper(style: Style, path: Path, figures_first=False) -> Expected:
    t = Typesetter(style)
    t.front(
        TITLE,
        "E. Author, F. Author and G. Author",
        "We report microrings with an intrinsic quality factor of 2.1 × 10^{4} at 1550 nm "
        "and a thermal tuning of 0.018 nm/K.",
    )
    t.heading("1. Introduction" if style.name != "revtex" else "I. INTRODUCTION")
    body(t, 0, 3, "A")
    t.figure(1, "Transmission of the ring near 1550.2 nm: measured and model.", transmission)
    t.heading("2. Methods" if style.name != "revtex" else "II. METHODS")
    t.paragraph("The transmission of an all-pass ring is given by")
    for eq in EQUATIONS[:2]:
        t.paragraph(eq, centre=True)
    body(t, 3, 3, "B")
    width = t.column().width
    t.table(
        1,
        "Parameters of the simulated ring.",
        PARAMETERS,
        [0.55 * width, 0.2 * width, 0.25 * width],
    )
    body(t, 6, 2, "C")
    t.heading("3. Results" if style.name != "revtex" else "III. RESULTS")
    t.paragraph(EQUATIONS[2], centre=True)
    # an equation set in a maths font without a Unicode map: its glyphs read as
    # private-use code points, as in many published PDFs
    t.paragraph("\ue001(\ue002) = \ue003\ue004 \ue005 \ue006 (4)", centre=True, record=False)
    t.want.unreadable_equations += 1
    body(t, 1, 4, "D")
    t.figure(
        2,
        "(a) Loaded Q versus gap. (b) Absorbance of the dye at 2.1 eV.",
        two_panels,
        wide=style.name in ("ieee", "acs"),
        height=150,
    )
    t.table(2, "Modes of the ring.", MODES, ruled=style.name == "ieee")
    body(t, 4, 3, "E")
    t.figure(3, "Field intensity of mode m = 112 in the ring plane.", field_map, raster=True)
    t.figure(
        4,
        "Ring-down of the cavity field after the pulse, with 1/e time 3 ps.",
        raster_curve,
        raster=True,
    )
    body(t, 2, 2, "F")
    return t.save(path)


STYLES = {
    "revtex": Style(
        "revtex",
        "DejaVuSerif.ttf",
        9.0,
        2,
        "PHYSICAL REVIEW APPLIED 21, 044012 (2026)",
        "FIG.",
        "TABLE",
        roman_tables=True,
        bold_headings=True,
    ),
    "optica": Style(
        "optica",
        "DejaVuSans.ttf",
        8.5,
        2,
        "Research Article Vol. 13, No. 4 / April 2026 / Optica {page}",
        "Fig.",
        "Table",
    ),
    "acs": Style(
        "acs",
        "DejaVuSans.ttf",
        8.5,
        2,
        "Nano Letters pubs.acs.org/NanoLett Letter",
        "Figure",
        "Table",
    ),
    "ieee": Style(
        "ieee",
        "DejaVuSerif.ttf",
        8.5,
        2,
        "IEEE PHOTONICS JOURNAL, VOL. 18, NO. 2, APRIL 2026",
        "Fig.",
        "TABLE",
        roman_tables=True,
        bold_headings=True,
    ),
}
LAYOUTS = {name: (lambda path, s=style: paper(s, path)) for name, style in STYLES.items()}
