"""The HTML report's paper / reproduction / overlay row fits a 1280-px browser window:
rendered in headless Chromium (Debian package), the screenshot shows the whole overlay
(its right edge inside the window, page margin beyond it)."""

from __future__ import annotations

import shutil
import subprocess

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
