"""The sphere example's stage (examples/papers/mie_sphere_2026: a lossless sphere's
Q_sca in 3D, two mirror planes) as planted-mistake cases: the recorded script and
design, with one mistake planted by an exact substitution (each must match once, so a
change to the recording cannot leave a case silently correct). Each returns
(code, design)."""

from __future__ import annotations

from pathlib import Path

import yaml

FOLDER = Path(__file__).parents[3] / "examples" / "papers" / "mie_sphere_2026"
STAGE = "stage1_mie_efficiency"
# The material of the design, as the plan states it (for the static lint).
MATERIALS = [{"material_id": "glass", "index": 1.5}]


def _recorded(agent: str) -> dict:
    path = FOLDER / "recordings" / STAGE / f"{agent}.a1.yaml"
    return yaml.safe_load(path.read_text())["output"]


def _replace(text: str, old: str, new: str) -> str:
    if text.count(old) != 1:
        raise ValueError(f"the recorded script no longer holds {old!r} exactly once")
    return text.replace(old, new)


def sphere_script(
    *, resolution: int = 20, built_radius: float | None = None, area: str | None = None
) -> tuple[str, dict]:
    """The recorded stage at `resolution` px/um (code and design alike); `built_radius`
    builds the sphere at another radius than the design declares (0.5 um); `area`
    replaces the efficiency's denominator pi r^2."""
    code = _recorded("code_generator")["code"]
    design = _recorded("simulation_designer")
    code = _replace(code, "RES = 20 * float(", f"RES = {resolution} * float(")
    design["resolution"] = resolution
    if built_radius is not None:
        code = _replace(code, "mp.Sphere(radius=R,", f"mp.Sphere(radius={built_radius},")
    if area is not None:
        code = _replace(code, "area = math.pi * R**2", f"area = {area}")
    return code, design
