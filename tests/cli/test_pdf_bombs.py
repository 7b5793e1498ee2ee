"""PDF intake against a page that declares itself kilometres wide and a document of
too many pages: downscaled or refused at once, never gigabytes of pixels."""

from __future__ import annotations

import pytest

pymupdf = pytest.importorskip("pymupdf")


def huge_page_pdf(width: float) -> bytes:
    doc = pymupdf.open()
    page = doc.new_page(width=width, height=width)
    page.draw_rect(pymupdf.Rect(100, 100, width - 100, width / 2), color=(0, 0, 0))
    page.draw_line((200, 200), (width - 200, width / 2 - 200))
    page.insert_text((100, width / 2 + 20), "Fig. 1. A figure as wide as the page.", fontsize=11)
    return doc.tobytes()


def test_a_figure_on_a_huge_page_is_rendered_within_the_pixel_cap(tmp_path):
    """A 1 KB PDF with one 1,000 km page: its figure was rendered at 1 dpi at least
    (1.7e9 pixels, 'Overly large image' or gigabytes); now below 1 dpi, within the cap."""
    from PIL import Image

    from reprolab.cli.pdf_intake import MAX_PIXELS, read_pdf_intake

    data = huge_page_pdf(3e6)
    assert len(data) < 2000
    intake = read_pdf_intake(pymupdf.open(stream=data, filetype="pdf"), tmp_path)
    (fig,) = intake.figures
    with Image.open(tmp_path / fig["image"].split("/")[-1]) as img:
        assert 0 < img.width * img.height <= MAX_PIXELS


def test_a_document_of_too_many_pages_is_refused_before_reading(tmp_path):
    """101 pages (300 were read, 79 s): refused before a page is read."""
    from reprolab.cli.new_paper import read_pdf
    from reprolab.errors import InputFileError

    doc = pymupdf.open()
    for _ in range(101):
        doc.new_page().insert_text((72, 72), "A page of text.")
    src = tmp_path / "long.pdf"
    doc.save(src)
    with pytest.raises(InputFileError, match="101 pages, over 100"):
        read_pdf(src, tmp_path / "figures")
