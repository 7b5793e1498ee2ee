"""A table read off a PDF page as rows of cells, whatever its rules: the text inside its
region is cut into cells where the gap between words is wider than a space, rows are
the baselines, columns the x-ranges that the cells of all rows share. Cells keep their
raised and lowered type (2.1 × 10⁴). Its numbers are then offered to the paper folder:
a table of modes (a label column such as m beside frequencies, wavelengths or Qs) as a
`tables:` entry, any other as key values named by row and column heading, each with the
unit its heading (or a unit column) states."""

from __future__ import annotations

import re

from reprolab.cli.pdf_text import line_text

CELL_GAP = 0.8  # a gap wider than this many type sizes ends a cell
LABEL_HEADS = {
    "m": "m",
    "band": "band",
    "order": "order",
    "parity": "parity",
    "pol": "polarization",
}


def cells_of(lines: list[dict]) -> list[dict]:
    """The lines cut at wide gaps: {'text', 'x0', 'x1', 'y'} per cell-sized piece."""
    out = []
    for ln in lines:
        spans = sorted(ln.get("spans", []), key=lambda s: s["bbox"][0])
        words = [s for s in spans if s["text"].strip()]
        if not words:
            continue
        piece = [words[0]]
        for s in words[1:]:
            if s["bbox"][0] - piece[-1]["bbox"][2] > CELL_GAP * ln["size"]:
                out.append(piece_cell(piece, ln))
                piece = []
            piece.append(s)
        out.append(piece_cell(piece, ln))
    return out


def piece_cell(spans: list[dict], ln: dict) -> dict:
    spaced = []
    for a, b in zip(spans, spans[1:] + [None], strict=True):
        spaced.append(a)
        if b is not None and b["bbox"][0] - a["bbox"][2] > 0.15 * ln["size"]:
            spaced.append({**a, "text": " ", "bbox": a["bbox"]})
    return {
        "text": line_text(spaced),
        "x0": spans[0]["bbox"][0],
        "x1": spans[-1]["bbox"][2],
        "y": (ln["rect"].y0 + ln["rect"].y1) / 2,
        "size": ln["size"],
    }


def table_rows(lines: list[dict]) -> list[list[str]]:
    """Rows of cells of the text `lines` of one table region."""
    cells = sorted(cells_of(lines), key=lambda c: (c["y"], c["x0"]))
    rows: list[list[dict]] = []
    for c in cells:
        if rows and abs(rows[-1][0]["y"] - c["y"]) < 0.5 * c["size"]:
            rows[-1].append(c)
        else:
            rows.append([c])
    spans: list[list[float]] = []
    for c in sorted(cells, key=lambda c: c["x0"]):
        if spans and c["x0"] <= spans[-1][1] + 0.5 * c["size"]:
            spans[-1][1] = max(spans[-1][1], c["x1"])
        else:
            spans.append([c["x0"], c["x1"]])
    out = []
    for row in rows:
        texts = [""] * len(spans)
        for c in sorted(row, key=lambda c: c["x0"]):
            col = next(i for i, (a, b) in enumerate(spans) if a - 1 <= c["x0"] <= b + 1)
            texts[col] = (texts[col] + " " + c["text"]).strip()
        out.append(texts)
    return out


def number(cell: str) -> float | None:
    """A printed number: 0.845, −3, 1.2e4, 2.1 × 10⁴, 2.1×10^4; None for anything else."""
    sup = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺", "0123456789-+")
    text = cell.replace("−", "-").replace(" ", "")
    m = re.fullmatch(
        r"([-+]?\d*\.?\d+(?:[eE][-+]?\d+)?)(?:[×x]10(?:\^?\(?([-+]?\d+)\)?|([⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺]+)))?",
        text,
    )
    if not m:
        return None
    exponent = m[2] or (m[3].translate(sup) if m[3] else None)
    return float(m[1]) * (10 ** int(exponent) if exponent else 1)


def heading_unit(head: str) -> tuple[str, str | None]:
    """('λ', 'nm') from 'λ (nm)' or 'λ [nm]'; (head, None) when it states no unit."""
    m = re.match(r"^(.*?)\s*[(\[]\s*([^)\]]+)\s*[)\]]\s*$", head)
    return (m[1].strip(), m[2].strip()) if m else (head.strip(), None)


def unit_of(text: str | None) -> str:
    """A printed unit in the project's spelling ('1' for none; one it does not know as
    printed, for `check` to name)."""
    from reprolab import units

    return units.canonical_unit(text) if text else "1"


def mode_table(rows: list[list[str]], table_id: str, caption: str) -> dict | None:
    """A `tables:` entry for a table of modes: a label column (m, band, order, parity)
    and at least one column of frequencies, wavelengths or Qs; None for any other."""
    from reprolab import units

    head = rows[0]
    labels = [
        (i, LABEL_HEADS[h.strip().lower()])
        for i, h in enumerate(head)
        if h.strip().lower() in LABEL_HEADS
    ]
    columns = []
    for i, h in enumerate(head):
        if any(i == j for j, _ in labels):
            continue
        name, printed = heading_unit(h)
        unit = unit_of(printed)
        quantity = next((q for q in units.UNITS if unit in units.UNITS[q]), None)
        if name.strip().upper() == "Q" or "quality" in name.lower():
            measure, unit = "quality_factor", "1"
        elif quantity == "frequency":
            measure = "mode_frequency"
        elif quantity in ("wavelength", "length"):
            measure = "mode_wavelength"
        else:
            measure = "other"
        key = re.sub(
            r"[^A-Za-z0-9_]+", "_", {"λ": "wavelength", "f": "frequency"}.get(name, name)
        ).strip("_")
        columns.append(
            (i, {"name": key or f"col{i + 1}", "measure": measure, "unit": unit, "label": h})
        )
    if not labels or not any(c["measure"] != "other" for _, c in columns):
        return None
    out_rows = []
    for row in rows[1:]:
        entry = {}
        for i, label in labels:
            value = number(row[i]) if i < len(row) else None
            entry[label] = int(value) if value is not None and value == int(value) else row[i]
        for i, col in columns:
            entry[col["name"]] = number(row[i]) if i < len(row) else None
        out_rows.append(entry)
    return {
        "table_id": table_id,
        "title": re.sub(r"^\s*Table\s*\S+\s*[.:|]?\s*", "", caption, flags=re.I).rstrip(".")
        or "TODO: the table's title",
        "caption": caption,
        "labels": [label for _, label in labels],
        "columns": [c for _, c in columns],
        "rows": out_rows,
    }


def key_values(rows: list[list[str]], name: str) -> list[dict]:
    """Every number of a table as a key value to keep or delete: named by its row's
    first cell and its column's heading, in the unit that heading states or, where the
    table has a unit column, the unit its row states."""
    head, body = rows[0], rows[1:]
    unit_col = next((i for i, h in enumerate(head) if h.strip().lower() in ("unit", "units")), None)
    out = []
    for row in body:
        for col in range(1, min(len(row), len(head))):
            value = number(row[col])
            if value is None or col == unit_col:
                continue
            label, printed = heading_unit(head[col])
            if unit_col is not None and unit_col < len(row):
                printed = printed or row[unit_col] or None
            row_label, row_unit = heading_unit(row[0])
            if printed is None and row_unit:  # 'Resolution (pixels per µm)': the row's unit
                printed = row_unit
            quantity = row[0] if unit_col is not None and len(head) <= 3 else f"{row[0]}: {label}"
            out.append(
                {
                    "quantity": quantity.strip(": "),
                    "value": value,
                    "unit": unit_of(printed),
                    "note": f"{name}, as printed (delete what the reproduction need not match)",
                }
            )
    return out
