"""What a curve's comparison was measured against: the scale of its position errors,
the space its y values were compared in, and the paper's reference curves."""

from __future__ import annotations

BASIS_TEXT = {
    "position": "each peak/dip's own position (the axis origin lies outside the data)",
    "span": "the paper's x span (the axis origin lies in the data)",
    "turn": "a full turn (a polar figure's angle wraps)",
    "tolerance": "the axis' stated position tolerance (one tolerance = the success limit)",
}
SPACE_TEXT = {
    "log": "in log space (differences are ln(y reproduced / y paper): relative errors)",
    "db": "in dB, differences over the paper's dB range (a polar pattern)",
}


def _unit_of(x_column: str | None) -> str:
    from reprolab import units

    found = units.column_quantity(x_column or "")
    if found is None:
        return ""
    return " µm" if found[1] == "um" else f" {found[1]}"


def _shift_note(curve: dict, basis: str) -> str:
    """Peak/dip shifts' scale in words: per feature for `position`, else the one scale
    with its unit (the simulation column's)."""
    text = f"peak/dip shifts are relative to {BASIS_TEXT.get(basis, basis)}"
    if basis == "position":
        return text
    scales = sorted({f["shift_scale"] for f in curve["features"] if f.get("shift_basis") == basis})
    shown = ", ".join(f"{v:.4g}" for v in scales)
    return f"{text}, {shown}{_unit_of(curve.get('x_column'))}"


def scale_lines(fig: dict) -> list[str]:
    """One note per distinct remark on how the figure's curves were compared (not one
    per feature or curve): shift scales, the y space, each curve's own note."""
    notes: dict[str, list[str]] = {}
    curves = fig.get("curves", [])
    for curve in curves:
        said = [
            _shift_note(curve, basis)
            for basis in sorted(
                {f["shift_basis"] for f in curve.get("features", []) if f.get("shift_basis")}
            )
        ]
        if curve.get("compared_as") in SPACE_TEXT:
            said.append(f"y compared {SPACE_TEXT[curve['compared_as']]}")
        if curve.get("note"):
            said.append(curve["note"])
        for text in said:
            notes.setdefault(text, []).append(curve["curve_id"])
    out = []
    for text, ids in notes.items():
        whose = "" if len(ids) == len(curves) else f"{', '.join(ids)}: "  # all: said once
        out.append(f"- {whose}{text}")
    return ["", *out] if out else []


def _class(side: dict) -> str:
    rms = side["metrics"].get("rms_rel")
    rms_text = f"RMS {rms:.2%}" if isinstance(rms, float) and rms == rms else "RMS –"
    return f"{side['classification']} ({rms_text})"


def reference_lines(fig: dict) -> list[str]:
    """Each result curve against the paper's reference curves of its figure."""
    rows = [(c["curve_id"], r) for c in fig.get("curves", []) for r in c.get("references", [])]
    if not rows:
        return []
    md = [
        "",
        "Against the paper's own reference curves (the classification above is against its data):",
        "",
        "| curve | paper's reference | reproduction vs reference | paper data vs reference "
        "| agrees with |",
        "|---|---|---|---|---|",
    ]
    for curve_id, r in rows:
        md.append(
            f"| {curve_id} | {r['reference_id']} ({r['label']}) | "
            f"{_class(r['sim_vs_reference'])} | {_class(r['paper_vs_reference'])} | "
            f"{r['agrees_with']} |"
        )
    md += ["", *(f"- {curve_id}: {r['summary']}." for curve_id, r in rows)]
    return md
