"""The report's HTML view: one self-contained page (inline CSS, images as base64 data
URIs, no scripts, no network), converted from the markdown report that code writes.

Only the markdown subset `reprolab.report` emits is handled: headings, paragraphs,
pipe tables, bullet lists, images, **bold**, *italic* and `code`.
"""

from __future__ import annotations

import base64
import html
import mimetypes
import re
from pathlib import Path

CSS = """
body{font-family:system-ui,sans-serif;max-width:75em;margin:2em auto;padding:0 1em;
line-height:1.45;color:#222}
h1{font-size:1.6em} h2{font-size:1.3em;border-bottom:1px solid #ccc;margin-top:2em}
h3{font-size:1.1em;margin-top:1.5em}
table{border-collapse:collapse;margin:.8em 0} td,th{border:1px solid #bbb;padding:.3em .6em;
vertical-align:top} th{background:#f0f0f0}
img{max-width:100%;height:auto}
table.images{width:100%;table-layout:fixed} table.images td img{width:100%}
code{background:#f4f4f4;padding:0 .2em}
"""

_IMG = re.compile(r"!\[([^\]]*)\]\(([^)]+)\)")


def _data_uri(path: Path, base: Path) -> str | None:
    """An image inside the report's folder as a data URI; anything else is never read."""
    if not path.is_relative_to(base.resolve()) or not path.is_file():
        return None
    mime = mimetypes.guess_type(path.name)[0] or ""
    if not mime.startswith("image/"):
        return None
    return f"data:{mime};base64," + base64.b64encode(path.read_bytes()).decode("ascii")


def inline(text: str, base: Path) -> str:
    """Escape a line of markdown and render its inline markup; images become data URIs."""
    parts, last = [], 0
    for m in _IMG.finditer(text):
        parts.append(_emphasis(html.escape(text[last : m.start()])))
        uri = _data_uri((base / m.group(2)).resolve(), base)
        alt = html.escape(m.group(1))
        parts.append(
            f'<img alt="{alt}" src="{uri}">' if uri else f"<em>[missing image: {alt}]</em>"
        )
        last = m.end()
    parts.append(_emphasis(html.escape(text[last:])))
    return "".join(parts)


def _emphasis(s: str) -> str:
    s = re.sub(r"`([^`]+)`", r"<code>\1</code>", s)
    s = re.sub(r"\*\*([^*]+)\*\*", r"<strong>\1</strong>", s)
    return re.sub(r"(?<![*\w])\*([^*]+)\*(?![*\w])", r"<em>\1</em>", s)


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def markdown_to_html(md: str, base: Path, title: str) -> str:
    """A complete HTML page from the report's markdown; `base` resolves image paths."""
    out: list[str] = []
    lines = md.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        if m := re.match(r"^(#{1,6}) (.*)", line):
            n = len(m.group(1))
            out.append(f"<h{n}>{inline(m.group(2), base)}</h{n}>")
            i += 1
        elif line.startswith("|"):
            rows = []
            while i < len(lines) and lines[i].startswith("|"):
                rows.append(lines[i])
                i += 1
            header, body = rows[0], [r for r in rows[1:] if not re.match(r"^\|[-:| ]+\|$", r)]
            # a row of figures shares the page's width: each image scales to its column
            has_img = any(_IMG.search(r) for r in body)
            out.append('<table class="images"><tr>' if has_img else "<table><tr>")
            out += [f"<th>{inline(c, base)}</th>" for c in _cells(header)]
            out.append("</tr>")
            for r in body:
                out.append(
                    "<tr>" + "".join(f"<td>{inline(c, base)}</td>" for c in _cells(r)) + "</tr>"
                )
            out.append("</table>")
        elif line.startswith("- "):
            out.append("<ul>")
            while i < len(lines) and lines[i].startswith("- "):
                out.append(f"<li>{inline(lines[i][2:], base)}</li>")
                i += 1
            out.append("</ul>")
        else:
            para = []
            while i < len(lines) and lines[i].strip() and not re.match(r"^(#|\||- )", lines[i]):
                para.append(lines[i])
                i += 1
            out.append(f"<p>{inline(' '.join(para), base)}</p>")
    body = "\n".join(out)
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">\n'
        f"<title>{html.escape(title)}</title>\n<style>{CSS}</style></head>\n"
        f"<body>\n{body}\n</body></html>\n"
    )
