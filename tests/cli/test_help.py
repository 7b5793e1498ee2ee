"""`reprolab --help` speaks to a user (no notes for developers), `--version` answers,
and every option of every command says what it is for."""

import argparse

import pytest

import reprolab
from reprolab.cli import main


def parsers(monkeypatch) -> dict[str, argparse.ArgumentParser]:
    """The top parser and each command's, as `main` builds them."""
    seen = {}

    def grab(self, *args, **kwargs):
        seen["top"] = self
        raise SystemExit(0)

    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", grab)
    with pytest.raises(SystemExit):
        main(["status"])
    top = seen["top"]
    sub = next(a for a in top._actions if isinstance(a, argparse._SubParsersAction))
    return {"": top, **sub.choices}


def test_every_option_has_help(monkeypatch):
    found = parsers(monkeypatch)
    assert {"demo", "run", "status", "doctor", "new-paper", "check", "answer"} <= set(found)
    missing = [
        f"{name or 'reprolab'} {'/'.join(a.option_strings) or a.dest}"
        for name, p in found.items()
        for a in p._actions
        if not isinstance(a, argparse._SubParsersAction)
        and a.help != argparse.SUPPRESS
        and not (a.help or "").strip()
    ]
    assert not missing, missing


def test_help_and_version(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    text = capsys.readouterr().out
    assert "reprolab new-paper PAPER.pdf --id ID" in text and "reprolab demo" in text
    for note in ("May import", "nothing imports this package", "control`", "`doctor` checks"):
        assert note not in text
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out.strip() == f"reprolab {reprolab.__version__}"
    with pytest.raises(SystemExit):
        main(["demo", "--help"])
    assert "--verbosity {quiet,normal,verbose}" in capsys.readouterr().out
