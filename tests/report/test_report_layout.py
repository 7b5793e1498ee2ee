"""The HTML report's paper / reproduction / overlay row fits a 1280-px browser window:
rendered in headless Chromium (Debian package), the screenshot shows the whole overlay
(its right edge inside the window, page margin beyond it). Markup in the text the report
quotes (paper, models) stays text: nothing in it runs, loads or links out, in the page
and in the browser."""

from __future__ import annotations

import shutil
import subprocess
import threading
from html.parser import HTMLParser

import numpy as np
import pytest
from PIL import Image

from reprolab.report import html as report_html

CHROMIUM = shutil.which("chromium")
COLOURS = {"paper": (0, 0, 255), "reproduced": (0, 160, 0), "overlay": (255, 0, 0)}


@pytest.mark.skipif(CHROMIUM is None, reason="needs the Debian chromium package")
def test_figure_row_scales_to_a_1280_px_window(tmp_path):
    for name, rgb in COLOURS.items():  # as wide as the report's 150-dpi plots
        Image.new("RGB", (1500, 900), rgb).save(tmp_path / f"{name}.png")
    md = "\n".join(
        [
            "### fig3: a figure",
            "",
            "| paper | reproduced | overlay on the paper's digitized data |",
            "|---|---|---|",
            "| ![p](paper.png) | ![r](reproduced.png) | ![o](overlay.png) |",
        ]
    )
    page = tmp_path / "report.html"
    page.write_text(report_html.markdown_to_html(md, tmp_path, "layout"))
    shot = tmp_path / "shot.png"
    subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            f"--screenshot={shot}",
            "--window-size=1280,1000",
            page.as_uri(),
        ],
        capture_output=True,
        timeout=120,
        check=True,
    )
    pixels = np.asarray(Image.open(shot).convert("RGB")).astype(int)
    assert pixels.shape[1] == 1280
    for name, rgb in COLOURS.items():
        cols = np.where((np.abs(pixels - rgb).sum(axis=2) < 30).any(axis=0))[0]
        assert cols.size > 200, f"{name} not visible"
        # wholly inside the window, with the page's margin to its right
        assert cols.max() < 1280 - 10, (name, cols.min(), cols.max())


# Text the report quotes from the paper and from the models, with markup that would run
# code, load something or link out if it were passed through as HTML or as a link.
ATTACKS = [
    "<script>document.title='PWNED'</script>",
    "<img src=x onerror=\"document.title='PWNED'\">",
    "<a href=javascript:alert(1)>x</a> [click](javascript:alert(1)) [site](https://evil.example/)",
    "<https://evil.example/> ![t](https://evil.example/t.png) ![d](data:image/png;base64,AAAA)",
    "<svg onload=alert(1)><style>body{display:none}</style><iframe src=https://evil.example/>",
]


class Tags(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def attack_page(tmp_path) -> str:
    Image.new("RGB", (20, 10), (0, 0, 255)).save(tmp_path / "fig.png")
    text = " ".join(ATTACKS)
    md = "\n".join(
        [
            f"# {ATTACKS[0]}",
            "",
            text,
            "",
            "| field | value |",
            "|---|---|",
            f"| analysis | {text} ![ok](fig.png) |",
            "",
            *(f"- {a}" for a in ATTACKS),
            "",
            f"`{ATTACKS[1]}`",
        ]
    )
    return report_html.markdown_to_html(md, tmp_path, "attack")


def test_markup_in_quoted_text_stays_text(tmp_path):
    page = attack_page(tmp_path)
    parser = Tags()
    parser.feed(page)
    tags = {tag for tag, _ in parser.tags}
    assert tags <= {"html", "head", "meta", "title", "style", "body", "h1", "p", "table"} | {
        "thead",
        "tbody",
        "tr",
        "th",
        "td",
        "ul",
        "li",
        "code",
        "em",
        "img",
    }, tags
    assert [t for t, _ in parser.tags].count("style") == 1  # the page's own
    for tag, attrs in parser.tags:
        assert not any(name.startswith("on") for name in attrs), (tag, attrs)
        assert "evil.example" not in "".join(map(str, attrs.values())), (tag, attrs)
    srcs = [attrs["src"] for tag, attrs in parser.tags if tag == "img"]
    assert len(srcs) == 1 and srcs[0].startswith("data:image/png;base64,")
    # the two images from outside, in the paragraph, the table and the list, shown as missing
    assert "&lt;script&gt;" in page and page.count("[missing image") == 3 * 2


@pytest.mark.skipif(CHROMIUM is None, reason="needs the Debian chromium package")
def test_markup_in_quoted_text_runs_nothing_in_a_browser(tmp_path):
    page = tmp_path / "report.html"
    page.write_text(attack_page(tmp_path))
    dom = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", page.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    assert "<title>attack</title>" in dom and "PWNED</title>" not in dom


def test_a_line_like_a_heading_is_rendered(tmp_path):
    """'#3 ...' or seven #'s at the start of a line is no heading: it is text (a line-based
    reader once looped for ever on it, and the report step with it)."""
    md = "Intro\n#3 is the sharpest resonance.\n\n####### not a heading\n\n#tag"
    pages = []
    worker = threading.Thread(
        target=lambda: pages.append(report_html.markdown_to_html(md, tmp_path, "t")), daemon=True
    )
    worker.start()
    worker.join(30)
    assert pages, "markdown_to_html did not return"
    for text in ("#3 is the sharpest resonance.", "####### not a heading", "#tag"):
        assert text in pages[0]
    assert "<h" not in pages[0].split("<body>")[1]


def test_boundaries_column_says_what_the_design_builds():
    from reprolab.report.markdown import boundaries_text

    assert boundaries_text({"pml_thickness": 1.0}) == "PML 1"
    bloch = {"boundaries": [{"axis": "x", "kind": "bloch"}, {"axis": "y", "kind": "bloch"}]}
    assert boundaries_text(bloch) == "x: Bloch, y: Bloch"
    cyl = {"pml_thickness": 2.0, "boundaries": [{"axis": "r", "kind": "pml"}]}
    assert boundaries_text(cyl) == "r: PML 2"
    assert boundaries_text({}) == "none"
