"""Debug / quick-check mode (docs/outputs.md, "Quick-check mode"): stage 0 and a minimal stage 1 at
reduced resolution, diagnostic plots and a diagnostic summary JSON.

With `debug.enabled`, the workflow writes under `<outputs_dir>/debug/<paper>/` (so a
quick check never stands in for a full run's files), exports
`REPROLAB_RESOLUTION_SCALE = debug.resolution_factor` to the simulations, and its
target is `debug_summary.json` instead of the report.
"""

from __future__ import annotations

import json
import math
import re
import time
from pathlib import Path

import numpy as np

from reprolab import run_files
from reprolab.errors import InputFileError
from reprolab.fileio import atomic_write_json, atomic_write_text, read_json
from reprolab.physics import lint
from reprolab.physics.checks import read_numeric_csv


def source_spectrum_plot(design: dict, band: tuple[float, float] | None, out_png: Path) -> str:
    """The Gaussian source's power spectrum with the reported band marked."""
    from reprolab.report import plots

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


_CELL = re.compile(r"Computational cell is (\S+) x (\S+) x (\S+) with resolution (\S+)")
_OBJECT = re.compile(r"^\s+(block|cylinder|sphere|cone|ellipsoid|prism|wedge), center = \((.*)\)$")
_VEC = re.compile(r"^\s+size \((.*)\)$")
_RADIUS = re.compile(r"^\s+radius (\S+?),?(?: height (\S+?),)?")
_HIDDEN = re.compile(r"\.\.\.\(\+ (\d+) objects not shown\)")
_EPS = re.compile(r"dielectric constant epsilon diagonal = \((.*)\)")


def parse_geometry(stdout: str) -> dict | None:
    """The structure Meep built, from its own log ("Computational cell is ...", one
    "block, center = (...)" entry per geometric object): the last structure with objects
    (the scattering run, after an empty normalisation run), or the last one at all."""
    structures, current = [], None
    for line in stdout.splitlines():
        if m := _CELL.search(line):
            current = {
                "cell": [float(v) for v in m.groups()[:3]],
                "resolution": float(m[4]),
                "objects": [],
                "objects_not_shown": 0,
            }
            structures.append(current)
        elif current is not None and (m := _HIDDEN.search(line)):
            current["objects_not_shown"] = int(m[1])  # Meep logs the first 10 only
        elif current is not None and (m := _OBJECT.match(line)):
            center = [float(v) for v in m[2].split(",")]
            current["objects"].append({"type": m[1], "center": center})
        elif current is not None and current["objects"]:
            obj = current["objects"][-1]
            if m := _VEC.match(line):
                obj["size"] = [float(v) for v in m[1].split(",")]
            elif m := _RADIUS.match(line):
                obj["radius"] = float(m[1])
            elif m := _EPS.search(line):
                obj["epsilon"] = float(m[1].split(",")[0])
    with_objects = [s for s in structures if s["objects"]]
    return (with_objects or structures or [None])[-1]


def geometry_plot(geometry: dict, out_png: Path) -> str:
    """ε of the structure Meep built (high-frequency ε for dispersive media): a profile
    along the cell for 1D, objects drawn in the cell's plane for 2D/3D."""
    from matplotlib.patches import Circle, Rectangle

    from reprolab.report import plots

    cell, objects = geometry["cell"], geometry["objects"]
    fig, ax = plots.plt.subplots(figsize=(6, 3.4), dpi=100)
    axes = [i for i, c in enumerate(cell) if c > 0]
    if len(axes) == 1:
        a, half = axes[0], cell[axes[0]] / 2
        z = np.linspace(-half, half, 4000)
        eps = np.ones_like(z)
        for obj in objects:  # later objects win, as in Meep
            if "size" in obj:
                lo = obj["center"][a] - obj["size"][a] / 2
                hi = obj["center"][a] + obj["size"][a] / 2
                eps[(z >= lo) & (z <= hi)] = obj.get("epsilon", 1.0)
        ax.plot(z, eps, "k-", lw=1)
        ax.set_xlabel(f"{'xyz'[a]} (a)")
        ax.set_ylabel("ε (ε∞ for dispersive media)")
    else:
        a, b = (axes + [0, 1])[:2]
        vmax = max([o.get("epsilon", 1.0) for o in objects] + [1.0])
        cmap = plots.plt.get_cmap("viridis")
        for obj in objects:
            color = cmap((obj.get("epsilon", 1.0) - 1) / ((vmax - 1) or 1))
            c = obj["center"]
            if "size" in obj:
                w, h = (min(obj["size"][i], 2 * cell[i]) for i in (a, b))
                patch = Rectangle((c[a] - w / 2, c[b] - h / 2), w, h, color=color, alpha=0.8)
            else:
                patch = Circle((c[a], c[b]), obj.get("radius", 0), color=color, alpha=0.8)
            ax.add_patch(patch)
        ax.set_xlim(-cell[a] / 2, cell[a] / 2)
        ax.set_ylim(-cell[b] / 2, cell[b] / 2)
        ax.set_aspect("equal")
        ax.set_xlabel(f"{'xyz'[a]} (a)")
        ax.set_ylabel(f"{'xyz'[b]} (a)")
    hidden = geometry["objects_not_shown"]
    shown = f"{len(objects)} of {len(objects) + hidden}" if hidden else f"{len(objects)}"
    ax.set_title(
        f"geometry Meep built: {shown} object(s) (as logged), "
        f"resolution {geometry['resolution']:g}",
        fontsize=9,
    )
    fig.tight_layout()
    return plots.save_figure(fig, out_png)


_AXIS = {"x": 0, "y": 1, "z": 2, "r": 0}  # a cylindrical record names r (index 0)


def as_built_simulation(run_dir: Path) -> dict | None:
    """The last simulation Meep built in a run (the scattering run after a normalisation
    run), from the run-time record; a sweep's first point where the stage swept."""
    from reprolab.physics.record_store import RECORD_FILE, record_home

    home = record_home(run_dir)  # the launcher's record, never a file in the run folder
    paths = [home / RECORD_FILE, *sorted((home / "points").glob(f"p*/{RECORD_FILE}"))]
    for path in paths:
        if path.is_file():
            sims = read_json(path).get("simulations") or []
            if sims:
                return sims[-1]
    return None


def _span(center, size, axis: int, half: float, mid: float = 0.0) -> tuple[float, float]:
    """An object's extent along an axis, clipped to the cell around `mid` (size None:
    infinite)."""
    c = center[axis] or 0.0
    w = size[axis] if size[axis] is not None else math.inf
    return max(c - w / 2, mid - half), min(c + w / 2, mid + half)


def monitor_positions_plot(sim: dict, out_png: Path) -> str:
    """Cell, boundary layers, geometry, sources and flux/DFT monitors as Meep built them
    (the run-time record): along the cell's axis in 1D, in the x-y plane otherwise. A
    point or plane (zero size) is drawn as its edge: a line or a dot."""
    from matplotlib.patches import Circle, Rectangle

    from reprolab.report import plots

    dims = sim["dimensions"]
    half = [(c or 0) / 2 for c in sim["cell"]]
    a, b = (2, None) if dims == 1 else (0, 1)
    names, mid = "xyz", [0.0, 0.0, 0.0]  # the cell's centre
    if sim.get("cylindrical"):  # r from the axis (0) to the cell's size, then z
        a, b = (0, 2 if half[2] else None)
        names, mid[0] = "r?z", half[0]
    fig, ax = plots.plt.subplots(figsize=(6, 3.4 if dims == 1 else 5), dpi=100)

    def draw(center, size, **style):
        x0, x1 = _span(center, size, a, half[a], mid[a])
        y0, y1 = (0.0, 1.0) if b is None else _span(center, size, b, half[b], mid[b])
        ax.add_patch(Rectangle((x0, y0), x1 - x0, y1 - y0, **style))

    for layer in sim.get("boundary_layers") or []:
        i, t = _AXIS[layer["axis"]], layer["thickness"]
        centre, size = [0.0, 0.0, 0.0], [None, None, None]
        centre[i] = mid[i] + (half[i] - t / 2) * (1 if layer["side"] == "high" else -1)
        size[i] = t
        draw(centre, size, color="0.8", label=f"{layer['kind']} ({t:g} a)")
    for obj in sim.get("geometry") or []:
        if obj.get("size"):
            draw(obj["center"], obj["size"], color="C2", alpha=0.5, label=obj["kind"])
        elif obj.get("radius") and b is not None:  # a cylinder or sphere cut by the plane
            centre = (obj["center"][a] or 0, obj["center"][b] or 0)
            ax.add_patch(Circle(centre, obj["radius"], color="C2", alpha=0.5, label=obj["kind"]))
    for k, src in enumerate(sim.get("sources") or []):
        draw(src["center"], src["size"], fill=False, ec="C3", lw=2, label=f"source {k}")
    for k, mon in enumerate(sim.get("monitors") or []):
        for region in mon.get("regions") or []:
            style = {"fill": False, "ec": "C0", "lw": 1.5, "ls": "--"}
            draw(region["center"], region["size"], label=f"{mon['kind']} monitor {k}", **style)
            if b is not None and not any(region["size"][i] for i in (a, b)):  # a point
                ax.plot(region["center"][a] or 0, region["center"][b] or 0, "o", color="C0")
    handles, labels = ax.get_legend_handles_labels()
    unique = dict(zip(labels, handles, strict=True))
    ax.legend(unique.values(), unique.keys(), fontsize=7, loc="upper right")
    ax.set_xlim(mid[a] - half[a], mid[a] + half[a])
    ax.set_xlabel(f"{names[a]} (a)")
    if b is None:
        ax.set_ylim(0, 1)
        ax.set_yticks([])
    else:
        ax.set_ylim(mid[b] - half[b], mid[b] + half[b])
        ax.set_ylabel(f"{names[b]} (a)")
        ax.set_aspect("equal")
    plane = " (x-y plane)" if dims == 3 else ""
    ax.set_title(f"sources and monitors as Meep built them{plane}", fontsize=9)
    fig.tight_layout()
    return plots.save_figure(fig, out_png)


def write_debug_log(paper_out: Path, stage_dirs: list[Path], out_txt: Path) -> str:
    """debug_log.txt: the paper's events, then each quick-check stage's step logs and
    its simulation's stdout/stderr tails, in the order they ran."""
    parts = ["# events (events.jsonl)"]
    events = paper_out / "events.jsonl"
    if events.is_file():
        for line in events.read_text(errors="replace").splitlines():
            try:
                e = json.loads(line)
            except ValueError:
                continue
            parts.append(f"{e.get('time', '')} [{e.get('kind', '')}] {e.get('message', '')}")
    for stage in stage_dirs:
        for log in sorted((stage / "logs").glob("*.log"), key=lambda p: p.stat().st_mtime):
            parts += [f"\n# {stage.name}: {log.name}", log.read_text(errors="replace").rstrip()]
        for name in ("stdout.txt", "stderr.txt"):
            try:
                text = run_files.read_run_tail(stage / "run", name, 64 * 1024)
            except (OSError, InputFileError) as exc:
                text = f"[reprolab] not read: {exc}"
            if text:
                tail = text.splitlines()[-40:]
                parts += [f"\n# {stage.name}: run/{name} (last {len(tail)} lines)", *tail]
    return str(atomic_write_text(out_txt, "\n".join(parts) + "\n"))


def geometry_check(design, geometry: dict | None, factor: float) -> dict:
    """The summary's geometry_check: what Meep built against what the design says."""
    if geometry is None:
        return {"description": design.geometry, "structures_created": 0, "note": "no Meep log"}
    dims = sum(1 for c in geometry["cell"] if c > 0)
    expected_res = design.resolution * factor
    return {
        "description": design.geometry,
        "structures_created": len(geometry["objects"]) + geometry["objects_not_shown"],
        "structures_plotted": len(geometry["objects"]),
        "structure_types": sorted({o["type"] for o in geometry["objects"]}),
        "cell": geometry["cell"],
        "resolution_built": geometry["resolution"],
        "dimensions_match_design": dims == design.dimensions
        and abs(geometry["resolution"] - expected_res) <= 1e-6 * expected_res,
    }


def material_plot(materials: list[dict], out_png: Path) -> str | None:
    from reprolab.report import plots

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
    from reprolab.artifacts import load_checks, load_comparison, load_design, load_result
    from reprolab.steps.static import reported_band

    started = time.time()
    out_dir = Path(out_json).parent
    stage0_checks, stage1_checks = load_checks(inputs.checks[0]), load_checks(inputs.checks[1])
    design1_art = load_design(inputs.designs[1])
    design1 = design1_art.output
    comparison1 = load_comparison(inputs.comparison)
    validated = read_json(inputs.validated)
    band = reported_band(design1, run)
    factor = run.config.get("debug", {}).get("resolution_factor", 0.5)
    run_dir = Path(inputs.checks[1]).parent / "run"
    try:
        geometry = parse_geometry(run_files.read_run_tail(run_dir, "stdout.txt")) or None
    except (OSError, InputFileError):
        geometry = None  # refused: the stage's checks fail naming the file
    built = as_built_simulation(run_dir)
    stage1_result = load_result(inputs.result)
    plots = {
        "geometry_check": (
            geometry_plot(geometry, out_dir / "geometry_check.png") if geometry else None
        ),
        "source_spectrum": source_spectrum_plot(
            design1.model_dump(), band, out_dir / "source_spectrum.png"
        ),
        "material_check": material_plot(validated["materials"], out_dir / "material_check.png"),
        "monitor_positions": (
            monitor_positions_plot(built, out_dir / "monitor_positions.png") if built else None
        ),
    }
    findings = lint.design_findings(design1.model_dump(), design1_art.materials, band)
    recommendations = [f"{f.name}: {f.detail}" for f in findings if f.status != "pass"] + [
        f"quick check ran at {factor:g}x the design resolution ({design1.resolution} px/a "
        "in the full run); run without debug mode for the reproduction"
    ]
    fails = [
        c["name"] for c in stage0_checks.checks + stage1_checks.checks if c["status"] == "fail"
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
            "status": stage0_checks.verdict,
            "materials_tested": [m["material_id"] for m in validated["materials"]],
            "issues": [c["detail"] for c in stage0_checks.checks if c["status"] != "pass"],
        },
        "stage1_minimal": {
            "stage_id": design1.stage_id,
            "status": stage1_checks.verdict,
            "simulation_ran": any(
                c["name"] == "exit_code" and c["status"] == "pass" for c in stage1_checks.checks
            ),
            "output_files_created": [spec.file for spec in design1.output_specifications],
            "quick_check_limits": stage1_result.quick_check,
            "runtime_seconds": stage1_result.runtime_seconds,
            "features_found": sum(
                len(c.get("features", [])) for f in comparison1.figures for c in f["curves"]
            ),
            "classification": {f["figure_id"]: f["classification"] for f in comparison1.figures},
        },
        "geometry_check": geometry_check(design1, geometry, factor),
        "plots": {k: v for k, v in plots.items() if v},
        "recommendations": recommendations,
        "debug_log": write_debug_log(
            out_dir, [Path(c).parent for c in inputs.checks], out_dir / "debug_log.txt"
        ),
        "summary_seconds": round(time.time() - started, 2),
    }
    atomic_write_json(out_json, summary)
