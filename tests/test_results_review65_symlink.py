"""Review 65: write_atomic (every CLI --out file) replaced a symbolic link by a plain file, so
the file the link pointed to kept its old content. Now it writes the link's target, as open()
and cp do; the link stays."""

import os

import pytest

from trustlab._results import write_atomic


def _link(tmp_path):
    (tmp_path / "real").mkdir()
    target = tmp_path / "real" / "report.json"
    target.write_text("old\n")
    link = tmp_path / "report.json"
    try:
        os.symlink(target, link)
    except (OSError, NotImplementedError):  # pragma: no cover (no symlinks here)
        pytest.skip("symbolic links are not available")
    return link, target


@pytest.mark.parametrize("data", ["new\n", b"new\n", lambda p: p.write_text("new\n")])
def test_a_symlink_is_written_through(tmp_path, data):
    link, target = _link(tmp_path)
    assert write_atomic(link, data) == link
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_text() == "new\n"
    assert sorted(p.name for p in (tmp_path / "real").iterdir()) == ["report.json"]  # no temp left
