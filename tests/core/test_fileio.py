import json

import pytest

from reprolab.errors import InputFileError
from reprolab.fileio import atomic_write_json, read_json
from reprolab.paper import read_xy_csv


def test_atomic_write_leaves_no_temp_files(tmp_path):
    target = tmp_path / "a" / "b.json"
    atomic_write_json(target, {"x": 1})
    assert json.loads(target.read_text()) == {"x": 1}
    assert [p.name for p in target.parent.iterdir()] == ["b.json"]


def test_truncated_json_names_file_and_position(tmp_path):
    bad = tmp_path / "plan.json"
    bad.write_text('{"output": {"stages": [')
    with pytest.raises(InputFileError) as exc:
        read_json(bad)
    assert str(bad) in str(exc.value) and "line 1" in str(exc.value)


def test_digitized_csv_errors_name_line(tmp_path):
    bad = tmp_path / "c.csv"
    bad.write_text("x,y\n1,2\n3,abc\n")
    with pytest.raises(InputFileError, match="line 3"):
        read_xy_csv(bad)
    bad.write_text("a,b\n1,2\n")
    with pytest.raises(InputFileError, match="header 'x,y'"):
        read_xy_csv(bad)
