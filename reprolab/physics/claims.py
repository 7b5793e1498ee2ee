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

from reprolab import units
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
    r"(\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)"
    # whole numbers only (no backtracking to a shorter one), and not a label such as
    # "2D" or "1st": those are no quantity
    r"(?!\.?\d)(?![dD]\b)(?!(?:st|nd|rd|th)\b)"
    r"(\s*(?:%|percent\b))?"
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


def given_numbers(*sources) -> tuple[float, ...]:
    """Every number written in these JSON-like values (the stage's design, the paper's
    key values): numbers the prose may repeat without a claim, since they state the
    set-up, not a result (`n = 2.10`, `0.80 um`)."""
    found: list[float] = []

    def walk(v) -> None:
        if isinstance(v, bool) or v is None:
            return
        if isinstance(v, (int, float)):
            found.append(float(v))
        elif isinstance(v, str):
            found.extend(float(m.group(1)) for m in NUMBER.finditer(v))
        elif isinstance(v, dict):
            for x in v.values():
                walk(x)
        elif isinstance(v, (list, tuple)):
            for x in v:
                walk(x)

    for source in sources:
        walk(source)
    return tuple(sorted(set(found)))


def _status_of(claim: dict | None, given: bool) -> str:
    if claim is not None:
        return "checked" if claim["status"] == "ok" else "contradicted"
    return "given" if given else "unchecked"


def audit_text(
    text: str,
    judged: list[dict],
    figure_class: str | None,
    classes: set[str],
    given: tuple[float, ...] = (),
) -> dict:
    """Numbers and classification words of one piece of prose. A number no claim names
    is `given` when it is, as written, one the set-up states (`given_numbers`), else
    `unchecked`; only `unchecked` and `contradicted` numbers are marked."""
    numbers = []
    for m in NUMBER.finditer(text or ""):
        cited, pct = float(m.group(1)), bool(m.group(2))
        ulp = _half_ulp(m.group(1))
        claim = next((c for c in judged if _written_as(cited, ulp, pct, c)), None)
        stated = not pct and any(abs(cited - g) <= ulp * (1 + 1e-9) for g in given)
        status = _status_of(claim, stated)
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


# The severity a discrepancy may be given beside its figure's class: a "minor" row
# under a FAILURE, or a "critical" one under a SUCCESS, says what the numbers do not.
SEVERITY_FITS = {
    "SUCCESS": {"minor"},
    "PARTIAL": {"minor", "significant"},
    "FAILURE": {"significant", "critical"},
}
_RED = re.compile(r"\b(to the red|red[- ]?shift\w*|longer wavelengths?|lower energ\w*)\b", re.I)
_BLUE = re.compile(
    r"\b(to the blue|blue[- ]?shift\w*|shorter wavelengths?|higher energ\w*)\b", re.I
)


def _axis_sign(x_column: str) -> int:
    """+1 when a larger x is redder (wavelength), -1 when bluer (frequency, energy),
    0 when the axis has no colour."""
    name = (x_column or "").lower()
    if "wavelength" in name or name.startswith("lambda"):
        return 1
    if any(k in name for k in ("freq", "energy", "ev", "thz", "omega", "wavenumber")):
        return -1
    return 0


def spectral_shift(fig: dict, curve_id: str | None = None, feature: int | None = None):
    """(direction 'red'|'blue', |x_sim - x_paper|, feature kind, its unit) of the named feature,
    or of the matched feature that moved most; None on an axis without colour."""
    best = None
    for curve in fig.get("curves", []):
        sign = _axis_sign(curve.get("x_column", ""))
        if not sign or (curve_id is not None and curve["curve_id"] != curve_id):
            continue
        for i, f in enumerate(curve.get("features", [])):
            if f.get("x_sim") is None or (feature is not None and i != feature):
                continue
            rel = f.get("shift_rel")
            if rel is None or not math.isfinite(rel):
                continue
            if best is None or rel > best[0]:
                best = (rel, sign * (f["x_sim"] - f["x_paper"]), f["kind"], curve["x_column"])
    if best is None or best[1] == 0:
        return None
    return ("red" if best[1] > 0 else "blue"), abs(best[1]), best[2], _x_unit(best[3])


def _x_unit(x_column: str) -> str:
    """The unit of a simulation's x column as words (`µm`), for a shift with its unit."""
    found = units.column_quantity(x_column or "")
    if found is None:
        return f"in {x_column} units"
    return "µm" if found[1] == "um" else found[1]


def discrepancy_details(d: dict, fig: dict | None) -> list[str]:
    """What a discrepancy row says that its figure's comparison does not: its severity
    beside the figure's class, the direction of the shift it names."""
    if fig is None:
        return []
    out = []
    cls = fig.get("classification")
    if d.get("severity") and cls in SEVERITY_FITS and d["severity"] not in SEVERITY_FITS[cls]:
        out.append(
            f"calls it {d['severity']}, the code classifies {d['figure_id']} {cls} "
            f"(fits: {', '.join(sorted(SEVERITY_FITS[cls]))})"
        )
    text = f"{d.get('description', '')} {d.get('likely_cause', '')}"
    said = d.get("direction")
    if said is None:
        red, blue = bool(_RED.search(text)), bool(_BLUE.search(text))
        said = "red" if red and not blue else "blue" if blue and not red else None
    shift = spectral_shift(fig, d.get("curve_id"), d.get("feature"))
    if said and shift and said != shift[0]:
        out.append(
            f"says the reproduction lies to the {said}; the {shift[2]} that moved most "
            f"lies to the {shift[0]} by {shift[1]:.3g} {shift[3]}"
        )
    return out


def discrepancy_fields(d: dict, fig: dict | None) -> list[str]:
    """A discrepancy row's structured fields as code states them: its severity and its
    direction, each said to fit the figure's comparison or not (code's words only)."""
    if fig is None:
        return [f"severity `{d.get('severity')}` (no comparison of {d['figure_id']} to check)"]
    cls = fig.get("classification")
    fits = SEVERITY_FITS.get(cls, set())
    out = [
        f"the analyst's severity `{d.get('severity')}` "
        + (
            f"fits the code's {cls}"
            if d.get("severity") in fits
            else f"does not fit the code's {cls} (fits: {', '.join(sorted(fits))})"
        )
    ]
    shift = spectral_shift(fig, d.get("curve_id"), d.get("feature"))
    said = d.get("direction")
    if said and shift is None:
        out.append(f"its direction `{said}` cannot be checked (no matched spectral shift)")
    elif said:
        verb = "agrees with" if said == shift[0] else "contradicts"
        out.append(
            f"its direction `{said}` {verb} the code: the {shift[2]} that moved most lies to "
            f"the {shift[0]} by {shift[1]:.3g} {shift[3]}"
        )
    return out


def audit_analysis(output: dict, comparison: dict, given: tuple[float, ...] = ()) -> dict:
    """Every prose field of an analysis, audited against its claims and the code's
    classifications: summary, per-figure narratives, discrepancies (their severity and
    direction too). `given`: the set-up's numbers (`given_numbers`)."""
    judged = judge_claims(output.get("claims") or [], comparison)
    figs = {f["figure_id"]: f for f in comparison.get("figures", [])}
    fig_class = {k: f["classification"] for k, f in figs.items()}
    classes = set(fig_class.values())
    summary = audit_text(output.get("summary", ""), judged, None, classes, given)
    sections = [{"section": "summary", **summary}]
    for n in output.get("per_figure", []):
        audit = audit_text(n["narrative"], judged, fig_class.get(n["figure_id"]), classes, given)
        sections.append({"section": f"figure:{n['figure_id']}", **audit})
    for i, d in enumerate(output.get("discrepancies", [])):
        text = f"{d['description']} {d['likely_cause']}"
        audit = audit_text(text, judged, fig_class.get(d["figure_id"]), classes, given)
        wrong = discrepancy_details(d, figs.get(d["figure_id"]))
        if wrong:
            audit = {**audit, "status": "contradicted", "details": wrong + audit["details"]}
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


# Words a feedback uses to call a stage good, to own its class, and to name a problem.
_SUCCESS_CUES = re.compile(
    r"\b(pass(es|ed)?|reproduc(es|ed)|match(es|ed)?|agrees?|success\w*|can be reused)\b", re.I
)
_OWNS_CLASS = {
    "PARTIAL": re.compile(r"\bpartial(ly)?\b", re.I),
    "FAILURE": re.compile(r"\b(fail(s|ed|ure)?|not reproduced)\b", re.I),
}
_PROBLEM_CUES = re.compile(
    r"\b(not|no|fail\w*|discrepan\w*|mismatch\w*|wrong|differ\w*|off by|partial\w*)\b", re.I
)
# A sentence about the whole paper, not its own stage.
_WHOLE_PAPER = re.compile(
    r"\b(all (\w+ )?(figures|stages)|every (figure|stage)|the (whole|entire) paper)\b", re.I
)


def _tone_details(text: str, status: str, said, overall: str | None) -> tuple[list, list]:
    """(contradictions, notes) of a feedback's words beside the code's verdict: praise of
    a failed stage with no word of a problem, praise of the whole paper under an
    overall class that is not SUCCESS, and no classification at all on a stage the
    code did not judge SUCCESS (a note, shown whatever else the audit found)."""
    wrong, notes = [], []
    praise = _SUCCESS_CUES.search(text)
    problem = _PROBLEM_CUES.search(text)
    if status == "completed_failed" and said is None and praise and not problem:
        wrong.append(f"speaks of success ('{praise.group(0)}'), the code's verdict is {status}")
    whole = _WHOLE_PAPER.search(text)
    if overall and overall != "SUCCESS" and whole and praise and not problem:
        wrong.append(
            f"speaks of the whole paper ('{whole.group(0)}' … '{praise.group(0)}'); the "
            f"code's overall classification is {overall}"
        )
    stage_class = STATUS_CLASS.get(status)
    owned = stage_class in _OWNS_CLASS and _OWNS_CLASS[stage_class].search(text)
    if said is None and status != "completed_success" and not owned:
        notes.append(f"gives no classification to check; the code's verdict is {status}")
    return wrong, notes


def audit_supervisor(
    output: dict,
    comparison: dict,
    status: str,
    overall: str | None = None,
    given: tuple[float, ...] = (),
) -> dict:
    """The supervisor's feedback against the code: its claims against the same computed
    quantities of the stage's comparison, its structured classification and every
    classification or status word against the code's verdict (the stage's status; a
    figure's own class may be named too), praise of a failed stage, and praise of the
    whole paper against the paper's `overall` class (when the caller knows it). Without
    a structured classification, or a word owning the code's class, the feedback on a
    stage the code did not judge SUCCESS carries that note whatever else was found."""
    judged = judge_claims(output.get("claims") or [], comparison)
    stage_class = STATUS_CLASS.get(status)
    fig_classes = {f["classification"] for f in comparison.get("figures", [])}
    allowed = ({stage_class} if stage_class else set()) | fig_classes
    text = output.get("feedback") or ""
    audit = audit_text(text, judged, None, allowed or set(CLASS_WORDS), given)
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
    tone, notes = _tone_details(text, status, said, overall)
    details += tone + notes
    result = audit["status"]
    if wrong or tone or (said is not None and said != stage_class):
        result = "contradicted"
    elif notes and result == "ok":
        result = "unchecked"
    section = {**audit, "section": "supervisor", "status": result, "details": details}
    return {"claims": judged, "sections": [section]}
