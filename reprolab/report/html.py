"""The report's HTML view: one self-contained page (inline CSS, images as base64 data
URIs, no scripts, no network), converted from the markdown report that code writes.

CommonMark with pipe tables (markdown-it-py). The report quotes text from the paper and
from the models, so raw HTML is never passed through (it shows as text), there are no
links, and an image is only ever a file inside the report's folder, inlined. Agents'
commentary is the page's only block quote, set apart by its colour.
"""

from __future__ import annotations

import base64
import html
import mimetypes
from pathlib import Path
from urllib.parse import unquote

from markdown_it import MarkdownIt

from reprolab import run_files
from reprolab.errors import InputFileError

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
blockquote{margin:.6em 0 .8em 1em;padding:.3em .9em;border-left:4px solid #d9a400;
background:#fffbea;color:#444}
"""


def _data_uri(src: str, base: Path) -> str | None:
    """An image inside the report's folder as a data URI; anything else is never read:
    no link is followed (a run's own plot may be one), and its size is capped."""
    mime = mimetypes.guess_type(src)[0] or ""
    if not mime.startswith("image/"):
        return None
    try:
        data = run_files.read_run_bytes(base, src, run_files.MAX_IMAGE_BYTES)
    except (OSError, InputFileError):
        return None
    return f"data:{mime};base64," + base64.b64encode(data).decode("ascii")


def _parser(base: Path) -> MarkdownIt:
    # html=False: a tag in the text is text; links and autolinks stay as written.
    # strikethrough: prose the code contradicts is printed struck (~~…~~), never as if it stood
    md = (
        MarkdownIt("commonmark", {"html": False})
        .enable(["table", "strikethrough"])
        .disable(["link", "autolink"])
    )

    def image(self, tokens, idx, options, env) -> str:
        alt = html.escape(self.renderInlineAsText(tokens[idx].children, options, env))
        uri = _data_uri(unquote(tokens[idx].attrGet("src")), base)
        return f'<img alt="{alt}" src="{uri}">' if uri else f"<em>[missing image: {alt}]</em>"

    def table_open(self, tokens, idx, options, env) -> str:
        # a row of figures shares the page's width: each image scales to its column
        end = next(i for i in range(idx, len(tokens)) if tokens[i].type == "table_close")
        inlines = (t.children or [] for t in tokens[idx:end] if t.type == "inline")
        if any(c.type == "image" for children in inlines for c in children):
            tokens[idx].attrSet("class", "images")
        return self.renderToken(tokens, idx, options, env)

    md.add_render_rule("image", image)
    md.add_render_rule("table_open", table_open)
    return md


def markdown_to_html(md: str, base: Path, title: str) -> str:
    """A complete HTML page from the report's markdown; `base` resolves image paths."""
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">\n'
        f"<title>{html.escape(title)}</title>\n<style>{CSS}</style></head>\n"
        f"<body>\n{_parser(base).render(md)}</body></html>\n"
    )
