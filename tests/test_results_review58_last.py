"""Review 58: result.json is written last (a stopped save leaves none), e.g. ``strategic simulate``
killed while drawing accuracy.png left result.json and revenue.png without accuracy.png."""

from __future__ import annotations

import json

import pytest

from trustlab._results import write_outputs


class _Result:
    figure_name = "revenue.png"

    def __init__(self, stop: bool):
        self.stop = stop

    def to_dict(self):
        return {"stop": self.stop}

    def plot(self, ax=None):
        ax.plot([0, 1])

    def files(self):
        def accuracy(ax=None):
            if self.stop:
                raise KeyboardInterrupt  # as if killed while drawing the second picture
            ax.plot([1, 0])

        return {"accuracy.png": accuracy}


def test_a_stopped_save_leaves_no_result_json(tmp_path):
    written = write_outputs(_Result(stop=False), tmp_path)
    assert [p.name for p in written] == ["result.json", "revenue.png", "accuracy.png"]
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    with pytest.raises(KeyboardInterrupt):  # rerun into the folder (--overwrite), stopped
        write_outputs(_Result(stop=True), tmp_path)
    # before: result.json was written first (and the earlier run's stayed): it named a complete
    # run beside a partial one. Review 67 (G2): the new files are written aside first, so the
    # folder still holds the earlier run whole, file for file (review 58 had it hold none)
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before
    write_outputs(_Result(stop=False), tmp_path)
    assert json.loads((tmp_path / "result.json").read_text()) == {"stop": False}
    files = tmp_path / "result.json", tmp_path / "accuracy.png"
    assert files[0].stat().st_mtime_ns >= files[1].stat().st_mtime_ns
