"""PDFs the tests build themselves (matplotlib, real text and vector plots), and what a
person does with the `reprolab new-paper` skeleton made from them."""

import shutil
import textwrap
from pathlib import Path

import matplotlib
import yaml

matplotlib.use("Agg")
from matplotlib.backends.backend_pdf import PdfPages  # noqa: E402

from reprolab.cli import main  # noqa: E402
from reprolab.paper import Paper  # noqa: E402

EXAMPLE = Path(__file__).parents[2] / "examples" / "papers" / "silica_bragg_2026"
LINES_PER_PAGE = 40


def page(pdf, texts, plot=None):
    import matplotlib.pyplot as plt

    fig = plt.figure(figsize=(8.5, 11))
    fig.patch.set_visible(False)  # as in a journal PDF: no page-sized background
    for y, text, size in texts:
        fig.text(0.08, y, text, fontsize=size, parse_math=False)
    if plot:
        plot(fig.add_axes([0.15, 0.55, 0.7, 0.3]))
    pdf.savefig(fig)
    plt.close(fig)


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


def example_text_lines() -> list[tuple[str, int]]:
    """The example's whole text as printed lines: headings large, body wrapped."""
    out = []
    for ln in Paper(EXAMPLE).text().splitlines():
        if not ln.strip() or ln.strip() == "---":
            continue
        if ln.startswith("# "):  # the title, on two lines as a journal prints it
            out += [(part, 16) for part in textwrap.wrap(ln[2:], 60, break_on_hyphens=False)]
            continue
        if ln.startswith("#"):
            out.append((ln.lstrip("# "), 13))
            continue
        plain = ln.replace("**", "").replace("*", "")
        out += [(part, 9) for part in textwrap.wrap(plain, 100, break_on_hyphens=False)]
    return out


def example_as_pdf(path: Path) -> None:
    """The bundled example as a journal would print it: its whole text, then each
    figure as a vector plot of its digitized curves with its axis labels and a numbered
    caption."""
    paper = Paper(EXAMPLE)
    lines = example_text_lines()
    with matplotlib.rc_context({"pdf.fonttype": 42}), PdfPages(path) as pdf:
        for start in range(0, len(lines), LINES_PER_PAGE):
            chunk = lines[start : start + LINES_PER_PAGE]
            y, texts = 0.94, []
            for text, size in chunk:
                texts.append((y, text, size))
                y -= 1.6 * size / 792  # line spacing 1.6 x the font size, on an 11 in page
            page(pdf, texts)
        for n, fig in enumerate(paper.meta.figures, start=1):

            def plot(ax, fig=fig):
                for c in fig.curves:
                    ax.plot(*paper.curve_data(fig.figure_id, c.curve_id), label=c.label)
                ax.set_xlabel(fig.x_axis.label)
                ax.set_ylabel(fig.y_axes.left.label)
                ax.legend()

            page(pdf, [(0.47, f"Fig. {n}: {fig.title}.", 10)], plot)


def example_from_its_pdf(tmp: Path) -> Path:
    """The paper folder a researcher gets from the example's PDF: `reprolab new-paper`,
    the TODOs confirmed or filled in, the paper's own digitized CSVs put in place of those
    new-paper read off the plots, `reprolab check` clean."""
    tmp.mkdir(parents=True, exist_ok=True)
    pdf = tmp / "silica.pdf"
    example_as_pdf(pdf)
    out = tmp / "silica_bragg_2026"
    assert main(["new-paper", str(pdf), "--id", "silica_bragg_2026", "--out", str(out)]) == 0
    example = Paper(EXAMPLE).meta
    meta = confirm(yaml.safe_load((out / "metadata.yaml").read_text()))
    meta |= {"authors": example.authors, "domain": example.domain}
    for found, fig in zip(meta["figures"], example.figures, strict=True):
        # what a person supplies: the quantities and units, the curve ids, the data
        found["x_axis"] = fig.x_axis.model_dump(exclude_defaults=True)
        found["y_axes"] = {"left": fig.y_axes.left.model_dump(exclude_defaults=True)}
        for c, want in zip(found["curves"], fig.curves, strict=True):
            c |= {"curve_id": want.curve_id, "digitized": want.digitized}
            c.pop("digitized_by", None)  # the paper's own data replace those read off the PDF
    shutil.rmtree(out / "data", ignore_errors=True)
    shutil.copytree(EXAMPLE / "data", out / "data")
    (out / "metadata.yaml").write_text(yaml.safe_dump(meta, allow_unicode=True))
    assert main(["check", str(out)]) == 0
    return out
