"""Screenshots of parts of a report's HTML in headless Chromium (the Debian package),
for docs/: each part is the report from one heading up to the next heading of the same
level, rendered as the report's page renders it, at 1280 px wide.

    .venv/bin/python scripts/report_screenshots.py REPORT.md OUT_PREFIX "### fig2" "## 6."
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from reprolab.report.html import markdown_to_html


def level(line: str) -> int:
    """A markdown heading's level (0: not a heading)."""
    hashes = line.split(" ")[0]
    return len(hashes) if hashes and set(hashes) == {"#"} else 0


def part(md: str, heading: str) -> str:
    """The lines from the first starting with `heading` to the next heading of its level
    or above."""
    lines = md.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(heading))
    own = level(lines[start])
    ends = (i for i in range(start + 1, len(lines)) if 0 < level(lines[i]) <= own)
    return "\n".join(lines[start : next(ends, len(lines))])


def shoot(report: Path, out: Path, heading: str, height: int = 4000) -> Path:
    chromium = shutil.which("chromium")
    if chromium is None:
        raise SystemExit("needs the Debian chromium package")
    html = markdown_to_html(
        part(report.read_text(encoding="utf-8"), heading), report.parent, "part"
    )
    with tempfile.NamedTemporaryFile("w", suffix=".html", dir=report.parent, delete=False) as fh:
        fh.write(html)
    page = Path(fh.name)
    try:
        subprocess.run(
            [
                chromium,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--hide-scrollbars",
                f"--screenshot={out}",
                f"--window-size=1280,{height}",
                page.as_uri(),
            ],
            capture_output=True,
            timeout=120,
            check=True,
        )
    finally:
        page.unlink()
    return trimmed(out)


def trimmed(png: Path, margin: int = 24) -> Path:
    """The screenshot cut below its last non-white row (the window is taller than most
    parts), saved in 256 colours."""
    import numpy as np
    from PIL import Image

    image = Image.open(png).convert("RGB")
    rows = np.where((np.asarray(image) < 245).any(axis=(1, 2)))[0]
    if rows.size:
        image = image.crop((0, 0, image.width, min(image.height, rows[-1] + margin)))
    # 256 colours: a third of the size, no visible change on a page of text and plots
    image.convert("P", palette=Image.Palette.ADAPTIVE, colors=256).save(png, optimize=True)
    return png


if __name__ == "__main__":
    report, prefix, *headings = sys.argv[1:]
    for n, heading in enumerate(headings, start=1):
        print(shoot(Path(report), Path(f"{prefix}_{n}.png"), heading))
