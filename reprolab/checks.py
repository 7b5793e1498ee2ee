"""Deterministic execution and physics checks on a simulation's result record.

These run in code before any agent looks at a result; an agent's verdict can
never override a `fail` here. Thresholds come from `reprolab.thresholds`.
"""

from __future__ import annotations

import csv
import math
from dataclasses import asdict, dataclass
from pathlib import Path

from reprolab import thresholds as th

NAN_LOG_PATTERN = "fields are NaN or Inf"


@dataclass
class Check:
    name: str
    status: str  # pass | warn | fail
    detail: str
    value: float | None = None
    threshold: str = ""


def read_numeric_csv(path: Path) -> dict[str, list[float]]:
    """Columns of a CSV with a header row; non-numeric cells become NaN."""
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    header = [h.strip() for h in rows[0]]
    cols: dict[str, list[float]] = {h: [] for h in header}
    for row in rows[1:]:
        if not row:
            continue
        for h, cell in zip(header, row, strict=False):
            try:
                cols[h].append(float(cell))
            except ValueError:
                cols[h].append(math.nan)
    return cols


def _range_check(name: str, values: list[float]) -> Check:
    lo, hi = min(values), max(values)
    (flo, fhi), (wlo, whi) = th.TR_BOUNDS["fail"], th.TR_BOUNDS["warn"]
    worst = lo if (wlo - lo) > (hi - whi) else hi
    if lo < flo or hi > fhi:
        status = "fail"
    elif lo < wlo or hi > whi:
        status = "warn"
    else:
        status = "pass"
    return Check(
        f"bounds_{name}",
        status,
        f"{name} spans [{lo:.5g}, {hi:.5g}]",
        worst,
        f"fail outside [{flo}, {fhi}], warn outside [{wlo}, {whi}]",
    )


def spectrum_checks(path: Path, cols: dict[str, list[float]], lossless: bool) -> list[Check]:
    checks = []
    for name in ("T", "R"):
        if name in cols:
            checks.append(_range_check(f"{name}:{path.name}", cols[name]))
    if "T" in cols and "R" in cols:
        absorbed = [1 - r - t for r, t in zip(cols["R"], cols["T"], strict=True)]
        if lossless:
            lim = th.ENERGY_CONSERVATION
            err = max(abs(a) for a in absorbed)
            status = "fail" if err > lim.fail else "warn" if err > lim.warn else "pass"
            checks.append(
                Check(
                    f"energy_conservation:{path.name}",
                    status,
                    f"max |1-R-T| = {err:.3g} (all materials lossless)",
                    err,
                    f"fail > {lim.fail:g}, warn > {lim.warn:g}",
                )
            )
        else:
            lim = th.ABSORPTION_NEGATIVE
            low = min(absorbed)
            status = "fail" if low < lim.fail else "warn" if low < lim.warn else "pass"
            checks.append(
                Check(
                    f"absorption_nonnegative:{path.name}",
                    status,
                    f"min A = 1-R-T = {low:.3g} (lossy materials present)",
                    low,
                    f"fail < {lim.fail:g}, warn < {lim.warn:g}",
                )
            )
    if "k" in cols:
        low = min(cols["k"])
        checks.append(
            Check(
                f"extinction_nonnegative:{path.name}",
                "fail" if low < 0 else "pass",
                f"min k = {low:.3g} (Im ε ≥ 0 for a passive material)",
                low,
                "fail < 0",
            )
        )
    return checks


def run_checks(record: dict, workdir: Path, expected_outputs: list[str], lossless: bool) -> dict:
    checks: list[Check] = []
    code = record["exit_code"]
    if record.get("timed_out"):
        checks.append(Check("exit_code", "fail", f"timed out after {record['timeout_s']} s"))
    else:
        checks.append(
            Check(
                "exit_code",
                "pass" if code == 0 else "fail",
                f"exit code {code}"
                + ("" if code == 0 else f"; stderr tail: {record['stderr_tail'][-400:]}"),
                code,
                "0",
            )
        )
    log = record.get("stdout_tail", "") + record.get("stderr_tail", "")
    if NAN_LOG_PATTERN in log:
        checks.append(Check("meep_nan", "fail", f"Meep reported '{NAN_LOG_PATTERN}'"))

    produced = {f["name"]: f for f in record["output_files"]}
    for name in expected_outputs:
        info = produced.get(name)
        if info is None:
            checks.append(Check(f"output_present:{name}", "fail", "expected output missing"))
        elif info["bytes"] == 0:
            checks.append(Check(f"output_present:{name}", "fail", "expected output is empty"))
        else:
            checks.append(Check(f"output_present:{name}", "pass", f"{info['bytes']} bytes"))

    for name in expected_outputs:
        path = workdir / name
        if not (name.endswith(".csv") and path.is_file() and path.stat().st_size):
            continue
        try:
            cols = read_numeric_csv(path)
        except (OSError, IndexError, UnicodeDecodeError) as exc:
            checks.append(Check(f"parse:{name}", "fail", f"not a readable CSV ({exc})"))
            continue
        bad = sum(1 for vs in cols.values() for v in vs if not math.isfinite(v))
        checks.append(
            Check(
                f"finite:{name}",
                "fail" if bad else "pass",
                f"{bad} NaN/Inf/non-numeric values" if bad else "all values finite",
                bad,
                "0",
            )
        )
        if not bad:
            checks.extend(spectrum_checks(path, cols, lossless))

    statuses = [c.status for c in checks]
    verdict = "fail" if "fail" in statuses else "warn" if "warn" in statuses else "pass"
    return {"verdict": verdict, "lossless": lossless, "checks": [asdict(c) for c in checks]}
