"""Field-map figures (|E|² or Ez over a plane): the simulation writes the field as HDF5
(h5py, Meep's own format) and code draws it with the paper's axes and colour scale,
beside the paper's image. Compared by eye (a qualitative result, PARTIAL at most), with
the numbers the map supports: its maximum and where it lies, in the figure's units.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from reprolab import run_files, units

NUMBERS = ("max", "x_at_max", "y_at_max", "min")  # what comparison.json keeps of a map
NOTE = (
    "qualitative: a field map, compared visually (drawn with the paper's axes and colour "
    "scale beside its image); its maximum and position are code's numbers"
)


def _in_axis(name: str, values, axis) -> list[float]:
    """A coordinate dataset (`z_um`, `wavelength_um`) in the axis's unit."""
    src = units.column_quantity(name)
    if src is None or src == (axis.quantity, axis.unit):
        return [float(v) for v in values]
    return units.convert([float(v) for v in values], src, (axis.quantity, axis.unit))


def read_field_map(run_dir: Path, fo, fig_meta) -> dict:
    """The map and its coordinates from the run's HDF5 file `fo.file`, in the figure's
    units: rows along `y_column`, columns along `x_column` (a transposed dataset is
    accepted). Opened without following links, each dataset read within the caps
    (reprolab.run_files: UnsafeRunFile, RunFileTooLarge)."""
    import h5py

    shown = Path(run_dir) / fo.file
    with (
        run_files.open_run_file(run_dir, fo.file, run_files.MAX_HDF5_BYTES) as fh,
        h5py.File(fh, "r") as h5,
    ):
        x = np.asarray(run_files.hdf5_dataset(h5, fo.x_column, shown), dtype=float).ravel()
        y = np.asarray(run_files.hdf5_dataset(h5, fo.y_column, shown), dtype=float).ravel()
        z = np.asarray(run_files.hdf5_dataset(h5, fo.dataset, shown))
    z = np.abs(z) if np.iscomplexobj(z) else z.astype(float)
    if z.shape == (len(x), len(y)) and len(x) != len(y):
        z = z.T
    if z.shape != (len(y), len(x)):
        raise ValueError(
            f"dataset '{fo.dataset}' has shape {list(z.shape)}; expected "
            f"[len({fo.y_column}), len({fo.x_column})] = [{len(y)}, {len(x)}]"
        )
    if not np.all(np.isfinite(z)):
        raise ValueError(f"dataset '{fo.dataset}' has NaN or Inf values")
    xs = _in_axis(fo.x_column, x, fig_meta.x_axis)
    ys = _in_axis(fo.y_column, y, fig_meta.y_axes.left)
    j, i = np.unravel_index(int(np.argmax(z)), z.shape)
    return {
        "x": xs,
        "y": ys,
        "z": z.tolist(),
        "max": float(z[j, i]),
        "x_at_max": round(float(xs[i]), 9),  # a grid point at the centre reads 1e-15
        "y_at_max": round(float(ys[j]), 9),
        "min": float(z.min()),
    }
