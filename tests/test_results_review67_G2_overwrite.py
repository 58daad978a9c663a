"""Review 67 (G2): an overwrite of a result folder stopped partway keeps the earlier result.

``write_outputs`` removed the earlier ``result.json`` first and then wrote the new files in
place: stopped at any of them (Ctrl-C, a full disk), the folder held no result at all, some new
files beside the earlier ones. Now the new files are written aside first (``replace_saved``):
stopped there, the folder holds the earlier result, file for file and byte for byte."""

from __future__ import annotations

import json
from unittest import mock

import numpy as np
import pandas as pd
import pytest

import trustlab._results as results
from trustlab._results import write_outputs

NAMES = ["picture.png", "table.csv", "values.npy", "notes.txt", "more.png"]


class _Result:
    figure_name = "picture.png"

    def __init__(self, run: int):
        self.run = run

    def to_dict(self):
        return {"run": self.run}

    def plot(self, ax=None):
        ax.plot([0, self.run])

    def files(self):
        return {
            "table.csv": pd.DataFrame({"run": [self.run]}),
            "values.npy": np.array([self.run]),
            "notes.txt": f"run {self.run}",
            "more.png": lambda ax=None: ax.plot([self.run, 0]),
        }


def _contents(folder):
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def _stop_at(name):
    write = results.write_atomic

    def stop(path, *args):
        if path.name in (name, f".{name}.new"):  # in place or staged beside it
            raise KeyboardInterrupt
        return write(path, *args)

    return mock.patch.object(results, "write_atomic", stop)


@pytest.mark.parametrize("name", NAMES)
def test_an_overwrite_stopped_at_a_file_keeps_the_earlier_result(tmp_path, name):
    write_outputs(_Result(1), tmp_path)
    before = _contents(tmp_path)
    assert sorted(before) == sorted([*NAMES, "result.json"])
    with _stop_at(name), pytest.raises(KeyboardInterrupt):
        write_outputs(_Result(2), tmp_path)
    # before: result.json gone and the new files up to the stop in place (no result at all)
    assert _contents(tmp_path) == before
    written = write_outputs(_Result(2), tmp_path)  # the rerun saves the new result whole
    assert [p.name for p in written] == ["result.json", *NAMES]
    assert json.loads((tmp_path / "result.json").read_text()) == {"run": 2}
    assert (tmp_path / "notes.txt").read_text() == "run 2"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([*NAMES, "result.json"])


def test_an_overwrite_stopped_at_result_json_leaves_no_result_and_no_stray_file(tmp_path):
    write_outputs(_Result(1), tmp_path)
    with _stop_at("result.json"), pytest.raises(KeyboardInterrupt):
        write_outputs(_Result(2), tmp_path)
    # the new files are in place but no result.json names them: nothing reads as a result
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(NAMES)
    assert (tmp_path / "notes.txt").read_text() == "run 2"
