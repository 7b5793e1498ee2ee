"""The canonical numbers: comparison classification, physics checks, loop limits.

Prompts (through placeholders), the comparison code and the report all read
these; no other file repeats them.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Band:
    """A metric is SUCCESS up to `acceptable`, PARTIAL up to `investigate`, else FAILURE."""

    metric: str
    description: str
    acceptable: float
    investigate: float


# Discrepancy thresholds for a reproduced curve against the paper's digitized data.
# Differences are normalised by the paper curve's peak |y| so that T/R spectra and
# refractive indices share one scale.
DISCREPANCY_THRESHOLDS: tuple[Band, ...] = (
    Band(
        "feature_shift_rel",
        "largest relative shift of a matched peak/dip position, abs(Δx)/x",
        0.01,
        0.03,
    ),
    Band(
        "rms_rel",
        "RMS difference over the paper's x range / max abs(y_paper)",
        0.03,
        0.08,
    ),
    Band(
        "max_abs_rel",
        "largest absolute difference / max abs(y_paper)",
        0.08,
        0.20,
    ),
)

CLASSIFICATIONS = ("SUCCESS", "PARTIAL", "FAILURE")


def classify_value(band: Band, value: float | None) -> str:
    if value is None:
        return "SUCCESS"  # metric not applicable (e.g. a curve without features)
    if value != value:  # NaN
        return "FAILURE"
    if value <= band.acceptable:
        return "SUCCESS"
    if value <= band.investigate:
        return "PARTIAL"
    return "FAILURE"


def worst(classes: list[str]) -> str:
    if not classes:
        return "FAILURE"
    return max(classes, key=CLASSIFICATIONS.index)


def format_thresholds_table() -> str:
    rows = [
        "| metric | meaning | SUCCESS ≤ | PARTIAL ≤ | otherwise |",
        "|---|---|---|---|---|",
    ]
    for b in DISCREPANCY_THRESHOLDS:
        rows.append(
            f"| `{b.metric}` | {b.description} | {b.acceptable:g} | {b.investigate:g} | FAILURE |"
        )
    rows.append("")
    rows.append("A figure's classification is the worst over its metrics and curves.")
    return "\n".join(rows)


@dataclass(frozen=True)
class CheckLimit:
    fail: float
    warn: float


# From shared/PHYSICS_CHECKS.md (measured with Meep 1.25 against analytic references).
TR_BOUNDS = {"fail": (-0.01, 1.01), "warn": (-0.001, 1.001)}
ENERGY_CONSERVATION = CheckLimit(fail=1e-2, warn=2e-3)  # |1 - R - T|, lossless
ABSORPTION_NEGATIVE = CheckLimit(fail=-0.01, warn=-0.002)  # A = 1 - R - T, lossy
LOSSLESS_MAX_K = 1e-6  # a material with k below this everywhere counts as lossless
# Final ratio of Meep's "field decay(t = ...): a / b = ratio" lines, per run. Measured on
# an 8-pair quarter-wave stack (1D, 100 px/a) against a 1e-9 run: final ratio 3.4e-3 /
# 5.4e-4 / 6.1e-5 / 3.7e-6 / 2.2e-7 left T off by 0.079 / 0.055 / 0.010 / 3.2e-3 / 8.4e-4.
# So fail where T is off by the energy-conservation fail level (1e-2), warn where it is
# off by more than its warn level (2e-3); 1e-6 is also what the lint asks of decay_by.
FIELD_DECAY = CheckLimit(fail=1e-4, warn=1e-6)
# Largest stop_when_*_decayed tolerance the static lint accepts.
MAX_DECAY_TOLERANCE = 1e-6
# Pixels per shortest wavelength inside the highest-index material (lower is worse).
PPW = CheckLimit(fail=8.0, warn=15.0)
# PML: fail under this many pixels; warn when thinner than this fraction of λ_max.
PML_MIN_PIXELS = 5.0
PML_MIN_WAVELENGTHS = 0.5
# Thin dispersive (metal) layers: warn under this many pixels across the layer.
THIN_LAYER_MIN_PIXELS = 10.0
# Reported frequencies must lie within fcen ± factor·fwidth (fail beyond 0.6, warn 0.5).
SOURCE_BAND = CheckLimit(fail=0.6, warn=0.5)
# Incident flux below this fraction of its peak at a reported frequency (lower is worse).
INCIDENT_FLUX_FLOOR = CheckLimit(fail=1e-8, warn=1e-6)
# Empty-run |E|^2 across a plane-wave monitor: fail when max/min exceeds this.
PLANE_WAVE_UNIFORMITY = 1.01
# Symmetry: mirror-symmetric setups (absolute difference), reciprocal stacks |T_fwd - T_bwd|.
MIRROR_SYMMETRY = 1e-6
RECIPROCITY = 2e-3
# Convergence: Richardson estimate |q(2N) - q(N)| / 3 of a second-order scheme, compared
# with this relative tolerance (peak positions and values, not pointwise spectra).
CONVERGENCE_RICHARDSON_DIVISOR = 3.0
CONVERGENCE_TOLERANCE = 0.01
# Debug / quick-check mode: the resolution scale applied to every stage's script.
DEBUG_RESOLUTION_FACTOR = 0.5

# Loop limits (the seed's defaults); config may override them.
MAX_DESIGN_REVISIONS = 3
MAX_CODE_REVISIONS = 3
MAX_ANALYSIS_REVISIONS = 2
MAX_REPLANS = 2
MAX_BACKTRACKS = 2
MAX_EXECUTION_FAILURES = 2  # per stage; the paper's total is kept and never reset
MAX_PHYSICS_FAILURES = 2  # per stage; then the supervisor decides (physics_stuck)
MAX_TOTAL_RUNTIME_HOURS = 8.0  # simulation time per paper; later stages are blocked
