"""Knowledge YAML: the shipped files validate; new entries work without code changes."""

from __future__ import annotations

import pytest

from reprolab import knowledge
from reprolab.errors import InputFileError

NUMPY_NOTE = (
    "/usr/lib/python3/dist-packages/numpy/core/getlimits.py:518: UserWarning: The value of "
    "the smallest subnormal for <class 'numpy.float64'> type is zero.\n"
    "  setattr(self, word, getattr(machar, word).flat[0])\n"
)
DFT_RANGE = (
    "/usr/lib/python3/dist-packages/meep/simulation.py:1472: RuntimeWarning: DFT frequency "
    "6.66 is out of material's range of 0.15-4.7\n  warnings.warn(\n"
)


def test_shipped_files_validate():
    assert knowledge.log_warnings()
    assert knowledge.recoverable_errors()
    assert knowledge.diagnoses()


def test_numpy_subnormal_note_is_ignored_material_range_fails():
    assert knowledge.classify_log(NUMPY_NOTE) == []
    (hit,) = knowledge.classify_log(DFT_RANGE + DFT_RANGE)
    assert (hit["check"], hit["status"], hit["count"]) == ("materials_valid_range", "fail", 2)


def test_fix_hints_and_diagnosis_page():
    hints = knowledge.fix_hints("meep: fields are NaN or Inf at t = 12")
    assert [h["id"] for h in hints] == ["meep_fields_nan"]
    diag = knowledge.diagnose(["energy_conservation:spectrum.csv"])
    assert diag.id == "missing_normalisation"
    page = knowledge.diagnosis_html(
        diag,
        stage_id="stage1_x",
        failed=[{"name": "energy_conservation", "value": 1.0, "threshold": "", "detail": "<b>"}],
        log_tail="tail",
    )
    assert "<h1" in page and "&lt;b&gt;" in page
    assert "http" not in page and "<script" not in page  # self-contained


def test_new_entries_need_no_code(tmp_path):
    for name in ("log_warnings.yaml", "recoverable_errors.yaml", "diagnoses.yaml"):
        (tmp_path / name).write_text((knowledge.KNOWLEDGE_DIR / name).read_text())
    with open(tmp_path / "recoverable_errors.yaml", "a") as fh:
        fh.write("- id: my_new_error\n  pattern: 'frobnicated'\n  hint: do not frobnicate\n")
    hints = knowledge.fix_hints("the chunk was frobnicated", folder=tmp_path)
    assert [h["hint"] for h in hints] == ["do not frobnicate"]


def test_bad_entry_is_named(tmp_path):
    (tmp_path / "diagnoses.yaml").write_text("- id: x\n  pattern: '('\n")
    with pytest.raises(InputFileError, match=r"(?s)entry 0.*pattern"):
        knowledge.diagnoses(folder=tmp_path)
