"""No test writes a tracked file: the session's guard (tests/conftest.py) sees a
tracked file rewritten and a new file left behind, and nothing git ignores."""

import subprocess

from tests.support import checkout


def git(repo, *args):
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


def test_a_rewritten_tracked_file_and_a_new_file_are_seen_an_ignored_one_is_not(tmp_path):
    git(tmp_path, "init", "-q")
    (tmp_path / ".gitignore").write_text(".pytest_cache/\n")
    (tmp_path / "results.md").write_text("measured once\n")
    git(tmp_path, "add", ".")
    git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x")
    (tmp_path / "draft.txt").write_text("the user's own work in progress\n")
    before = checkout.status(tmp_path)

    (tmp_path / "results.md").write_text("overwritten by a test\n")
    (tmp_path / "left_behind.json").write_text("{}\n")
    (tmp_path / ".pytest_cache").mkdir()
    (tmp_path / ".pytest_cache" / "test_time.json").write_text("{}\n")

    assert checkout.written(before, checkout.status(tmp_path)) == [
        " M results.md",
        "?? left_behind.json",
    ]


def test_outside_a_git_checkout_nothing_is_claimed(tmp_path):
    assert checkout.status(tmp_path) is None
    assert checkout.written(None, None) == []
