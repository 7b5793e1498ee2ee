"""A paper folder and answer files are inputs from outside: confined, capped, decoded
with the file named, and JSON refused when duplicate-keyed or deeply nested."""

import re
import shutil
from pathlib import Path

import pytest
import yaml

from reprolab.errors import InputFileError
from reprolab.paper import MAX_BYTES, Paper, strict_json
from reprolab.report.html import markdown_to_html

EXAMPLE = Path(__file__).parents[1] / "examples" / "papers" / "silica_bragg_2026"


@pytest.fixture
def paper_dir(tmp_path):
    folder = tmp_path / "paper"
    shutil.copytree(EXAMPLE, folder, ignore=shutil.ignore_patterns("recordings"))
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
