"""Numbers an analysis cites, judged through its structured claims.

The ResultsAnalyzer returns each number it cites as a claim (figure, curve, quantity,
value, unit). Code checks a claim against *the same quantity* in the comparison (never
against whichever computed number happens to be near). In prose, a number is
`checked` when it is a claim's value as written and that claim holds, `contradicted`
when its claim does not hold, and `unchecked` when no claim names it; a classification
word must be the code's. The report prints the code's verdict first and marks what
does not stand.
"""

from __future__ import annotations

import math
import re

from reprolab.physics import compare

CLASS_WORDS = ("SUCCESS", "PARTIAL", "FAILURE")
# A claim holds when its value is the computed one within this relative difference
# (numbers are quoted to two or three significant figures).
CLAIM_RTOL = 0.02
FEATURE_QUANTITIES = compare.FEATURE_QUANTITIES  # what a claim may cite of a feature
# A number cited in prose (the report marks each match by its audit).
NUMBER = re.compile(
    # not an ordinal label ("stage 1", "figure 3", "Fig. 2"): those cite no quantity
    r"(?<![\w.])(?<!stage )(?<!Stage )(?<!figure )(?<!Figure )(?<!Fig\. )(?<!fig\. )"
    r"(\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)(\s*(?:%|percent\b))?"
)


def claim_key(claim: dict, numbers: dict[str, float]) -> str | None:
    """The comparison number a claim names, or None."""
    base = f"{claim['figure_id']}/{claim.get('curve_id')}"
    q = claim["quantity"]
    if claim.get("feature") is None:
        key = f"{base}.{q}"
        return key if key in numbers else None
    prefix = f"{base}.feature{claim['feature']}."
    return next((k for k in numbers if k.startswith(prefix) and k.endswith(f".{q}")), None)


def _as_fraction(claim: dict) -> float:
    return claim["value"] / 100 if claim.get("unit") == "%" else claim["value"]


def _holds(claimed: float, computed: float, relation: str) -> bool:
    """The claim holds for the computed value: equal within CLAIM_RTOL, or a bound
    (`<`: at most the claimed value, `>`: at least it) with the same tolerance."""
    if math.isclose(claimed, computed, rel_tol=CLAIM_RTOL, abs_tol=1e-9):
        return True
    if relation == "<":
        return computed < claimed
    if relation == ">":
        return computed > claimed
    return False


def judge_claims(claims: list[dict], comparison: dict) -> list[dict]:
    """Each claim with the computed value it names and `ok`, `contradicted` or `unknown`."""
    numbers = compare.comparison_numbers(comparison)
    out = []
    for c in claims:
        key = claim_key(c, numbers)
        if key is None:
            out.append({**c, "computed": None, "status": "unknown"})
            continue
        computed = numbers[key]
        ok = _holds(_as_fraction(c), computed, c.get("relation") or "=")
        out.append({**c, "computed": computed, "status": "ok" if ok else "contradicted"})
    return out


def _half_ulp(text: str) -> float:
    """Half the last written digit: '0.14' → 0.005, '2.9e-05' → 5e-07."""
    parts = re.split(r"[eE]", text)
    decimals = len(parts[0].split(".")[1]) if "." in parts[0] else 0
    exponent = int(parts[1]) if len(parts) > 1 else 0
    return 0.5 * 10.0 ** (exponent - decimals)


def _written_as(cited: float, half_ulp: float, pct: bool, claim: dict) -> bool:
    """The prose number is this claim's value as written (same unit, same rounding)."""
    if pct != (claim.get("unit") == "%"):
        return False
    return abs(cited - claim["value"]) <= half_ulp * (1 + 1e-9)


def audit_text(text: str, judged: list[dict], figure_class: str | None, classes: set[str]) -> dict:
    """Numbers and classification words of one piece of prose."""
    numbers = []
    for m in NUMBER.finditer(text or ""):
        cited, pct = float(m.group(1)), bool(m.group(2))
        claim = next((c for c in judged if _written_as(cited, _half_ulp(m.group(1)), pct, c)), None)
        status = (
            "unchecked"
            if claim is None
            else "checked"
            if claim["status"] == "ok"
            else "contradicted"
        )
        numbers.append({"text": m.group(0).strip(), "status": status, "claim": claim})
    words = sorted({w for w in CLASS_WORDS if re.search(rf"\b{w}\b", text or "")})
    expected = {figure_class} if figure_class else classes
    wrong_words = [w for w in words if w not in expected]
    statuses = {n["status"] for n in numbers}
    status = (
        "contradicted"
        if wrong_words or "contradicted" in statuses
        else "unchecked"
        if "unchecked" in statuses
        else "ok"
    )
    details = [
        f"calls it {w}, code says {figure_class or '/'.join(sorted(classes))}" for w in wrong_words
    ]
    for n in numbers:
        if n["status"] == "contradicted":
            c = n["claim"]
            computed = (
                "none (this quantity was not computed: no match or too little overlap)"
                if c["computed"] is None
                else f"{c['computed']:.4g}"
            )
            details.append(f"'{n['text']}' claims {c['quantity']}; computed: {computed}")
        elif n["status"] == "unchecked":
            details.append(f"'{n['text']}' is no claimed number (unchecked)")
    return {"status": status, "numbers": numbers, "class_words": words, "details": details}


def audit_analysis(output: dict, comparison: dict) -> dict:
    """Every prose field of an analysis, audited against its claims and the code's
    classifications: summary, per-figure narratives, discrepancies."""
    judged = judge_claims(output.get("claims") or [], comparison)
    fig_class = {f["figure_id"]: f["classification"] for f in comparison.get("figures", [])}
    classes = set(fig_class.values())
    sections = [
        {"section": "summary", **audit_text(output.get("summary", ""), judged, None, classes)}
    ]
    for n in output.get("per_figure", []):
        audit = audit_text(n["narrative"], judged, fig_class.get(n["figure_id"]), classes)
        sections.append({"section": f"figure:{n['figure_id']}", **audit})
    for i, d in enumerate(output.get("discrepancies", [])):
        text = f"{d['description']} {d['likely_cause']}"
        audit = audit_text(text, judged, fig_class.get(d["figure_id"]), classes)
        sections.append({"section": f"discrepancy:{i}", **audit})
    return {"claims": judged, "sections": sections}


def problems(audit: dict) -> list[str]:
    """What goes back to the analyst: claims that do not hold, unknown quantities,
    numbers no claim names, classification words that are not the code's."""
    out = []
    for c in audit["claims"]:
        if c["status"] == "unknown":
            out.append(
                f"claim {c['figure_id']}/{c.get('curve_id')} '{c['quantity']}' names no "
                f"computed quantity (valid: a metric, rms_abs, max_abs, coverage, or a "
                f"feature's {', '.join(FEATURE_QUANTITIES)} with its index; of a table, "
                "curve_id the row's labels `m=5` and quantity `<column>.stated|measured|"
                "error`; of a band diagram, curve_id `band<n>` with rms_rel, max_rel, "
                "points, missing, or `gap<n>` with lower, upper, ratio, stated_lower, "
                "stated_upper, stated_ratio, lower_rel, upper_rel, ratio_abs)"
            )
        elif c["status"] == "contradicted":
            out.append(
                f"claim {c['figure_id']}/{c.get('curve_id')} {c['quantity']} = {c['value']} "
                f"{c.get('unit', '1')} but code computed {c['computed']:.6g}"
            )
    for s in audit["sections"]:
        # a narrative's class word is the analysis step's own problem line
        skip_words = s["section"].startswith("figure:")
        out += [
            f"{s['section']}: {d}"
            for d in s["details"]
            if "claims" not in d and not (skip_words and d.startswith("calls it"))
        ]
    return out


# The code's verdict of a stage as a classification word (blocked: none).
STATUS_CLASS = {
    "completed_success": "SUCCESS",
    "completed_partial": "PARTIAL",
    "completed_failed": "FAILURE",
}
_STATUS_WORD = re.compile(r"\bcompleted_(?:success|partial|failed)\b")


def audit_supervisor(output: dict, comparison: dict, status: str) -> dict:
    """The supervisor's feedback against the code: its claims against the same computed
    quantities of the stage's comparison, its structured classification and every
    classification or status word against the code's verdict (the stage's status; a
    figure's own class may be named too). Without a structured classification, the
    feedback on a stage the code did not judge SUCCESS is unchecked, never standing."""
    judged = judge_claims(output.get("claims") or [], comparison)
    stage_class = STATUS_CLASS.get(status)
    fig_classes = {f["classification"] for f in comparison.get("figures", [])}
    allowed = ({stage_class} if stage_class else set()) | fig_classes
    text = output.get("feedback") or ""
    audit = audit_text(text, judged, None, allowed or set(CLASS_WORDS))
    figures = "/".join(sorted(fig_classes)) or "none compared"
    details = [
        f"calls it {w}, the code's verdict is {status} (its figures: {figures})"
        for w in audit["class_words"]
        if w not in allowed
    ]
    details += [d for d in audit["details"] if not d.startswith("calls it")]
    wrong = [w for w in _STATUS_WORD.findall(text) if w != status]
    details += [f"says {w}, the code's verdict is {status}" for w in sorted(set(wrong))]
    said = output.get("classification")
    if said is not None and said != stage_class:
        details.insert(0, f"classifies the stage {said}, the code's verdict is {status}")
    result = audit["status"]
    if wrong or (said is not None and said != stage_class):
        result = "contradicted"
    elif said is None and status != "completed_success" and result == "ok":
        result = "unchecked"
        details.append(f"gives no classification to check; the code's verdict is {status}")
    section = {**audit, "section": "supervisor", "status": result, "details": details}
    return {"claims": judged, "sections": [section]}
