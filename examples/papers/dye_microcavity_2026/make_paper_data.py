"""Generate the transmittance, its digitized data and the figure of the
dye_microcavity_2026 example paper.

The paper is original (written for ReproLab's tests and gallery). Its curve is computed
here with numpy only, independently of Meep and of any FDTD method, by the
transfer-matrix (characteristic-matrix) method at normal incidence (Born & Wolf,
Principles of Optics, §1.6), exp(-iωt) convention (k > 0 absorbs):

* silver: the Lorentz-Drude model of Rakic et al., Appl. Opt. 37, 5271 (1998), from its
  published parameters in eV (the model meep.materials.Ag implements);
* the dye layer: one Lorentz oscillator, ε(E) = ε_b + f E0² / (E0² − E² − i γ E), with
  the paper's ε_b = 2.1, E0 = 2.10 eV, γ = 0.10 eV, f = 0.05;
* the stack, in air: Ag 30 nm / dye 145 nm / Ag 30 nm. Without the oscillator (f = 0)
  its first-order mode sits at 2.10 eV, on the dye's resonance: with it, the mode splits
  into a lower and an upper polariton, and the Rabi splitting is the distance between
  the two transmission maxima.

Run: python make_paper_data.py (writes data/ and figures/fig1.png).
"""

from pathlib import Path

import numpy as np

HERE = Path(__file__).parent
HC_EV_UM = 1.23984193  # photon energy (eV) x wavelength (um)

# Rakic et al. (1998), silver, Lorentz-Drude: plasma energy, then per oscillator
# (strength f_j, resonance E_j, damping Gamma_j), all in eV; j = 0 is the Drude term.
AG_PLASMA_EV = 9.01
AG_F = (0.845, 0.065, 0.124, 0.011, 0.840, 5.646)
AG_E_EV = (0.0, 0.816, 4.481, 8.185, 9.083, 20.29)
AG_GAMMA_EV = (0.048, 3.886, 0.452, 0.065, 0.916, 2.419)

DYE_EPS_B, DYE_E0_EV, DYE_GAMMA_EV, DYE_STRENGTH = 2.1, 2.10, 0.10, 0.05
METAL_UM, DYE_UM = 0.030, 0.145
BAND_EV, STEP_EV = (1.60, 2.70), 0.01


def eps_silver(energy_ev):
    """Complex relative permittivity of Ag (Rakic 1998 Lorentz-Drude), Im > 0 absorbs."""
    e = np.asarray(energy_ev, dtype=float)
    wp2 = AG_PLASMA_EV**2
    eps = 1.0 - AG_F[0] * wp2 / (e * (e + 1j * AG_GAMMA_EV[0]))
    for f, ej, g in zip(AG_F[1:], AG_E_EV[1:], AG_GAMMA_EV[1:], strict=True):
        eps = eps + f * wp2 / (ej**2 - e**2 - 1j * e * g)
    return eps


def eps_dye(energy_ev, strength=DYE_STRENGTH):
    """The dye layer's Lorentz oscillator (the paper's parameters), Im > 0 absorbs."""
    e = np.asarray(energy_ev, dtype=float)
    e0 = DYE_E0_EV
    return DYE_EPS_B + strength * e0**2 / (e0**2 - e**2 - 1j * DYE_GAMMA_EV * e)


def transfer_matrix_T(indices, thicknesses_um, wavelength_um):
    """T of a multilayer in air at normal incidence (characteristic matrices, Born &
    Wolf sign convention, valid for absorbing layers with n + ik, k > 0)."""
    lam = np.asarray(wavelength_um, dtype=float)
    k0 = 2.0 * np.pi / lam
    m = [np.ones_like(lam, complex), np.zeros_like(lam, complex)]
    m += [np.zeros_like(lam, complex), np.ones_like(lam, complex)]
    m11, m12, m21, m22 = m
    for n_layer, d in zip(indices, thicknesses_um, strict=True):
        phi = k0 * n_layer * d
        a11, a12 = np.cos(phi), -1j * np.sin(phi) / n_layer
        a21, a22 = -1j * n_layer * np.sin(phi), np.cos(phi)
        m11, m12, m21, m22 = (
            m11 * a11 + m12 * a21,
            m11 * a12 + m12 * a22,
            m21 * a11 + m22 * a21,
            m21 * a12 + m22 * a22,
        )
    t = 2.0 / (m11 + m12 + m21 + m22)
    return np.abs(t) ** 2


def cavity_T(energy_ev, strength=DYE_STRENGTH, dye_um=DYE_UM):
    e = np.asarray(energy_ev, dtype=float)
    n_ag, n_dye = np.sqrt(eps_silver(e)), np.sqrt(eps_dye(e, strength))
    return transfer_matrix_T([n_ag, n_dye, n_ag], [METAL_UM, dye_um, METAL_UM], HC_EV_UM / e)


def polaritons(strength=DYE_STRENGTH, dye_um=DYE_UM) -> tuple[float, float]:
    """(lower, upper) polariton energies in eV: the two transmission maxima (a 0.1 meV
    grid, each refined by a parabola through its three samples)."""
    from scipy.signal import find_peaks

    e = np.arange(BAND_EV[0], BAND_EV[1], 1e-4)
    t = cavity_T(e, strength, dye_um)
    peaks, _ = find_peaks(t)
    lower, upper = sorted(peaks, key=lambda i: -t[i])[:2]
    out = []
    for i in sorted((lower, upper)):
        y0, y1, y2 = t[i - 1 : i + 2]
        out.append(e[i] + 0.5 * 1e-4 * (y0 - y2) / (y0 - 2 * y1 + y2))
    return out[0], out[1]


def main() -> None:
    e = np.round(np.arange(BAND_EV[0], BAND_EV[1] + STEP_EV / 2, STEP_EV), 10)
    t = cavity_T(e)
    rows = "\n".join(f"{x:.2f},{v:.6f}" for x, v in zip(e, t, strict=True))
    (HERE / "data" / "fig1_T.csv").write_text("energy_ev,T\n" + rows + "\n")
    lp, up = polaritons()
    print(f"lower {lp:.4f} eV, upper {up:.4f} eV, Rabi splitting {1000 * (up - lp):.1f} meV")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fine = np.linspace(*BAND_EV, 1101)
    fig, ax = plt.subplots(figsize=(4.5, 3.2), dpi=100)
    ax.plot(fine, cavity_T(fine), "k-", lw=1.2, label="dye-filled cavity")
    ax.plot(fine, cavity_T(fine, 0.0), "k:", lw=1.0, label="without the dye's oscillator")
    ax.set_xlabel("Photon energy (eV)")
    ax.set_ylabel("Transmittance T")
    ax.set_xlim(*BAND_EV)
    ax.legend(frameon=False, fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(HERE / "figures" / "fig1.png")


if __name__ == "__main__":
    main()
