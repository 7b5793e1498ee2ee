"""The exact scattering series of an infinite circular cylinder, bare or coated, at normal
incidence with the electric field perpendicular to the axis (TE: H along the axis, the
polarization with a surface plasmon), independent of FDTD.

Each region j (core, shell, host n = 1) carries H_z = Σ_n [A_n J_n(k_j r) + B_n H_n(k_j r)]
e^{inφ}, k_j = m_j k; H_z and E_φ ∝ (1/m_j) ∂H_z/∂(k_j r) are continuous at each
interface (Bohren & Huffman, Absorption and Scattering of Light by Small Particles,
§8.4; Kerker, The Scattering of Light, ch. 6). The incident wave contributes i^n J_n(kr)
outside and the scattered one −i^n a_n H_n(kr), so that for a bare cylinder a_n is
Bohren & Huffman's case II coefficient. Per unit length of the cylinder, with x = kR of
the outer radius R:

    Q_ext = (2/x) Re Σ_{n=-N}^{N} a_n,   Q_sca = (2/x) Σ |a_n|²,   C = Q · 2R.

Dielectric functions take Meep's sign convention (Im ε > 0 for loss).
"""

from __future__ import annotations

import numpy as np
from scipy.special import h1vp, hankel1, jv, jvp


def _orders(x: float) -> np.ndarray:
    return np.arange(0, int(x + 4 * x ** (1 / 3) + 6) + 1)


def coated_cylinder_te(
    eps_core: complex, eps_shell: complex, r_core: float, r_out: float, wavelength: float
) -> dict:
    """{'ext', 'sca', 'abs'}: cross sections per unit length (the length unit of the
    radii and wavelength) of a core of ε `eps_core` and radius `r_core` in a shell of ε
    `eps_shell` out to `r_out`, in vacuum, E perpendicular to the axis."""
    k = 2 * np.pi / wavelength
    m1, m2 = np.sqrt(complex(eps_core)), np.sqrt(complex(eps_shell))
    x = k * r_out
    total = 0j
    sca = 0.0
    for n in _orders(abs(m2) * x + abs(m1) * k * r_core):
        a = _coefficient(n, k, m1, m2, r_core, r_out)
        weight = 1 if n == 0 else 2
        total += weight * a
        sca += weight * abs(a) ** 2
    ext, sca = 2 / x * total.real * 2 * r_out, 2 / x * sca * 2 * r_out
    return {"ext": ext, "sca": sca, "abs": ext - sca}


def _coefficient(n: int, k: float, m1: complex, m2: complex, a: float, b: float) -> complex:
    """a_n from the four interface conditions. Unknowns: core J (c), shell J (d) and H
    (e), scattered (s); the incident order's amplitude i^n divides out."""
    z1a, z2a, z2b, z0b = m1 * k * a, m2 * k * a, m2 * k * b, k * b
    rows = np.array(
        [
            # r = a: H_z, then E_phi
            [jv(n, z1a), -jv(n, z2a), -hankel1(n, z2a), 0],
            [jvp(n, z1a) / m1, -jvp(n, z2a) / m2, -h1vp(n, z2a) / m2, 0],
            # r = b: shell against host (incident J_n, scattered -s H_n)
            [0, jv(n, z2b), hankel1(n, z2b), hankel1(n, z0b)],
            [0, jvp(n, z2b) / m2, h1vp(n, z2b) / m2, h1vp(n, z0b)],
        ],
        complex,
    )
    rhs = np.array([0, 0, jv(n, z0b), jvp(n, z0b)], complex)
    return complex(np.linalg.solve(rows, rhs)[3])


def bare_cylinder_te(eps: complex, radius: float, wavelength: float) -> dict:
    """Bohren & Huffman's closed form for a bare cylinder (case II), the check on the
    coated series in its limits."""
    k = 2 * np.pi / wavelength
    m, x = np.sqrt(complex(eps)), k * radius
    n = _orders(abs(m) * x)
    mx = m * x
    num = m * jv(n, mx) * jvp(n, x) - jv(n, x) * jvp(n, mx)
    den = m * jv(n, mx) * h1vp(n, x) - hankel1(n, x) * jvp(n, mx)
    a = num / den
    w = np.where(n == 0, 1, 2)
    ext = 2 / x * float(np.sum(w * a).real) * 2 * radius
    sca = 2 / x * float(np.sum(w * abs(a) ** 2)) * 2 * radius
    return {"ext": ext, "sca": sca, "abs": ext - sca}
