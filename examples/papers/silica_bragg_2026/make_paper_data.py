"""Generate the figures and digitized curves of the silica_bragg_2026 example paper.

All data are computed from closed-form / semi-analytic references with numpy only
(no Meep), so that they are independent of any FDTD reproduction:

* Fig. 1 -- refractive index of fused silica, Malitson (1965) Sellmeier formula.
* Fig. 2 -- T and R of a free-standing Ta2O5 slab (n = 2.10, d = 0.80 um), Airy formula.
* Fig. 3 -- R of a free-standing quarter-wave Bragg mirror (HL)^6 H, transfer matrix,
  with the dispersive silica index n_L(lambda).
* Fig. 4 -- R at the design wavelength of (HL)^N H versus N = 1..8, transfer matrix.

All spectra are for normal incidence from air, with air on the exit side.
Lengths are in micrometres.

Usage:  python make_paper_data.py   (writes data/*.csv and figures/*.png next to this file)

The analytic functions (sellmeier_n, airy_slab, transfer_matrix_RT, bragg_stack) can be
imported without side effects.
"""

from pathlib import Path

import numpy as np

# ---------------------------------------------------------------------------
# Paper parameters (lengths in um)
# ---------------------------------------------------------------------------
N_H = 2.10  # Ta2O5, modelled as non-dispersive
SLAB_THICKNESS_UM = 0.80  # free-standing Ta2O5 slab of Fig. 2
LAMBDA0_UM = 0.65  # Bragg design wavelength
NUM_PAIRS = 6  # (HL)^N H with N = 6 in Fig. 3
PAIRS_SWEEP = np.arange(1, 9)  # N = 1..8 in Fig. 4

FIG1_BAND_UM = (0.40, 1.00)
SPECTRUM_BAND_UM = (0.45, 0.95)

# Malitson (1965) Sellmeier coefficients for fused silica, lambda in um
SELLMEIER_B = (0.6961663, 0.4079426, 0.8974794)
SELLMEIER_C_UM = (0.0684043, 0.1162414, 9.896161)


def sellmeier_n(wavelength_um):
    """Refractive index of fused silica (Malitson 1965), valid 0.21-6.7 um."""
    lam2 = np.asarray(wavelength_um, dtype=float) ** 2
    n2 = 1.0
    for b, c in zip(SELLMEIER_B, SELLMEIER_C_UM, strict=True):
        n2 = n2 + b * lam2 / (lam2 - c**2)
    return np.sqrt(n2)


def airy_slab(n, d_um, wavelength_um, n_out=1.0):
    """(T, R) of a free-standing lossless slab of index n and thickness d (Airy formula).

    The slab is surrounded by a medium of index n_out on both sides; normal incidence.
    """
    lam = np.asarray(wavelength_um, dtype=float)
    r = (n_out - n) / (n_out + n)
    big_r = r**2  # single-interface reflectance
    delta = 4.0 * np.pi * n * d_um / lam  # round-trip phase
    coef_f = 4.0 * big_r / (1.0 - big_r) ** 2  # coefficient of finesse
    trans = 1.0 / (1.0 + coef_f * np.sin(delta / 2.0) ** 2)
    return trans, 1.0 - trans


def transfer_matrix_RT(indices, thicknesses_um, wavelength_um, n_in=1.0, n_out=1.0):
    """(T, R) of a lossless or lossy multilayer at normal incidence (characteristic matrices).

    indices: sequence of layer indices; each entry is a scalar or an array broadcastable
    to wavelength_um (for dispersive layers). thicknesses_um: matching layer thicknesses.
    """
    lam = np.asarray(wavelength_um, dtype=float)
    k0 = 2.0 * np.pi / lam
    m11 = np.ones_like(lam, dtype=complex)
    m12 = np.zeros_like(lam, dtype=complex)
    m21 = np.zeros_like(lam, dtype=complex)
    m22 = np.ones_like(lam, dtype=complex)
    for n_layer, d in zip(indices, thicknesses_um, strict=True):
        n_layer = np.asarray(n_layer, dtype=complex) * np.ones_like(lam)
        phi = k0 * n_layer * d
        a11, a12 = np.cos(phi), 1j * np.sin(phi) / n_layer
        a21, a22 = 1j * n_layer * np.sin(phi), np.cos(phi)
        m11, m12, m21, m22 = (
            m11 * a11 + m12 * a21,
            m11 * a12 + m12 * a22,
            m21 * a11 + m22 * a21,
            m21 * a12 + m22 * a22,
        )
    denom = n_in * m11 + n_in * n_out * m12 + m21 + n_out * m22
    r = (n_in * m11 + n_in * n_out * m12 - m21 - n_out * m22) / denom
    t = 2.0 * n_in / denom
    return np.real(n_out / n_in) * np.abs(t) ** 2, np.abs(r) ** 2


def bragg_stack(num_pairs, wavelength_um, lambda0_um=LAMBDA0_UM, n_h=N_H):
    """Layer indices/thicknesses of the quarter-wave stack (HL)^N H at the given wavelengths."""
    n_l = sellmeier_n(wavelength_um)
    d_h = lambda0_um / (4.0 * n_h)
    d_l = lambda0_um / (4.0 * float(sellmeier_n(lambda0_um)))
    indices, thicknesses = [], []
    for _ in range(num_pairs):
        indices += [n_h, n_l]
        thicknesses += [d_h, d_l]
    indices.append(n_h)
    thicknesses.append(d_h)
    return indices, thicknesses


def bragg_RT(num_pairs, wavelength_um):
    """(T, R) of the free-standing (HL)^N H mirror."""
    idx, thk = bragg_stack(num_pairs, wavelength_um)
    return transfer_matrix_RT(idx, thk, wavelength_um)


# ---------------------------------------------------------------------------
# Writing helpers
# ---------------------------------------------------------------------------
def _write_xy(path, x, y, header, x_decimals=4):
    """Header names both columns with units (docs/paper-format.md)."""
    with open(path, "w") as fh:
        fh.write(header + "\n")
        for xi, yi in zip(x, y, strict=True):
            fh.write(f"{xi:.{x_decimals}f},{yi:.4f}\n")


def _style(ax, xlabel, ylabel):
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, alpha=0.3)
    ax.tick_params(direction="in", top=True, right=True)


def main():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    here = Path(__file__).resolve().parent
    data_dir, fig_dir = here / "data", here / "figures"
    data_dir.mkdir(exist_ok=True)
    fig_dir.mkdir(exist_ok=True)
    plt.rcParams.update({"font.size": 11, "figure.dpi": 100})

    # Dense grids for the plotted curves, coarser grids for the digitized CSVs.
    lam_fig1 = np.round(np.linspace(*FIG1_BAND_UM, 61), 4)  # 0.01 um step
    lam_spec = np.round(np.linspace(*SPECTRUM_BAND_UM, 101), 4)  # 0.005 um step
    lam_dense1 = np.linspace(*FIG1_BAND_UM, 1201)
    lam_dense = np.linspace(*SPECTRUM_BAND_UM, 2001)

    # Fig. 1: Sellmeier index of fused silica
    _write_xy(data_dir / "fig1_n.csv", lam_fig1, sellmeier_n(lam_fig1), "wavelength_um,n")
    fig, ax = plt.subplots(figsize=(5.0, 3.6))
    ax.plot(lam_dense1, sellmeier_n(lam_dense1), "k-", label="n (Sellmeier)")
    _style(ax, "Wavelength (µm)", "Refractive index n")
    ax.set_title("Fused silica (Malitson 1965)")
    ax.legend(frameon=False)
    fig.tight_layout()
    fig.savefig(fig_dir / "fig1.png", dpi=100)
    plt.close(fig)

    # Fig. 2: Ta2O5 slab, Airy formula
    t_dig, r_dig = airy_slab(N_H, SLAB_THICKNESS_UM, lam_spec)
    _write_xy(data_dir / "fig2_T.csv", lam_spec, t_dig, "wavelength_um,T")
    _write_xy(data_dir / "fig2_R.csv", lam_spec, r_dig, "wavelength_um,R")
    t_den, r_den = airy_slab(N_H, SLAB_THICKNESS_UM, lam_dense)
    fig, ax = plt.subplots(figsize=(5.0, 3.6))
    ax.plot(lam_dense, t_den, "b-", label="T")
    ax.plot(lam_dense, r_den, "r--", label="R")
    _style(ax, "Wavelength (µm)", "Transmittance, reflectance")
    ax.set_ylim(-0.02, 1.02)
    ax.set_title(f"Ta$_2$O$_5$ slab, d = {SLAB_THICKNESS_UM:.2f} µm")
    ax.legend(frameon=False, loc="center right")
    fig.tight_layout()
    fig.savefig(fig_dir / "fig2.png", dpi=100)
    plt.close(fig)

    # Fig. 3: (HL)^6 H Bragg mirror, transfer matrix
    _, r_dig = bragg_RT(NUM_PAIRS, lam_spec)
    _write_xy(data_dir / "fig3_R.csv", lam_spec, r_dig, "wavelength_um,R")
    _, r_den = bragg_RT(NUM_PAIRS, lam_dense)
    fig, ax = plt.subplots(figsize=(5.0, 3.6))
    ax.plot(lam_dense, r_den, "r-", label="R")
    ax.axvline(LAMBDA0_UM, color="0.5", lw=0.8, ls=":")
    _style(ax, "Wavelength (µm)", "Reflectance R")
    ax.set_ylim(-0.02, 1.02)
    ax.set_title(f"(HL)$^{{{NUM_PAIRS}}}$H mirror, λ$_0$ = {LAMBDA0_UM:.2f} µm")
    ax.legend(frameon=False, loc="upper right")
    fig.tight_layout()
    fig.savefig(fig_dir / "fig3.png", dpi=100)
    plt.close(fig)

    # Fig. 4: R(lambda0) versus number of pairs
    r_peak = np.array([bragg_RT(int(n), np.array([LAMBDA0_UM]))[1][0] for n in PAIRS_SWEEP])
    _write_xy(data_dir / "fig4_Rpeak.csv", PAIRS_SWEEP, r_peak, "num_pairs,R", x_decimals=0)
    fig, ax = plt.subplots(figsize=(5.0, 3.6))
    ax.plot(PAIRS_SWEEP, r_peak, "ko-", label="R at λ$_0$")
    _style(ax, "Number of pairs N", "Reflectance R at λ$_0$")
    ax.set_ylim(0.0, 1.02)
    ax.set_xticks(PAIRS_SWEEP)
    ax.set_title(f"(HL)$^N$H mirror, λ$_0$ = {LAMBDA0_UM:.2f} µm")
    ax.legend(frameon=False, loc="lower right")
    fig.tight_layout()
    fig.savefig(fig_dir / "fig4.png", dpi=100)
    plt.close(fig)

    print(
        "wrote",
        sorted(p.name for p in data_dir.glob("*.csv")),
        sorted(p.name for p in fig_dir.glob("*.png")),
    )


if __name__ == "__main__":
    main()
