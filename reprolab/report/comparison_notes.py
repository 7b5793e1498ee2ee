"""What a curve's comparison was measured against: the scale of its position errors,
the space its y values were compared in, and the paper's reference curves."""

from __future__ import annotations

BASIS_TEXT = {
    "position": "its position (the axis origin lies outside the data)",
    "span": "the paper's x span (the axis origin lies in the data)",
    "turn": "a full turn (a polar figure's angle wraps)",
    "tolerance": "the axis' stated position tolerance (one tolerance = the success limit)",
}
SPACE_TEXT = {
    "log": "in log space (differences are ln(y reproduced / y paper): relative errors)",
    "db": "in dB, differences over the paper's dB range (a polar pattern)",
}


def scale_lines(fig: dict) -> list[str]:
    """One line per curve whose features or y values were not compared plainly."""
    out = []
    for curve in fig.get("curves", []):
        bases = {(f.get("shift_basis"), f.get("shift_scale")) for f in curve.get("features", [])}
        for basis, scale in sorted(b for b in bases if b[0]):
            out.append(
                f"- {curve['curve_id']}: peak/dip shifts are relative to "
                f"{BASIS_TEXT.get(basis, basis)}, {scale:.4g}"
            )
        if curve.get("compared_as") in SPACE_TEXT:
            out.append(f"- {curve['curve_id']}: y compared {SPACE_TEXT[curve['compared_as']]}")
        if curve.get("note"):
            out.append(f"- {curve['curve_id']}: {curve['note']}")
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
