"""Scattering checks beyond the cross sections' signs: a lossless scatterer absorbs
nothing, so the net power into a closed box around it (the absorption cross section a
run writes) must vanish beside the scattered power. Measured on a correct run of a
lossless dielectric sphere: |P_abs| / P_sca at most 4e-3 (discretisation and the flux
box's own error); a box that does not close, or fluxes taken with the wrong sign or
normalisation, leaves far more.
"""

from __future__ import annotations

from pathlib import Path

from reprolab.physics.check import Check
from reprolab.physics.thresholds import CheckLimit

# |P_abs| / P_sca of a lossless scatterer: warn above what a correct run measured.
LOSSLESS_NET_FLUX = CheckLimit(fail=1e-2, warn=4e-3)
# Points where the scattering is this small against its largest are not judged (a
# ratio of two near-zero powers).
SCATTERING_FLOOR = 1e-3


def lossless_net_flux(
    path: Path, cols: dict[str, list[float]], meanings: dict[str, str], lossless: bool
) -> list[Check]:
    """`net_flux_lossless:<file>`: largest |abs| / sca where the run built only lossless
    materials and writes both cross sections; nothing otherwise."""
    if not lossless:
        return []
    sca = next((c for c, m in meanings.items() if m == "scattering_cross_section"), None)
    ab = next((c for c, m in meanings.items() if m == "absorption_cross_section"), None)
    if sca not in cols or ab not in cols:
        return []
    top = max((abs(v) for v in cols[sca]), default=0.0)
    pairs = [
        (a, s)
        for a, s in zip(cols[ab], cols[sca], strict=True)
        if s > SCATTERING_FLOOR * top and a == a
    ]
    if not pairs:
        return []
    ratio = max(abs(a) / s for a, s in pairs)
    lim = LOSSLESS_NET_FLUX
    return [
        Check(
            f"net_flux_lossless:{path.name}",
            "fail" if ratio > lim.fail else "warn" if ratio > lim.warn else "pass",
            f"max |{ab}| / {sca} = {ratio:.3g} with lossless materials as built (a lossless "
            "scatterer absorbs nothing: the net flux into its box must vanish)",
            ratio,
            f"fail > {lim.fail:g}, warn > {lim.warn:g}",
        )
    ]
