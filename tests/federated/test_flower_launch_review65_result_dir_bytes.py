"""Review 65: a result_dir whose name is not valid UTF-8 (a Linux file name with byte 0xff)
stopped write_flower_app with a raw UnicodeEncodeError after the app folder was made."""

import os

import pytest

from trustlab.errors import InputError
from trustlab.federated.flower_launch import write_flower_app


def test_a_result_dir_that_is_not_utf8_is_refused_naming_it(tmp_path):
    result_dir = tmp_path / os.fsdecode(b"result\xff")  # '\udcff' under surrogateescape
    with pytest.raises(InputError, match=r"^result_dir: expected a path that is valid UTF-8"):
        write_flower_app(tmp_path / "app", result_dir=result_dir)
    assert not (tmp_path / "app").exists()  # refused before the project folder is made


def test_a_non_ascii_utf8_result_dir_is_still_written(tmp_path):
    app = write_flower_app(tmp_path / "app", result_dir=tmp_path / "résultats")
    assert "résultats" in app.pyproject.read_text(encoding="utf-8")
