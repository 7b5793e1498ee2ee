"""scripts/slurm_down.sh on made-up state folders (no cluster needed): it stops only
the processes slurm_up.sh recorded, and takes our slurm.conf with them, because a
conf without a controller makes every `scontrol` (Snakemake's Slurm plugin runs one
on import, in every run) wait ~9 s; somebody else's conf is put back or left alone."""

import os
import subprocess
from pathlib import Path

from tests.support.pipeline import REPO

OURS = "# Written by reprolab scripts/slurm_up.sh: one node, no accounting database.\n"


def down(state: Path, conf_dir: Path) -> None:
    env = {**os.environ, "REPROLAB_SLURM_CONF_DIR": str(conf_dir)}
    subprocess.run(
        ["bash", str(REPO / "scripts/slurm_down.sh"), str(state), "1"],
        env=env,
        check=True,
        timeout=60,
        capture_output=True,
    )


def folders(tmp_path: Path, conf: str, started: bool, orig: str | None = None):
    state, conf_dir = tmp_path / "state", tmp_path / "etc"
    (state / "users").mkdir(parents=True)
    conf_dir.mkdir()
    (conf_dir / "slurm.conf").write_text(conf)
    daemon = None
    if started:  # not our child: a zombie would answer kill -0 until we reaped it
        out = subprocess.run(
            ["bash", "-c", "sleep 60 >/dev/null 2>&1 & echo $!"], capture_output=True
        )
        daemon = int(out.stdout)
    (state / "pids").write_text(f"slurmctld {daemon}\n" if daemon else "")
    if orig is not None:
        (state / "slurm.conf.orig").write_text(orig)
    return state, conf_dir, daemon


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"


def test_our_conf_goes_with_our_daemons(tmp_path):
    state, conf_dir, daemon = folders(tmp_path, OURS, started=True)
    down(state, conf_dir)
    assert not alive(daemon)
    assert not (conf_dir / "slurm.conf").exists()
    assert (state / "pids").read_text() == ""


def test_a_conf_we_set_aside_comes_back(tmp_path):
    site = "ClusterName=site\nSlurmctldHost=head\n"
    state, conf_dir, daemon = folders(tmp_path, OURS, started=True, orig=site)
    down(state, conf_dir)
    assert not alive(daemon)
    assert (conf_dir / "slurm.conf").read_text() == site


def test_a_cluster_we_did_not_start_keeps_its_conf(tmp_path):
    # slurm_up found a controller answering and started nothing: pids is empty.
    state, conf_dir, _ = folders(tmp_path, OURS, started=False)
    down(state, conf_dir)
    assert (conf_dir / "slurm.conf").read_text() == OURS


def test_someone_elses_conf_is_never_removed(tmp_path):
    site = "ClusterName=site\n"
    state, conf_dir, daemon = folders(tmp_path, site, started=True)
    down(state, conf_dir)
    assert not alive(daemon)
    assert (conf_dir / "slurm.conf").read_text() == site
