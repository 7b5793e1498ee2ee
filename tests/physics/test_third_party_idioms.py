"""Correct Meep practice written by others, in the idioms Meep's own examples use: each
passes the checks that judge it, and the same work made wrong still fails.

The idioms: a CSV written by numpy.savetxt with its default `#` header, a waveguide
built as an `mp.Prism` (and every other GeometricObject kind), ... (the trace's idioms:
tests/physics/test_trace_idioms.py; the comparison's: tests/physics/test_compare_idioms.py).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from reprolab import run_files
from reprolab.physics import checks, record_checks

# --- CSV files read as numpy and pandas read them ---------------------------------


def test_numpy_savetxt_default_header_names_the_columns(tmp_path):
    """np.savetxt(header="wavelength_um,T") writes `# wavelength_um,T`: the columns keep
    their names, no value becomes NaN, and comment lines anywhere are skipped."""
    path = tmp_path / "t.csv"
    data = np.column_stack([[1.5, 1.6, 1.7], [0.1, 0.2, 0.3]])
    np.savetxt(path, data, delimiter=",", header="wavelength_um,T")
    with open(path, "a", encoding="utf-8") as fh:
        fh.write("# written by a correct script\n\n")
    cols = checks.read_numeric_csv(path)
    assert cols == {"wavelength_um": [1.5, 1.6, 1.7], "T": [0.1, 0.2, 0.3]}
    # the same rows under a plain header read alike; a cell that is no number stays NaN
    assert checks.read_numeric_csv(_write(tmp_path, "wavelength_um,T\n1.5,0.1\n")) == {
        "wavelength_um": [1.5],
        "T": [0.1],
    }
    bad = checks.read_numeric_csv(_write(tmp_path, "# wavelength_um,T\n1.5,nope\n"))
    assert math.isnan(bad["T"][0])


def test_comment_lines_before_a_plain_header_are_skipped():
    rows = [["# made by meep"], ["freq", "T"], ["1", "2"], ["# note"], ["3", "4"]]
    assert run_files.table_rows(rows) == [["freq", "T"], ["1", "2"], ["3", "4"]]


def test_run_folder_csv_with_numpy_header_is_checked(tmp_path):
    """The run folder's reader (every physics check reads through it) sees the names: a
    transmittance over 1 still fails its bound."""
    run = tmp_path / "run"
    run.mkdir()
    np.savetxt(run / "t.csv", [[1.5, 1.2]], delimiter=",", header="wavelength_um,T")
    cols = checks.read_output_csv(run, "t.csv")
    assert cols == {"wavelength_um": [1.5], "T": [1.2]}


def _write(tmp_path, text):
    path = tmp_path / "x.csv"
    path.write_text(text, encoding="utf-8")
    return path


# --- every GeometricObject kind seen at its dimensions --------------------------------


@pytest.fixture(scope="module")
def mp():
    return pytest.importorskip("meep")


def _built(mp, obj) -> dict:
    from reprolab.physics import as_built

    sim = mp.Simulation(cell_size=mp.Vector3(8, 8, 0), resolution=10, geometry=[obj])
    return as_built.geometric_object(mp, obj, sim, (0.5, 0.7))


def _declared(mp, obj, name, value):
    sims = [{"geometry": [_built(mp, obj)]}]
    return record_checks.declared_geometry_check(sims, [{"name": name, "value": value}])


@pytest.mark.parametrize(
    ("make", "name", "value"),
    [
        (  # a waveguide drawn as a prism along x, 0.5 wide
            lambda mp: mp.Prism(
                [
                    mp.Vector3(-3, -0.25),
                    mp.Vector3(3, -0.25),
                    mp.Vector3(3, 0.25),
                    mp.Vector3(-3, 0.25),
                ],
                height=mp.inf,
            ),
            "width",
            0.5,
        ),
        (  # the same waveguide at 30 degrees: its width is the distance between its sides
            lambda mp: mp.Prism(
                [
                    mp.Vector3(-3, -0.25).rotate(mp.Vector3(z=1), math.pi / 6),
                    mp.Vector3(3, -0.25).rotate(mp.Vector3(z=1), math.pi / 6),
                    mp.Vector3(3, 0.25).rotate(mp.Vector3(z=1), math.pi / 6),
                    mp.Vector3(-3, 0.25).rotate(mp.Vector3(z=1), math.pi / 6),
                ],
                height=0.22,
            ),
            "width",
            0.5,
        ),
        (lambda mp: mp.Cone(radius=1.0, radius2=0.3, height=2.0), "tip_radius", 0.3),
        (lambda mp: mp.Ellipsoid(size=mp.Vector3(1.0, 2.4, mp.inf)), "axis_b", 2.4),
        (lambda mp: mp.Wedge(radius=1.5, height=mp.inf, wedge_angle=math.pi / 3), "radius", 1.5),
        (lambda mp: mp.Cylinder(radius=0.2, height=mp.inf), "diameter", 0.4),
        (lambda mp: mp.Block(size=mp.Vector3(0.7, 0.3, mp.inf)), "thickness", 0.3),
        (lambda mp: mp.Sphere(radius=0.35), "radius", 0.35),
    ],
)
def test_every_object_kind_is_seen_at_its_dimensions(mp, make, name, value):
    """Declared right: pass; the same object declared 10 % off: fail, naming the size."""
    obj = make(mp)
    assert _declared(mp, obj, name, value).status == "pass"
    wrong = _declared(mp, obj, name, value * 1.1)
    assert wrong.status == "fail" and name in wrong.detail


# --- a dispersive half-space is no film ------------------------------------------------


def _film_check(mp, block_center, block_size, cell_z=12.0):
    from reprolab.physics import as_built

    medium = mp.Medium(epsilon=2.0, E_susceptibilities=[mp.LorentzianSusceptibility(
        frequency=1.0, gamma=0.1, sigma=0.5)])  # fmt: skip
    block = mp.Block(size=mp.Vector3(mp.inf, mp.inf, block_size),
                     center=mp.Vector3(z=block_center), material=medium)  # fmt: skip
    sim = mp.Simulation(cell_size=mp.Vector3(z=cell_z), resolution=50, dimensions=1,
                        boundary_layers=[mp.PML(1.0)], geometry=[block])  # fmt: skip
    band = (0.5, 1.5)
    record = as_built.structure(mp, sim, [])
    record["geometry"] = [as_built.geometric_object(mp, block, sim, band)]
    record["index"] = 0
    return record_checks.film_check([record])


def test_a_substrate_running_into_the_pml_is_no_film(mp):
    """Meep's refl-quartz: a quartz half-space from z = 0 to the cell's end (6 a, 300
    pixels at 50/a), both faces on grid points; only its face at z = 0 is an interface."""
    assert _film_check(mp, 3.0, 6.0).status != "fail"
    # the same material as a 0.2 a film inside the cell, both faces on grid points: fails
    assert _film_check(mp, 0.0, 0.2).status == "fail"


# --- a line source that ends where the PML begins ------------------------------------


@pytest.mark.parametrize(("span", "reaches"), [(11.0, False), (13.0, True), (12.0, True)])
def test_a_source_reaches_the_pml_only_when_it_enters_it(mp, span, reaches):
    """Meep's pw-source example: an 11 a line source in an 11 a interior with 1 a of PML
    ends at the PML's inner edge, where its conductivity is zero; one through the PML
    (13 a), or half into it (12 a), needs is_integrated."""
    from reprolab.physics import as_built

    src = mp.Source(mp.ContinuousSource(0.8), component=mp.Ez, center=mp.Vector3(-5.5),
                    size=mp.Vector3(0, span))  # fmt: skip
    sim = mp.Simulation(cell_size=mp.Vector3(13, 13), resolution=10, sources=[src],
                        boundary_layers=[mp.PML(1.0)])  # fmt: skip
    (built,) = as_built.structure(mp, sim, [])["sources"]
    assert built["reaches_pml"] is reaches
