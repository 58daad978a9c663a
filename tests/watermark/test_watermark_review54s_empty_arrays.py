"""load_watermark_dataset on a saved folder whose arrays.npz is empty: numpy's EOFError was not
among the errors turned into one InputError naming the folder, so a bare EOFError escaped (the
function promises one error naming a damaged folder, never a raw traceback) (review 54s)."""

from __future__ import annotations

import pytest

from trustlab.errors import InputError
from trustlab.watermark import load_watermark_dataset, synthesize


def test_an_empty_arrays_file_is_an_input_error_naming_the_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a short path: the error shortens a long one with its reason
    folder = "wm"
    synthesize(2, random_state=3).save(folder)
    (tmp_path / folder / "arrays.npz").write_bytes(b"")
    with pytest.raises(InputError, match=r"^path: .*arrays\.npz is empty or cut short") as info:
        load_watermark_dataset(folder)
    assert "'wm (" in str(info.value)
