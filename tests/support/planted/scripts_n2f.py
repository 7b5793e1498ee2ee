"""A radiation pattern for the planted-failure corpus: three in-phase Ez line currents
2/3 a apart in vacuum (the gallery's dipole array at 1 c/a), a closed near-to-far box of
half-side 1.2 a, the far field read point by point with `get_farfield` on a circle
(seconds). Keywords plant one mistake; the defaults are the correct run.
"""

from __future__ import annotations

import textwrap

HALF = 1.2  # the near box's half-side, in a
RADIUS = 1000.0  # where the design states the far field is taken, in a


def dipole_array_script(
    *,
    resolution: int = 20,
    radius: float = RADIUS,
    first_deg: float = 0.0,
    span_deg: float = 360.0,
    step_deg: float = 1.0,
    lower_weight: int = -1,
    faces: int = 4,
    source_x: float = 2 / 3,
    scale: float = 1.0,
    reload: bool = False,
) -> tuple[str, dict]:
    """`radius`: where the script reads the far field; `first_deg`, `span_deg`,
            `step_deg`: the angles it reads (from +y towards +x); `lower_weight`: the weight of
            the box's faces at -x and -y (-1 points them outward); `faces`: how many of the
            box's four faces it adds; `source_x`: where the third line current sits; `scale`: a
        factor on the near2far fields (2: made up for a mirror symmetry Meep already
        unfolds); `reload`: loads the near2far object's own data back into it (as a
    scattered-field script loads another run's)."""
    code = textwrap.dedent(
        f'''
        """Planted corpus: far-field pattern of three in-phase line currents."""
        import math
        import os

        import meep as mp
        import numpy as np

        RES = float(os.environ.get("REPROLAB_RESOLUTION_SCALE", 1)) * {resolution}
        F, FWIDTH, PML, HALF = 1.0, 0.4, 1.0, {HALF}
        CELL = 2 * (HALF + 0.5 + PML) + 2 * max(0.0, {source_x} - HALF)
        xs = [-2 / 3, 0.0, {source_x}]
        sources = [mp.Source(mp.GaussianSource(F, fwidth=FWIDTH), mp.Ez, mp.Vector3(x))
                   for x in xs]
        sim = mp.Simulation(cell_size=mp.Vector3(CELL, CELL), resolution=RES,
                            boundary_layers=[mp.PML(PML)], sources=sources)
        box = [mp.Near2FarRegion(mp.Vector3(0, y), size=mp.Vector3(2 * HALF), weight=w)
               for y, w in ((HALF, 1), (-HALF, {lower_weight}))]
        box += [mp.Near2FarRegion(mp.Vector3(x, 0), size=mp.Vector3(0, 2 * HALF), weight=w)
                for x, w in ((HALF, 1), (-HALF, {lower_weight}))]
        n2f = sim.add_near2far(F, 0, 1, *box[:{faces}])
        sim.run(until_after_sources=mp.stop_when_fields_decayed(20, mp.Ez, mp.Vector3(0, HALF),
                                                                1e-8))
        if {scale} != 1:
            mp.scale_near2far_fields({scale}, n2f)
        if {reload}:
            sim.load_near2far_data(n2f, sim.get_near2far_data(n2f))
        angles = {first_deg} + np.arange(0.0, {span_deg}, {step_deg})
        power = np.array([
            abs(sim.get_farfield(n2f, mp.Vector3({radius} * math.sin(math.radians(a)),
                                                 {radius} * math.cos(math.radians(a))))[2]) ** 2
            for a in angles
        ])
        power_db = 10 * np.log10(np.maximum(power / power.max(), 1e-12))
        if mp.am_master():
            np.savetxt("pattern.csv", np.column_stack([angles, power, power_db]), delimiter=",",
                       header="angle_deg,power,power_db", comments="", fmt="%.8g")
        '''
    )
    surface = [
        [0, HALF, 0, 2 * HALF, 0, 0],
        [0, -HALF, 0, 2 * HALF, 0, 0],
        [HALF, 0, 0, 0, 2 * HALF, 0],
        [-HALF, 0, 0, 0, 2 * HALF, 0],
    ]
    design = {
        "stage_id": "stage1_planted",
        "dimensions": 2,
        "unit_length_um": 1.0,
        "resolution": resolution,
        "pml_thickness": 1.0,
        "source_fcen": 1.0,
        "source_fwidth": 0.4,
        "materials": ["vacuum"],
        "conservation": "open_radiating",
        "sources": [
            {
                "kind": "point_dipole",
                "component": "Ez",
                "fcen": 1.0,
                "fwidth": 0.4,
                "position": [x, 0, 0],
            }
            for x in (-2 / 3, 0.0, 2 / 3)
        ],
        "near_to_far": {
            "surface": surface,
            "far_field_radius": RADIUS,
            "angle_min_deg": 0,
            "angle_max_deg": 359,
            "angle_count": 360,
        },
        "output_specifications": [
            {"file": "pattern.csv", "columns": ["angle_deg", "power", "power_db"]}
        ],
        "figure_outputs": [],
    }
    return code, design
