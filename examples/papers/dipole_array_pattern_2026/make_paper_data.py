"""Generate the radiation pattern, its digitized data and the figure of the
dipole_array_pattern_2026 example paper.

The paper is original (written for ReproLab's tests and demo). Its pattern is the
analytic array factor, computed here with numpy only, independently of Meep: N = 3
in-phase line currents along z at x = -d, 0, d with d = 2λ/3 radiate in the xy plane

    P(θ) / P_max = [sin(N ψ / 2) / (N sin(ψ / 2))]²,   ψ = 2π (d / λ) sin θ,

θ measured from +y (broadside) towards +x. One line current radiates the same power in
every direction of the plane, so the array factor is the whole pattern. Main lobes at
0° and 180°, nulls where N ψ / 2 is a multiple of π (sin θ = 1/2, 1: θ = ±30°, ±90°,
±150°), side lobes at ψ = π (sin θ = 3/4: θ = ±48.59°, ±131.41°) at -9.54 dB. The
figure plots 10 log10(P / P_max) with its radial axis down to -30 dB (lower values
are drawn at -30 dB), sampled every 2° from -180° to 178°.

Run: python make_paper_data.py (writes data/ and figures/fig1.png).
"""

from pathlib import Path

import numpy as np

HERE = Path(__file__).parent
N, D_OVER_LAMBDA, FLOOR_DB = 3, 2 / 3, -30.0


def pattern_db(theta_deg: np.ndarray) -> np.ndarray:
    psi = 2 * np.pi * D_OVER_LAMBDA * np.sin(np.radians(theta_deg))
    half = np.sin(psi / 2)
    safe = np.where(np.abs(half) < 1e-12, 1.0, half)
    ratio = np.where(np.abs(half) < 1e-12, 1.0, np.sin(N * psi / 2) / (N * safe))
    return np.maximum(10 * np.log10(np.maximum(ratio**2, 1e-30)), FLOOR_DB)


def main() -> None:
    theta = np.arange(-180.0, 180.0, 2.0)
    db = pattern_db(theta)
    rows = "\n".join(f"{t:g},{v:.4f}" for t, v in zip(theta, db, strict=True))
    for name in ("fig1_pattern.csv", "fig1_array_factor.csv"):
        (HERE / "data" / name).write_text("angle_deg,P_dB\n" + rows + "\n")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(4, 4), dpi=100, subplot_kw={"projection": "polar"})
    ax.set_theta_zero_location("N")
    ax.set_theta_direction(-1)
    fine = np.arange(-180.0, 180.5, 0.5)
    ax.plot(np.radians(fine), pattern_db(fine), "k-", lw=1.2)
    ax.set_rmin(FLOOR_DB)
    ax.set_title("P(θ)/P_max (dB)", fontsize=9)
    fig.tight_layout()
    fig.savefig(HERE / "figures" / "fig1.png")


if __name__ == "__main__":
    main()
