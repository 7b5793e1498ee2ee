"""What a comparison reads of metadata.yaml, per figure or table: the settings file whose
rewrite reruns the judgement of the stage that targets it (workflow/rules/settings.smk)."""

import shutil

from reprolab.paper import Paper
from reprolab.settings import stated_results
from tests.support.pipeline import AG_EXAMPLE, REPO

DISK = REPO / "examples" / "papers" / "disk_resonator_2026"


def test_every_result_has_its_entry_and_its_key_values():
    ag = stated_results(Paper(AG_EXAMPLE))
    assert set(ag) == {"fig1", "fig2", "fig3", "fig4"}
    assert {kv["kind"] for kv in ag["fig2"]["key_values"]} == {"x_of_max", "max_y", "x_of_min"}
    assert ag["fig1"]["key_values"] == [] and ag["fig1"]["entry"]["figure_id"] == "fig1"
    disk = stated_results(Paper(DISK))
    assert set(disk) == {"tab1"}
    assert [r["m"] for r in disk["tab1"]["entry"]["rows"]] == [5, 6, 7, 8, 9]


def test_an_edited_row_changes_its_table_only(tmp_path):
    shutil.copytree(AG_EXAMPLE, tmp_path / "ag")
    meta = tmp_path / "ag" / "metadata.yaml"
    before = stated_results(Paper(tmp_path / "ag"))
    meta.write_text(meta.read_text().replace("value: 0.405", "value: 0.41"))
    after = stated_results(Paper(tmp_path / "ag"))
    assert [r for r in before if before[r] != after[r]] == ["fig2"]
    shutil.copytree(DISK, tmp_path / "disk")
    meta = tmp_path / "disk" / "metadata.yaml"
    before = stated_results(Paper(tmp_path / "disk"))
    meta.write_text(meta.read_text().replace("Q: 1590}", "Q: 3180}"))
    after = stated_results(Paper(tmp_path / "disk"))
    assert (
        after["tab1"]["entry"]["rows"][-1]["Q"] == 3180 != before["tab1"]["entry"]["rows"][-1]["Q"]
    )
