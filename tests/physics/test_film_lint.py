"""The static lint of thin dispersive films (docs/checks.md) on small scripts."""

from reprolab.physics.lint import code_findings

DESIGN = {"resolution": 200, "pml_thickness": 1.0, "output_specifications": []}


def film(material_lines: str, material: str, center_z: str, thickness: str = "0.04") -> str:
    return f"""
import meep as mp
{material_lines}
RESOLUTION = 200
geometry = [mp.Block(size=mp.Vector3(mp.inf, mp.inf, {thickness}),
                     center=mp.Vector3(z={center_z}), material={material})]
sim = mp.Simulation(cell_size=mp.Vector3(z=6), resolution=RESOLUTION, geometry=geometry,
                    boundary_layers=[mp.PML(1.0)], dimensions=1)
"""


def finding(code: str, name: str = "lint:film_faces_off_grid"):
    found = [f for f in code_findings(code, DESIGN) if f.name == name]
    return found[0] if found else None


def test_faces_on_grid_points_fail_with_their_offset():
    f = finding(film("from meep.materials import Ag", "Ag", "0"))
    assert f.status == "fail" and f.value == 0
    assert "9 grid points sampled for 8 pixels" in f.detail and "0.25 / RESOLUTION" in f.detail


def test_quarter_pixel_off_passes_and_one_face_on_grid_warns():
    assert (
        finding(film("from meep.materials import Ag", "Ag", "0.25 / RESOLUTION")).status == "pass"
    )
    # 8.5 pixels thick centred at 3.75 px: faces at -0.5 px (off) and 8 px (on a grid point)
    one = finding(film("from meep.materials import Ag", "Ag", "0.01875", "0.0425"))
    assert one.status == "warn", one


def test_dispersive_media_recognised_and_dielectrics_ignored():
    medium = "metal = mp.Medium(epsilon=1, E_susceptibilities=[mp.DrudeSusceptibility()])"
    assert finding(film(medium, "metal", "0")).status == "fail"
    assert finding(film("", "mp.materials.Au", "0")).status == "fail"
    # subpixel smoothing handles non-dispersive faces: nothing to judge
    assert finding(film("", "mp.Medium(index=2)", "0")) is None


def test_thin_layer_pixels_warns_under_ten():
    thin = finding(film("from meep.materials import Ag", "Ag", "0.001"), "lint:thin_layer_pixels")
    assert thin.status == "warn" and thin.value == 8
    thick = film("from meep.materials import Ag", "Ag", "0.001", "0.1")
    assert finding(thick, "lint:thin_layer_pixels").status == "pass"


def test_arithmetic_the_lint_cannot_evaluate_is_skipped_not_a_traceback():
    # (-1) ** 0.5 is complex: the constant is unknown to the lint, the script still linted.
    code = "import meep as mp\nX = (-1) ** 0.5\nsim = mp.Simulation(resolution=10)\n"
    assert isinstance(code_findings(code, {"resolution": 10}), list)
