"""Static lint of a simulation design and its generated Meep code, before anything runs.

Findings are `Check`s (pass / warn / fail with the number and threshold). The `fail`
ones become problem strings that go back to design or code regeneration as feedback
(`problems()`); all of them are recorded in the stage's checks.json. Thresholds come
from `reprolab.physics.thresholds` (docs/checks.md, measured table rows 5-9 and 11).

This module holds the design findings (`design_findings`: resolution in pixels per
wavelength, PML thickness) and is the entry point for the code lint too:
`code_findings` (in `lint_code`, one function per concern) reads the script with `ast`
(`lint_ast`), resolving module-level numeric constants (`RESOLUTION = 2 * 400`,
`float(os.environ.get("X", 1)) * 800` → its default), so it judges what the script will
do without running it; thin dispersive films on the grid are in `lint_films`.
"""

from __future__ import annotations

from pathlib import Path

from reprolab.physics import thresholds as th
from reprolab.physics.checks import Check, read_numeric_csv
from reprolab.physics.lint_code import PML_SCALE_ENV, RESOLUTION_SCALE_ENV, code_findings

__all__ = [
    "PML_SCALE_ENV",
    "RESOLUTION_SCALE_ENV",
    "code_findings",
    "design_findings",
    "material_max_index",
    "problems",
    "source_band",
]


def _status_low(value: float, lim: th.CheckLimit) -> str:
    """For metrics where lower is worse (pixels per wavelength)."""
    return "fail" if value < lim.fail else "warn" if value < lim.warn else "pass"


def material_max_index(material: dict) -> float | None:
    """Largest real index of a validated material: its constant index, or the max of the
    `n` column of its stage-0 data file."""
    if material.get("index"):
        return float(material["index"])
    data = material.get("data")
    if data and Path(data).is_file():
        try:
            cols = read_numeric_csv(Path(data))
        except (OSError, IndexError, UnicodeDecodeError):
            return None
        if cols.get("n"):
            return max(cols["n"])
    return None


def source_band(design: dict) -> tuple[float, float]:
    """(f_min, f_max) of the source in c/a; f_min is floored at a tenth of fcen."""
    fcen, fwidth = design["source_fcen"], design["source_fwidth"]
    return max(fcen - fwidth / 2, fcen / 10), fcen + fwidth / 2


def design_findings(
    design: dict, materials: list[dict], band: tuple[float, float] | None = None
) -> list[Check]:
    """Resolution in pixels per wavelength and PML thickness of a design.

    `band` is the reported frequency band (f_min, f_max) in c/a when known (the paper
    figures' x range); otherwise the source band is used, which is conservative.
    """
    if design.get("runs_simulation") is False:
        # A stage-0 material evaluation: no grid or PML to judge (the run's record must
        # show no simulation: built:no_simulation).
        return []
    findings = []
    f_lo, f_hi = band if band else source_band(design)
    lam_min, lam_max = 1 / f_hi, 1 / f_lo  # in units of a
    res = design["resolution"]
    indices = {m["material_id"]: material_max_index(m) for m in materials}
    used = [indices.get(mid) for mid in design.get("materials", [])]
    known = [n for n in used if n]
    n_max = max(known + [1.0])
    ppw = res * lam_min / n_max
    unknown = [mid for mid, n in zip(design.get("materials", []), used, strict=True) if not n]
    findings.append(
        Check(
            "resolution_ppw",
            _status_low(ppw, th.PPW),
            f"resolution {res}/a × λ_min {lam_min:.4g} a / n_max {n_max:.4g} = {ppw:.3g} "
            "pixels per wavelength in the highest-index material"
            + (f" (index unknown for {unknown})" if unknown else ""),
            round(ppw, 3),
            f"fail < {th.PPW.fail:g}, warn < {th.PPW.warn:g}",
        )
    )
    pml = design["pml_thickness"]
    pml_px = pml * res
    if pml_px < th.PML_MIN_PIXELS:
        status = "fail"
    elif pml < th.PML_MIN_WAVELENGTHS * lam_max:
        status = "warn"
    else:
        status = "pass"
    findings.append(
        Check(
            "pml_thickness",
            status,
            f"PML {pml:g} a = {pml_px:.3g} pixels; longest wavelength {lam_max:.4g} a",
            round(pml_px, 3),
            f"fail < {th.PML_MIN_PIXELS:g} pixels, warn < {th.PML_MIN_WAVELENGTHS:g} λ_max",
        )
    )
    return findings


def problems(findings: list[Check]) -> list[str]:
    """Failed findings as feedback lines for regeneration."""
    return [f"{f.name}: {f.detail}" for f in findings if f.status == "fail"]
