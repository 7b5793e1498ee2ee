"""Per-job overhead of the OS sandbox: the same short job with and without bubblewrap.

Writes benchmarks/results/sandbox_overhead.{json,md} (machine, date, medians). Run:
`.venv/bin/python benchmarks/sandbox_overhead.py` (about 30 s). A measurement, not a test.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from reprolab.jobs import bwrap, launch, record_channel
from reprolab.jobs.launch import SimulationJob, run_job

SCRIPTS = {
    "python, 1 rank": ("open('out.txt', 'w').write('ok')\n", 1),
    "meep, 2 MPI ranks": (
        "import meep as mp\nopen(f'out{mp.my_rank()}.txt', 'w').write('ok')\n",
        2,
    ),
}
REPEAT = 7
PLOT = (
    "import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\n"
    "fig = plt.figure()\nfig.text(0.5, 0.5, 'x')\nfig.savefig('x.png')\n"
)


def timed(code: str, ranks: int, isolation: str) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "simulation.py"
        script.write_text(code)
        job = SimulationJob(
            script=str(script),
            workdir=tmp,
            mpi_ranks=ranks,
            python=sys.executable,
            isolation=isolation,
            isolate_network=True,
        )
        record = run_job(job)
        assert record["exit_code"] == 0, record["stderr_tail"]
        return record["runtime_seconds"]


def font_list_s() -> dict[str, float]:
    """A sandboxed job that plots, its font list given (reprolab.jobs.font_cache) or
    scanned from the fonts inside the run (as before): median s each, interleaved."""
    real = launch.font_cache.seed
    runs: dict[str, list[float]] = {"given": [], "scanned": []}
    try:
        for _ in range(REPEAT):
            for how in runs:
                launch.font_cache.seed = real if how == "given" else (lambda *_a: [])
                runs[how].append(timed(PLOT, 1, "bwrap"))
    finally:
        launch.font_cache.seed = real
    return {how: round(statistics.median(t), 3) for how, t in runs.items()}


# A 1D run that records: two simulations, flux spectra read (the record streamed).
RECORDED = (
    "import meep as mp\n"
    "for n in (1.0, 2.0):\n"
    "    sim = mp.Simulation(cell_size=mp.Vector3(z=6), resolution=40, dimensions=1,\n"
    "        boundary_layers=[mp.PML(1)],\n"
    "        geometry=[mp.Block(size=mp.Vector3(mp.inf, mp.inf, 0.5),\n"
    "                           material=mp.Medium(index=n))],\n"
    "        sources=[mp.Source(mp.GaussianSource(1, fwidth=0.5), component=mp.Ex,\n"
    "                           center=mp.Vector3(z=-2))])\n"
    "    f = sim.add_flux(1, 0.4, 100, mp.FluxRegion(center=mp.Vector3(z=2)))\n"
    "    sim.run(until=50)\n"
    "    mp.get_fluxes(f)\n"
)


def channel_s() -> dict[str, float]:
    """The run-time record's channel: its setup and teardown alone (median of 30), and a
    sandboxed Meep job with the record streamed or not (the rank finds no channel)."""
    setup = []
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(30):
            start = time.perf_counter()
            record_channel.RecordChannel([tmp]).close()
            setup.append(time.perf_counter() - start)
    real = record_channel.job_with
    runs: dict[str, list[float]] = {"streamed": [], "off": []}
    try:
        for _ in range(REPEAT):
            for how in runs:
                record_channel.job_with = real if how == "streamed" else (lambda job, _c: job)
                runs[how].append(timed(RECORDED, 1, "bwrap"))
    finally:
        record_channel.job_with = real
    out = {how: round(statistics.median(t), 3) for how, t in runs.items()}
    return {"setup_s": round(statistics.median(setup), 4), **out}


def bare_setup_s() -> tuple[float, float]:
    """(median s of /bin/true, of /bin/true inside the sandbox): bubblewrap's own cost."""
    with tempfile.TemporaryDirectory() as tmp:
        for folder in bwrap.private_dirs(tmp):
            folder.mkdir()
        boxed = bwrap.bwrap_command(["/bin/true"], tmp, __file__, sys.executable, False)
        times = {"bare": [], "boxed": []}
        for _ in range(30):
            for name, cmd in (("bare", ["/bin/true"]), ("boxed", boxed)):
                start = time.perf_counter()
                subprocess.run(cmd, check=True)
                times[name].append(time.perf_counter() - start)
    return statistics.median(times["bare"]), statistics.median(times["boxed"])


def main() -> None:
    rows = []
    bare, boxed = bare_setup_s()
    rows.append(
        {
            "job": "/bin/true (sandbox setup alone)",
            "unsafe_none_s": round(bare, 4),
            "bwrap_s": round(boxed, 4),
            "overhead_s": round(boxed - bare, 4),
        }
    )
    for name, (code, ranks) in SCRIPTS.items():
        runs: dict[str, list[float]] = {"unsafe_none": [], "bwrap": []}
        for _ in range(REPEAT):  # interleaved, so load drift hits both alike
            for iso in runs:
                runs[iso].append(timed(code, ranks, iso))
        medians = {iso: statistics.median(t) for iso, t in runs.items()}
        rows.append(
            {
                "job": name,
                "unsafe_none_s": round(medians["unsafe_none"], 3),
                "bwrap_s": round(medians["bwrap"], 3),
                "overhead_s": round(medians["bwrap"] - medians["unsafe_none"], 3),
            }
        )
    fonts = font_list_s()
    channel = channel_s()
    result = {
        "font_list": fonts,
        "record_channel": channel,
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "machine": f"{os.uname().nodename}, {os.cpu_count()} cores",
        "repeat": REPEAT,
        "load_average_1min": round(os.getloadavg()[0], 2),
        "rows": rows,
    }
    out = Path(__file__).parent / "results"
    out.mkdir(exist_ok=True)
    (out / "sandbox_overhead.json").write_text(json.dumps(result, indent=2) + "\n")
    lines = [
        f"# Sandbox overhead per job ({result['date']}, {result['machine']}, median of {REPEAT})",
        "",
        "Whole jobs through `run_job` (watchdog polling included, in both columns); the",
        f"first row is bubblewrap's setup alone (median of 30). Load average at the end: "
        f"{result['load_average_1min']} (a shared machine: job times are noisy).",
        "",
        "| job | no OS sandbox (s) | bubblewrap (s) | overhead (s) |",
        "|---|---|---|---|",
        *(
            f"| {r['job']} | {r['unsafe_none_s']} | {r['bwrap_s']} | {r['overhead_s']} |"
            for r in rows
        ),
    ]
    lines += [
        "",
        "A sandboxed job that plots (matplotlib, 1 rank): font list scanned inside the run "
        f"(every run has its own cache) {fonts['scanned']} s, given by "
        f"`reprolab.jobs.font_cache` {fonts['given']} s.",
        "",
        "The run-time record's channel (`reprolab.jobs.record_channel`: a FIFO, a reader "
        f"thread, the record written beside the run folder): setup and teardown "
        f"{channel['setup_s']} s (median of 30), in every job of both columns above; a "
        "sandboxed Meep job of two 1D runs reading 100-frequency flux spectra: record "
        f"streamed {channel['streamed']} s, not streamed {channel['off']} s.",
    ]
    (out / "sandbox_overhead.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
