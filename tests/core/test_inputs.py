"""A paper folder and answer files are inputs from outside: confined, capped, decoded
with the file named, and JSON refused when duplicate-keyed or deeply nested."""

import re
from pathlib import Path

import pytest
import yaml

from reprolab.errors import InputFileError
from reprolab.paper import MAX_BYTES, Paper, strict_json
from reprolab.report.html import markdown_to_html
from tests.support.builders import copy_paper
from tests.support.pipeline import EXAMPLE


@pytest.fixture
def paper_dir(tmp_path):
    folder = tmp_path / "paper"
    copy_paper(folder)
    return folder


def set_field(folder: Path, change) -> None:
    meta = yaml.safe_load((folder / "metadata.yaml").read_text())
    change(meta)
    (folder / "metadata.yaml").write_text(yaml.safe_dump(meta))


@pytest.mark.parametrize(
    "field, change",
    [
        ("paper_text", lambda m: m.update(paper_text="../../../etc/passwd")),
        ("figures[0].image", lambda m: m["figures"][0].update(image="/etc/passwd")),
        (
            "figures[1].curves[0].digitized",
            lambda m: m["figures"][1]["curves"][0].update(digitized="../outside.csv"),
        ),
    ],
)
def test_paths_outside_the_paper_folder_refused_naming_the_field(paper_dir, field, change):
    (paper_dir.parent / "outside.csv").write_text("x,y\n1,2\n3,4\n")
    set_field(paper_dir, change)
    with pytest.raises(
        InputFileError, match=re.escape(f"field {field!r} is ") + ".*outside the paper folder"
    ):
        Paper(paper_dir)


def test_symlink_leading_out_refused(paper_dir):
    (paper_dir / "figures" / "fig1.png").unlink()
    (paper_dir / "figures" / "fig1.png").symlink_to("/etc/hostname")
    with pytest.raises(InputFileError, match=r"field 'figures\[0\].image'.*outside"):
        Paper(paper_dir)


def test_sizes_capped_and_non_utf8_named(paper_dir):
    text = paper_dir / "paper.md"
    text.write_bytes(b"# Paper\n" + b"\xff\xfe broken" * 3)
    with pytest.raises(InputFileError, match="paper.md: the paper text .* is not UTF-8"):
        Paper(paper_dir).text()
    text.write_bytes(b"a" * (MAX_BYTES["paper_text"] + 1))
    with pytest.raises(InputFileError, match="field 'paper_text' is .* over the cap"):
        Paper(paper_dir)
    text.write_text("# Paper\n")
    csv = paper_dir / "data" / "fig1_n.csv"
    csv.write_text("x,y\n" + "1,2\n" * (MAX_BYTES["digitized"] // 4 + 1))
    with pytest.raises(InputFileError, match=r"digitized' is .* over the cap"):
        Paper(paper_dir)


def test_json_from_outside_refused_when_duplicate_or_deep():
    assert strict_json('{"a": "x\\\\\\" [[[", "b": [1]}', "ok.json") == {"a": 'x\\" [[[', "b": [1]}
    with pytest.raises(InputFileError, match="answer.json: has the key 'action' twice"):
        strict_json('{"action": "reject", "action": "approve"}', "answer.json")
    with pytest.raises(InputFileError, match="answer.json: nests 100 levels deep"):
        strict_json("[" * 100 + "]" * 100, "answer.json")
    with pytest.raises(InputFileError, match="answer.json: is not valid JSON"):
        strict_json('{"a": ', "answer.json")


def test_html_report_inlines_only_images_inside_its_folder(tmp_path):
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "fig.png").write_bytes(b"\x89PNG fake")
    (tmp_path / "secret.png").write_bytes(b"SECRET-IMAGE")
    (tmp_path / "results" / "notes.txt").write_text("SECRET-TEXT")
    md = "![a](fig.png) ![b](../secret.png) ![c](notes.txt) ![d](/etc/passwd)"
    page = markdown_to_html(md, tmp_path / "results", "t")
    assert "data:image/png;base64," in page
    for leaked in ("SECRET", "U0VDUkVU", "root:"):
        assert leaked not in page
    assert page.count("[missing image") == 3


def test_a_paper_is_built_once_per_invocation_and_again_once_its_metadata_changes(
    paper_dir, monkeypatch
):
    # The workflow lists the papers at load time and its input functions ask
    # for each paper again ~80 times; all of them must share one build per version.
    from reprolab import smk
    from reprolab.settings import paper_entries

    built = []
    real_init = Paper.__init__

    def counting_init(self, folder, *args, **kwargs):
        built.append(str(folder))
        real_init(self, folder, *args, **kwargs)

    monkeypatch.setattr(Paper, "__init__", counting_init)
    monkeypatch.setattr(smk, "_CACHE", {})
    entries = paper_entries({"papers": [{"paper_dir": str(paper_dir)}]}, load=smk.cached_paper)
    for _ in range(80):
        paper = smk.cached_paper(entries["silica_bragg_2026"]["paper_dir"])
    assert len(built) == 1 and paper.paper_id == "silica_bragg_2026"

    set_field(paper_dir, lambda m: m.update(title="A retitled paper, longer than before"))
    assert smk.cached_paper(str(paper_dir)).meta.title == "A retitled paper, longer than before"
    assert len(built) == 2


BUILD_COUNTER = """
import os
from reprolab import paper
from tests.support.builders import copy_paper

_init = paper.Paper.__init__

def _counted(self, folder, *args, **kwargs):
    with open(os.environ["PAPER_BUILDS"], "a") as fh:
        fh.write(f"{os.getpid()} {folder}\\n")
    _init(self, folder, *args, **kwargs)

paper.Paper.__init__ = _counted
"""


def test_a_dry_run_of_a_campaign_builds_each_paper_once(tmp_path):
    # The real Snakefile under a real `snakemake -n`: the paper list read at load time
    # and every input function after share one build per paper.
    import os
    import subprocess

    from tests.support.pipeline import snakemake_cmd

    papers = [EXAMPLE, EXAMPLE.parent / "ag_etalon_2026"]
    config = {"papers": [{"paper_dir": str(p)} for p in papers], "provider": {"kind": "replay"}}
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(BUILD_COUNTER)
    log = tmp_path / "builds.txt"
    env = {**os.environ, "PYTHONPATH": f"{hook}:{os.environ.get('PYTHONPATH', '')}"}
    env["PAPER_BUILDS"] = str(log)
    run = subprocess.run(
        snakemake_cmd(tmp_path, "-n"), capture_output=True, text=True, env=env, timeout=300
    )
    assert run.returncode == 0, run.stderr[-2000:]
    builds = [line.split(" ", 1)[1] for line in log.read_text().splitlines()]
    assert sorted(builds) == sorted(str(p) for p in papers), builds


def test_a_step_builds_only_its_own_paper_even_beside_a_broken_one(tmp_path, monkeypatch):
    # A campaign's step used to build every paper of the campaign to find its own
    # (0.2-0.3 s a step at 100 papers), and one broken paper failed every paper's steps.
    from reprolab.settings import paper_run

    def copy(name: str, paper_id: str) -> Path:
        folder = tmp_path / name
        copy_paper(folder)
        set_field(folder, lambda m: m.update(paper_id=paper_id))
        return folder

    named = copy("named_paper", "named_paper")
    elsewhere = copy("folder_of_another_name", "renamed_paper")
    broken = copy("broken_paper", "broken_paper")
    (broken / "paper.md").unlink()
    config = {"papers": [{"paper_dir": str(p)} for p in (broken, elsewhere, named)]}
    built = []
    real_init = Paper.__init__

    def counting_init(self, folder, *args, **kwargs):
        built.append(Path(folder).name)
        real_init(self, folder, *args, **kwargs)

    monkeypatch.setattr(Paper, "__init__", counting_init)
    assert paper_run(config, "named_paper").paper.folder == named
    assert built == ["named_paper"]
    # A folder not named after its paper_id is still found, by its metadata.
    built.clear()
    assert paper_run(config, "renamed_paper").paper.folder == elsewhere
    assert built == ["broken_paper", "folder_of_another_name"]  # the broken one skipped
    with pytest.raises(InputFileError, match="paper.md"):
        paper_run({"papers": [{"paper_dir": str(broken)}]}, "broken_paper")
