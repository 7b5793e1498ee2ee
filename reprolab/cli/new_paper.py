"""`reprolab new-paper PDF|MARKDOWN --id ID`: a paper-folder skeleton a person completes.

PyMuPDF reads the PDF (text with font sizes and positions, vector drawings and images
located on the page, page regions rendered to PNG); no model is downloaded. What code
cannot know is written as a `TODO` value in metadata.yaml, which `reprolab check`
refuses until a person replaces it; what it found but cannot be sure of (an axis label,
a quantity read from a unit in the label) is written as `TODO confirm: <found>`.
"""

from __future__ import annotations

import io
import os
import re
import shutil
import stat
import sys
from pathlib import Path

import yaml

from reprolab.cli.pdf_intake import Intake, table_offers, unplaced, write_account

CAPTION = re.compile(r"^\s*(?:Fig\.?|Figure)\s*(\d+)\s*[:.|]?\s*(.*)", re.S | re.I)
UNIT_IN_LABEL = re.compile(r"[(\[]\s*([^)\]]+?)\s*[)\]]\s*$")
HEADER = (
    "# Paper folder made by `reprolab new-paper` from {source}.\n"
    "# Replace every TODO (a 'TODO confirm: X' was found in the PDF: keep X if right),\n"
    "# add digitized CSVs where you have them, then run: reprolab check {folder}\n"
    "# Format: docs/paper-format.md\n"
)


def new_paper_command(args) -> int:
    from reprolab.errors import ReproLabError

    src = Path(args.source)
    out = Path(args.out or Path("papers") / args.id)
    try:
        meta_path = make_paper_folder(src, args.id, out)
    except ReproLabError as exc:
        print(f"reprolab: {exc}", file=sys.stderr)
        return 2
    print(f"reprolab: wrote {out}/ ({meta_path.name}, paper.md, figures/)")
    print(f"reprolab: now replace the TODOs in {meta_path}, then: reprolab check {out}")
    return 0


def make_paper_folder(src: Path, paper_id: str, out: Path) -> Path:
    from reprolab.errors import InputFileError

    if not re.fullmatch(r"[A-Za-z0-9_]+", paper_id):
        raise InputFileError(src, f"--id '{paper_id}' is not letters, digits and _ only")
    if not src.is_file():
        raise InputFileError(src, "does not exist; give a .pdf or .md file")
    if out.exists() and any(out.iterdir()):
        raise InputFileError(out, "exists and is not empty; nothing was overwritten")
    suffix = src.suffix.lower()
    if suffix not in (".pdf", ".md", ".markdown"):
        raise InputFileError(src, f"suffix '{src.suffix}' is not one of .pdf, .md, .markdown")
    created = not out.exists()
    (out / "figures").mkdir(parents=True, exist_ok=True)
    try:
        if suffix == ".pdf":
            intake = read_pdf(src, out / "figures")
        else:
            intake = Intake(*read_markdown(src, out / "figures"))
    except BaseException:
        shutil.rmtree(out if created else out / "figures", ignore_errors=True)  # no half folder
        raise
    for fig in intake.figures:
        if fig.get("refused"):  # the skeleton says TODO; the person is told why here
            print(f"reprolab: {fig['refused']}", file=sys.stderr)
    (out / "paper.md").write_text(intake.markdown, encoding="utf-8")
    figures = [entry for fig in intake.figures for entry in panel_entries(fig)]
    write_digitized(out, figures)
    meta = skeleton(paper_id, intake.title, figures)
    if intake.tables:
        offered, values = table_offers(intake.tables, intake.markdown)
        if values:
            meta["key_values"] = values
        if offered:
            meta["tables"] = offered
    if intake.lines:
        write_account(out, src.name, intake.lines)
        for path, problem in unplaced(out):
            print(f"reprolab: {path}: {problem}", file=sys.stderr)
    text = (
        HEADER.format(source=src.name, folder=out)
        + digitize_offer(figures)
        + yaml.safe_dump(meta, sort_keys=False, allow_unicode=True, width=100)
    )
    (out / "metadata.yaml").write_text(text, encoding="utf-8")
    return out / "metadata.yaml"


def panel_entries(fig: dict) -> list[dict]:
    """A figure of several plots as one entry per panel (fig2a, fig2b: each its own
    axes and curves), with the figure's image and caption; any other as itself."""
    panels = fig.get("panels") or []
    if len(panels) < 2:
        return [{**fig, "digitized": panels[0]["curves"] if panels else []}]
    return [
        {
            **fig,
            **panel,
            "figure_id": f"{fig['figure_id']}{'abcdefgh'[i]}",
            "digitized": panel["curves"],
        }
        for i, panel in enumerate(panels[:8])
    ]


def write_digitized(out: Path, figures: list[dict]) -> None:
    """Each curve read off a vector figure's paths as data/<figure>_<curve>.csv, which
    the skeleton offers to confirm."""
    from reprolab.cli.pdf_curves import csv_text
    from reprolab.fileio import atomic_write_text

    for fig in figures:
        for curve in fig.get("digitized", []):
            cid = re.sub(r"[^A-Za-z0-9_]+", "_", curve["label"]).strip("_") or "curve"
            curve["file"] = f"data/{fig['figure_id']}_{cid}.csv"
            (out / "data").mkdir(exist_ok=True)
            atomic_write_text(out / curve["file"], csv_text(curve["points"]))


def digitize_offer(figures: list[dict]) -> str:
    """Comment lines naming the figures no data was read from, with the command that
    digitizes a curve of each from its image."""
    bare = [f for f in figures if not f.get("digitized") and not f["image"].startswith("TODO")]
    if not bare:
        return ""
    lines = [f"# No curve data was read from {', '.join(f['figure_id'] for f in bare)}. Digitize a"]
    lines.append("# curve from its image with two calibration points per axis and its colour:")
    for f in bare:
        lines.append(
            f"#   reprolab digitize {f['image']} --x PIXEL=VALUE PIXEL=VALUE "
            f"--y PIXEL=VALUE PIXEL=VALUE --color '#RRGGBB' --out data/{f['figure_id']}_<curve>.csv"
        )
    return "\n".join(lines) + "\n"


def skeleton(paper_id: str, title: str | None, figures: list[dict]) -> dict:
    figs = []
    for fig in figures:
        caption = fig.get("caption") or ""
        figs.append(
            {
                "figure_id": fig["figure_id"],
                "title": figure_title(caption),
                "image": fig["image"],
                "caption": caption,
                "x_axis": axis(fig.get("x_label")),
                "y_axes": {"left": axis(fig.get("y_label"))},
                "curves": digitized_curves(fig["digitized"])
                if fig.get("digitized")
                else curves(fig.get("legend") or [], fig),
            }
        )
        if fig.get("y_right"):
            figs[-1]["y_axes"]["right"] = axis(fig["y_right"])
            for c in figs[-1]["curves"]:
                c["y_axis"] = "TODO: left or right (this figure has two y axes)"
    return {
        "paper_id": paper_id,
        "title": title or "TODO: the paper's title",
        "authors": ["TODO: authors, one per entry"],
        "domain": "TODO: e.g. thin-film optics, plasmonics, photonic crystals",
        "paper_text": "paper.md",
        "figures": figs or [{"figure_id": "TODO", "image": "TODO: no figure was found; add one"}],
    }


def figure_title(caption: str) -> str:
    m = CAPTION.match(caption)
    text = (m[2] if m else caption).strip()
    return text.split(". ")[0].rstrip(".") or "TODO: the figure's title"


def digitized_curves(found: list[dict]) -> list[dict]:
    """One curve per path read off the figure, its CSV to confirm against the image."""
    out = []
    for curve in found:
        cid = Path(curve["file"]).stem.split("_", 1)[1]
        out.append(
            {
                "curve_id": cid,
                "label": f"TODO confirm: {curve['label']}",
                "digitized": f"TODO confirm: {curve['file']}",
                "digitized_by": "new-paper",  # read off the PDF's paths
            }
        )
    return out


def curves(legend: list[str], fig: dict) -> list[dict]:
    """One curve per legend entry found (to confirm), else one to fill in that offers
    `reprolab digitize` for the figure's image (no data was read from it)."""
    offer = (
        f"no data was read from this figure; add digitized: data/<file>.csv, e.g. from "
        f"reprolab digitize {fig.get('image', 'figures/<image>')} --x PIXEL=VALUE PIXEL=VALUE "
        "--y PIXEL=VALUE PIXEL=VALUE --color '#RRGGBB' --out data/<file>.csv"
    )
    if not legend:
        return [
            {
                "curve_id": "TODO_curve_id",
                "label": f"TODO: the legend text (one entry per curve); {offer}",
            }
        ]
    out = []
    for i, text in enumerate(legend):
        cid = re.sub(r"[^A-Za-z0-9_]+", "_", text).strip("_") or f"curve{i + 1}"
        out.append({"curve_id": f"TODO_confirm_{cid}", "label": f"TODO confirm: {text}"})
    return out


def axis(label: str | None) -> dict:
    """An axis to confirm: the label found, and a quantity and unit read from it."""
    from reprolab import units

    if not label:
        return {
            "label": "TODO: the axis label",
            "quantity": f"TODO: one of {', '.join(units.QUANTITIES)}",
            "unit": "TODO: the unit (docs/paper-format.md)",
        }
    out = {"label": f"TODO confirm: {label}"}
    m = UNIT_IN_LABEL.search(label)
    unit = units.canonical_unit(m[1]) if m else None
    quantity = next((q for q in units.UNITS if unit and unit in units.UNITS[q]), None)
    if quantity == "length" or (quantity == "wavelength" and "avelength" not in label):
        quantity = "wavelength" if re.search(r"wavelength|λ", label, re.I) else "length"
    out["quantity"] = f"TODO confirm: {quantity}" if quantity else "TODO: the quantity"
    out["unit"] = f"TODO confirm: {unit}" if quantity else "TODO: the unit"
    return out


def read_markdown(src: Path, fig_dir: Path) -> tuple[str | None, str, list[dict]]:
    """Title, text and figures of a markdown paper. Only image files beside it are copied
    (see `image_beside`); any other reference becomes a TODO and a refusal line."""
    text = src.read_text(encoding="utf-8")
    title = next((ln[2:].strip() for ln in text.splitlines() if ln.startswith("# ")), None)
    figures = []
    for i, m in enumerate(re.finditer(r"!\[([^\]]*)\]\(([^)\s]+)\)", text), start=1):
        fig = {"figure_id": f"fig{i}", "caption": m[1]}
        try:
            data, suffix = image_beside(src.parent, m[2])
        except FileNotFoundError:
            fig["image"] = f"TODO: {m[2]} was not found beside {src.name}"
        except ValueError as exc:
            fig["image"] = f"TODO: {m[2]} was refused (not copied): {exc}"
            fig["refused"] = f"{src}: figure {i} '{m[2]}' refused, not copied: {exc}"
        else:
            fig["image"] = f"figures/fig{i}{suffix}"
            (fig_dir / f"fig{i}{suffix}").write_bytes(data)
        figures.append(fig)
    return title, text, figures


IMAGE_TYPES = {"PNG": ".png", "JPEG": ".jpg", "GIF": ".gif", "WEBP": ".webp"}
MAX_IMAGE_BYTES = 50 << 20
MAX_IMAGE_PIXELS = 100_000_000


def image_beside(folder: Path, ref: str) -> tuple[bytes, str]:
    """The bytes of the image file `ref` names in `folder` (or a folder below it) and
    the suffix of its type, read from its content. Refused (ValueError, saying why): an
    absolute path, a URL, any '..', a symbolic link on the way, anything but a regular
    file, and a file whose content is not a PNG, JPEG, GIF or WebP image, whatever its
    suffix says. FileNotFoundError: nothing there."""
    from PIL import Image, UnidentifiedImageError

    parts = ref.replace("\\", "/").split("/")
    if ref.startswith(("/", "~")) or re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:", ref):
        raise ValueError("an absolute path or URL; valid: a file beside the markdown")
    if ".." in parts or not ref.strip():
        raise ValueError("'..' leaves the markdown's folder; valid: a file beside it")
    path = Path(folder)
    for part in [p for p in parts if p not in ("", ".")]:
        path = path / part
        if path.is_symlink():
            raise ValueError(f"{path} is a symbolic link; valid: a regular file, not a link")
    try:  # no link followed, and a FIFO or device never blocks the read
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise ValueError(f"cannot be opened as a regular file ({exc.strerror})") from None
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ValueError("not a regular file; valid: an image file")
        data = fh.read(MAX_IMAGE_BYTES + 1)
    if len(data) > MAX_IMAGE_BYTES:
        raise ValueError(f"over {MAX_IMAGE_BYTES >> 20} MiB; valid: a smaller image")
    try:
        with Image.open(io.BytesIO(data)) as img:
            kind = img.format
            if img.width * img.height > MAX_IMAGE_PIXELS:
                raise ValueError(f"{img.width}x{img.height} pixels, over {MAX_IMAGE_PIXELS}")
            img.verify()
    except (UnidentifiedImageError, OSError, SyntaxError, Image.DecompressionBombError) as exc:
        raise ValueError(
            f"its content is not an image ({type(exc).__name__}); valid: a PNG, JPEG, GIF "
            "or WebP file (checked by content, not by name)"
        ) from None
    if kind not in IMAGE_TYPES:
        raise ValueError(f"a {kind} image; valid: {', '.join(IMAGE_TYPES)}")
    return data, IMAGE_TYPES[kind]


def read_pdf(src: Path, fig_dir: Path):
    """The PDF's intake (reprolab.cli.pdf_intake): every line placed, figures saved."""
    from reprolab.cli.pdf_intake import MAX_PAGES, read_pdf_intake
    from reprolab.errors import InputFileError

    try:
        import pymupdf
    except ImportError:  # optional: AGPL-licensed, see docs/paper-format.md
        raise InputFileError(
            src,
            "reading a PDF needs PyMuPDF (pip install pymupdf; AGPL-3.0, see "
            "docs/paper-format.md); without it, give the paper as markdown (.md)",
        ) from None
    try:
        doc = pymupdf.open(src)
    except Exception as exc:  # noqa: BLE001 - any unreadable PDF is the user's file
        raise InputFileError(src, f"cannot be read as a PDF ({exc})") from None
    if doc.page_count > MAX_PAGES:
        raise InputFileError(
            src,
            f"has {doc.page_count} pages, over {MAX_PAGES}; give the paper alone (its "
            "supplement as a separate file, or the pages that matter)",
        )
    return read_pdf_intake(doc, fig_dir)
