"""ResultStore refuses a path with a NUL character in words (review 67).

Measured on 1b2aaee5: ``ResultStore("a\\0b")`` stopped on pathlib's bare ``ValueError: embedded
null byte`` (from ``Path.is_dir``); no file name can hold the character. Now an InputError naming
``path``, as for the store's other bad paths.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from trustlab.errors import InputError
from trustlab.llm.store import ResultStore


@pytest.mark.parametrize("path", ["a\0b.db", "dir\0/x.db"], ids=["file", "folder"])
def test_a_path_with_a_nul_character_is_refused(path, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InputError, match=r"^path: expected a file path without a NUL") as info:
        ResultStore(path)
    assert info.value.argument == "path"
    with pytest.raises(InputError, match=r"^path: "):
        ResultStore(Path("x") / path)
    assert list(tmp_path.iterdir()) == []  # nothing made


def test_an_ordinary_path_still_opens(tmp_path):
    with ResultStore(tmp_path / "sub" / "r.db") as store:
        assert store.map("sq", [2], lambda k: k * k) == {2: 4}
