"""Generate the Purcell factors, their digitized data and the figure of the
purcell_mirrors_2026 example paper.

The paper is original (written for ReproLab's tests and demo). Its numbers are
analytic, computed here with numpy and scipy only, independently of any time-domain
method, in two independent ways.

Structure: a line current J = δ(x) δ(y − y0) along z (2D TM, E = Ez) between two
perfect-electric-conductor plates y = 0 and y = L, open along x, vacuum, wavenumber
k = 2π/λ. The power a line current radiates is proportional to Im G(r0, r0), G the
Green's function of (∇² + k²) G = −δ(r − r0) with the boundary conditions.

Mode sum (the paper's reference curve). Ez = 0 on both plates, so G expands in the
plates' modes φ_n(y) = sqrt(2/L) sin(nπy/L) (orthonormal on 0 < y < L), each solving a
1D Helmholtz equation along x with k_n = sqrt(k² − (nπ/L)²):

    G = Σ_n φ_n(y) φ_n(y0) · i exp(i k_n |x|) / (2 k_n).

A mode below cutoff (nπ/L > k) has an imaginary k_n and adds nothing to Im G, so
Im G(r0, r0) = Σ_{nπ/L < k} φ_n(y0)² / (2 k_n). In free 2D space G = (i/4) H0(k r)
and Im G(r0, r0) = 1/4. The Purcell factor, the ratio of the two, is

    F = Σ_{n: nπ/L < k} (4 / (k L)) sin²(nπ y0 / L) / sqrt(1 − (nπ / (k L))²).

At the mid-plane y0 = L/2, sin² is 1 for odd n and 0 for even n; with kL = 2π L/λ:

    F(L/λ) = (2/π)(λ/L) Σ_{odd n < 2L/λ} 1 / sqrt(1 − (n λ / 2L)²).

Checks of the formula: below L/λ = 1/2 no mode propagates and F = 0; at L/λ = n/2
(odd n) mode n reaches cutoff and F diverges as 1/sqrt(L/λ − n/2), integrably; for
L ≫ λ the sum over odd n (step 2 in n, i.e. λ/L in u = nλ/2L) becomes
(L/λ) ∫_0^1 du / sqrt(1 − u²) = (L/λ) π/2, so F → 1: far apart, the mirrors no longer
change the emission on average (each new cutoff still diverges, ever more narrowly:
F = 0.917 at L/λ = 40.3, its mean over 40.5 < L/λ < 41.5 is 1.0001). At L/λ = 1 only
n = 1 propagates: F = (2/π) / sqrt(3/4) = 0.7351.

Images (the paper's result curve). The plates mirror the source at y0 = L/2 into an
infinite row of line currents at y = L/2 + jL with alternating signs (−1)^j (each
reflection in a conductor flips the sign of Ez). Each adds its field at the source,
(−1)^j (i/4) H0(k |j| L), so F = Σ_j (−1)^j J0(2π |j| L/λ) = 1 + 2 Σ_{j≥1} (−1)^j
J0(2π j L/λ). Poisson's summation turns this series into the mode sum, but it converges
slowly (J0 falls as j^{-1/2}); it is summed here with a Gaussian window exp(−(j/M)²),
M = 300 images (the window acts as a loss so small that it changes F by at most 1.1e-4 where
the figure samples it, 0.05 away from the cutoffs). `main` checks that both agree.

Fig. 1 samples F on L/λ = 0.55, 0.60, ..., 1.45 (only mode n = 1 propagates there),
0.05 away from the divergences at 1/2 and 3/2, on a log y axis (the Purcell factor is a
ratio: an enhancement ×2 and an inhibition ×1/2 lie equally far from 1).

Run: python make_paper_data.py (writes data/ and figures/fig1.png).
"""

from pathlib import Path

import numpy as np
from scipy.special import j0

HERE = Path(__file__).parent
X_SAMPLES = np.round(np.arange(0.55, 1.4501, 0.05), 2)
IMAGES = 300


def mode_sum(x: float) -> float:
    """F at L/λ = x from the plates' modes (x > 1/2, away from n/2)."""
    n = np.arange(1, int(np.ceil(2 * x)), 2)
    n = n[n < 2 * x]
    return float(2 / np.pi / x * np.sum(1 / np.sqrt(1 - (n / (2 * x)) ** 2)))


def image_sum(x: float, m: int = IMAGES) -> float:
    """F at L/λ = x from the images of the source, Gaussian-windowed at m images."""
    j = np.arange(1, 8 * m)
    return float(1 + np.sum(2 * (-1.0) ** j * j0(2 * np.pi * j * x) * np.exp(-((j / m) ** 2))))


def main() -> None:
    modes = np.array([mode_sum(x) for x in X_SAMPLES])
    images = np.array([image_sum(x) for x in X_SAMPLES])
    assert np.allclose(images, modes, rtol=1e-3), np.max(np.abs(images / modes - 1))
    assert abs(mode_sum(1.0) - 2 / np.pi / np.sqrt(0.75)) < 1e-12
    far = 40.5 + (np.arange(20000) + 0.5) / 20000  # one period of cutoffs, far apart
    assert abs(np.mean([mode_sum(x) for x in far]) - 1) < 1e-3  # free space on average
    for name, values in (("fig1_images.csv", images), ("fig1_mode_sum.csv", modes)):
        rows = "\n".join(f"{x:.2f},{v:.4f}" for x, v in zip(X_SAMPLES, values, strict=True))
        (HERE / "data" / name).write_text("L/λ,F\n" + rows + "\n")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fine = np.linspace(0.505, 1.495, 400)
    fig, ax = plt.subplots(figsize=(4.5, 3.2), dpi=100)
    ax.semilogy(fine, [mode_sum(x) for x in fine], "k-", lw=1.2, label="mode sum")
    ax.semilogy(X_SAMPLES, images, "o", ms=4, mfc="none", label="images")
    ax.axhline(1.0, color="0.6", lw=0.8, ls=":")
    ax.set_xlim(0.5, 1.5)
    ax.set_ylim(0.3, 10)
    ax.set_xlabel("L/λ")
    ax.set_ylabel("Purcell factor F")
    ax.legend(frameon=False, fontsize=8)
    fig.tight_layout()
    fig.savefig(HERE / "figures" / "fig1.png")


if __name__ == "__main__":
    main()
