"""The run-time record through the real sandbox (launch.run_job, bubblewrap): the
script cannot forge, delete or rewrite it, and its absence fails the checks.

Each attack runs a small 1D slab (tests.support.planted.scripts, about a second) and
asserts on what must not change: the launcher's record and the checks' verdicts.
"""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path

import pytest

from reprolab.jobs import bwrap, launch, record_channel
from reprolab.physics import checks
from reprolab.physics.record_store import record_path
from tests.support.planted.scripts import slab_script

pytest.importorskip("meep")
pytestmark = pytest.mark.skipif(not bwrap.availability()[0], reason="no bubblewrap here")

FORGED = {
    "version": 1,
    "simulations": [
        {"_id": 1, "index": 0, "resolution": 1000, "sources": [], "monitors": [], "runs": []}
    ],
}


def run(tmp_path: Path, code: str, ranks: int = 1) -> tuple[dict, Path]:
    workdir = tmp_path / "run"
    workdir.mkdir()
    (workdir / "sim.py").write_text(code)
    job = launch.SimulationJob(
        script=str(workdir / "sim.py"), workdir=str(workdir), timeout_s=120, mpi_ranks=ranks
    )
    return launch.run_job(job), workdir


def statuses(record: dict, workdir: Path, design: dict) -> dict[str, str]:
    result = checks.run_checks(record, workdir, ["spectrum.csv"], True, design=design)
    return {c["name"]: c["status"] for c in result["checks"]}


def test_forged_and_deleted_record_change_nothing(tmp_path):
    """A run stopped long before its fields decayed deletes the record it can see, writes
    a flattering one and tries the launcher's folder: the launcher's record still
    judges it (built:field_decay fails) and is untouched."""
    code, design = slab_script(stop="fixed:10", bragg_pairs=8)
    attack = textwrap.dedent(
        f"""
        import json, os
        for p in ("as_built.json", "../run.record/as_built.json"):
            try:
                os.remove(p)
            except OSError as exc:
                print("refused", p, type(exc).__name__)
        json.dump({FORGED!r}, open("as_built.json", "w"))
        try:
            json.dump({FORGED!r}, open("../run.record/as_built.json", "w"))
        except OSError as exc:
            print("refused", type(exc).__name__)
        """
    )
    record, workdir = run(tmp_path, code + attack)
    assert record["exit_code"] == 0, record["stderr_tail"]
    built = json.loads(record_path(workdir).read_text())["simulations"]
    assert [len(s["runs"]) for s in built] == [1, 1] and built[1]["resolution"] == 100
    assert built[1]["measured"][0]["kind"] == "flux"
    got = statuses(record, workdir, design)
    assert got["built:field_decay"] == "fail"
    assert got["traceable:spectrum.csv:T"] == "pass"


def test_closed_channel_leaves_no_record_and_fails(tmp_path):
    """A script that finds the record's channel among its descriptors and closes it
    before it builds anything: the launcher receives nothing, and the checks fail by
    name instead of skipping 7 of them; its own as_built.json is not read."""
    code, design = slab_script()
    attack = textwrap.dedent(
        f"""
        import json, os
        for fd in os.listdir("/proc/self/fd"):
            try:
                if "reprolab-record" in os.readlink(f"/proc/self/fd/{{fd}}"):
                    os.close(int(fd))
            except OSError:
                pass
        json.dump({FORGED!r}, open("as_built.json", "w"))
        """
    )
    record, workdir = run(tmp_path, attack + code)
    assert record["exit_code"] == 0, record["stderr_tail"]
    assert not record_path(workdir).exists()
    got = statuses(record, workdir, design)
    assert got["built:record_present"] == "fail"
    assert not any(k.startswith("traceable:") for k in got)


def test_hand_written_outputs_without_meep_fail(tmp_path):
    """The outputs written without running anything: no record, a failing check."""
    code, design = slab_script()
    fake = "open('spectrum.csv', 'w').write('wavelength_um,T,R\\n0.5,0.9,0.1\\n0.6,0.8,0.2\\n')\n"
    record, workdir = run(tmp_path, fake)
    assert record["exit_code"] == 0
    assert statuses(record, workdir, design)["built:record_present"] == "fail"


def test_two_ranks_stream_one_record(tmp_path):
    """Under mpirun (which closes its children's extra descriptors) rank 0 still reaches
    the launcher through the FIFO bound into the sandbox; the other rank sends nothing."""
    code, design = slab_script()
    record, workdir = run(tmp_path, code, ranks=2)
    assert record["exit_code"] == 0, record["stderr_tail"]
    rec = json.loads(record_path(workdir).read_text())
    assert [len(s["runs"]) for s in rec["simulations"]] == [1, 1]
    assert "channel_refused" not in rec
    assert statuses(record, workdir, design)["traceable:spectrum.csv:T"] == "pass"


def test_no_reader_means_no_record_never_a_hang(tmp_path, monkeypatch):
    """A channel path nobody reads (a launcher gone): the rank opens nothing and runs on."""
    from reprolab.physics import as_built
    from reprolab.physics.record_store import CHANNEL_ENV

    fifo = tmp_path / "channel"
    os.mkfifo(fifo)
    monkeypatch.setenv(CHANNEL_ENV, str(fifo))
    monkeypatch.setitem(as_built._STATE, "fd", None)
    assert as_built.open_channel() is False
    monkeypatch.setenv("OMPI_COMM_WORLD_RANK", "1")  # not rank 0: never opens
    with record_channel.RecordChannel([tmp_path / "run"]) as channel:
        monkeypatch.setenv(CHANNEL_ENV, str(channel.fifo))
        assert as_built.open_channel() is False
