"""Diff review 65 I of c88157b0: write_atomic writes through a symbolic link, but a link into a
folder that does not exist ended the command, after its work, in a raw FileNotFoundError naming
a temporary file ('trustlab agents learn-weights --out w.json', w.json -> gone/w.json: exit 1,
nothing written). Such a link is replaced by the file, as before c88157b0."""

import os

import pytest

from trustlab._results import write_atomic


def _symlink(target, link):
    try:
        os.symlink(target, link)
    except (OSError, NotImplementedError):  # pragma: no cover (no symlinks here)
        pytest.skip("symbolic links are not available")


@pytest.mark.parametrize("relative", [False, True])
def test_a_link_into_a_missing_folder_is_replaced_by_the_file(tmp_path, relative):
    link = tmp_path / "w.json"
    _symlink("gone/w.json" if relative else tmp_path / "gone" / "w.json", link)
    assert write_atomic(link, "new\n") == link
    assert not link.is_symlink() and link.read_text() == "new\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["w.json"]  # no temp left, no folder made


def test_a_dangling_link_into_an_existing_folder_makes_its_target(tmp_path):
    (tmp_path / "real").mkdir()
    link = tmp_path / "w.json"
    _symlink(os.path.join("real", "w.json"), link)
    write_atomic(link, b"new\n")
    assert link.is_symlink() and (tmp_path / "real" / "w.json").read_bytes() == b"new\n"
    assert sorted(p.name for p in (tmp_path / "real").iterdir()) == ["w.json"]
