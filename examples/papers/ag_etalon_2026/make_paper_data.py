"""Generate the figures and digitized curves of the ag_etalon_2026 example paper.

The paper is original (written for ReproLab's tests and demo); its "measured" curves are
computed here with numpy only, independently of Meep and of any FDTD method:

* Fig. 1 -- relative permittivity of silver from the Lorentz-Drude model of Rakic et al.,
  Appl. Opt. 37, 5271 (1998), evaluated from the published parameters (in eV), real
  part on the left axis and imaginary part on the right axis.
* Fig. 2 -- T and R of a free-standing Ag (30 nm) / SiO2 (180 nm, n = 1.45) / Ag (30 nm)
  etalon at normal incidence, by the transfer-matrix (characteristic-matrix) method.
* Fig. 3 -- its absorptance A = 1 - R - T (same method); the paper gives no digitized
  data for it (the reproduction compares it by eye: a qualitative figure).
* Fig. 4 -- a field map: |E(z)|^2 / |E0|^2 across the etalon (z from -200 to 200 nm about
  its centre) versus wavelength, from the same characteristic matrices (the field in
  each layer from the one above it); an image only, compared by eye.

Air on both sides, normal incidence, exp(-i omega t) convention (k > 0 absorbs).

Usage:  python make_paper_data.py   (writes data/*.csv and figures/*.png next to this file)
"""

from pathlib import Path

import numpy as np

HC_EV_UM = 1.23984193  # photon energy (eV) x wavelength (um)

# Rakic et al. (1998), silver, Lorentz-Drude: plasma energy, then per oscillator
# (strength f_j, resonance E_j, damping Gamma_j), all in eV; j = 0 is the Drude term.
AG_PLASMA_EV = 9.01
AG_F = (0.845, 0.065, 0.124, 0.011, 0.840, 5.646)
AG_E_EV = (0.0, 0.816, 4.481, 8.185, 9.083, 20.29)
AG_GAMMA_EV = (0.048, 3.886, 0.452, 0.065, 0.916, 2.419)

METAL_UM = 0.030  # each silver film
SPACER_UM = 0.180  # SiO2 spacer
N_SPACER = 1.45  # non-dispersive, lossless

FIG1_BAND_EV = (1.40, 3.00)
SPECTRUM_BAND_NM = (450.0, 900.0)


def eps_silver(energy_ev):
    """Complex relative permittivity of Ag (Rakic 1998 Lorentz-Drude), Im > 0 absorbs."""
    e = np.asarray(energy_ev, dtype=float)
    wp2 = AG_PLASMA_EV**2
    eps = 1.0 - AG_F[0] * wp2 / (e * (e + 1j * AG_GAMMA_EV[0]))
    for f, ej, g in zip(AG_F[1:], AG_E_EV[1:], AG_GAMMA_EV[1:], strict=True):
        eps = eps + f * wp2 / (ej**2 - e**2 - 1j * e * g)
    return eps


def n_silver(wavelength_um):
    """Complex index n + ik of Ag (principal square root: k > 0)."""
    return np.sqrt(eps_silver(HC_EV_UM / np.asarray(wavelength_um, dtype=float)))


def transfer_matrix_RT(indices, thicknesses_um, wavelength_um):
    """(T, R) of a multilayer in air at normal incidence (characteristic matrices, Born &
    Wolf sign convention, valid for absorbing layers with n + ik, k > 0)."""
    lam = np.asarray(wavelength_um, dtype=float)
    k0 = 2.0 * np.pi / lam
    m11 = np.ones_like(lam, dtype=complex)
    m12 = np.zeros_like(lam, dtype=complex)
    m21 = np.zeros_like(lam, dtype=complex)
    m22 = np.ones_like(lam, dtype=complex)
    for n_layer, d in zip(indices, thicknesses_um, strict=True):
        n_layer = np.asarray(n_layer, dtype=complex) * np.ones_like(lam)
        phi = k0 * n_layer * d
        a11, a12 = np.cos(phi), -1j * np.sin(phi) / n_layer
        a21, a22 = -1j * n_layer * np.sin(phi), np.cos(phi)
        m11, m12, m21, m22 = (
            m11 * a11 + m12 * a21,
            m11 * a12 + m12 * a22,
            m21 * a11 + m22 * a21,
            m21 * a12 + m22 * a22,
        )
    denom = m11 + m12 + m21 + m22
    r = (m11 + m12 - m21 - m22) / denom
    t = 2.0 / denom
    return np.abs(t) ** 2, np.abs(r) ** 2


def etalon_RTA(wavelength_um):
    """(T, R, A) of the Ag/SiO2/Ag etalon."""
    n_ag = n_silver(wavelength_um)
    trans, refl = transfer_matrix_RT(
        [n_ag, N_SPACER, n_ag], [METAL_UM, SPACER_UM, METAL_UM], wavelength_um
    )
    return trans, refl, 1.0 - trans - refl


def _layer_matrix(n, k0, d, sign=-1):
    """Characteristic matrix of a layer of thickness d (sign=+1: its inverse)."""
    phi = k0 * n * d
    return np.array(
        [[np.cos(phi), sign * 1j * np.sin(phi) / n], [sign * 1j * n * np.sin(phi), np.cos(phi)]]
    )


def etalon_field(wavelength_um, z_um):
    """|E(z)|^2 / |E0|^2 at one wavelength, z measured from the etalon's centre: (E, H)
    at the front face are (1 + r, 1 - r) and are carried into each layer by the inverse
    characteristic matrix; behind the etalon E = t exp(i k0 z)."""
    k0 = 2.0 * np.pi / wavelength_um
    n_ag = complex(n_silver(wavelength_um))
    layers = [(n_ag, METAL_UM), (N_SPACER, SPACER_UM), (n_ag, METAL_UM)]
    total = np.eye(2, dtype=complex)
    for n, d in layers:
        total = total @ _layer_matrix(n, k0, d)
    denom = total.sum()
    r = (total[0, 0] + total[0, 1] - total[1, 0] - total[1, 1]) / denom
    t = 2.0 / denom
    faces = np.concatenate([[0.0], np.cumsum([d for _, d in layers])]) - 0.5 * (
        2 * METAL_UM + SPACER_UM
    )
    out = np.empty(len(z_um))
    for j, z in enumerate(z_um):
        if z < faces[0]:
            e = np.exp(1j * k0 * (z - faces[0])) + r * np.exp(-1j * k0 * (z - faces[0]))
        elif z >= faces[-1]:
            e = t * np.exp(1j * k0 * (z - faces[-1]))
        else:
            eh = np.array([1.0 + r, 1.0 - r])
            for (n, d), face in zip(layers, faces[:-1], strict=True):
                eh = _layer_matrix(n, k0, min(z - face, d), sign=1) @ eh
                if z - face <= d:
                    break
            e = eh[0]
        out[j] = abs(e) ** 2
    return out


def _write(path, header, *columns, decimals=(2, 5)):
    with open(path, "w") as fh:
        fh.write(header + "\n")
        for row in zip(*columns, strict=True):
            fh.write(",".join(f"{v:.{decimals[i > 0]}f}" for i, v in enumerate(row)) + "\n")


def _style(ax, xlabel, ylabel):
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, alpha=0.3)
    ax.tick_params(direction="in", top=True)


def key_numbers():
    """The headline numbers the paper's text states (from a dense grid)."""
    lam = np.linspace(0.45, 0.90, 45001)
    trans, refl, absorb = etalon_RTA(lam)
    i, j = int(np.argmax(trans)), int(np.argmin(refl))
    return {
        "T_peak_nm": 1e3 * lam[i],
        "T_peak": trans[i],
        "R_min_nm": 1e3 * lam[j],
        "A_peak": absorb.max(),
        "A_at_T_peak": absorb[i],
    }


def main():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    here = Path(__file__).resolve().parent
    data_dir, fig_dir = here / "data", here / "figures"
    data_dir.mkdir(exist_ok=True)
    fig_dir.mkdir(exist_ok=True)
    plt.rcParams.update({"font.size": 11, "figure.dpi": 100})

    # Fig. 1: permittivity of silver versus photon energy, two y axes
    e_dig = np.round(np.linspace(*FIG1_BAND_EV, 81), 3)  # 0.02 eV step
    eps = eps_silver(e_dig)
    _write(data_dir / "fig1_eps_re.csv", "energy_eV,eps_re", e_dig, eps.real, decimals=(3, 4))
    _write(data_dir / "fig1_eps_im.csv", "energy_eV,eps_im", e_dig, eps.imag, decimals=(3, 4))
    e_den = np.linspace(*FIG1_BAND_EV, 801)
    eps_den = eps_silver(e_den)
    fig, ax = plt.subplots(figsize=(5.2, 3.6))
    ax.plot(e_den, eps_den.real, "k-", label="Re ε")
    _style(ax, "Photon energy (eV)", "Re ε")
    ax2 = ax.twinx()
    ax2.plot(e_den, eps_den.imag, "r--", label="Im ε")
    ax2.set_ylabel("Im ε", color="r")
    ax2.tick_params(direction="in", colors="r")
    lines = ax.get_lines() + ax2.get_lines()
    ax.legend(lines, [ln.get_label() for ln in lines], frameon=False, loc="center right")
    ax.set_title("Silver, Lorentz-Drude model (Rakić 1998)")
    fig.tight_layout()
    fig.savefig(fig_dir / "fig1.png", dpi=100)
    plt.close(fig)

    # Fig. 2 and 3: the etalon, transfer matrix
    nm_dig = np.linspace(*SPECTRUM_BAND_NM, 91)  # 5 nm step
    t_dig, r_dig, _ = etalon_RTA(nm_dig / 1e3)
    _write(data_dir / "fig2_T.csv", "wavelength_nm,T", nm_dig, t_dig, decimals=(1, 5))
    _write(data_dir / "fig2_R.csv", "wavelength_nm,R", nm_dig, r_dig, decimals=(1, 5))
    nm_den = np.linspace(*SPECTRUM_BAND_NM, 1801)
    t_den, r_den, a_den = etalon_RTA(nm_den / 1e3)
    fig, ax = plt.subplots(figsize=(5.2, 3.6))
    ax.plot(nm_den, t_den, "b-", label="T")
    ax.plot(nm_den, r_den, "r--", label="R")
    _style(ax, "Wavelength (nm)", "Transmittance, reflectance")
    ax.set_ylim(-0.02, 1.02)
    ax.set_title("Ag 30 nm / SiO$_2$ 180 nm / Ag 30 nm")
    ax.legend(frameon=False, loc="center right")
    fig.tight_layout()
    fig.savefig(fig_dir / "fig2.png", dpi=100)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(5.2, 3.6))
    ax.plot(nm_den, a_den, "g-", label="A = 1 − R − T")
    _style(ax, "Wavelength (nm)", "Absorptance A")
    ax.set_ylim(-0.02, 0.62)
    ax.set_title("Absorptance of the etalon")
    ax.legend(frameon=False, loc="upper right")
    fig.tight_layout()
    fig.savefig(fig_dir / "fig3.png", dpi=100)
    plt.close(fig)

    # Fig. 4: field map across the etalon (image only)
    z_nm = np.linspace(-200.0, 200.0, 401)
    lam_nm = np.linspace(*SPECTRUM_BAND_NM, 226)
    e2 = np.array([etalon_field(lam / 1e3, z_nm / 1e3) for lam in lam_nm])
    fig, ax = plt.subplots(figsize=(5.2, 3.6))
    mesh = ax.pcolormesh(z_nm, lam_nm, e2, shading="auto", cmap="inferno", vmin=0.0, vmax=10.0)
    fig.colorbar(mesh, ax=ax, label="|E|²/|E₀|²")
    for face in (-120, -90, 90, 120):
        ax.axvline(face, color="w", lw=0.6, ls=":")
    ax.set_xlabel("Position z (nm)")
    ax.set_ylabel("Wavelength (nm)")
    ax.set_title("Field intensity across the etalon")
    fig.tight_layout()
    fig.savefig(fig_dir / "fig4.png", dpi=100)
    plt.close(fig)
    j, i = np.unravel_index(int(np.argmax(e2)), e2.shape)
    print(f"fig4: max |E|^2/|E0|^2 = {e2[j, i]:.3f} at z = {z_nm[i]:.0f} nm, {lam_nm[j]:.0f} nm")

    print("key numbers:", {k: round(float(v), 4) for k, v in key_numbers().items()})


if __name__ == "__main__":
    main()
