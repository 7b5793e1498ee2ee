"""Stage 3 (PARAMETER_SWEEP): reflectance at lambda0 of (HL)^N H versus the number of pairs N.

1D FDTD (normal incidence) of the free-standing quarter-wave mirror of stage 2
(H = Ta2O5, n_H = 2.10; L = fused silica, meep.materials.fused_quartz; lambda0 = 0.65 um),
repeated for N = 1..8. One empty-cell normalisation run provides the incident flux and the
incident-field DFT that is subtracted (load_minus_flux_data) in every structure run.
R and T are evaluated at the single frequency f0 = 1/lambda0.

Units: a = 1 um, so frequency f = 1 / wavelength[um].

Outputs (current directory): pairs_sweep.csv (num_pairs,T,R), pairs_sweep.png
"""

import numpy as np
import meep as mp
from meep.materials import fused_quartz

# --- parameters ------------------------------------------------------------
N_H = 2.10
LAMBDA0_UM = 0.65
NUM_PAIRS_LIST = list(range(1, 9))

RESOLUTION_PX_PER_UM = 300          # ~75 px per shortest source wavelength in Ta2O5
PML_UM = 1.0                        # > half the longest wavelength in the source band
PAD_UM = 1.0
DECAY_TOL = 1e-9                    # field-decay criterion for stopping
DECAY_DT = 5                        # check interval of the decay criterion

F0 = 1.0 / LAMBDA0_UM
DF_SOURCE = 0.5 * F0                # Gaussian pulse centred on f0 (f0 +/- 0.25 f0)

N_L0 = float(np.sqrt(np.real(fused_quartz.epsilon(F0)[0, 0])))
D_H_UM = LAMBDA0_UM / (4 * N_H)
D_L_UM = LAMBDA0_UM / (4 * N_L0)
MAX_STACK_UM = (max(NUM_PAIRS_LIST) + 1) * D_H_UM + max(NUM_PAIRS_LIST) * D_L_UM

# --- cell (1D along z), sized for the thickest stack -----------------------
SZ_UM = 2 * PML_UM + 4 * PAD_UM + MAX_STACK_UM
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
        mp.GaussianSource(F0, fwidth=DF_SOURCE),
        component=mp.Ex,
        center=mp.Vector3(z=Z_SRC),
    )
]

high = mp.Medium(index=N_H)


# --- geometry: (HL)^N H centred at z = 0 ------------------------------------
def bragg_geometry(num_pairs):
    layers = [(D_H_UM, high), (D_L_UM, fused_quartz)] * num_pairs + [(D_H_UM, high)]
    stack = sum(t for t, _ in layers)
    geom, z = [], -0.5 * stack
    for thickness, material in layers:
        geom.append(
            mp.Block(
                size=mp.Vector3(mp.inf, mp.inf, thickness),
                center=mp.Vector3(z=z + 0.5 * thickness),
                material=material,
            )
        )
        z += thickness
    return geom


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
    refl = sim.add_flux(F0, 0, 1, mp.FluxRegion(center=mp.Vector3(z=Z_REFL)))
    tran = sim.add_flux(F0, 0, 1, mp.FluxRegion(center=mp.Vector3(z=Z_TRAN)))
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
incident_flux = mp.get_fluxes(tran)[0]

# --- sweep over the number of pairs ----------------------------------------
results = []
for num_pairs in NUM_PAIRS_LIST:
    sim.reset_meep()
    sim = make_sim(bragg_geometry(num_pairs))
    refl, tran = add_monitors(sim)
    sim.load_minus_flux_data(refl, incident_refl_data)
    run_to_decay(sim)
    T = mp.get_fluxes(tran)[0] / incident_flux
    R = -mp.get_fluxes(refl)[0] / incident_flux
    results.append((num_pairs, T, R))
    if mp.am_master():
        print(f"stage3: N={num_pairs} T={T:.5f} R={R:.5f} 1-R-T={1 - R - T:.1e}")

# --- post-processing -------------------------------------------------------
if mp.am_master():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    data = np.array(results)
    np.savetxt("pairs_sweep.csv", data, delimiter=",", header="num_pairs,T,R",
               comments="", fmt=["%d", "%.6f", "%.6f"])

    fig, ax = plt.subplots(figsize=(5.0, 3.6))
    ax.plot(data[:, 0], data[:, 2], "ko-", label="R at λ$_0$")
    ax.plot(data[:, 0], data[:, 1], "bs--", label="T at λ$_0$")
    ax.set_xlabel("Number of pairs N")
    ax.set_ylabel("Reflectance, transmittance at λ$_0$")
    ax.set_title(f"Meep: (HL)$^N$H at λ$_0$ = {LAMBDA0_UM} µm")
    ax.set_xticks(NUM_PAIRS_LIST)
    ax.legend(frameon=False)
    fig.tight_layout()
    fig.savefig("pairs_sweep.png", dpi=100)
    plt.close(fig)
    print(f"stage3: max|1-R-T|={np.max(np.abs(1 - data[:, 1] - data[:, 2])):.2e}")
