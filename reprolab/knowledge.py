"""Knowledge kept as YAML (the PHENIX pattern): patterns in logs → what they mean.

- `knowledge/log_warnings.yaml`: log lines that change results silently (surfaced in
  checks.json; some fail a check).
- `knowledge/recoverable_errors.yaml`: failures a code regeneration can fix → the hint
  fed back to the CodeGenerator.
- `knowledge/diagnoses.yaml`: terminal failures → a self-contained HTML diagnosis page.

Adding an entry to a file teaches the pipeline a new pattern without code changes.
Each file is validated on load; a bad entry is reported with its file, index and field.
"""

from __future__ import annotations

import functools
import html
import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, field_validator

from reprolab.errors import InputFileError
from reprolab.fileio import read_yaml, validate_as

KNOWLEDGE_DIR = Path(__file__).resolve().parent.parent / "knowledge"


class _Pattern(BaseModel):
    id: str = Field(pattern=r"^[a-z0-9_]+$")
    pattern: str

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, value: str) -> str:
        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(f"not a valid regular expression ({exc})") from None
        return value

    def search(self, text: str) -> re.Match | None:
        return re.search(self.pattern, text, re.IGNORECASE)


class LogWarning(_Pattern):
    check: str
    status: Literal["fail", "warn", "ignore"]
    meaning: str


class RecoverableError(_Pattern):
    hint: str


class Diagnosis(_Pattern):
    title: str
    what: str
    cause: str
    fix: str


def _load(name: str, model: type[_Pattern], folder: Path | None = None) -> list:
    path = (folder or KNOWLEDGE_DIR) / name
    data = read_yaml(path)
    if not isinstance(data, list):
        raise InputFileError(path, "must be a YAML list of entries")
    entries = [validate_as(model, item, f"{path} (entry {i})") for i, item in enumerate(data)]
    ids = [e.id for e in entries]
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    if dupes:
        raise InputFileError(path, f"duplicate ids {dupes}")
    return entries


@functools.cache
def log_warnings(folder: Path | None = None) -> list[LogWarning]:
    return _load("log_warnings.yaml", LogWarning, folder)


@functools.cache
def recoverable_errors(folder: Path | None = None) -> list[RecoverableError]:
    return _load("recoverable_errors.yaml", RecoverableError, folder)


@functools.cache
def diagnoses(folder: Path | None = None) -> list[Diagnosis]:
    return _load("diagnoses.yaml", Diagnosis, folder)


def classify_log(text: str, folder: Path | None = None) -> list[dict]:
    """Every log line that matches a known warning, first matching entry wins.

    A Python warning's echoed source line (the indented line after it) is skipped, and
    the same message is reported once with a count.
    """
    entries = log_warnings(folder)
    found: dict[tuple[str, str], dict] = {}
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped:
            continue
        for entry in entries:
            if entry.search(stripped):
                if entry.status != "ignore":
                    key = (entry.id, stripped)
                    hit = found.setdefault(
                        key,
                        {
                            "id": entry.id,
                            "check": entry.check,
                            "status": entry.status,
                            "line": stripped[:300],
                            "meaning": entry.meaning,
                            "count": 0,
                        },
                    )
                    hit["count"] += 1
                break
    return list(found.values())


def fix_hints(text: str, folder: Path | None = None) -> list[dict]:
    """Hints for code regeneration from every recoverable error found in `text`."""
    return [
        {"id": e.id, "hint": e.hint, "matched": m.group(0)[:200]}
        for e in recoverable_errors(folder)
        if (m := e.search(text))
    ]


def diagnose(texts: list[str], folder: Path | None = None) -> Diagnosis | None:
    """The first diagnosis (in file order) whose pattern occurs in any of `texts`."""
    for entry in diagnoses(folder):
        if any(entry.search(t) for t in texts):
            return entry
    return None


def diagnosis_html(diag: Diagnosis, *, stage_id: str, failed: list[dict], log_tail: str) -> str:
    """A self-contained page (inline CSS, no scripts, no network) for one failed stage."""
    e = html.escape
    rows = "".join(
        f"<tr><td>{e(c['name'])}</td><td>{e(str(c.get('value')))}</td>"
        f"<td>{e(c.get('threshold', ''))}</td><td>{e(c['detail'])}</td></tr>"
        for c in failed
    )
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>Diagnosis: {e(stage_id)}</title>
<style>
body{{font-family:sans-serif;max-width:60em;margin:2em auto;line-height:1.45;color:#222}}
h1{{font-size:1.4em}} h2{{font-size:1.1em;margin-top:1.5em}}
table{{border-collapse:collapse}}
td,th{{border:1px solid #bbb;padding:.3em .6em;vertical-align:top}}
pre{{background:#f4f4f4;padding:1em;overflow-x:auto;font-size:.85em}}
.bad{{color:#a00}}
</style></head><body>
<h1 class="bad">{e(stage_id)}: {e(diag.title)}</h1>
<h2>What went wrong</h2><p>{e(diag.what)}</p>
<h2>Most likely cause</h2><p>{e(diag.cause)}</p>
<h2>How to fix it</h2><p>{e(diag.fix)}</p>
<h2>Failed checks</h2>
<table><tr><th>check</th><th>value</th><th>threshold</th><th>detail</th></tr>{rows}</table>
<h2>End of the run's log</h2><pre>{e(log_tail[-3000:])}</pre>
<p><small>Diagnosis <code>{e(diag.id)}</code> from knowledge/diagnoses.yaml.</small></p>
</body></html>
"""
