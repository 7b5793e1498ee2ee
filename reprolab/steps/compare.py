"""The comparison step: every reproduced curve against the paper's digitized data."""

from __future__ import annotations

from pathlib import Path

from reprolab.artifacts import Comparison, load_checks, load_design, write_comparison
from reprolab.errors import InputFileError
from reprolab.physics import checks as checks_mod
from reprolab.physics import compare, positions
from reprolab.physics import thresholds as th
from reprolab.steps import eligibility, mode_results, references, visual


def compare_stage(run, design_path, checks_path, out_comparison) -> None:
    from reprolab.report import plots, polar_plot

    blocked = eligibility.blocked_in(design_path, checks_path)
    if blocked:
        write_comparison(out_comparison, Comparison.model_validate({**blocked, "figures": []}))
        return
    design = load_design(design_path).output
    stage_dir = Path(out_comparison).parent
    checks = load_checks(checks_path)
    figures = {}
    from_record = mode_results.mode_result_ids(design)  # compared from the Harminv record
    for fo in design.figure_outputs:
        if fo.figure_id in from_record:
            continue
        fig = figures.setdefault(fo.figure_id, {"figure_id": fo.figure_id, "curves": []})
        if visual.visual_curve(run, fo, fig, stage_dir):  # no digitized data: by eye
            continue
        xp, yp = run.paper.curve_data(fo.figure_id, fo.curve_id, fo.x_column)  # in its unit
        entry = {"curve_id": fo.curve_id, "file": fo.file, "x_column": fo.x_column}
        try:
            cols = checks_mod.read_output_csv(stage_dir / "run", fo.file)
            xs, ys = cols[fo.x_column], cols[fo.y_column]
        except (OSError, ValueError, KeyError, IndexError, InputFileError) as exc:
            entry.update(
                error=f"cannot read {fo.file} columns: {exc}", classes={"missing": "FAILURE"}
            )
            fig["curves"].append(entry)
            continue
        figure = run.paper.figure(fo.figure_id)
        try:
            a_m = run.paper.unit_length_m
            axis = positions.axis_context(figure, fo.curve_id, fo.x_column, a_m)
            entry.update(compare.compare_curve(xp, yp, xs, ys, axis))
        except ValueError as exc:  # paper data the axis cannot take (<= 0 on a log axis)
            digitized = run.paper.curve(fo.figure_id, fo.curve_id).digitized
            entry.update(error=f"{digitized}: {exc}", classes={"paper data": "FAILURE"})
            fig["curves"].append(entry)
            continue
        entry["classes"] = compare.classify_curve(entry)
        entry["references"] = references.compare_with_references(run.paper, fo, xs, ys, entry)
        x_axis = figure.x_axis
        entry["key_values"] = [
            compare.key_value(
                {
                    **kv.model_dump(),
                    "x_column": fo.x_column,
                    "x_axis": [x_axis.quantity, x_axis.unit],
                    "unit_length_m": run.paper.unit_length_m,
                    "radius_m": run.paper.scatterer_radius_m,
                },
                xs,
                ys,
            )
            for kv in getattr(run.paper.meta, "key_values", [])
            if (kv.figure, kv.curve) == (fo.figure_id, fo.curve_id) and kv.kind != "other"
        ]
        entry["sim"] = {"x": xs, "y": ys}
        fig["curves"].append(entry)
    for fig in figures.values():
        classes = [c for curve in fig["curves"] for c in curve["classes"].values()]
        classes += [kv["class"] for c in fig["curves"] for kv in c.get("key_values", [])]
        fig["classification"] = th.worst(classes)
        draw = plots.field_map if fig.get("field_map") else plots.overlay
        if getattr(run.paper.figure(fig["figure_id"]), "polar", None) is not None:
            draw = polar_plot.polar_overlay
        fig["overlay"] = draw(run.paper, fig, stage_dir / f"overlay_{fig['figure_id']}.png")
        for curve in fig["curves"]:
            curve.pop("sim", None)
    from_modes = mode_results.compare_mode_results(run, design, stage_dir)
    write_comparison(
        out_comparison,
        Comparison(
            stage_id=design.stage_id,
            checks_verdict=checks.verdict,
            figures=[*figures.values(), *from_modes],
            thresholds=[b.__dict__ for b in th.DISCREPANCY_THRESHOLDS]
            + [b.__dict__ for b in th.MODE_BANDS] * bool(from_modes),
        ),
    )
