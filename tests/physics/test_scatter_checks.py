"""A lossless scatterer's net flux: its absorption beside its scattering must vanish; a
run that leaves a net flux (a box that does not close, a wrong sign or normalisation)
fails, a lossy one is never judged by it."""

from __future__ import annotations

from pathlib import Path

import pytest

from reprolab.physics import checks
from reprolab.physics.scatter_checks import LOSSLESS_NET_FLUX, lossless_net_flux

MEANINGS = {"Q_sca": "scattering_cross_section", "Q_abs": "absorption_cross_section"}


def cols(ratio: float) -> dict[str, list[float]]:
    sca = [0.5, 1.2, 2.0, 3.1, 2.4]
    return {"x": [1, 2, 3, 4, 5], "Q_sca": sca, "Q_abs": [ratio * s for s in sca]}


@pytest.mark.parametrize(("ratio", "status"), [(1e-3, "pass"), (6e-3, "warn"), (0.05, "fail")])
def test_net_flux_of_a_lossless_scatterer(ratio, status):
    (check,) = lossless_net_flux(Path("q.csv"), cols(ratio), MEANINGS, lossless=True)
    assert check.name == "net_flux_lossless:q.csv" and check.status == status
    assert check.value == pytest.approx(ratio)
    lim = LOSSLESS_NET_FLUX
    assert check.threshold == f"fail > {lim.fail:g}, warn > {lim.warn:g}"


def test_a_negative_net_flux_counts_as_much():
    (check,) = lossless_net_flux(Path("q.csv"), cols(-0.05), MEANINGS, lossless=True)
    assert check.status == "fail"


def test_lossy_or_without_both_columns_not_judged():
    assert lossless_net_flux(Path("q.csv"), cols(0.3), MEANINGS, lossless=False) == []
    only = {"Q_sca": "scattering_cross_section"}
    assert lossless_net_flux(Path("q.csv"), cols(0.3), only, lossless=True) == []


def test_points_without_scattering_are_not_judged():
    c = cols(1e-3)
    c["Q_sca"][0], c["Q_abs"][0] = 1e-9, 1e-6  # a ratio of two near-zero powers
    (check,) = lossless_net_flux(Path("q.csv"), c, MEANINGS, lossless=True)
    assert check.status == "pass"


def test_spectrum_checks_run_it():
    names = [
        c.name for c in checks.spectrum_checks(Path("q.csv"), cols(0.05), True, None, MEANINGS)
    ]
    assert "net_flux_lossless:q.csv" in names
    lossy = checks.spectrum_checks(Path("q.csv"), cols(0.05), False, None, MEANINGS)
    assert "net_flux_lossless:q.csv" not in [c.name for c in lossy]


def test_lossless_absorption_sign_is_judged_by_the_net_flux_alone():
    """A correct lossless sphere's Q_abs is box noise of either sign (-1.5e-3 of the
    largest Q_sca measured): not a negative cross section; the net flux judges it
    against the scattering. A lossy run, or a lossless one far off, still fails."""
    sca = [0.01, 0.5, 1.8, 2.6]
    noise = {"Q_sca": sca, "Q_abs": [-2.5e-3 * s for s in sca]}
    found = {c.name: c for c in checks.spectrum_checks(Path("q.csv"), noise, True, None, MEANINGS)}
    assert found["cross_section_nonnegative:q.csv"].status == "pass"
    assert "['Q_sca']" in found["cross_section_nonnegative:q.csv"].detail
    assert found["net_flux_lossless:q.csv"].status == "pass"
    lossy = {c.name: c for c in checks.spectrum_checks(Path("q.csv"), noise, False, None, MEANINGS)}
    assert lossy["cross_section_nonnegative:q.csv"].status == "fail"
    far = {"Q_sca": sca, "Q_abs": [-0.05 * s for s in sca]}
    found = {c.name: c for c in checks.spectrum_checks(Path("q.csv"), far, True, None, MEANINGS)}
    assert found["net_flux_lossless:q.csv"].status == "fail"
    # a negative scattering is never excused
    neg = {"Q_sca": [-0.1, *sca[1:]], "Q_abs": [0.0] * 4}
    found = {c.name: c for c in checks.spectrum_checks(Path("q.csv"), neg, True, None, MEANINGS)}
    assert found["cross_section_nonnegative:q.csv"].status == "fail"
