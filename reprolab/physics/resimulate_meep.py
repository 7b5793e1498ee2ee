"""Meep side of the host's re-simulation (`reprolab.physics.resimulate`): one recorded
simulation built again from its record alone, at a fraction of its resolution, run to
the recorded end of each of its runs, its flux spectra read at each end. Runs in the
child process `resimulate` starts; nothing here reads a file of the run folder.

What the record does not keep is Meep's default: the PML's profile and strength, flux
decimation, chunk layout (none changes a converged spectrum beyond the check's
tolerance at the run's own resolution)."""

from __future__ import annotations

AXIS = {"x": 0, "y": 1, "z": 2}


def run_jobs(sims: list[dict], jobs: list[dict]) -> dict:
    """{sim index: {scale: {"times": [...], "readings": {time: {monitor: values}}}}}."""
    import meep as mp

    was = mp.verbosity.get()
    mp.verbosity(0)
    try:
        return _run_jobs(mp, sims, jobs)
    finally:
        mp.verbosity(was)


def _run_jobs(mp, sims: list[dict], jobs: list[dict]) -> dict:
    by_index = {s["index"]: s for s in sims}
    by_key = {_hashable(s.get("_id")): s for s in sims}
    done: dict[tuple[int, float], dict] = {}

    def simulate(index: int, scale: float) -> dict:
        if (index, scale) not in done:
            sim = by_index[index]
            loads = {}
            for i, mon in enumerate(sim.get("monitors", [])):
                data = mon.get("flux_data") or {}
                origin = by_key.get(_hashable(data.get("sim")))
                if origin is not None:
                    got = simulate(origin["index"], scale)["data"]
                    loads[i] = (data["how"], got.get((str(data["monitor"]), _end(data))))
            done[(index, scale)] = run_one(mp, sim, scale, loads)
        return done[(index, scale)]

    out: dict = {}
    for job in jobs:
        for scale in job["scales"]:
            got = simulate(job["index"], scale)
            out.setdefault(str(job["index"]), {})[str(scale)] = {
                "times": got["times"],
                "readings": got["readings"],
            }
    return out


def _hashable(key):
    return tuple(key) if isinstance(key, list) else key


def time_key(t: float) -> str:
    """A recorded run's end as the key of what was read there."""
    return f"{float(t):.12g}"


def _end(data: dict) -> str:
    return time_key(data.get("sim_time") or 0.0)


def run_one(mp, rec: dict, scale: float, loads: dict) -> dict:
    """Build `rec` at `scale` of its resolution and run it through its recorded runs."""
    sim, fluxes = build(mp, rec, scale)
    for index, (how, data) in loads.items():
        if index in fluxes and data is not None:
            if how == "minus":
                sim.load_minus_flux_data(fluxes[index], data)
            else:
                sim.load_flux_data(fluxes[index], data)
    out = {"times": [], "readings": {}, "data": {}}
    for run in rec.get("runs", []):
        _set_k(mp, sim, run.get("k_point"))
        end = float(run.get("sim_time") or 0.0)
        left = end - (sim.meep_time() if sim.fields is not None else 0.0)
        if left > 0:
            sim.run(until=left)
        elif sim.fields is None:
            sim.init_sim()
        key = time_key(end)
        out["times"].append(key)
        out["readings"][key] = {
            str(i): [float(v) for v in mp.get_fluxes(f)] for i, f in fluxes.items()
        }
        for i, f in fluxes.items():
            out["data"][(str(i), key)] = sim.get_flux_data(f)
    return out


def _set_k(mp, sim, k) -> None:
    if k is None:
        return
    vec = mp.Vector3(*[x or 0.0 for x in k])
    if sim.fields is None:
        sim.k_point = vec
    elif sim.k_point != vec:
        sim.change_k_point(vec)


def build(mp, rec: dict, scale: float):
    """(the Simulation, {monitor index: its DftFlux}) of a recorded simulation."""
    num = rec.get("numerics") or {}
    cyl = bool(rec.get("cylindrical"))
    kwargs = {
        "cell_size": vector(mp, rec["cell"]),
        "resolution": float(rec["resolution"]) * scale,
        "geometry_center": vector(mp, rec.get("geometry_center") or [0, 0, 0]),
        "boundary_layers": layers(mp, rec.get("boundary_layers", [])),
        "geometry": [shape(mp, g) for g in rec.get("geometry", [])],
        "sources": [source(mp, s) for s in rec.get("sources", [])],
        "symmetries": [symmetry(mp, s) for s in rec.get("symmetries", [])],
        "default_material": medium(mp, rec.get("default_material") or {}),
    }
    for name in ("Courant", "eps_averaging", "subpixel_tol", "subpixel_maxeval"):
        if name in num:
            kwargs[name] = num[name]
    if cyl:
        kwargs.update(dimensions=mp.CYLINDRICAL, m=rec.get("m") or 0)
    elif int(rec.get("dimensions") or 3) == 1:
        kwargs["dimensions"] = 1
    first_k = next((r.get("k_point") for r in rec.get("runs", []) if r.get("k_point")), None)
    k = first_k or rec.get("k_point")
    if k is not None:
        kwargs["k_point"] = mp.Vector3(*[x or 0.0 for x in k])
    sim = mp.Simulation(**kwargs)
    fluxes = {}
    for i, mon in enumerate(rec.get("monitors", [])):
        if mon.get("kind") in ("flux", "mode") and mon.get("freqs") and mon.get("regions"):
            regions = [region(mp, r) for r in mon["regions"]]
            fluxes[i] = sim.add_flux(list(mon["freqs"]), *regions)
    return sim, fluxes


def vector(mp, v, fill: float = 0.0):
    """A recorded vector; None was an infinite length (mp.inf) or nothing."""
    return mp.Vector3(*[fill if x is None else float(x) for x in (list(v) + [0, 0, 0])[:3]])


def layers(mp, recorded: list[dict]) -> list:
    out = []
    for layer in recorded:
        cls = mp.PML if layer.get("kind") == "PML" else mp.Absorber
        axis = layer["axis"]
        direction = mp.R if axis == "r" else [mp.X, mp.Y, mp.Z][AXIS[axis]]
        side = mp.Low if layer["side"] == "low" else mp.High
        out.append(cls(float(layer["thickness"]), direction=direction, side=side))
    return out


def symmetry(mp, s: dict):
    cls = {"Mirror": mp.Mirror, "Rotate2": mp.Rotate2, "Rotate4": mp.Rotate4}[s["kind"]]
    return cls(int(s["direction"]), phase=complex(str(s["phase"]).replace(" ", "")))


def medium(mp, m: dict):
    model = m.get("model") or {}
    terms = []
    for t in model.get("terms", []):
        cls = mp.DrudeSusceptibility if t["kind"] == "drude" else mp.LorentzianSusceptibility
        terms.append(cls(frequency=t["frequency"], gamma=t["gamma"], sigma=t["sigma"]))
    return mp.Medium(
        epsilon=float(model.get("eps_inf", 1.0)),
        D_conductivity=float(model.get("conductivity", 0.0)),
        E_susceptibilities=terms,
    )


def shape(mp, g: dict):
    kind, mat = g["kind"], medium(mp, g["material"])
    center = vector(mp, g["center"])
    axes = {a: vector(mp, g[a]) for a in ("e1", "e2", "e3") if g.get(a)}
    height = mp.inf if g.get("height") is None else float(g["height"])
    axis = {"axis": vector(mp, g["axis"])} if g.get("axis") else {}
    if kind in ("Block", "Ellipsoid"):
        cls = mp.Block if kind == "Block" else mp.Ellipsoid
        return cls(size=vector(mp, g["size"], mp.inf), center=center, material=mat, **axes)
    if kind == "Sphere":
        return mp.Sphere(radius=float(g["radius"]), center=center, material=mat)
    if kind == "Prism":
        verts = [vector(mp, v) for v in g["vertices"]]
        extra = {"sidewall_angle": g["sidewall_angle"]} if g.get("sidewall_angle") else {}
        return mp.Prism(verts, height, center=center, material=mat, **axis, **extra)
    common = {"radius": float(g["radius"]), "height": height, "center": center, "material": mat}
    if kind == "Cone":
        return mp.Cone(radius2=float(g.get("radius2") or 0.0), **common, **axis)
    if kind == "Wedge":
        start = {"wedge_start": vector(mp, g["wedge_start"])} if g.get("wedge_start") else {}
        return mp.Wedge(wedge_angle=float(g["wedge_angle"]), **common, **axis, **start)
    return mp.Cylinder(**common, **axis)


def source(mp, s: dict):
    profile = {"is_integrated": bool(s.get("is_integrated"))}
    for name in ("start_time", "cutoff", "end_time", "width"):
        if s.get(name) is not None and not (name == "width" and s["time"] == "ContinuousSource"
                                             and not s[name]):  # fmt: skip
            profile[name] = float(s[name])
    if s.get("end_time") is None and s["time"] == "ContinuousSource":
        profile["end_time"] = mp.inf
    if s["time"] == "GaussianSource":
        profile.pop("end_time", None)
        time = mp.GaussianSource(frequency=float(s["fcen"]), **profile)
    else:
        profile.pop("cutoff", None)
        time = mp.ContinuousSource(frequency=float(s["fcen"]), **profile)
    re, im = s.get("amplitude") or (1.0, 0.0)
    return mp.Source(
        time,
        component=int(s["component"]),
        center=vector(mp, s["center"]),
        size=vector(mp, s["size"], mp.inf),
        amplitude=complex(re, im),
    )


def region(mp, r: dict):
    extra = {"direction": int(r["direction"])} if r.get("direction") is not None else {}
    return mp.FluxRegion(
        center=vector(mp, r["center"]),
        size=vector(mp, r["size"], mp.inf),
        weight=float(r.get("weight", 1.0)),
        **extra,
    )
