"""The real one-node Slurm cluster, brought up once per session by the project's own
script (scripts/slurm_up.sh) and stopped by pid at the end (scripts/slurm_down.sh);
a fixture of every test that asks for `slurm_cluster` (registered in tests/conftest.py)."""

import os
import subprocess

import pytest

from tests.support.pipeline import REPO

SRUN = "srun --mpi=pmix -n {ranks}"


@pytest.fixture(scope="session")
def slurm_cluster():
    # Shared state dir: parallel sessions on one machine share one cluster, and
    # the daemons stop when the last of them is done.
    state, user = "/run/reprolab-slurm", str(os.getpid())
    up = subprocess.run(
        ["bash", str(REPO / "scripts/slurm_up.sh"), state, user],
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert up.returncode == 0, f"Slurm did not come up:\n{up.stdout}\n{up.stderr}"
    yield state
    subprocess.run(["bash", str(REPO / "scripts/slurm_down.sh"), state, user], timeout=120)


def scontrol_job(job_id: str = "") -> list[dict]:
    """`scontrol show job -o [job_id]` as one field dict per job (array tasks included);
    every job the cluster knows when no id is given."""
    out = subprocess.run(
        ["scontrol", "show", "job", "-o", *([job_id] if job_id else [])],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return [dict(t.split("=", 1) for t in line.split() if "=" in t) for line in out.splitlines()]
