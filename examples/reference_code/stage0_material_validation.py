"""Stage 0 (material validation): complex refractive index of Meep's fused-silica model.

Evaluates the permittivity of meep.materials.fused_quartz (Lorentz-oscillator fit of the
Malitson 1965 Sellmeier formula, valid 0.21-6.7 um) at wavelengths 0.40-1.00 um and
converts it to n + i k. No time stepping is needed: Medium.epsilon(f) returns the
frequency-domain permittivity tensor of the dispersive model.

Units: a = 1 um, so frequency f = 1 / wavelength[um].

Outputs (current directory): material_fused_silica.csv (wavelength_um,n,k),
material_fused_silica.png
"""

import numpy as np
import meep as mp
from meep.materials import fused_quartz

# --- parameters ------------------------------------------------------------
WL_MIN_UM, WL_MAX_UM = 0.40, 1.00
NUM_WAVELENGTHS = 121                 # 0.005 um step
LAMBDA0_UM = 0.65                     # design wavelength used in later stages

wavelengths_um = np.linspace(WL_MIN_UM, WL_MAX_UM, NUM_WAVELENGTHS)
freqs = 1.0 / wavelengths_um

# the requested band must lie inside the model's range of validity
valid = fused_quartz.valid_freq_range
assert valid.min <= freqs.min() and freqs.max() <= valid.max, "band outside model range"

# --- evaluate the dispersive permittivity (3x3 tensor; isotropic -> xx component) ---
eps_xx = np.array([complex(fused_quartz.epsilon(f)[0, 0]) for f in freqs])
n_complex = np.sqrt(eps_xx)
n = n_complex.real
k = n_complex.imag

# --- post-processing -------------------------------------------------------
if mp.am_master():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    np.savetxt("material_fused_silica.csv", np.column_stack([wavelengths_um, n, k]),
               delimiter=",", header="wavelength_um,n,k", comments="", fmt="%.6f")

    fig, ax = plt.subplots(figsize=(5.0, 3.6))
    ax.plot(wavelengths_um, n, "k-", label="n")
    ax.set_xlabel("Wavelength (µm)")
    ax.set_ylabel("Refractive index n")
    ax2 = ax.twinx()
    ax2.plot(wavelengths_um, k, "r--", label="k")
    ax2.set_ylabel("Extinction coefficient k", color="r")
    ax2.set_ylim(-1e-3, 1e-2)
    ax.set_title("Meep fused_quartz model")
    lines = ax.get_lines() + ax2.get_lines()
    ax.legend(lines, [ln.get_label() for ln in lines], frameon=False, loc="upper right")
    fig.tight_layout()
    fig.savefig("material_fused_silica.png", dpi=100)
    plt.close(fig)

    n0 = float(np.sqrt(complex(fused_quartz.epsilon(1.0 / LAMBDA0_UM)[0, 0])).real)
    print(f"stage0: n(0.40 um)={n[0]:.5f} n(1.00 um)={n[-1]:.5f} n({LAMBDA0_UM} um)={n0:.5f}")
    print(f"stage0: max k={k.max():.2e}")
