"""Runs many planted-corpus scripts in one Python process (Meep imported once).

`python -m tests.support.planted.driver DIR...`: in each DIR, runs `sim.py` as `__main__` with
the run-time recorder installed (as the sandbox's entry point does), its stdout and
stderr (Meep's C++ output included) in DIR/stdout.txt and DIR/stderr.txt, its exit
status in DIR/exit_code and its wall time in DIR/wall_seconds. A DIR/env.json
({"NAME": "value"}) sets environment variables for that script only (the convergence
reruns' REPROLAB_*_SCALE).
"""

from __future__ import annotations

import json
import os
import runpy
import sys
import time
import traceback
from pathlib import Path

from reprolab.jobs.record_channel import RecordChannel
from reprolab.physics.as_built import install_as_built_recorder, open_channel


def run_one(folder: str) -> int:
    os.chdir(folder)
    env_file = Path("env.json")
    env = json.loads(env_file.read_text()) if env_file.is_file() else {}
    saved_env = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    start = time.monotonic()
    try:
        return _run_here(folder)
    finally:
        Path(folder, "wall_seconds").write_text(f"{time.monotonic() - start:.3f}")
        for k, v in saved_env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _run_here(folder: str) -> int:
    install_as_built_recorder(folder)
    saved = os.dup(1), os.dup(2)
    out = os.open("stdout.txt", os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    err = os.open("stderr.txt", os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    sys.stdout.flush()
    sys.stderr.flush()
    os.dup2(out, 1)
    os.dup2(err, 2)
    code = 0
    try:
        runpy.run_path("sim.py", run_name="__main__")
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except Exception:  # noqa: BLE001 - the case's failure is its result
        traceback.print_exc()
        code = 1
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in (out, err, *saved):
            os.close(fd)
    with open("exit_code", "w") as fh:
        fh.write(str(code))
    return code


def main(dirs: list[str]) -> None:
    folders = [os.path.abspath(d) for d in dirs]
    with RecordChannel(folders) as channel:
        os.environ.update(channel.env(sandboxed=False))
        open_channel()
        for d in folders:
            run_one(d)


if __name__ == "__main__":
    main(sys.argv[1:])
