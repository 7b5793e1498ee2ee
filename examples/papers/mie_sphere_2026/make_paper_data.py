"""Generate the scattering efficiency, its digitized data and the figure of the
mie_sphere_2026 example paper.

The paper is original (written for ReproLab's tests and gallery). Its curve is the Mie
series for a homogeneous sphere (Bohren & Huffman, Absorption and Scattering of Light
by Small Particles, ch. 4), computed here with scipy's spherical Bessel functions,
independently of Meep. For relative index m and size parameter x = 2πr/λ,

    a_n = (m ψ_n(mx) ψ_n'(x) - ψ_n(x) ψ_n'(mx)) / (m ψ_n(mx) ξ_n'(x) - ξ_n(x) ψ_n'(mx))
    b_n = (ψ_n(mx) ψ_n'(x) - m ψ_n(x) ψ_n'(mx)) / (ψ_n(mx) ξ_n'(x) - m ξ_n(x) ψ_n'(mx))

with the Riccati-Bessel functions ψ_n(z) = z j_n(z) and ξ_n(z) = z h_n^(1)(z), and

    Q_sca = (2 / x²) Σ (2n + 1)(|a_n|² + |b_n|²),   Q_ext = (2 / x²) Σ (2n + 1) Re(a_n + b_n),

summed to n = x + 4 x^(1/3) + 2 (Wiscombe's criterion). The sphere: n = 1.5, lossless,
r = 0.5 µm, in vacuum; x from 0.6 to 2.5 every 0.05.

Run: python make_paper_data.py (writes data/ and figures/fig1.png).
"""

from pathlib import Path

import numpy as np
from scipy.special import spherical_jn, spherical_yn

HERE = Path(__file__).parent
INDEX, X_MIN, X_MAX, X_STEP = 1.5, 0.6, 2.5, 0.05


def mie_efficiencies(m: complex, x: float) -> tuple[float, float]:
    """(Q_sca, Q_ext) of a sphere of relative index `m` (n + ik) and size parameter x."""
    n = np.arange(1, int(np.ceil(x + 4 * x ** (1 / 3) + 2)) + 1)
    mx = m * x
    jx, djx = spherical_jn(n, x), spherical_jn(n, x, derivative=True)
    yx, dyx = spherical_yn(n, x), spherical_yn(n, x, derivative=True)
    jm, djm = spherical_jn(n, mx), spherical_jn(n, mx, derivative=True)
    psi, dpsi = x * jx, jx + x * djx
    xi, dxi = x * (jx + 1j * yx), (jx + 1j * yx) + x * (djx + 1j * dyx)
    psi_m, dpsi_m = mx * jm, jm + mx * djm
    a = (m * psi_m * dpsi - psi * dpsi_m) / (m * psi_m * dxi - xi * dpsi_m)
    b = (psi_m * dpsi - m * psi * dpsi_m) / (psi_m * dxi - m * xi * dpsi_m)
    q_sca = 2 / x**2 * float(np.sum((2 * n + 1) * (abs(a) ** 2 + abs(b) ** 2)))
    q_ext = 2 / x**2 * float(np.sum((2 * n + 1) * (a + b).real))
    return q_sca, q_ext


def main() -> None:
    xs = np.round(np.arange(X_MIN, X_MAX + X_STEP / 2, X_STEP), 10)
    q = [mie_efficiencies(INDEX, float(x))[0] for x in xs]
    rows = "\n".join(f"{x:g},{v:.6f}" for x, v in zip(xs, q, strict=True))
    (HERE / "data" / "fig1_qsca.csv").write_text("size_parameter,Q_sca\n" + rows + "\n")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fine = np.linspace(X_MIN, X_MAX, 201)
    fig, ax = plt.subplots(figsize=(4.5, 3.2), dpi=100)
    ax.plot(fine, [mie_efficiencies(INDEX, float(x))[0] for x in fine], "k-", lw=1.2)
    ax.set_xlabel("size parameter x = 2πr/λ")
    ax.set_ylabel("Q_sca")
    ax.set_xlim(X_MIN, X_MAX)
    ax.set_ylim(0, 3)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(HERE / "figures" / "fig1.png")


if __name__ == "__main__":
    main()
