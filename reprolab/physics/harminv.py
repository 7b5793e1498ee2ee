"""What a Harminv mode of the run-time record can be trusted for.

A mode is a dict of the record (`freq`, `decay`, `Q`, `amp`, `error`), measured over a
window of `window` time units (Meep units). Harminv fits decaying sinusoids: a mode
whose amplitude hardly decays over the window has a Q the run cannot measure (a
lossless mode returns Q of 10^8 or more, or negative: noise, never a number to
compare), and a mode whose error estimate is not small against its frequency, or
whose amplitude is tiny against the strongest mode of its fit, is not a mode at all.
"""

from __future__ import annotations

import math

# The smallest fractional amplitude decay over the window from which Q is read: a Q
# above pi * f * window / MIN_WINDOW_DECAY is "above what this run can measure".
MIN_WINDOW_DECAY = 0.01
# A frequency is trusted when Harminv's error estimate is below this fraction of it.
MAX_FREQUENCY_ERROR = 1e-3
# A mode whose amplitude is below this fraction of its fit's strongest is noise.
MIN_RELATIVE_AMPLITUDE = 1e-3


def q_limit(freq: float, window: float) -> float:
    """The largest Q a window of `window` time units can measure at frequency `freq`.

    The amplitude decays as exp(-pi f t / Q): over the window it falls by
    pi f window / Q (small Q); below MIN_WINDOW_DECAY the decay is not resolved."""
    if not window or window <= 0 or not freq:
        return 0.0
    return math.pi * abs(freq) * window / MIN_WINDOW_DECAY


def q_measurable(mode: dict, window: float) -> bool:
    """Q is a finite, positive number this run could measure, and Harminv's error
    estimate is below the mode's decay rate (else the Q is not resolved)."""
    q = mode.get("Q")
    if q is None or not math.isfinite(q) or q <= 0 or q > q_limit(mode.get("freq", 0), window):
        return False
    decay = abs(mode.get("decay") or 0.0) or abs(mode["freq"]) / (2 * q)
    return (mode.get("error") or 0.0) < decay


def mode_trusted(mode: dict, strongest_amp: float) -> tuple[bool, str]:
    """Whether a mode's frequency is a measurement, and why not."""
    freq, err, amp = mode.get("freq"), mode.get("error") or 0.0, mode.get("amp") or 0.0
    if freq is None or not math.isfinite(freq) or freq <= 0:
        return False, "no positive frequency"
    if err > MAX_FREQUENCY_ERROR * freq:
        return False, f"Harminv error {err:.2g} above {MAX_FREQUENCY_ERROR:g} of f"
    if strongest_amp > 0 and amp < MIN_RELATIVE_AMPLITUDE * strongest_amp:
        return False, f"amplitude {amp:.2g} below {MIN_RELATIVE_AMPLITUDE:g} of the strongest"
    return True, ""


def q_text(mode: dict, window: float) -> str:
    """Q as the report writes it: the number, or that it is above what was measurable."""
    if q_measurable(mode, window):
        return f"{mode['Q']:.4g}"
    return f"above what this run can measure (> {q_limit(mode.get('freq', 0), window):.3g})"
