"""Figures without digitized data: still staged and simulated, compared visually.

The ResultsAnalyzer gets the paper's image and the reproduction drawn on the figure's
axes; code cannot check a comparison by eye, so such a curve is classified at most
PARTIAL and marked qualitative in comparison.json, the report and its summary table.
"""

from __future__ import annotations

from pathlib import Path

from reprolab.errors import InputFileError
from reprolab.physics import checks as checks_mod
from reprolab.steps import fieldmap

VISUAL_CLASS = "PARTIAL"  # the best a comparison by eye can earn
NOTE = "qualitative: no digitized data, compared visually (paper image beside the reproduction)"


def visual_curve(run, fo, fig: dict, stage_dir: Path) -> bool:
    """Add the qualitative entry of a curve without digitized data to `fig`; True when
    it was one (the caller then skips the numeric comparison)."""
    if run.paper.has_data(fo.figure_id, fo.curve_id):
        return False
    entry = {"curve_id": fo.curve_id, "file": fo.file, "x_column": fo.x_column}
    entry |= {"qualitative": True, "note": NOTE}
    fig_meta = run.paper.figure(fo.figure_id)
    try:
        if fig_meta.field_map is not None:  # an HDF5 map, drawn on the paper's scale
            entry["note"] = fieldmap.NOTE
            entry["sim"] = fieldmap.read_field_map(Path(stage_dir) / "run", fo, fig_meta)
            entry["field_map"] = {k: entry["sim"][k] for k in fieldmap.NUMBERS}
            fig["field_map"] = True
        else:
            cols = checks_mod.read_output_csv(Path(stage_dir) / "run", fo.file)
            entry["sim"] = {"x": cols[fo.x_column], "y": cols[fo.y_column]}
        entry["classes"] = {"visual": VISUAL_CLASS}
    except (OSError, ValueError, KeyError, IndexError, TypeError, InputFileError) as exc:
        entry.update(error=f"cannot read {fo.file} columns: {exc}", classes={"missing": "FAILURE"})
    fig["curves"].append(entry)
    fig["qualitative"] = True
    return True
