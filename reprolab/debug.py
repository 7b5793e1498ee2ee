"""Debug / quick-check mode (the seed's "Debug Mode"): stage 0 and a minimal stage 1 at
reduced resolution, diagnostic plots and a diagnostic summary JSON.

With `debug.enabled`, the workflow writes under `<outputs_dir>/debug/<paper>/` (so a
quick check never stands in for a full run's files), exports
`REPROLAB_RESOLUTION_SCALE = debug.resolution_factor` to the simulations, and its
target is `debug_summary.json` instead of the report.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from reprolab import lint
from reprolab.checks import read_numeric_csv
from reprolab.fileio import atomic_write_json, read_json


def source_spectrum_plot(design: dict, band: tuple[float, float] | None, out_png: Path) -> str:
    """The Gaussian source's power spectrum with the reported band marked."""
    from reprolab import plots

    fcen, fwidth = design["source_fcen"], design["source_fwidth"]
    f = np.linspace(max(fcen - 1.5 * fwidth, 1e-6), fcen + 1.5 * fwidth, 400)
    # Meep's GaussianSource (width w = 1/fwidth): amplitude ∝ exp(-2π²(f - fcen)² w²)
    power = np.exp(-4 * np.pi**2 * ((f - fcen) / fwidth) ** 2)
    fig, ax = plots.plt.subplots(figsize=(5, 3.4), dpi=100)
    ax.plot(f, power / power.max(), "k-", label="source power (normalised)")
    if band:
        ax.axvspan(band[0], band[1], color="C1", alpha=0.3, label="reported band")
    ax.axvline(fcen - 0.5 * fwidth, color="0.5", ls=":")
    ax.axvline(fcen + 0.5 * fwidth, color="0.5", ls=":", label="fcen ± fwidth/2")
    ax.set_yscale("log")
    ax.set_ylim(1e-8, 2)
    ax.set_xlabel("frequency (c/a)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    return plots.save_figure(fig, out_png)


def material_plot(materials: list[dict], out_png: Path) -> str | None:
    from reprolab import plots

    curves = []
    for m in materials:
        if m.get("data") and Path(m["data"]).is_file():
            cols = read_numeric_csv(Path(m["data"]))
            x = next((c for c in cols if "wavelength" in c.lower()), None)
            if x and "n" in cols:
                curves.append((m["name"], cols[x], cols["n"]))
        elif m.get("index"):
            curves.append((m["name"], None, m["index"]))
    if not curves:
        return None
    fig, ax = plots.plt.subplots(figsize=(5, 3.4), dpi=100)
    for name, x, n in curves:
        if x is None:
            ax.axhline(n, ls="--", label=f"{name} (constant)")
        else:
            ax.plot(x, n, label=name)
    ax.set_xlabel("wavelength (µm)")
    ax.set_ylabel("n")
    ax.legend(fontsize=7)
    fig.tight_layout()
    return plots.save_figure(fig, out_png)


def write_summary(run, inputs, out_json) -> None:
    """debug_summary.json and the diagnostic plots next to it."""
    from agents.simulation_designer import SimulationDesign
    from reprolab.stage_steps import reported_band

    started = time.time()
    out_dir = Path(out_json).parent
    stage0_checks, stage1_checks = read_json(inputs.checks[0]), read_json(inputs.checks[1])
    design1_art = read_json(inputs.designs[1])
    design1 = SimulationDesign.model_validate(design1_art["output"])
    comparison1 = read_json(inputs.comparison)
    validated = read_json(inputs.validated)
    band = reported_band(design1, run)
    plots = {
        "source_spectrum": source_spectrum_plot(
            design1.model_dump(), band, out_dir / "source_spectrum.png"
        ),
        "material_check": material_plot(validated["materials"], out_dir / "material_check.png"),
    }
    findings = lint.design_findings(design1.model_dump(), design1_art["materials"], band)
    factor = run.config.get("debug", {}).get("resolution_factor", 0.5)
    recommendations = [f"{f.name}: {f.detail}" for f in findings if f.status != "pass"] + [
        f"quick check ran at {factor:g}x the design resolution ({design1.resolution} px/a "
        "in the full run); run without debug mode for the reproduction"
    ]
    fails = [
        c["name"]
        for c in stage0_checks["checks"] + stage1_checks["checks"]
        if c["status"] == "fail"
    ]
    if fails:
        recommendations.insert(0, f"fix the failed checks first: {fails}")
    summary = {
        "paper_id": run.paper_id,
        "debug_run_timestamp": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "resolution_factor": factor,
        "paper_loading": {
            "status": "success",
            "text_chars": len(run.paper.text()),
            "figures_found": len(run.paper.meta.figures),
        },
        "stage0_material_validation": {
            "status": stage0_checks["verdict"],
            "materials_tested": [m["material_id"] for m in validated["materials"]],
            "issues": [c["detail"] for c in stage0_checks["checks"] if c["status"] != "pass"],
        },
        "stage1_minimal": {
            "stage_id": design1.stage_id,
            "status": stage1_checks["verdict"],
            "simulation_ran": any(
                c["name"] == "exit_code" and c["status"] == "pass" for c in stage1_checks["checks"]
            ),
            "output_files_created": [spec.file for spec in design1.output_specifications],
            "features_found": sum(
                len(c.get("features", [])) for f in comparison1["figures"] for c in f["curves"]
            ),
            "classification": {f["figure_id"]: f["classification"] for f in comparison1["figures"]},
        },
        "geometry_check": {"description": design1.geometry, "dimensions": design1.dimensions},
        "plots": {k: v for k, v in plots.items() if v},
        "recommendations": recommendations,
        "summary_seconds": round(time.time() - started, 2),
    }
    atomic_write_json(out_json, summary)
