"""What a flood of record events costs the launcher: 150 MB of signed events (each
1 MB, as a script holding the recorder's key could send) through a real channel, and
the same volume of unsigned ones (what a script writing into the FIFO sends).

Writes benchmarks/results/record_flood.json: per case the bytes sent, the seconds the
channel took to read them, the launcher's peak resident memory over its start (MB,
measured in a fresh child process each) and the record's size on disk. Run:
`.venv/bin/python benchmarks/record_flood.py` (about 10 s). A measurement, not a test.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

SENT_MB = 150
OUT = Path(__file__).parent / "results" / "record_flood.json"


def one_case(signed: bool) -> dict:
    """Run in a child process: its peak resident memory is the launcher's."""
    import time

    from reprolab.jobs.record_channel import RecordChannel
    from reprolab.physics import record_store

    work = Path(tempfile.mkdtemp()) / "run"
    base_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    channel = RecordChannel([work])
    key = os.urandom(32)
    fields = {
        name: ([] if kind is list else {}) for name, kind in record_store.STRUCTURE_FIELDS.items()
    }
    fields.update(dimensions=1, resolution=10)
    start = time.perf_counter()
    fd = os.open(channel.fifo, os.O_WRONLY)
    first = {"event": "run", "sim": 1, "fields": fields, "runs": [{}]}
    lines = [record_store.key_line(key), record_store.signed_line(key, first)]
    big = {"event": "measured", "sim": 1, "values": [{"kind": "flux", "pad": "x" * 2**20}]}
    line = record_store.signed_line(key, big) if signed else json.dumps(big).encode() + b"\n"
    for data in lines + [line] * SENT_MB:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    os.close(fd)
    written = channel.close()
    seconds = time.perf_counter() - start
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {
        "case": "signed events past the cap" if signed else "unsigned events",
        "sent_mb": SENT_MB,
        "seconds": round(seconds, 2),
        "launcher_peak_mb_over_start": round(peak_mb - base_mb, 1),
        "record_mb": round(sum(p.stat().st_size for p in written) / 2**20, 2),
    }


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--case":
        print(json.dumps(one_case(sys.argv[2] == "signed")))
        return
    cases = []
    for kind in ("signed", "unsigned"):
        out = subprocess.run(
            [sys.executable, __file__, "--case", kind], capture_output=True, text=True, check=True
        )
        cases.append(json.loads(out.stdout.strip().splitlines()[-1]))
    result = {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "machine": os.uname().nodename,
        "cap_mb": 12,
        "cases": cases,
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
