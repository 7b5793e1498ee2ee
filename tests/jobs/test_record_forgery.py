"""Attacks on the run-time record, written as a hostile generated script would write
them: reaching the recorder by name, writing events into its channel, rewriting a
simulation's fields, flooding the launcher, sending half an event."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from reprolab.jobs import sandbox
from reprolab.physics import checks
from reprolab.physics.record_store import (
    MAX_RECORD_BYTES,
    Assembler,
    channel_check,
    key_line,
    record_path,
    signed_line,
)

FIELDS = {
    "dimensions": 1,
    "resolution": 50,
    "cell": [0, 0, 10],
    "sources": [],
    "monitors": [],
    "geometry": [],
    "boundary_layers": [{"axis": "z", "side": "low", "kind": "PML", "thickness": 1.0}],
    "boundaries": {},
    "symmetries": [],
    "default_material": {},
}
KEY = b"\x07" * 32

REACH_THE_RECORDER = {
    "from-import": "from reprolab.physics import as_built\nas_built._send({'event': 'x'})\n",
    "import-as": "import reprolab.physics.as_built as ab\n",
    "__import__": "ab = __import__('reprolab.physics.as_built', fromlist=['_send'])\n",
    "importlib": "import importlib\nab = importlib.import_module('reprolab.physics.as_built')\n",
    "sys.modules": "import sys\nab = sys.modules['reprolab.physics.as_built']\n",
    "sys.modules by getattr": "import sys\nmods = getattr(sys, 'modules')\n",
    "from sys import modules": "from sys import modules\n",
    "function globals": "import meep as mp\nsend = mp.Simulation.run.__globals__\n",
    "globals by getattr": "import meep as mp\ng = getattr(mp.Simulation.run, '__globals__')\n",
    "wrapped closure": "import meep as mp\nc = mp.Simulation.add_flux.__closure__\n",
    "gc": "import gc\nobjs = gc.get_objects()\n",
    "caller frames": "import sys\nf = sys._getframe(1).f_globals\n",
    "inspect": "import inspect\nf = inspect.stack()\n",
    "builtins": "import builtins\nimp = builtins.__import__\n",
    "channel path": "fd = open('/run/' + 'reprolab-record', 'wb')\n",
    "channel variable": "import os\npath = os.environ.get('REPROLAB_RECORD_CHANNEL')\n",
    # replacing what Meep measures, so that the recorder reads made-up values
    "patch a function": "import meep as mp\nmp.get_fluxes = lambda *f: [0.99] * 50\n",
    "patch a method": "import meep as mp\nmp.Simulation.get_flux_data = None\n",
    "patch a class imported": "from meep import Simulation\nSimulation.run = print\n",
    "setattr a module": "import meep\nsetattr(meep, 'get_fluxes', print)\n",
}


@pytest.mark.parametrize("attack", sorted(REACH_THE_RECORDER))
def test_static_check_refuses_every_visible_way_to_the_recorder(attack):
    assert sandbox.static_problems(REACH_THE_RECORDER[attack]), attack


def test_static_check_passes_what_simulation_scripts_do():
    """Meep's materials by name, the resolution scale the convergence reruns set, and a
    docstring that names the pipeline: none of them reaches the recorder."""
    code = textwrap.dedent(
        '''
        """Reproduced by reprolab: a silver film."""
        import os, sys
        import meep as mp
        from meep import materials
        RES = float(os.environ.get("REPROLAB_RESOLUTION_SCALE", "1")) * 20
        metal = getattr(materials, "Ag".strip())
        print(sys.argv, mp.__version__, file=sys.stderr)
        mp.verbosity.meep = 0
        sim = mp.Simulation(cell_size=mp.Vector3(1), resolution=RES)
        sim.k_point = mp.Vector3(0.1)
        '''
    )
    assert sandbox.static_problems(code) == []


def feed(asm: Assembler, *events, key: bytes = KEY) -> None:
    asm.feed(key_line(key))
    for event in events:
        asm.feed(event if isinstance(event, bytes) else signed_line(key, event))


def test_a_later_event_cannot_rewrite_a_simulation(tmp_path):
    """A run at 50 px/um, then a second run event for the same simulation claiming 500
    px/um: the fields stay as first written, and the rewrite fails a named check."""
    work = tmp_path / "run"
    asm = Assembler([str(work)])
    feed(
        asm,
        {"event": "run", "sim": 1, "fields": FIELDS, "runs": [{"sim_time": 10}]},
        {"event": "run", "sim": 1, "fields": {**FIELDS, "resolution": 500}, "runs": [{}]},
    )
    asm.write()
    rec = json.loads(record_path(work).read_text())
    (sim,) = rec["simulations"]
    assert sim["resolution"] == 50 and len(sim["runs"]) == 1
    check = channel_check(work)
    assert check.status == "fail" and "rewriting simulation 1" in check.detail


def test_an_unsigned_event_written_into_the_channel_is_refused(tmp_path):
    """What a script that finds the channel's descriptor can write: no signature (the
    key is the recorder's, sent before the script ran), so nothing of it is kept."""
    work = tmp_path / "run"
    asm = Assembler([str(work)])
    forged = {"event": "measured", "sim": 1, "values": [{"kind": "flux", "values": [0.99]}]}
    feed(
        asm,
        {"event": "run", "sim": 1, "fields": FIELDS, "runs": [{}]},
        json.dumps(forged).encode(),
        signed_line(b"\x00" * 32, forged),  # signed with a guessed key
    )
    asm.write()
    (sim,) = json.loads(record_path(work).read_text())["simulations"]
    assert "measured" not in sim
    assert "did not sign" in channel_check(work).detail


@pytest.mark.parametrize(
    "fields",
    [{k: v for k, v in FIELDS.items() if k != "sources"}, {**FIELDS, "monitors": 3}, [1, 2]],
    ids=["no sources", "monitors not a list", "not an object"],
)
def test_a_malformed_event_fails_a_named_check_not_the_step(tmp_path, fields):
    """A run event without its sources crashed the checks step (KeyError 'sources'):
    it is refused, the record has no half-built simulation, and the checks name it."""
    work = tmp_path / "run"
    work.mkdir()
    asm = Assembler([str(work)])
    feed(asm, {"event": "run", "sim": 1, "fields": fields, "runs": [{}]})
    asm.write()
    record = {"exit_code": 0, "output_files": [], "stderr_tail": ""}
    result = checks.run_checks(record, work, [], True, design={"stage_id": "stage1_x"})
    got = {c["name"]: c for c in result["checks"]}
    assert got["record:channel"]["status"] == "fail"
    assert "simulation 1" in got["record:channel"]["detail"]
    assert got["built:record_present"]["status"] == "fail"


def test_a_flood_stops_at_the_records_cap(tmp_path):
    """Events past the cap are refused before they are parsed; the record on disk stays
    under the cap (it was 102 MB for 30 MB of events), and the refusal is named."""
    work = tmp_path / "run"
    asm = Assembler([str(work)])
    big = {"event": "measured", "sim": 1, "values": [{"kind": "flux", "pad": "x" * 1_000_000}]}
    line = signed_line(KEY, big)
    feed(asm, {"event": "run", "sim": 1, "fields": FIELDS, "runs": [{}]})
    for _ in range(30):
        asm.feed(line)
    asm.write()
    assert record_path(work).stat().st_size < MAX_RECORD_BYTES + 100_000
    assert "over the record's cap" in channel_check(work).detail


def test_forged_events_through_the_real_channel_change_nothing(tmp_path):
    """Through the real sandbox: the script finds the channel's descriptor and writes a
    rewrite of its simulation (resolution 1000) and a made-up measurement. The record
    keeps what Meep built and measured, and `record:channel` fails."""
    pytest.importorskip("meep")
    from reprolab.jobs import bwrap, launch
    from tests.support.planted.scripts import slab_script

    if not bwrap.availability()[0]:
        pytest.skip("no bubblewrap here")
    code, design = slab_script()
    attack = textwrap.dedent(
        """
        import json, os
        for fd in os.listdir("/proc/self/fd"):
            try:
                if "record" in os.readlink(f"/proc/self/fd/{fd}"):
                    for forged in (
                        {"event": "run", "sim": 2, "fields": {"resolution": 1000}, "runs": []},
                        {"event": "measured", "sim": 2, "values": [{"kind": "flux"}]},
                    ):
                        os.write(int(fd), (json.dumps(forged) + "\\n").encode())
            except OSError:
                pass
        """
    )
    workdir = tmp_path / "run"
    workdir.mkdir()
    (workdir / "sim.py").write_text(code + attack)
    job = launch.SimulationJob(script=str(workdir / "sim.py"), workdir=str(workdir), timeout_s=120)
    record = launch.run_job(job)
    assert record["exit_code"] == 0, record["stderr_tail"]
    built = json.loads(record_path(workdir).read_text())["simulations"]
    assert [s["resolution"] for s in built] == [100, 100]
    assert all(m.get("kind") == "flux" and "values" in m for m in built[1]["measured"])
    result = checks.run_checks(record, workdir, ["spectrum.csv"], True, design=design)
    got = {c["name"]: c["status"] for c in result["checks"]}
    assert got["record:channel"] == "fail"
    assert got["traceable:spectrum.csv:T"] == "pass"


def test_a_failed_runs_sparse_files_are_not_inflated_when_kept(tmp_path):
    """A run folder of sparse files (1 GB apparent, a few KB on disk) is kept as a copy
    of at most the folder's cap in bytes written: the rest is named, not copied."""
    from reprolab.run_files import LEFT_OUT_FILE
    from reprolab.steps.run import archive_run

    run_dir, kept = tmp_path / "run", tmp_path / "failed_runs" / "f1"
    run_dir.mkdir()
    (run_dir / "spectrum.csv").write_text("f,T\n1,0.5\n")
    for i in range(4):
        with open(run_dir / f"hole{i}.bin", "wb") as fh:
            fh.truncate(256 * 1024 * 1024)  # sparse: nothing written
    archive_run(run_dir, kept, {"exit_code": 1, "output_files": []}, cap_mb=1)
    written = sum(p.stat().st_size for p in Path(kept).rglob("*") if p.is_file())
    assert written < 1024 * 1024
    assert (kept / "spectrum.csv").read_text() == "f,T\n1,0.5\n"
    assert sorted((kept / LEFT_OUT_FILE).read_text().split()[-4:]) == [
        f"hole{i}.bin" for i in range(4)
    ]


@pytest.mark.parametrize(
    "claim",
    [{"runs_simulation": False}, {"stage_id": "stage0_bypass"}],
    ids=["runs_simulation false", "stage0 prefix"],
)
def test_a_design_cannot_switch_the_record_off_when_the_plan_simulates(tmp_path, claim):
    """The design says it simulates nothing (or takes a stage-0 id) and the record's
    channel was closed: the plan's stage simulates, so the missing record fails."""
    work = tmp_path / "run"
    work.mkdir()
    design = {"stage_id": "stage2_mirror", "figure_outputs": [], **claim}
    record = {"exit_code": 0, "output_files": [], "stderr_tail": ""}
    judged = checks.run_checks(record, work, [], True, design={**design, "plan_simulates": True})
    got = {c["name"]: c["status"] for c in judged["checks"]}
    assert got["built:record_present"] == "fail"
    material = checks.run_checks(record, work, [], True, design={**design, "plan_simulates": False})
    assert "built:record_present" not in {c["name"] for c in material["checks"]}


def test_the_checks_step_reads_the_plans_word(tmp_path, monkeypatch):
    """`checks_for` marks the design with the plan's word: a stage of any type but
    MATERIAL_VALIDATION simulates, whatever its design says."""
    from types import SimpleNamespace

    from reprolab.steps import static

    material, other = static.StageType.MATERIAL_VALIDATION, list(static.StageType)[-1]
    assert other != material
    stages = [
        SimpleNamespace(stage_id="stage0_material_validation", stage_type=material),
        SimpleNamespace(stage_id="stage1_slab", stage_type=other),
    ]
    monkeypatch.setattr(static, "load_plan", lambda path: SimpleNamespace(stages=stages))
    run = SimpleNamespace(out_dir=tmp_path)
    for stage, expected in (("stage1_slab", True), ("stage0_material_validation", False)):
        design = SimpleNamespace(stage_id=stage, runs_simulation=False)
        assert static.simulates_structure(design, run) is expected


def test_the_traces_hdf5_reader_refuses_external_storage(tmp_path):
    """A field map whose dataset's bytes live in a host file (external storage): the
    trace read and printed them into checks.json; now it refuses the dataset, naming it."""
    h5py = pytest.importorskip("h5py")
    import numpy as np

    from reprolab.errors import UnsafeRunFile
    from reprolab.physics import trace

    secret = tmp_path / "host_secret.bin"
    secret.write_bytes(np.arange(16, dtype=float).tobytes())
    run = tmp_path / "run"
    run.mkdir()
    with h5py.File(run / "map.h5", "w") as h5:
        h5.create_dataset("E2", shape=(4, 4), dtype=float, external=[(str(secret), 0, 128)])
        h5["wavelength_um"] = np.linspace(1.0, 2.0, 4)
    fo = {"file": "map.h5", "dataset": "E2", "y_column": "wavelength_um"}
    with pytest.raises(UnsafeRunFile, match="E2.*other files"):
        trace._trace_map(run / "map.h5", fo, [[]], {})


def test_a_run_over_its_sized_memory_is_stopped_not_its_address_space(tmp_path):
    """Sized at 240 MB a rank (the address space 1 GB above it): a script holding
    600 MB resident finished normally (the cap was the request plus 1 GB); the watchdog
    now stops it at the request. A correct Meep run sized the same is not stopped."""
    pytest.importorskip("meep")
    from reprolab.jobs import bwrap, launch
    from tests.support.planted.scripts import slab_script

    if not bwrap.availability()[0]:
        pytest.skip("no bubblewrap here")

    def run(name: str, code: str) -> dict:
        workdir = tmp_path / name
        workdir.mkdir()
        (workdir / "sim.py").write_text(code)
        job = launch.SimulationJob(
            script=str(workdir / "sim.py"),
            workdir=str(workdir),
            timeout_s=60,
            memory_mb=240 + 1024,
            resident_mb=240,
        )
        return launch.run_job(job)

    hog = "import time\nblock = bytearray(600 * 2**20)\nblock[::4096] = b'x' * len(block[::4096])\n"
    hog += "time.sleep(1)\n"  # the watchdog looks every 0.1 s
    record = run("hog", hog)
    assert (record.get("failure") or {}).get("kind") == "memory_limit", record.get("failure")
    correct = run("slab", slab_script()[0])
    assert correct["exit_code"] == 0 and not correct.get("failure"), correct.get("failure")


def test_an_estimate_beyond_the_sites_memory_stops_with_the_way_on(tmp_path):
    """An impossible estimate (2e9 MB) was capped and submitted as 8 GB: now nothing is
    submitted, and the stop names the limit and how to go on; the cap taken on purpose
    (`cap_to_limits`) submits it capped."""
    from agents.simulation_designer import SimulationDesign
    from reprolab.jobs import job_size, stage_run
    from tests.support.builders import minimal_design

    design = SimulationDesign.model_validate(
        minimal_design(
            dimensions=2,
            resolution=20,
            performance_estimate={"runtime_seconds": 60, "memory_mb": 2e9, "mpi_ranks": 64},
        )
    )
    script = tmp_path / "simulation.py"
    # a cell the sizing cannot read: the agent's estimate is the size
    script.write_text(
        "import meep as mp\nsim = mp.Simulation(cell_size=medium.size(), resolution=20)\n"
        "sim.run(until=10)\n"
    )
    cfg = {"executor": "local", "max_memory_mb": 8192}
    with pytest.raises(job_size.JobTooLarge) as err:
        stage_run.size_and_check(design, script, 10, cfg)
    text = str(err.value)
    assert "over simulation.max_memory_mb = 8192" in text and "cap_to_limits: true" in text
    assert "reprolab invalidate" in text
    capped = stage_run.size_and_check(design, script, 10, {**cfg, "cap_to_limits": True})
    assert capped[1].mem_mb == 8192


def test_an_honest_record_replayed_into_another_run_is_refused(tmp_path):
    """The events of an earlier honest run, signed with its key, written into the
    channel of a run that built nothing: the new run's key does not sign them."""
    earlier = b"\x01" * 32
    replay = [
        signed_line(earlier, {"event": "run", "sim": 1, "fields": FIELDS, "runs": [{}]}),
        signed_line(earlier, {"event": "measured", "sim": 1, "values": [{"kind": "flux"}]}),
    ]
    work = tmp_path / "run"
    work.mkdir()
    asm = Assembler([str(work)])
    feed(asm, *replay, key=b"\x02" * 32)
    asm.write()
    assert json.loads(record_path(work).read_text())["simulations"] == []
    record = {"exit_code": 0, "output_files": [], "stderr_tail": ""}
    got = {
        c["name"]: c["status"]
        for c in checks.run_checks(record, work, [], True, design={"stage_id": "s1"})["checks"]
    }
    assert got["record:channel"] == "fail" and got["built:record_present"] == "fail"
