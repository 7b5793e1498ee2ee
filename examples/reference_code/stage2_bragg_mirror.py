"""Stage 2 (ARRAY_SYSTEM): reflectance/transmittance of a quarter-wave Bragg mirror (HL)^N H.

1D FDTD (normal incidence) of a free-standing multilayer in air:
  H = Ta2O5, non-dispersive, n_H = 2.10
  L = fused silica, dispersive (meep.materials.fused_quartz, Malitson Sellmeier fit)
Quarter-wave thicknesses at the design wavelength lambda0 = 0.65 um:
  d_H = lambda0 / (4 n_H),  d_L = lambda0 / (4 n_L(lambda0)),  N = 6 pairs.
A broadband Gaussian pulse is normalised by an empty-cell run; the reflected flux uses
load_minus_flux_data to remove the incident field.

Units: a = 1 um, so frequency f = 1 / wavelength[um].

Outputs (current directory): bragg_spectrum.csv (wavelength_um,T,R), bragg_spectrum.png
"""

import numpy as np
import meep as mp
from meep.materials import fused_quartz

# --- parameters ------------------------------------------------------------
N_H = 2.10
LAMBDA0_UM = 0.65
NUM_PAIRS = 6
WL_MIN_UM, WL_MAX_UM = 0.45, 0.95   # reported band

RESOLUTION_PX_PER_UM = 800           # ~180 px per shortest wavelength in Ta2O5
PML_UM = 1.0                         # > half the longest wavelength in the source band
PAD_UM = 1.0
NFREQ = 501
DECAY_TOL = 1e-9                   # field-decay criterion for stopping
DECAY_DT = 5                       # check interval of the decay criterion

F_MIN, F_MAX = 1.0 / WL_MAX_UM, 1.0 / WL_MIN_UM
FCEN = 0.5 * (F_MIN + F_MAX)
DF_MONITOR = F_MAX - F_MIN
DF_SOURCE = 1.5 * DF_MONITOR         # source band covers the monitor band with margin

# index of fused silica at lambda0 from the Meep material model (eps is a 3x3 tensor)
N_L0 = float(np.sqrt(np.real(fused_quartz.epsilon(1.0 / LAMBDA0_UM)[0, 0])))
D_H_UM = LAMBDA0_UM / (4 * N_H)
D_L_UM = LAMBDA0_UM / (4 * N_L0)
STACK_UM = (NUM_PAIRS + 1) * D_H_UM + NUM_PAIRS * D_L_UM

# --- cell (1D along z) -----------------------------------------------------
SZ_UM = 2 * PML_UM + 4 * PAD_UM + STACK_UM
SZ_UM = np.ceil(SZ_UM * RESOLUTION_PX_PER_UM) / RESOLUTION_PX_PER_UM  # whole pixels
cell = mp.Vector3(0, 0, SZ_UM)
Z_SRC = -0.5 * SZ_UM + PML_UM + 0.5 * PAD_UM
Z_REFL = Z_SRC + 0.5 * PAD_UM
Z_TRAN = 0.5 * SZ_UM - PML_UM - 0.5 * PAD_UM

# --- PML -------------------------------------------------------------------
pml_layers = [mp.PML(PML_UM)]

# --- sources ---------------------------------------------------------------
sources = [
    mp.Source(
        mp.GaussianSource(FCEN, fwidth=DF_SOURCE),
        component=mp.Ex,
        center=mp.Vector3(z=Z_SRC),
    )
]

# --- geometry: (HL)^N H centred at z = 0 ------------------------------------
high = mp.Medium(index=N_H)
layers = [(D_H_UM, high), (D_L_UM, fused_quartz)] * NUM_PAIRS + [(D_H_UM, high)]
geometry = []
z = -0.5 * STACK_UM
for thickness, material in layers:
    geometry.append(
        mp.Block(
            size=mp.Vector3(mp.inf, mp.inf, thickness),
            center=mp.Vector3(z=z + 0.5 * thickness),
            material=material,
        )
    )
    z += thickness


def make_sim(geom):
    return mp.Simulation(
        cell_size=cell,
        boundary_layers=pml_layers,
        geometry=geom,
        sources=sources,
        resolution=RESOLUTION_PX_PER_UM,
        dimensions=1,
    )


def add_monitors(sim):
    refl = sim.add_flux(FCEN, DF_MONITOR, NFREQ, mp.FluxRegion(center=mp.Vector3(z=Z_REFL)))
    tran = sim.add_flux(FCEN, DF_MONITOR, NFREQ, mp.FluxRegion(center=mp.Vector3(z=Z_TRAN)))
    return refl, tran


def run_to_decay(sim):
    # run until |Ex|^2 at the transmission monitor has decayed by DECAY_TOL
    sim.run(until_after_sources=mp.stop_when_fields_decayed(
        DECAY_DT, mp.Ex, mp.Vector3(z=Z_TRAN), DECAY_TOL))


# --- normalisation run (empty cell) ----------------------------------------
sim = make_sim([])
refl, tran = add_monitors(sim)
run_to_decay(sim)
incident_refl_data = sim.get_flux_data(refl)
incident_flux = np.array(mp.get_fluxes(tran))
freqs = np.array(mp.get_flux_freqs(tran))

# --- structure run ---------------------------------------------------------
sim.reset_meep()
sim = make_sim(geometry)
refl, tran = add_monitors(sim)
sim.load_minus_flux_data(refl, incident_refl_data)
run_to_decay(sim)
refl_flux = np.array(mp.get_fluxes(refl))
tran_flux = np.array(mp.get_fluxes(tran))

# --- post-processing -------------------------------------------------------
T = tran_flux / incident_flux
R = -refl_flux / incident_flux
wl = 1.0 / freqs
order = np.argsort(wl)
wl, T, R = wl[order], T[order], R[order]

if mp.am_master():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    np.savetxt("bragg_spectrum.csv", np.column_stack([wl, T, R]), delimiter=",",
               header="wavelength_um,T,R", comments="", fmt="%.6f")

    fig, ax = plt.subplots(figsize=(5.0, 3.6))
    ax.plot(wl, R, "r-", label="R")
    ax.plot(wl, T, "b--", label="T")
    ax.axvline(LAMBDA0_UM, color="0.5", lw=0.8, ls=":")
    ax.set_xlabel("Wavelength (µm)")
    ax.set_ylabel("Reflectance, transmittance")
    ax.set_title(f"Meep: (HL)$^{{{NUM_PAIRS}}}$H, λ$_0$ = {LAMBDA0_UM} µm")
    ax.legend(frameon=False)
    fig.tight_layout()
    fig.savefig("bragg_spectrum.png", dpi=100)
    plt.close(fig)

    # stop band = contiguous region around lambda0 where R > 0.5
    i0 = int(np.argmin(np.abs(wl - LAMBDA0_UM)))
    lo, hi = i0, i0
    while lo > 0 and R[lo - 1] > 0.5:
        lo -= 1
    while hi < len(R) - 1 and R[hi + 1] > 0.5:
        hi += 1
    print(f"stage2: n_L(lambda0)={N_L0:.5f} d_H={D_H_UM:.5f} um d_L={D_L_UM:.5f} um")
    print(f"stage2: R(lambda0)={np.interp(LAMBDA0_UM, wl, R):.4f} R_max={R.max():.4f}"
          f" at {wl[np.argmax(R)]:.4f} um")
    print(f"stage2: stop_band_R>0.5_um: {wl[lo]:.4f} - {wl[hi]:.4f}"
          f" (centre {0.5 * (wl[lo] + wl[hi]):.4f}, width {wl[hi] - wl[lo]:.4f})")
    print(f"stage2: max|1-R-T|={np.max(np.abs(1 - R - T)):.2e}")
