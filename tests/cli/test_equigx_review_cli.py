"""``trustlab explain equigx`` options refused in review pass 2: an evaluate --fraction that deletes
every node of a graph, and train --radius inf (a network with no message on any edge)."""

from __future__ import annotations

import pytest

from cli_helpers import one_line

pytest.importorskip("e3nn")


def test_cli_fraction_and_radius(run, tmp_path):
    code, _, err = run("explain", "equigx", "evaluate", "--checkpoint", "shapes_platonic",
                       "--methods", "random", "--max-graphs", "2", "--fraction", "0.97")  # fmt: skip
    assert code == 2 and one_line(err).startswith("trustlab: error: --fraction: ")
    code, _, err = run("explain", "equigx", "train", "--data", "shapes-same-count",
                       "--n-graphs", "20", "--max-epochs", "1", "--radius", "inf",
                       "--out", tmp_path / "m")  # fmt: skip
    assert code == 2 and one_line(err).startswith("trustlab: error: --radius: expected a finite")
    assert not (tmp_path / "m" / "config.json").exists()
