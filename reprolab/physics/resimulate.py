"""The host's own simulation of what the run-time record says was built, compared with
what the record says was measured (`record:resimulated`).

The record (`reprolab.physics.as_built`) is written beside the generated script, in its
own process: a script that reaches the recorder by a route the static check cannot see
can sign made-up measured values, replay another run's, or rewrite what it built. What
it cannot do is make Meep, run here by the host from the record alone, give its numbers.
So each simulation whose flux spectra the script read is built again from its record
(cell, resolution, boundary layers, k point, symmetries, geometry, media with their
susceptibilities, sources, flux regions with their weights and frequencies, the flux
data it loaded from another simulation of the record), run to the recorded end of each
of its runs, and each flux spectrum the script read is compared with the host's:

- a run cheap enough (`IDENTICAL_PIXEL_STEPS`, under a minute of one core) is simulated
  at its own resolution: Meep is deterministic, so an honest record agrees to
  round-off (`IDENTICAL_TOLERANCE` of the spectrum's scale allows for another chunk
  layout and a last time step);
- a costlier one at two coarser whole-pixel resolutions (`coarse_scales`: at most 0.8
  and 0.6 of its own, less as the budget asks), and the claimed spectrum must lie where
  the resolution trend of the two leads: its distance from the finer coarse run at most
  `TREND_FACTOR` times the change between the coarse runs, plus `COARSE_FLOOR` of the
  spectrum's scale. For a quantity converging as h^p the first is (h1^p - 1) / (h2^p -
  h1^p) of the second: 0.82 at p = 2, 1.2 at p = 1 (a staircased interface), so 1.5
  leaves room while a different structure moves the spectrum beyond it. A simulation
  whose coarse runs disagree by over `TOO_COARSE` of a scale cannot judge (a warning).

What cannot be built (a custom source time profile, an amplitude function, an eigenmode
source, a material function or grid, a nonlinear, magnetic or anisotropic medium, flux
data loaded from a file) or compared (readings that are not flux spectra, a reading
taken mid-run, a run over the cost cap) is named in a warning, never passed silently.

A job up to `IN_PROCESS_PIXEL_STEPS` (about 2 s) runs in the checks step's own process;
a larger one in a child process (`python -m reprolab.physics.resimulate`) under a
CPU-time and memory limit, so that a record sized to exhaust the host stops there. The
checks step runs where the pipeline's local steps run (on a cluster, beside Snakemake),
so its cost is bounded by the budgets above, not by the job's request.
"""

from __future__ import annotations

import json
import math
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

from reprolab.physics.check import Check
from reprolab.physics.resimulate_meep import run_jobs

NAME = "record:resimulated"
# A run up to this many (2D) pixel-steps is re-simulated at its own resolution: 45-100 M
# a second on one core here (loaded, idle), so 30-70 s. The gallery's 3D Mie sphere (two
# runs, two mirror planes: 2.5e9) took 36 s at a load of 9 on 2 cores.
IDENTICAL_PIXEL_STEPS = 3.0e9
# Six field components and PML in three directions: measured here 45 M 2D and 6.3 M 3D
# pixel-steps a second on one loaded core (a vacuum cell with a PML and a flux plane).
PIXEL_WEIGHT_3D = 7.0
# What all re-simulations of one stage may cost together (a few minutes of one core).
MAX_PIXEL_STEPS = 1.0e10
# The coarse pair: the finer at most COARSE_MAX of the run's resolution (and below it as
# the budget asks), the coarser about COARSE_RATIO of the finer; under MIN_SCALE the
# comparison says too little and the simulation is named as not re-simulated.
COARSE_MAX = 0.8
COARSE_RATIO = 0.75
MIN_SCALE = 0.3
IDENTICAL_TOLERANCE = 1e-3
TREND_FACTOR = 1.5
COARSE_FLOOR = 0.02
TOO_COARSE = 0.1
# A monitor's scale is at least this fraction of its simulation's largest flux (a box's
# net flux in an empty cell is round-off on its own scale).
SCALE_FLOOR = 0.05
# Jobs this small run in the checks step's own process (about 2 s of one core, a few MB
# of fields); larger ones in a child process with the limits below.
IN_PROCESS_PIXEL_STEPS = 2.0e8
IN_PROCESS_PIXELS = 1.0e6
# The child's limits: CPU seconds beyond the budget's estimate, and address space.
CHILD_CPU_S = 600
CHILD_MEMORY_BYTES = 8 << 30
DEFAULT_COURANT = 0.5
SIMPLE_SOURCE_TIMES = ("GaussianSource", "ContinuousSource")
SOURCE_KINDS = ("Source",)
GEOMETRY_KINDS = ("Block", "Cylinder", "Sphere", "Prism", "Ellipsoid", "Cone", "Wedge")


# --- what the record asks for, and what it costs ---------------------------------------


def flux_readings(sim: dict) -> list[dict]:
    return [v for v in sim.get("measured", []) if v.get("kind") == "flux"]


def cannot_build(sim: dict) -> list[str]:
    """What of `sim` the re-simulation cannot build, each named (empty: all of it)."""
    out = []
    num = sim.get("numerics") or {}
    if num.get("material_function"):
        out.append("a material function or epsilon file")
    if num.get("custom_layers"):
        out.append("boundary layers with " + ", ".join(num["custom_layers"]))
    for i, src in enumerate(sim.get("sources", [])):
        if src.get("kind") not in SOURCE_KINDS:
            out.append(f"source {i}: a {src.get('kind')}")
        elif src.get("time") not in SIMPLE_SOURCE_TIMES:
            out.append(f"source {i}: a {src.get('time')} time profile")
        elif src.get("amp_shaped") or "amplitude" not in src:
            shaped = ", ".join(src.get("amp_shaped") or []) or "amplitude not recorded"
            out.append(f"source {i}: {shaped}")
    media = [("the default material", sim.get("default_material") or {})]
    for i, g in enumerate(sim.get("geometry", [])):
        if g.get("kind") not in GEOMETRY_KINDS:
            out.append(f"object {i}: a {g.get('kind')}")
        media.append((f"object {i}'s material", g.get("material") or {}))
    for where, m in media:
        why = _medium_problem(m)
        if why:
            out.append(f"{where}: {why}")
    for i, mon in enumerate(sim.get("monitors", [])):
        data = mon.get("flux_data")
        if data and "sim" not in data:
            out.append(f"monitor {i}: flux data loaded by {data.get('by')} (from a file)")
    return out


def _medium_problem(m: dict) -> str | None:
    if m.get("kind") != "Medium":
        return f"a {m.get('kind')}"
    model = m.get("model") or {}
    if m.get("anisotropic"):
        return "anisotropic"
    if model.get("magnetic"):
        return "magnetic"
    if (m.get("nonlinear_order") or 1) > 1:
        return f"chi{m['nonlinear_order']} nonlinear"
    if any(t.get("unsupported") for t in model.get("terms", [])):
        return "a susceptibility other than Lorentzian or Drude"
    return None


def end_time(sim: dict) -> float:
    return max([float(r.get("sim_time") or 0) for r in sim.get("runs", [])] + [0.0])


def pixel_steps(sim: dict, scale: float) -> float:
    """Pixels times time steps of `sim` run to its end at `scale` of its resolution, in
    2D pixel-steps (a 3D pixel costs `PIXEL_WEIGHT_3D` of them)."""
    res = float(sim["resolution"]) * scale
    cell = [c for c in sim.get("cell") or [] if c]
    pixels = PIXEL_WEIGHT_3D if len(cell) == 3 and not sim.get("cylindrical") else 1.0
    for c in sim.get("cell") or []:
        if c:
            pixels *= max(1.0, float(c) * res)
    for sym in sim.get("symmetries") or []:  # Meep steps only the cell's unique part
        pixels /= 4 if sym.get("kind") == "Rotate4" else 2
    courant = float((sim.get("numerics") or {}).get("Courant") or DEFAULT_COURANT)
    return pixels * end_time(sim) * res / courant


def plan(
    sims: list[dict], budget: float, total_budget: float, identical: bool = True
) -> tuple[list, list]:
    """(jobs, notes): each simulation with flux readings and nothing unbuildable is
    re-simulated at its own resolution if that costs at most `budget` pixel-steps (with
    the simulations whose flux data it loads), else at the coarse pair that does
    (`coarse_scales`), while `total_budget` lasts; the others are named in `notes`."""
    jobs, notes, spent = [], [], 0.0
    for sim in sims:
        if not flux_readings(sim):
            continue
        missing = cannot_build(sim) + _loads_missing(sims, sim)
        if missing:
            notes.append(f"simulation {sim['index']} not built: " + "; ".join(missing))
            continue
        chain = [sim, *_origins(sims, sim)]
        one = sum(pixel_steps(s, 1.0) for s in chain)
        scales = [1.0] if identical and one <= budget else coarse_scales(sim, budget / one)
        cost = sum(pixel_steps(s, x) for s in chain for x in scales)
        if not scales or spent + cost > total_budget:
            notes.append(
                f"simulation {sim['index']} not run: {one:.3g} pixel-steps, too costly to "
                f"re-simulate at over {MIN_SCALE:g} of its resolution within "
                f"{min(budget, total_budget - spent):.3g}"
            )
            continue
        spent += cost
        jobs.append({"index": sim["index"], "scales": scales})
    return jobs, notes


def _loads_missing(sims: list[dict], sim: dict) -> list[str]:
    """Flux data `sim` loads from a simulation the record does not hold, or read at a
    time that is not one of its runs' ends (where the host reads its data)."""
    by_key = {_hashable(s.get("_id")): s for s in sims}
    out = []
    for i, mon in enumerate(sim.get("monitors", [])):
        data = mon.get("flux_data") or {}
        if "sim" not in data:
            continue
        origin = by_key.get(_hashable(data["sim"]))
        ends = [float(r.get("sim_time") or 0) for r in (origin or {}).get("runs", [])]
        t = data.get("sim_time")
        if origin is None or not any(abs(float(t or 0) - e) <= 1e-9 * max(1, e) for e in ends):
            out.append(f"monitor {i}: flux data read mid-run or from an unrecorded simulation")
    return out


def _origins(sims: list[dict], sim: dict) -> list[dict]:
    """The simulations whose flux data `sim` loads (re-simulated with it)."""
    keys = {_hashable((m.get("flux_data") or {}).get("sim")) for m in sim.get("monitors", [])}
    return [s for s in sims if _hashable(s.get("_id")) in keys - {None} and s is not sim]


def _hashable(key):
    return tuple(key) if isinstance(key, list) else key


def coarse_scales(sim: dict, cost_fraction: float) -> list[float]:
    """Two whole-pixel resolutions below the run's: the finer at most COARSE_MAX of it
    and within `cost_fraction` of its cost together with the coarser, the coarser about
    COARSE_RATIO of the finer; each the one nearby at which the record's lengths (cell,
    objects, sources, monitors) fall on the most whole pixels (a length cut mid-pixel
    moves a spectrum by more than the resolution does: a 0.5 source at 15 px/unit moved
    a waveguide's flux 3 % of its scale, at 16 px/unit 0.5 %). Empty when the finer
    would be under MIN_SCALE."""
    dims = len([c for c in sim.get("cell") or [] if c]) or 1
    pair = 1.0 + COARSE_RATIO ** (dims + 1)
    top = min(COARSE_MAX, (max(cost_fraction, 0.0) / pair) ** (1.0 / (dims + 1)))
    res = float(sim["resolution"])
    if top < MIN_SCALE:
        return []
    lengths = _lengths(sim)
    fine = _aligned(res, lengths, top * res * 0.85, top * res)
    coarse = _aligned(res, lengths, fine * COARSE_RATIO * 0.85, fine * COARSE_RATIO)
    if coarse >= fine:
        return []
    return [fine / res, coarse / res]


def _aligned(res: float, lengths: list[float], lo: float, hi: float) -> float:
    """The whole resolution in [lo, hi] (the largest if none) at which `lengths` are
    closest to whole pixels (the finer on a tie)."""
    cands = list(range(max(1, math.ceil(lo)), math.floor(hi) + 1)) or [max(1, math.floor(hi))]

    def misfit(k: int) -> float:
        return sum(abs(x * k - round(x * k)) for x in lengths)

    return float(min(cands, key=lambda k: (round(misfit(k), 6), -k)))


def _lengths(sim: dict) -> list[float]:
    """The record's sizes and positions (from the cell's corner) along its axes."""
    cell = [float(c or 0) for c in sim.get("cell") or [0, 0, 0]]
    out = [c for c in cell if c]
    boxes = [(g.get("center"), g.get("size")) for g in sim.get("geometry", [])]
    boxes += [(s.get("center"), s.get("size")) for s in sim.get("sources", [])]
    boxes += [(r.get("center"), r.get("size")) for m in sim.get("monitors", [])
              for r in m.get("regions", [])]  # fmt: skip
    for center, size in boxes:
        for ax, c in enumerate(cell):
            if not c:
                continue
            mid = (center or [0, 0, 0])[ax]
            ext = (size or [0, 0, 0])[ax]
            if mid is not None and ext is not None and ext < c:
                out += [mid - ext / 2 + c / 2, mid + ext / 2 + c / 2]
    return out


# --- the comparison --------------------------------------------------------------------


def compare(sim: dict, runs: dict[float, dict]) -> tuple[list[dict], list[str]]:
    """Each flux reading of `sim` against the host's spectra at each scale (`runs`:
    scale -> {"readings": {time key: {monitor: values}}}): (rows, notes)."""
    rows, notes = [], []
    scales = sorted(runs, reverse=True)
    readings = flux_readings(sim)
    sim_scale = max(
        (abs(v) for r in readings for v in _host(runs[scales[0]], r) or []), default=0.0
    )
    for r in readings:
        host = [_host(runs[s], r) for s in scales]
        claimed = [float(v) for v in r.get("values") or []]
        if not _is_flux_monitor(sim, r.get("monitor")):
            rows.append(_row(sim, r, math.inf, 0.0, "a flux reading of no flux monitor built"))
            continue
        if any(h is None for h in host):
            t, end = r.get("sim_time"), end_time(sim)
            if not isinstance(t, (int, float)) or not 0 <= t <= end * (1 + 1e-9):
                rows.append(_row(sim, r, math.inf, 0.0, f"read at t = {t}, outside its runs"))
                continue
            where = f"simulation {sim['index']} monitor {r.get('monitor')}"
            notes.append(f"{where}: a reading at t = {t}, during a run (not compared)")
            continue
        if any(len(h) != len(claimed) for h in host):
            rows.append(_row(sim, r, math.inf, 0.0, "its spectrum is not the monitor's length"))
            continue
        scale = max([abs(v) for v in [*claimed, *host[0]]] + [SCALE_FLOOR * sim_scale, 1e-300])
        dev = max((abs(a - b) for a, b in zip(claimed, host[0], strict=True)), default=0.0)
        trend = (
            max((abs(a - b) for a, b in zip(host[0], host[1], strict=True)), default=0.0)
            if len(host) > 1
            else 0.0
        )
        rows.append(_row(sim, r, dev / scale, trend / scale, "", scales))
    # The grid's error is the simulation's, not one monitor's: where any of its readings
    # moved over TOO_COARSE between the coarse runs, none of them is judged (a sharp
    # resonance moving with the grid changes some monitors more than others).
    worst = max((r["trend"] for r in rows if not r["why"]), default=0.0)
    for row in rows:
        if worst > TOO_COARSE and not row["why"] and row["status"] != "pass":
            row["status"] = "warn"
    return rows, notes


def _is_flux_monitor(sim: dict, index) -> bool:
    monitors = sim.get("monitors", [])
    if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < len(monitors):
        return False
    return monitors[index].get("kind") in ("flux", "mode")


def _host(run: dict, reading: dict) -> list[float] | None:
    key = _time_key(reading.get("sim_time"), run.get("times", []))
    if key is None:
        return None
    return run["readings"].get(key, {}).get(str(reading.get("monitor")))


def _time_key(t, ends: list[str]) -> str | None:
    """The recorded run end a reading at `t` was taken at (the host reads its spectra at
    each recorded end; its own clock ends on its own grid's step)."""
    if not isinstance(t, (int, float)) or isinstance(t, bool):
        return None
    return next((e for e in ends if abs(float(t) - float(e)) <= 1e-9 * max(1.0, abs(t))), None)


def _row(sim, reading, dev: float, trend: float, why: str, scales=(1.0,)) -> dict:
    if why:
        status = "fail"
    elif len(scales) == 1:
        status = "pass" if dev <= IDENTICAL_TOLERANCE else "fail"
    elif trend > TOO_COARSE:
        status = "warn"
    else:
        status = "pass" if dev <= COARSE_FLOOR + TREND_FACTOR * trend else "fail"
    return {
        "sim": sim["index"],
        "monitor": reading.get("monitor"),
        "sim_time": reading.get("sim_time"),
        "deviation": dev,
        "trend": trend,
        "scales": list(scales),
        "status": status,
        "why": why,
    }


def verdict(rows: list[dict], notes: list[str], remark: str = "") -> Check | None:
    """`record:resimulated` from the compared rows and what was not compared (`notes`:
    a warning; `remark`: said only)."""
    if not rows and not notes:
        return None
    failed = [r for r in rows if r["status"] == "fail"]
    coarse = [r for r in rows if r["status"] == "warn"]
    worst = max(rows, key=lambda r: r["deviation"] - _allowed(r), default=None)
    said = [_say(r) for r in (failed or ([worst] if worst else []))[:3]]
    if coarse:
        said.append(
            f"{len(coarse)} reading(s) of simulations whose coarse runs differ by over "
            f"{TOO_COARSE:g} of a spectrum's scale (too coarse to judge)"
        )
    said += notes[:4] + ([remark] if remark else [])
    status = "fail" if failed else "warn" if (coarse or notes) else "pass"
    head = (
        f"{len(failed)} of {len(rows)} flux spectra the script read differ from the host's "
        "simulation of the recorded structure"
        if failed
        else f"{len(rows)} flux spectra the script read agree with the host's simulation "
        "of the recorded structure"
    )
    return Check(
        NAME,
        status,
        head + (": " if said else "") + "; ".join(said),
        worst["deviation"] if worst else None,
        f"own resolution: within {IDENTICAL_TOLERANCE:g} of the spectrum's scale; two "
        f"coarser: within {COARSE_FLOOR:g} + {TREND_FACTOR:g} x their change",
    )


def _allowed(row: dict) -> float:
    if len(row["scales"]) == 1:
        return IDENTICAL_TOLERANCE
    return COARSE_FLOOR + TREND_FACTOR * row["trend"]


def _say(row: dict) -> str:
    where = f"simulation {row['sim']} monitor {row['monitor']}"
    if row["why"]:
        return f"{where}: {row['why']}"
    at = "its own resolution" if len(row["scales"]) == 1 else "coarse runs"
    return f"{where}: {row['deviation']:.3g} of its scale off ({at}; allowed {_allowed(row):.3g})"


# --- the check: plan, run in a child, compare ------------------------------------------


def resimulated_check(
    sims: list[dict],
    budget: float = IDENTICAL_PIXEL_STEPS,
    total_budget: float = MAX_PIXEL_STEPS,
    identical: bool = True,
) -> Check | None:
    """`record:resimulated` for the simulations of one run's record (None when the
    script read no flux spectrum: nothing to compare, nothing claimed). `identical`
    False takes the coarse pair even where the run's own resolution fits `budget`."""
    sims = numbered(sims)
    try:
        jobs, notes = plan(sims, budget, total_budget, identical)
    except (ValueError, TypeError, KeyError, IndexError, AttributeError) as e:
        return Check(NAME, "warn", f"the host cannot plan a re-simulation of this record: {e}")
    if not jobs and not notes:
        return None
    results, failed = run_jobs_bounded(sims, jobs) if jobs else ({}, "")
    if failed:
        return Check(NAME, "warn", f"the host's re-simulation did not finish: {failed}")
    return judge(sims, jobs, results, notes)


def numbered(sims: list[dict]) -> list[dict]:
    """The simulations of a run's records with one number each: a sweep's points each
    have their own record, numbered from 0 with keys of their own (`load_record` lists
    them one record after another), so a point's number and the keys its monitors load
    flux data from are made unique by the record they came from."""
    out, record, last = [], 0, None
    for sim in sims:
        if last is not None and sim.get("index", 0) <= last:
            record += 1
        last = sim.get("index", 0)
        copy = {**sim, "index": len(out), "_id": [record, sim.get("_id")]}
        copy["monitors"] = [_renamed(m, record) for m in sim.get("monitors", [])]
        out.append(copy)
    return out


def _renamed(monitor: dict, record: int) -> dict:
    data = monitor.get("flux_data")
    if not data or "sim" not in data:
        return monitor
    return {**monitor, "flux_data": {**data, "sim": [record, data["sim"]]}}


def judge(sims: list[dict], jobs: list[dict], results: dict, notes: list[str]) -> Check | None:
    """The check from the host's spectra (`run_child`'s results for `jobs`) against
    what the record `sims` claims was measured."""
    by_index = {s["index"]: s for s in sims}
    rows, notes = [], list(notes)
    for job in jobs:
        runs = {float(k): v for k, v in results[str(job["index"])].items()}
        r, n = compare(by_index[job["index"]], runs)
        rows += r
        notes += n
    # said, not judged (docs/security.md lists what is not re-simulated)
    others = {str(v.get("kind")) for s in sims for v in s.get("measured", [])} - {"flux"}
    remark = f"not re-simulated: readings of kind {', '.join(sorted(others))}" if others else ""
    return verdict(rows, notes, remark)


def run_jobs_bounded(sims: list[dict], jobs: list[dict]) -> tuple[dict, str]:
    """Small jobs in this process (Meep's import once, not a child's start each: it
    doubled the planted corpus's check time), the others in a child under limits."""
    by_index = {s["index"]: s for s in sims}
    chain = [by_index[i] for i in _with_sources(sims, {j["index"] for j in jobs})]
    cost = sum(pixel_steps(s, x) for j in jobs for s in chain for x in j["scales"])
    pixels = max(pixel_steps(s, 1.0) / max(end_time(s), 1e-9) for s in chain)
    if cost <= IN_PROCESS_PIXEL_STEPS and pixels <= IN_PROCESS_PIXELS:
        try:
            return run_jobs(sims, jobs), ""
        except (ValueError, TypeError, KeyError, IndexError, AttributeError, RuntimeError) as e:
            # values the record holds that Meep refuses: named, as a child's failure is
            return {}, f"{type(e).__name__}: {str(e)[:300]}"
    return run_child(sims, jobs)


def run_child(sims: list[dict], jobs: list[dict]) -> tuple[dict, str]:
    """Runs `jobs` in `python -m reprolab.physics.resimulate`: (results, why it failed)."""
    wanted = {j["index"] for j in jobs}
    needed = _with_sources(sims, wanted)
    with tempfile.TemporaryDirectory(prefix="reprolab-resim-") as tmp:
        src, out = Path(tmp) / "in.json", Path(tmp) / "out.json"
        payload = {"sims": [s for s in sims if s["index"] in needed], "jobs": jobs}
        src.write_text(json.dumps(payload), encoding="utf-8")
        env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "LC_ALL")}
        env.update(OMP_NUM_THREADS="1", PYTHONPATH=os.pathsep.join(sys.path))
        try:
            done = subprocess.run(
                [sys.executable, "-m", "reprolab.physics.resimulate", str(src), str(out)],
                capture_output=True,
                text=True,
                timeout=CHILD_CPU_S * 3,
                env=env,
                preexec_fn=_limits,  # noqa: PLW1509 - no threads in the checks step
                cwd=tmp,
            )
        except subprocess.TimeoutExpired:
            return {}, f"over {CHILD_CPU_S * 3} s"
        if done.returncode != 0 or not out.is_file():
            tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
            return {}, f"exit {done.returncode}: {tail[0][:300]}"
        return json.loads(out.read_text(encoding="utf-8")), ""


def _limits() -> None:
    resource.setrlimit(resource.RLIMIT_CPU, (CHILD_CPU_S, CHILD_CPU_S))
    resource.setrlimit(resource.RLIMIT_AS, (CHILD_MEMORY_BYTES, CHILD_MEMORY_BYTES))


def _with_sources(sims: list[dict], wanted: set) -> set:
    """The simulations to build: `wanted` and those whose flux data they load."""
    by_key = {_hashable(s.get("_id")): s for s in sims}
    out, todo = set(), list(wanted)
    while todo:
        index = todo.pop()
        if index in out:
            continue
        out.add(index)
        sim = next(s for s in sims if s["index"] == index)
        for mon in sim.get("monitors", []):
            origin = by_key.get(_hashable((mon.get("flux_data") or {}).get("sim")))
            if origin is not None:
                todo.append(origin["index"])
    return out


def main(argv: list[str]) -> int:
    payload = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    results = run_jobs(payload["sims"], payload["jobs"])
    Path(argv[1]).write_text(json.dumps(results), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
