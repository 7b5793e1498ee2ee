"""`reprolab unlock` releases the lock a killed run left on its own outputs folder,
never a colleague's run in the same working directory, never a live run's."""

from pathlib import Path

import yaml

from reprolab.cli import main
from reprolab.fileio import lock_outputs_dir


def locked_checkout(wd: Path) -> Path:
    """A working directory with two runs' Snakemake locks: ours (outputs/) and a
    colleague's (theirs/), each an input and an output lock."""
    locks = wd / ".snakemake" / "locks"
    locks.mkdir(parents=True)
    (locks / "0.input.lock").write_text("/papers/p/metadata.yaml\n")
    (locks / "0.output.lock").write_text("theirs/p/plan.json\ntheirs/p/report.md\n")
    (locks / "1.input.lock").write_text("/papers/p/metadata.yaml\n")
    (locks / "1.output.lock").write_text(f"{wd}/outputs/p/plan.json\noutputs/p/report.md\n")
    config = wd / "config.yaml"
    config.write_text(yaml.safe_dump({"outputs_dir": "outputs", "papers": []}))
    return config


def test_unlock_releases_only_this_outputs_folders_lock(tmp_path, capsys):
    config = locked_checkout(tmp_path)
    assert main(["unlock", "--configfile", str(config), "--directory", str(tmp_path)]) == 0
    left = sorted(p.name for p in (tmp_path / ".snakemake" / "locks").iterdir())
    assert left == ["0.input.lock", "0.output.lock"]  # the colleague's run keeps its lock
    out = capsys.readouterr().out
    assert "released the lock" in out and "1.output.lock" in out
    assert "left 2 lock(s) of other runs" in out
    # Again: nothing of ours is left, and theirs still stays.
    assert main(["unlock", "--configfile", str(config), "--directory", str(tmp_path)]) == 0
    assert "nothing to release" in capsys.readouterr().out
    assert len(list((tmp_path / ".snakemake" / "locks").iterdir())) == 2


def test_unlock_refuses_while_a_run_writes_the_outputs_folder(tmp_path, capsys):
    config = locked_checkout(tmp_path)
    lock_outputs_dir(tmp_path / "outputs")  # a live run holds it
    assert main(["unlock", "--configfile", str(config), "--directory", str(tmp_path)]) == 1
    assert "a run is still writing" in capsys.readouterr().err
    assert len(list((tmp_path / ".snakemake" / "locks").iterdir())) == 4
