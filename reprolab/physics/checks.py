"""Deterministic execution and physics checks on a simulation's result record.

These run in code before any agent looks at a result; an agent's verdict can
never override a `fail` here. Thresholds come from `reprolab.physics.thresholds`.
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict
from pathlib import Path

from reprolab import knowledge, run_files
from reprolab.errors import InputFileError
from reprolab.fileio import atomic_write_text
from reprolab.physics import column_names, record_store, scatter_checks
from reprolab.physics import meanings as pm
from reprolab.physics import thresholds as th
from reprolab.physics.check import Check

NAN_LOG_PATTERN = "fields are NaN or Inf"


def read_numeric_csv(path: Path) -> dict[str, list[float]]:
    """Columns of a CSV with a header row (comment lines read as numpy and pandas read
    them: `run_files.table_rows`); non-numeric cells become NaN. A run wrote it (stage
    0's material data): read without following a link, within the caps."""
    path = Path(path)
    return numeric_columns(run_files.read_run_csv(path.parent, path.name))


def read_output_csv(run_dir: Path, name: str) -> dict[str, list[float]]:
    """Columns of a CSV a run left: read without following links, within the caps
    (reprolab.run_files); UnsafeRunFile or RunFileTooLarge otherwise."""
    return numeric_columns(run_files.read_run_csv(run_dir, name))


def numeric_columns(rows: list[list[str]]) -> dict[str, list[float]]:
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


def spectrum_checks(
    path: Path,
    cols: dict[str, list[float]],
    lossless: bool,
    conservation: str | None = None,
    meanings: dict[str, str] | None = None,
) -> list[Check]:
    """Bounds of transmittance/reflectance, and the energy balance the design's
    `conservation` demands: `closed` (all channels monitored: 1 = R + T when lossless),
    `absorbing` (A >= 0), `open_radiating` (1 - R - T is radiation, reported; only a gain
    fails); without a declaration, lossless materials are taken to mean a closed system.
    A column is judged by its meaning (`meanings`: column -> meaning, from the design's
    column_meanings; None: the documented names), never by its name alone."""
    meanings = pm.by_convention(cols) if meanings is None else meanings
    checks = []
    for name in pm.with_meaning(meanings, "transmittance", "reflectance"):
        if name in cols:
            checks.append(_range_check(f"{name}:{path.name}", cols[name]))
    checks += cross_section_checks(path, cols, meanings, lossless)
    checks += scatter_checks.lossless_net_flux(path, cols, meanings, lossless)
    trans = [c for c in pm.with_meaning(meanings, "transmittance") if c in cols]
    refl = [c for c in pm.with_meaning(meanings, "reflectance") if c in cols]
    if len(trans) == 1 and len(refl) == 1:
        checks.append(_balance_check(path, cols[refl[0]], cols[trans[0]], lossless, conservation))
    return checks


def _balance_check(path: Path, r_vals, t_vals, lossless: bool, conservation) -> Check:
    absorbed = [1 - r - t for r, t in zip(r_vals, t_vals, strict=True)]
    if conservation == "open_radiating":
        low, high = min(absorbed), max(absorbed)
        return Check(
            f"radiation_loss:{path.name}",
            "fail" if low < -th.RADIATION_NEGATIVE else "pass",
            f"open structure: radiated 1-R-T spans [{low:.3g}, {high:.3g}]",
            low,
            f"fail < -{th.RADIATION_NEGATIVE:g} (more out than in)",
        )
    if lossless and conservation != "absorbing":
        lim = th.ENERGY_CONSERVATION
        err = max(abs(a) for a in absorbed)
        status = "fail" if err > lim.fail else "warn" if err > lim.warn else "pass"
        return Check(
            f"energy_conservation:{path.name}",
            status,
            f"max |1-R-T| = {err:.3g} (all materials lossless)",
            err,
            f"fail > {lim.fail:g}, warn > {lim.warn:g}",
        )
    lim = th.ABSORPTION_NEGATIVE
    low = min(absorbed)
    status = "fail" if low < lim.fail else "warn" if low < lim.warn else "pass"
    return Check(
        f"absorption_nonnegative:{path.name}",
        status,
        f"min A = 1-R-T = {low:.3g} (lossy materials present)",
        low,
        f"fail < {lim.fail:g}, warn < {lim.warn:g}",
    )


def cross_section_checks(
    path: Path,
    cols: dict[str, list[float]],
    meanings: dict[str, str] | None = None,
    lossless: bool = False,
) -> list[Check]:
    """Cross sections (by meaning; without meanings the columns sigma_/C_/Q_ +
    sca/abs/ext): non-negative, and extinction = scattering + absorption where all
    three are written. A `lossless` scatterer's absorption beside its scattering is
    zero up to the flux box's error, of either sign: net_flux_lossless judges it."""
    meanings = pm.by_convention(cols) if meanings is None else meanings
    found: dict[str, str] = {}
    for name, meaning in meanings.items():
        if meaning in pm.CROSS_SECTIONS and name in cols:
            found.setdefault(pm.CROSS_SECTIONS[meaning], name)
    if not found:
        return []
    scale = max(abs(v) for c in found.values() for v in cols[c]) or 1.0
    signed = [c for k, c in found.items() if not (lossless and k == "abs" and "sca" in found)]
    low = min(min(cols[c]) for c in signed) / scale
    checks = [
        Check(
            f"cross_section_nonnegative:{path.name}",
            "fail" if low < -th.CROSS_SECTION_NEGATIVE else "pass",
            f"smallest of {sorted(signed)} = {low:.3g} of the largest",
            low,
            f"fail < -{th.CROSS_SECTION_NEGATIVE:g}",
        )
    ]
    if len(found) == 3:
        ext, sca, ab = (cols[found[k]] for k in ("ext", "sca", "abs"))
        err = max(abs(e - s - a) for e, s, a in zip(ext, sca, ab, strict=True)) / scale
        lim = th.EXTINCTION_SUM
        checks.append(
            Check(
                f"extinction_sum:{path.name}",
                "fail" if err > lim.fail else "warn" if err > lim.warn else "pass",
                f"max |ext - sca - abs| = {err:.3g} of the largest cross-section",
                err,
                f"fail > {lim.fail:g}, warn > {lim.warn:g}",
            )
        )
    return checks


def read_run_log(record: dict, workdir: Path) -> tuple[str, str]:
    """The run's full stdout and stderr (the record keeps only their tails)."""
    texts = []
    for name, key in (("stdout.txt", "stdout_tail"), ("stderr.txt", "stderr_tail")):
        # a sweep's points each have their own log under points/pNNN/
        found = []
        for rel in [name, *(f"{p}/{name}" for p in run_files.point_folders(workdir))]:
            try:
                found.append(run_files.read_run_tail(workdir, rel))
            except InputFileError:
                continue  # refused: `unsafe_file_checks` fails the run naming it
        found = [f for f in found if f]
        texts.append("\n".join(found) if found else record.get(key, ""))
    return texts[0], texts[1]


def unsafe_file_checks(workdir: Path, names: list[str]) -> list[Check]:
    """A failing check for each log or expected output the host refuses to read
    (a link, a FIFO, a hard link: reprolab.run_files)."""
    checks = []
    rels = [f"{p}/{n}" for p in run_files.point_folders(workdir) for n in LOGS]
    for rel in [*LOGS, *names, *rels]:
        why = run_files.refusal(workdir, rel)
        if why:
            checks.append(Check(f"unsafe_file:{rel}", "fail", f"not read: {why}"))
    return checks


LOGS = ("stdout.txt", "stderr.txt")


_DECAY_LINE = re.compile(
    r"field decay\(t = (?P<t>[-+0-9.eE]+)\): (?P<a>\S+) / (?P<b>\S+) = (?P<ratio>\S+)"
)


def parse_field_decay(stdout: str) -> list[float]:
    """Final decay ratio of every run in Meep's "field decay(t = ...)" lines.

    Meep prints one line per check interval; a new run starts when t goes back down.
    """
    finals: list[float] = []
    last_t = math.inf
    for m in _DECAY_LINE.finditer(stdout):
        t, ratio = float(m["t"]), float(m["ratio"])
        if t <= last_t:
            finals.append(ratio)
        else:
            finals[-1] = ratio
        last_t = t
    return finals


def field_decay_check(stdout: str) -> Check | None:
    finals = parse_field_decay(stdout)
    if not finals:
        return None  # no stop_when_fields_decayed in this script: the lint judges the criterion
    worst = max(finals)
    lim = th.FIELD_DECAY
    status = "fail" if worst > lim.fail else "warn" if worst > lim.warn else "pass"
    return Check(
        "field_decay",
        status,
        f"final field-decay ratio per run: {', '.join(f'{r:.2g}' for r in finals)}",
        worst,
        f"fail > {lim.fail:g}, warn > {lim.warn:g}",
    )


def log_checks(text: str) -> list[Check]:
    """Known warnings in the log (knowledge/log_warnings.yaml) as two checks."""
    hits = knowledge.classify_log(text)
    checks = []
    for name, clean in (
        ("materials_valid_range", "no material-range warnings in the log"),
        ("log_warnings", "no warnings in the log"),
    ):
        mine = [h for h in hits if h["check"] == name]
        statuses = [h["status"] for h in mine]
        status = "fail" if "fail" in statuses else "warn" if statuses else "pass"
        detail = (
            "; ".join(f"{h['line']} (x{h['count']}): {h['meaning']}" for h in mine[:5])
            if mine
            else clean
        )
        checks.append(
            Check(name, status, detail, len(mine), "pattern table: knowledge/log_warnings.yaml")
        )
    return checks


def reported_frequencies(
    column: str, values: list[float], unit_length_um: float
) -> list[float] | None:
    """Frequencies in Meep units (c/a) of an x column, or None when its unit is unknown
    (`column_names`: wavelength and frequency names; non-positive wavelengths dropped)."""
    freqs = column_names.frequencies(column, values, unit_length_um)
    return None if freqs is None else [f for f in freqs if f == f]


def source_band_check(freqs: list[float], fcen: float, fwidth: float, label: str) -> Check:
    """Every reported frequency inside the source's band (fcen ± k·fwidth)."""
    reach = max(abs(f - fcen) for f in freqs) / fwidth
    lim = th.SOURCE_BAND
    status = "fail" if reach > lim.fail else "warn" if reach > lim.warn else "pass"
    return Check(
        f"source_bandwidth:{label}",
        status,
        f"reported {min(freqs):.4g}-{max(freqs):.4g} c/a; source {fcen:g} ± {fwidth / 2:g} "
        f"(farthest reported frequency at {reach:.3g}·fwidth from fcen)",
        reach,
        f"fail > {lim.fail:g}·fwidth, warn > {lim.warn:g}·fwidth from fcen",
    )


def incident_flux_check(values: list[float], label: str) -> Check:
    peak = max(abs(v) for v in values) or 1.0
    low = min(abs(v) for v in values) / peak
    lim = th.INCIDENT_FLUX_FLOOR
    status = "fail" if low < lim.fail else "warn" if low < lim.warn else "pass"
    return Check(
        f"incident_flux_floor:{label}",
        status,
        f"weakest incident flux at a reported frequency is {low:.3g} of its peak",
        low,
        f"fail < {lim.fail:g}, warn < {lim.warn:g}",
    )


def uniformity_check(values: list[float], label: str) -> Check:
    """Empty-run |E|^2 across a plane-wave monitor (column `incident_E2`)."""
    lo, hi = min(values), max(values)
    ratio = hi / lo if lo > 0 else math.inf
    lim = th.PLANE_WAVE_UNIFORMITY
    return Check(
        f"plane_wave_uniformity:{label}",
        "fail" if ratio > lim else "pass",
        f"max/min of the incident |E|^2 across the monitor = {ratio:.4g}",
        ratio,
        f"fail > {lim:g} (plane waves through PML need is_integrated=True)",
    )


def symmetry_check(a: list[float], b: list[float], label: str, limit: float) -> Check:
    diff = max(abs(x - y) for x, y in zip(a, b, strict=True))
    return Check(
        f"symmetry:{label}",
        "fail" if diff > limit else "pass",
        f"max |{label.replace('~', ' - ')}| = {diff:.3g}",
        diff,
        f"fail > {limit:g}",
    )


def output_checks(
    name: str, cols: dict[str, list[float]], design: dict | None, symmetric_pairs
) -> list[Check]:
    """Checks of one output CSV that need the design: band, uniformity, symmetry."""
    checks = []
    if design and design.get("source_fcen") is not None:
        for fo in design.get("figure_outputs", []):
            if fo["file"] != name or fo["x_column"] not in cols:
                continue
            meaning = (pm.of_file(design, name, cols) if pm.declared(design, name) else {}).get(
                fo["x_column"], "frequency"
            )
            if meaning not in ("frequency", "wavelength"):
                continue  # a k path or a parameter: no band to hold it to
            freqs = reported_frequencies(
                fo["x_column"], cols[fo["x_column"]], design.get("unit_length_um", 1.0)
            )
            if freqs:
                checks.append(
                    source_band_check(
                        freqs, design["source_fcen"], design["source_fwidth"], f"{name}"
                    )
                )
                break
    if "incident_flux" in cols:
        checks.append(incident_flux_check(cols["incident_flux"], name))
    if "incident_E2" in cols:
        checks.append(uniformity_check(cols["incident_E2"], name))
    pairs = [("T_fwd", "T_bwd", th.RECIPROCITY)] + [
        (a, b, th.MIRROR_SYMMETRY) for a, b in symmetric_pairs
    ]
    for a, b, limit in pairs:
        if a in cols and b in cols:
            checks.append(symmetry_check(cols[a], cols[b], f"{a}~{b}:{name}", limit))
    return checks


def run_checks(
    record: dict,
    workdir: Path,
    expected_outputs: list[str],
    lossless: bool,
    *,
    design: dict | None = None,
    static: list[Check] | None = None,
    paper: dict | None = None,
    approved_materials: list[dict] | None = None,
) -> dict:
    """All run-time checks of one stage's run; `static` are the lint's findings on the
    design and code, recorded alongside so that checks.json holds every number.
    `design` (the SimulationDesign as a dict) enables the source-band check; its optional
    `symmetric_outputs` ([[column_a, column_b], ...]) declares mirror-symmetric outputs.
    `paper` ({(figure_id, curve_id): (x, y)}, the digitized curves in the outputs' x
    units) lets the trace tell an output that repeats the paper's data; built media are
    compared with `approved_materials` (validated_materials.json's)."""
    checks: list[Check] = list(static or [])
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
    stdout, stderr = read_run_log(record, workdir)
    log = stdout + "\n" + stderr
    if NAN_LOG_PATTERN in log:
        checks.append(Check("meep_nan", "fail", f"Meep reported '{NAN_LOG_PATTERN}'"))
    decay = field_decay_check(stdout)
    if decay:
        checks.append(decay)
    checks.extend(log_checks(log))

    produced = {f["name"]: f for f in record["output_files"]}
    for name in expected_outputs:
        info = produced.get(name)
        if info is None:
            checks.append(Check(f"output_present:{name}", "fail", "expected output missing"))
        elif info["bytes"] == 0:
            checks.append(Check(f"output_present:{name}", "fail", "expected output is empty"))
        else:
            checks.append(Check(f"output_present:{name}", "pass", f"{info['bytes']} bytes"))

    checks.extend(unsafe_file_checks(workdir, list(expected_outputs)))
    checks, lossless = _with_record(checks, workdir, design, lossless, approved_materials)
    checks.extend(_traced(workdir, design, paper))
    conservation = (design or {}).get("conservation")
    symmetric_pairs = (design or {}).get("symmetric_outputs", [])
    for name in expected_outputs:
        path = workdir / name
        if not (name.endswith(".csv") and run_files.size_of(workdir, name)):
            continue
        try:
            cols = read_output_csv(workdir, name)
        except (OSError, IndexError, UnicodeDecodeError, InputFileError) as exc:
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
            checks.extend(_csv_checks(path, cols, lossless, design, conservation, symmetric_pairs))

    return summarise(checks, lossless, log)


def _csv_checks(path: Path, cols, lossless: bool, design, conservation, pairs) -> list:
    """Ranges and energy balance by the columns' meanings, then the design's checks."""
    found = pm.of_file(design, path.name, cols)
    checks = spectrum_checks(path, cols, lossless, conservation, found)
    return checks + output_checks(path.name, cols, design, pairs)


def _with_record(
    checks: list[Check],
    workdir: Path,
    design: dict | None,
    lossless: bool,
    approved: list[dict] | None = None,
) -> tuple[list[Check], bool]:
    """The run-time record's checks (as_built.json); what Meep built decides loss."""
    from reprolab.physics import material_checks as mc
    from reprolab.physics import record_checks as rc
    from reprolab.physics.resimulate import resimulated_check

    # record:channel: what the launcher refused of the record's events
    checks = checks + [c for c in [record_store.channel_check(workdir)] if c]
    built = rc.load_record(workdir)
    if not built:
        from reprolab.physics.trace import record_missing_check

        missing = record_missing_check(design)
        return checks + ([missing] if missing else []), lossless
    judged = rc.record_checks(built, design)
    unit = (design or {}).get("unit_length_um")
    judged += [
        c
        for c in (
            mc.materials_as_approved_check(built, approved, unit),
            mc.nanostructure_pixels_check(built),
            resimulated_check(built),  # record:resimulated: Meep's numbers, run here
        )
        if c is not None
    ]
    return rc.defer_static(checks, judged) + judged, rc.lossless(built)


def _traced(workdir: Path, design: dict | None, paper: dict | None) -> list[Check]:
    """Each figure output against what the monitors measured (reprolab.physics.trace),
    then the outputs against the record's own estimates (reprolab.physics.bounds)."""
    from reprolab.physics.bounds import bound_checks
    from reprolab.physics.trace import trace_checks

    return trace_checks(workdir, design, paper) + bound_checks(workdir, design)


def summarise(checks: list[Check], lossless: bool, log: str = "") -> dict:
    statuses = [c.status for c in checks]
    verdict = "fail" if "fail" in statuses else "warn" if "warn" in statuses else "pass"
    out = {"verdict": verdict, "lossless": lossless, "checks": [asdict(c) for c in checks]}
    if verdict == "fail":
        out["fix_hints"] = knowledge.fix_hints(log)
    return out


def write_diagnosis(result: dict, record: dict, workdir: Path, stage_dir: Path) -> Path | None:
    """diagnosis.html in the stage folder for the first matching knowledge/diagnoses.yaml
    entry (searched in the failed checks' names and the run's log), or None."""
    failed = [c for c in result["checks"] if c["status"] == "fail"]
    stdout, stderr = read_run_log(record, workdir)
    diag = knowledge.diagnose([c["name"] for c in failed] + [stdout + "\n" + stderr])
    if diag is None:
        return None
    page = knowledge.diagnosis_html(
        diag,
        stage_id=result.get("stage_id", stage_dir.name),
        failed=failed,
        log_tail=(stdout[-1500:] + "\n" + stderr[-1500:]),
    )
    return atomic_write_text(stage_dir / "diagnosis.html", page)
