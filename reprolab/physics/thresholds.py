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
        "feature_height_rel",
        "largest difference of a matched peak/dip value / max abs(y_paper)",
        0.05,
        0.15,
    ),
    Band(
        "feature_width_rel",
        "largest relative difference of a matched peak/dip width (linewidth, hence Q)",
        0.15,
        0.35,
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

# A headline number of the paper (metadata key_values) read off the reproduced curve:
# |simulated - paper| / |paper|.
KEY_VALUE = Band("key_value_rel", "relative error of a key value the paper states", 0.02, 0.05)

CLASSIFICATIONS = ("SUCCESS", "PARTIAL", "FAILURE")

# Narrow lines (physics/lines.py): a peak, dip or Fano line whose linewidth (its FWHM,
# a Fano fit's width, or position / Q where the paper states Q) is below
# NARROW_LINE_TOLERANCES ordinary position tolerances (feature_shift_rel's SUCCESS
# limit on its scale) is judged in its own linewidths: at 1 % of 0.25 c/a a Q 500 line
# could sit five linewidths off and still pass.
NARROW_LINE_TOLERANCES = 1.0
# Shift |x_run - x_paper| / linewidth_paper. At 0.5 linewidth the reproduced centre sits
# on the paper line's half maximum (the lines overlap above half height); at 1.5 a
# Lorentzian has fallen to 1 / (1 + 3²) = 10 % of its height: another line. A digitized
# line locates its centre far inside 0.5: sampled 2 to 8 points per linewidth with 2 %
# noise, the 95th percentile error is 0.03-0.07 linewidth (tests/physics/test_lines.py),
# plus a pixel of the plot (0.1 linewidth for a line drawn 10 px wide).
LINE_SHIFT = Band(
    "line_shift_linewidths",
    "largest shift of a narrow line (peak, dip or Fano), in the paper line's linewidths",
    0.5,
    1.5,
)
# Width |w_run - w_paper| / w_paper of a narrow line, the width error in its linewidths:
# the band of feature_width_rel (a half-prominence width digitizes to ~10 %).
LINE_WIDTH = Band(
    "line_width_linewidths",
    "largest width difference of a narrow line, in the paper line's linewidths",
    0.15,
    0.35,
)
# A line whose Q the paper states is compared as Q, abs(log10(Q_run / Q_paper)): its Q
# comes from a width fitted to a sampled spectrum, which scatters by 10-20 % (unlike a
# mode's Q from Harminv's fit of the ringdown: QUALITY_FACTOR).
LINE_Q = Band(
    "line_q_log10", "abs(log10(Q_run / Q_paper)) of a line whose Q the paper states", 0.1, 0.2
)
LINE_BANDS = (LINE_SHIFT, LINE_WIDTH, LINE_Q)

# Results about modes (tables and band diagrams), each value against the paper's.
# A mode frequency (also a wavelength, a gap edge) relative: |f_run - f_paper| / f_paper,
# on the scale of a curve's peak shift (a band 3 % off is PARTIAL, never SUCCESS).
MODE_FREQUENCY = Band(
    "mode_frequency_rel", "relative error of a mode frequency or wavelength", 0.01, 0.03
)
# Q on a log scale, |log10(Q_run / Q_paper)|. SUCCESS within 5 % (log10 1.05): a paper
# states Q to three figures (rounding <= 0.4 %), a converged run reaches it to 0.03-0.14 %
# (Meep's ring at 10 px/a) and the disk's modes to 3.5 % even at half their resolution,
# while a PML too thin biases Q by about +10 % (the ring: +10.7 %), which must not pass.
# PARTIAL within 25 % (log10 1.25): Harminv's scatter at modest resolution or with a
# broadband source (10-20 %); a Q off by 2 (0.301) is a different loss. docs/checks.md.
QUALITY_FACTOR = Band(
    "q_log10", "abs(log10(Q_run / Q_paper)) of a mode's quality factor", 0.0212, 0.0969
)
# A linewidth is f / Q: the same log scale as Q.
LINEWIDTH = Band(
    "linewidth_log10", "abs(log10(w_run / w_paper)) of a mode's linewidth", 0.0212, 0.0969
)
# A splitting is a small difference of two frequencies: relative to itself, looser.
SPLITTING = Band("splitting_rel", "relative error of a mode splitting", 0.1, 0.3)
# A gap edge (band maximum or minimum over the k path), relative like a mode frequency.
GAP_EDGE = Band("gap_edge_rel", "relative error of a band-gap edge", 0.01, 0.03)
# The gap-midgap ratio, absolute (a ratio 0.40 read as 0.38 is 0.02 off).
GAP_MIDGAP_RATIO = Band(
    "gap_midgap_abs", "absolute error of a gap-midgap ratio (as a fraction)", 0.01, 0.03
)
# A band of a band diagram: per point |f_run - f_paper| / max(f_paper, floor), the floor
# BAND_FREQUENCY_FLOOR of the diagram's highest stated frequency (band 1 near Gamma
# tends to 0, where a digitized point's own error is larger than the point).
BAND_RMS = Band("band_rms_rel", "RMS relative error over a band's points", 0.01, 0.03)
BAND_MAX = Band("band_max_rel", "largest relative error of a band's point", 0.02, 0.05)
BAND_FREQUENCY_FLOOR = 0.1
# A stated mode or band point with no measured mode within this relative frequency is
# `missing` (a mode 10 % away is another mode), and two stated bands within
# MODE_FREQUENCY.acceptable of each other at one k are degenerate there.
MODE_MATCH_REL = 0.1
# A band with more than this fraction of its points missing is FAILURE (fewer: PARTIAL
# at best: a missing mode is never SUCCESS).
BAND_MISSING_FAILURE = 0.25
MODE_BANDS = (
    MODE_FREQUENCY,
    QUALITY_FACTOR,
    LINEWIDTH,
    SPLITTING,
    GAP_EDGE,
    GAP_MIDGAP_RATIO,
    BAND_RMS,
    BAND_MAX,
)


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
    for b in (*DISCREPANCY_THRESHOLDS, *LINE_BANDS, KEY_VALUE, *MODE_BANDS):
        rows.append(
            f"| `{b.metric}` | {b.description} | {b.acceptable:g} | {b.investigate:g} | FAILURE |"
        )
    rows.append("")
    rows.append(
        "A figure's classification is the worst over its metrics and curves; a table's "
        "the worst over its values; a stated mode the run did not find is FAILURE."
    )
    return "\n".join(rows)


@dataclass(frozen=True)
class CheckLimit:
    fail: float
    warn: float


# Measured with Meep 1.25 against analytic references: docs/checks.md, "Where the numbers
# come from", and the measurements beside the constants that changed since.
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
# Metal and dispersive high-index nanostructures (built:nanostructure_pixels): pixels
# across the smallest feature or gap. 2D meep.materials.Ag cylinders (absorption peak,
# parabolic vertex, 0.29-0.78 µm): 40 nm across at 4 / 8 / 16 pixels peaks at 0.4115 /
# 0.3527 / 0.3501 µm (4 pixels: 17 % off; 8 to 16: 0.74 %); 80 nm at 8 and 16 pixels
# 0.3525 and 0.3482 µm (1.2 %); 160 nm at 16 and 32 pixels 0.3540 and 0.3529 µm (0.3 %).
# So fail under 8 pixels, warn under 16 (8 pixels leave the resonance about 1 % off, over
# the 0.5 % a converged position may move).
NANO_FEATURE_PIXELS = CheckLimit(fail=8.0, warn=16.0)
# Pixels across a metal's least skin depth lambda / (4 pi k) over the monitored band:
# 1.3 at 100 px/µm, where the 160 nm cylinder (16 pixels across) moved 0.3 % at 2x; no
# run isolates it from the feature yet: a warn under that, a fail under half of it.
SKIN_DEPTH_PIXELS = CheckLimit(fail=0.6, warn=1.2)
# A dispersive medium at least this dense counts as high-index for that rule.
HIGH_INDEX = 2.5
# A film face closer than this (pixels) to a grid point counts as on it.
FILM_ON_GRID_PX = 0.01
# Reported frequencies must lie within fcen ± factor·fwidth (fail beyond 0.6, warn 0.5).
SOURCE_BAND = CheckLimit(fail=0.6, warn=0.5)
# Incident flux below this fraction of its peak at a reported frequency (lower is worse).
INCIDENT_FLUX_FLOOR = CheckLimit(fail=1e-8, warn=1e-6)
# Empty-run |E|^2 across a plane-wave monitor: fail when max/min exceeds this.
PLANE_WAVE_UNIFORMITY = 1.01
# Symmetry: mirror-symmetric setups (absolute difference), reciprocal stacks |T_fwd - T_bwd|.
MIRROR_SYMMETRY = 1e-6
RECIPROCITY = 2e-3
# Convergence: Richardson estimate |q(2N) - q(N)| / 3 of a second-order scheme (the
# error of the 2N result; the N result's is about 4/3 of the change itself), reported.
CONVERGENCE_RICHARDSON_DIVISOR = 3.0
CONVERGENCE_TOLERANCE = 0.01
# A rerun (resolution x2; for resonance stages also PML x2) that moves a quantity by more
# than CONVERGENCE_FRACTION of the SUCCESS level of the band that classifies it FAILS the
# stage (a result that moves that much is not converged enough to be classified); above
# half of that it warns. Changes are relative like the bands they derive from.
CONVERGENCE_FRACTION = 0.5


def _convergence_limit(band: Band) -> CheckLimit:
    fail = CONVERGENCE_FRACTION * band.acceptable
    return CheckLimit(fail=fail, warn=fail / 2)


_BANDS = {b.metric: b for b in DISCREPANCY_THRESHOLDS}
# Pointwise: largest |y(2N) - y(N)| / max |y| on the figure's x grid (max_abs_rel).
CONVERGENCE_POINTWISE = _convergence_limit(_BANDS["max_abs_rel"])
# A peak/dip position |x(2N) - x(N)| / |x(2N)|, and a Harminv mode frequency (shift).
CONVERGENCE_POSITION = _convergence_limit(_BANDS["feature_shift_rel"])
CONVERGENCE_FREQUENCY = CONVERGENCE_POSITION
# A peak/dip height |y(2N) - y(N)| / max |y| (feature_height_rel).
CONVERGENCE_HEIGHT = _convergence_limit(_BANDS["feature_height_rel"])
# A key value (headline number) read off the curve, relative (KEY_VALUE).
CONVERGENCE_KEY_VALUE = _convergence_limit(KEY_VALUE)
# A Harminv Q, relative (feature_width_rel: linewidth, hence Q). Measured on Meep's ring
# (tests/support/planted, 10 px/a, 150 time units of Harminv): the Q 1293 mode moves 6.2 % at 2x
# resolution and 0.7 % at 2x PML (2 a -> 4 a: warn, pass); with a 0.35 a PML it moves
# 148 % when the PML doubles (fail).
CONVERGENCE_Q = _convergence_limit(_BANDS["feature_width_rel"])
# An under-resolved run is excused by its 2x rerun only where the rerun bounds the error
# where the curve is small too: its pointwise change relative to the local |y| (floored
# at this fraction of max |y|) must stay under CONVERGENCE_POINTWISE.fail. Normalised by
# the max alone, a 2D cross section at 11 pixels per wavelength moved under 4 % while it
# was 9 % off where it is small.
CONVERGENCE_LOCAL_FLOOR = 0.1
# A resonance's Q carries both errors: its changes at 2x resolution and at 2x PML add up
# and their sum must stay under CONVERGENCE_Q.fail (each alone may pass with a warning
# while Q is biased beyond the band by a thin PML).
# A mode of the N run with no mode of the varied run within this relative frequency is
# reported as unmatched (warn: Harminv's spurious low-Q modes come and go).
CONVERGENCE_MODE_MATCH = 0.05
# checks.convergence: auto reruns a stage whose as-built pixels per wavelength are
# under PPW_AS_BUILT.warn (it fails under .fail unless converged), and every stage that
# ran Harminv (resonances: resolution and PML are varied).
# Debug / quick-check mode: the resolution scale applied to every stage's script.
DEBUG_RESOLUTION_FACTOR = 0.5

# The loop limits (revisions, backtracks, failures, run time) are run settings, not
# physics: their defaults are in reprolab/settings.py (Limits).

# Run-time record (as_built.json) checks. Pixels per shortest monitored wavelength in the
# densest material as built: the held-out probe saw T/R off by 0.2-0.5 at 8.5-11 px, so
# the record fails under 12 (the static lint's PPW stays the early warning).
PPW_AS_BUILT = CheckLimit(fail=12.0, warn=15.0)
# PML thickness in wavelengths at the centre of the monitored (or source) band, as
# built: fail under this (warn under PML_MIN_WAVELENGTHS). Meep's own tutorials run
# 0.15 λ (waveguide bend) and 0.3 λ (ring resonator). A thin PML's reflection feeds a
# resonance and biases Q high, so Harminv runs need PML_RESONANCE_WAVELENGTHS: measured
# on Meep's ring (tests/support/planted, 10 px/a), Q of the 0.175 c/a mode 1375 / 1299 / 1293 /
# 1284 with PML 0.075 / 0.15 / 0.3 / 0.6 λ (7 % / 1.1 % / 0.7 % above the thickest).
PML_FAIL_WAVELENGTHS = 0.1
PML_RESONANCE_WAVELENGTHS = 0.25
# Final / peak field energy of the last run of a simulation that has flux or DFT
# monitors (an |E|^2 ratio, like Meep's field-decay lines): same limits as FIELD_DECAY.
ENERGY_DECAY = CheckLimit(fail=1e-4, warn=1e-6)
# How much the monitored flux spectra would still change after a run stopped, relative to
# their largest value (extrapolated from the run's last samples: record_checks). A
# transmission spectrum off by this much is off by the energy-conservation levels, where
# FIELD_DECAY's measurement puts its fail and warn too.
SPECTRUM_UNSETTLED = CheckLimit(fail=ENERGY_CONSERVATION.fail, warn=ENERGY_CONSERVATION.warn)
# A declared dimension matches a built object within this relative difference.
GEOMETRY_DECLARED_REL = 1e-2
# Cross-sections (sigma_/C_/Q_ with _sca, _abs, _ext): negative beyond this fraction of
# the largest extinction fails; |ext - sca - abs| / max ext above fail / warn.
CROSS_SECTION_NEGATIVE = 1e-3
EXTINCTION_SUM = CheckLimit(fail=2e-2, warn=5e-3)
# Open / radiating designs: 1 - R - T is radiation (reported); below -this it is a gain.
RADIATION_NEGATIVE = 1e-2
# A cross section or efficiency against the constant derived from the record
# (physics/bounds.py): |found / derived - 1| above fail / warn. A script that normalises
# by the empty run's plane monitor matches the derived constant to its printed digits
# (measured: a lossless and a lossy 2D cylinder, x1.00, fit residual 2e-8); the
# mistakes this is for are whole factors (r for 2r: x2, r² for πr²: x3.14).
NORMALISATION_BOUND = CheckLimit(fail=0.05, warn=0.02)
# A combination of flux spectra over the incident intensity reproduces the output when
# its relative L2 residual is below this (else the bound cannot be derived: a warn).
NORMALISATION_FIT = 0.03
# Lossless scatterer: |net flux of the total fields through a closed box| / scattered
# flux through the same box, where the scattered flux is above 1 % of its largest.
# Measured 1.7e-3 on a lossless n = 1.5 cylinder (2D, 16 px/a; 2.4e-3 counting the
# frequencies where it scatters little); the fail level is EXTINCTION_SUM's, the
# balance ext = sca + abs held to the same 2 %.
CLOSED_BOX_BALANCE = CheckLimit(fail=2e-2, warn=5e-3)

# Emitters (reprolab.physics.emitters): the far field is far when its radius is this many
# of the longest wavelengths and beyond the Fraunhofer distance 2 D² / λ of the near
# surface (D its largest extent); the Purcell reference run matches the emitter run's
# medium index within this.
FAR_FIELD_WAVELENGTHS = 10.0
FAR_FIELD_FRAUNHOFER = 1.0  # times 2 D² / λ
REFERENCE_INDEX_RTOL = 1e-3
# |far-field power over the sampled circle or sphere / power through the near surface - 1|
# (physics/near_far_power.py). Measured on correct 2D runs (one and three Ez line
# currents, boxes 2.0-3.0 a, 12-30 px per wavelength): 0.1 % to 9.4 %, 3.9 % on the
# gallery's dipole array (20 px); the mistakes it is for (a face's weight not flipped,
# a missing face, a far field off by x2) are off by 50 % or more.
NEAR_FAR_POWER_BALANCE = CheckLimit(fail=0.2, warn=0.1)
# An emitter's distance to the nearest material interface, in pixels: closer, its LDOS
# (which grows as 1/d³ near an interface) is set by the grid, not the structure.
EMITTER_GAP_PIXELS = CheckLimit(fail=2.0, warn=4.0)
