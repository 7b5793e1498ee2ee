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
from collections import Counter
from pathlib import Path

import yaml

CAPTION = re.compile(r"^\s*(?:Fig\.?|Figure)\s*(\d+)\s*[:.]?\s*(.*)", re.S | re.I)
NUMBER = re.compile(r"^[\s\-−+0-9.,eE×^]*$")
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
        read = read_pdf if suffix == ".pdf" else read_markdown
        title, markdown, figures = read(src, out / "figures")
    except BaseException:
        shutil.rmtree(out if created else out / "figures", ignore_errors=True)  # no half folder
        raise
    for fig in figures:
        if fig.get("refused"):  # the skeleton says TODO; the person is told why here
            print(f"reprolab: {fig['refused']}", file=sys.stderr)
    (out / "paper.md").write_text(markdown, encoding="utf-8")
    meta = skeleton(paper_id, title, figures)
    text = HEADER.format(source=src.name, folder=out) + yaml.safe_dump(
        meta, sort_keys=False, allow_unicode=True, width=100
    )
    (out / "metadata.yaml").write_text(text, encoding="utf-8")
    return out / "metadata.yaml"


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
                "curves": curves(fig.get("legend") or []),
            }
        )
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


def curves(legend: list[str]) -> list[dict]:
    """One curve per legend entry found (to confirm), else one to fill in."""
    if not legend:
        return [
            {
                "curve_id": "TODO_curve_id",
                "label": "TODO: the legend text (one entry per curve; add "
                "digitized: data/<file>.csv where you have the data)",
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


def read_pdf(src: Path, fig_dir: Path) -> tuple[str | None, str, list[dict]]:
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
    pages = [page_content(page) for page in doc]
    body = body_size([line for lines, _ in pages for line in lines])
    sizes = sorted({ln["size"] for lines, _ in pages for ln in lines if ln["size"] > body * 1.15})
    title = None
    md: list[str] = []
    figures: list[dict] = []
    for (lines, regions), page in zip(pages, doc, strict=True):
        regions_caps = attach_captions(lines, regions)
        for region, caption in regions_caps:
            n = len(figures) + 1
            number = CAPTION.match(caption or "")
            fid = f"fig{number[1]}" if number else f"fig{n}"
            if any(f["figure_id"] == fid for f in figures):
                fid = f"fig{n}"
            page.get_pixmap(clip=region["rect"], dpi=150).save(fig_dir / f"{fid}.png")
            labels = axis_labels(lines, region)
            figures.append(
                {"figure_id": fid, "image": f"figures/{fid}.png", "caption": caption, **labels}
            )
        heading = None  # the heading line just written, if the last line was one
        for ln in lines:
            if any(ln["rect"].intersects(r["area"]) for r in regions):
                continue  # tick and axis labels belong to the figure
            if ln["size"] > body * 1.15 and len(ln["text"]) < 120:
                level = max(1, len(sizes) - sizes.index(ln["size"]))
                if continues(heading, ln):  # a title printed on two lines is one heading
                    heading["text"] += " " + ln["text"]
                    md[-1] = f"\n{'#' * min(level, 4)} {heading['text']}\n"
                    heading["rect"] = ln["rect"]
                    title = heading["text"] if heading["is_title"] else title
                    continue
                heading = {**ln, "is_title": title is None}
                title = title or ln["text"]
                md.append(f"\n{'#' * min(level, 4)} {ln['text']}\n")
            else:
                heading = None
                md.append(ln["text"])
    return title, "\n".join(md).strip() + "\n", figures


def continues(heading: dict | None, line: dict) -> bool:
    """Whether a large-type line is the next line of the heading just before it: the
    same size, directly below it (less than a line's height apart; tightly set lines
    overlap a little)."""
    if heading is None or abs(heading["size"] - line["size"]) > 0.1:
        return False
    gap = line["rect"].y0 - heading["rect"].y1
    return -0.5 * line["size"] < gap < 0.8 * line["size"]


def page_content(page) -> tuple[list[dict], list[dict]]:
    """The page's text lines (text, size, rect, horizontal?) and its figure regions."""
    import pymupdf

    lines = []
    for block in page.get_text("dict")["blocks"]:
        for line in block.get("lines", []):
            text = "".join(s["text"] for s in line["spans"]).strip()
            if text:
                size = round(max(s["size"] for s in line["spans"]), 1)
                horizontal = abs(line["dir"][0]) > 0.9
                lines.append({"text": text, "size": size, "rect": pymupdf.Rect(line["bbox"])})
                lines[-1]["horizontal"] = horizontal
    area = page.rect.width * page.rect.height
    rects = [pymupdf.Rect(r) for r in page.cluster_drawings()]
    rects += [pymupdf.Rect(i["bbox"]) for i in page.get_image_info()]
    # a figure is more than a rule or a logo, less than a page background
    rects = [r for r in rects if 0.02 * area < r.width * r.height < 0.8 * area]
    rects = [r for r in rects if not any(o != r and o.contains(r) for o in rects)]
    pad = 0.09 * page.rect.width
    regions = []
    for r in sorted(rects, key=lambda r: (r.y0, r.x0)):
        grown = pymupdf.Rect(r.x0 - pad, r.y0 - pad / 3, r.x1 + pad / 3, r.y1 + pad)
        regions.append({"plot": r, "area": grown & page.rect, "rect": grown & page.rect})
    return lines, regions


def body_size(lines: list[dict]) -> float:
    counts = Counter()
    for ln in lines:
        counts[ln["size"]] += len(ln["text"])
    return counts.most_common(1)[0][0] if counts else 10.0


def attach_captions(lines: list[dict], regions: list[dict]) -> list[tuple[dict, str | None]]:
    """Each region with the nearest caption ('Fig. N ...') below it (else above); the
    region stops short of its caption, and the caption joins its following lines."""
    caps = [i for i, ln in enumerate(lines) if CAPTION.match(ln["text"])]
    out = []
    for region in regions:
        below = [i for i in caps if lines[i]["rect"].y0 >= region["plot"].y1 - 1]
        above = [i for i in caps if lines[i]["rect"].y1 <= region["plot"].y0 + 1]
        pick = min(below, key=lambda i: lines[i]["rect"].y0, default=None)
        if pick is None:
            pick = max(above, key=lambda i: lines[i]["rect"].y1, default=None)
        caption = None
        if pick is not None:
            caps.remove(pick)
            cap_rect = lines[pick]["rect"]
            if cap_rect.y0 >= region["plot"].y1 - 1:
                region["rect"].y1 = min(region["rect"].y1, cap_rect.y0 - 1)
                region["area"] = region["rect"]
            caption = caption_text(lines, pick)
        out.append((region, caption))
    return out


def caption_text(lines: list[dict], start: int) -> str:
    """The caption line and the lines right below it in the same font size."""
    parts, prev = [lines[start]["text"]], lines[start]
    for ln in lines[start + 1 :]:
        gap = ln["rect"].y0 - prev["rect"].y1
        if ln["size"] != prev["size"] or gap > prev["size"] or CAPTION.match(ln["text"]):
            break
        parts.append(ln["text"])
        prev = ln
    return " ".join(parts)


def axis_labels(lines: list[dict], region: dict) -> dict:
    """The longest non-numeric horizontal text below the plot (x) and the longest
    rotated text left of it (y), inside the figure's region."""
    plot, inside = region["plot"], [ln for ln in lines if ln["rect"].intersects(region["rect"])]
    words = [ln for ln in inside if not NUMBER.match(ln["text"])]
    xs = [ln for ln in words if ln["horizontal"] and ln["rect"].y0 >= plot.y1 - 2]
    ys = [ln for ln in words if not ln["horizontal"] and ln["rect"].x1 <= plot.x0 + 2]
    pick = lambda c: max(c, key=lambda ln: len(ln["text"]))["text"] if c else None  # noqa: E731
    legend = [ln["text"] for ln in words if ln["horizontal"] and plot.contains(ln["rect"])]
    return {"x_label": pick(xs), "y_label": pick(ys), "legend": legend}
