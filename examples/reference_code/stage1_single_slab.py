"""Stage 1 (SINGLE_STRUCTURE): transmittance and reflectance of a free-standing Ta2O5 slab.

1D FDTD (normal incidence) of a non-dispersive slab (n = 2.10, thickness 0.80 um) in air.
A broadband Gaussian pulse is launched towards the slab; the transmitted and reflected
fluxes are normalised by an identical run in an empty cell, and the reflected flux is
obtained by subtracting the incident-field DFT (load_minus_flux_data).

Units: a = 1 um, so frequency f = 1 / wavelength[um].

Outputs (current directory): slab_spectrum.csv (wavelength_um,T,R), slab_spectrum.png
"""

import numpy as np
import meep as mp

# --- parameters ------------------------------------------------------------
N_SLAB = 2.10                     # Ta2O5, non-dispersive model
SLAB_THICKNESS_UM = 0.80
WL_MIN_UM, WL_MAX_UM = 0.45, 0.95  # reported band

RESOLUTION_PX_PER_UM = 800         # ~180 px per shortest wavelength inside the slab
PML_UM = 1.0                       # > half the longest wavelength in the source band
PAD_UM = 1.0                       # air between source/monitors and the slab
NFREQ = 501
DECAY_TOL = 1e-9                   # field-decay criterion for stopping
DECAY_DT = 5                       # check interval of the decay criterion

F_MIN, F_MAX = 1.0 / WL_MAX_UM, 1.0 / WL_MIN_UM
FCEN = 0.5 * (F_MIN + F_MAX)
DF_MONITOR = F_MAX - F_MIN
DF_SOURCE = 1.5 * DF_MONITOR       # source band covers the monitor band with margin

# --- cell (1D along z) -----------------------------------------------------
SZ_UM = 2 * PML_UM + 4 * PAD_UM + SLAB_THICKNESS_UM
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

# --- geometry --------------------------------------------------------------
geometry = [
    mp.Block(
        size=mp.Vector3(mp.inf, mp.inf, SLAB_THICKNESS_UM),
        center=mp.Vector3(z=0),
        material=mp.Medium(index=N_SLAB),
    )
]


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

    np.savetxt("slab_spectrum.csv", np.column_stack([wl, T, R]), delimiter=",",
               header="wavelength_um,T,R", comments="", fmt="%.6f")

    fig, ax = plt.subplots(figsize=(5.0, 3.6))
    ax.plot(wl, T, "b-", label="T")
    ax.plot(wl, R, "r--", label="R")
    ax.set_xlabel("Wavelength (µm)")
    ax.set_ylabel("Transmittance, reflectance")
    ax.set_title(f"Meep: Ta$_2$O$_5$ slab, d = {SLAB_THICKNESS_UM} µm")
    ax.legend(frameon=False)
    fig.tight_layout()
    fig.savefig("slab_spectrum.png", dpi=100)
    plt.close(fig)

    # transmission maxima (Fabry-Perot resonances)
    peaks = [i for i in range(1, len(T) - 1) if T[i] >= T[i - 1] and T[i] > T[i + 1]]
    print("stage1: T_max_wavelengths_um:", " ".join(f"{wl[i]:.4f}" for i in peaks))
    print(f"stage1: T_min={T.min():.4f} T_max={T.max():.4f} R_max={R.max():.4f}")
    print(f"stage1: max|1-R-T|={np.max(np.abs(1 - R - T)):.2e}")
