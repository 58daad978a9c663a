"""Diff review 62 C of 30a74018: a subset of a checked GraphDataset is not checked again.

30a74018 made every GraphDataset check each graph's label and node mask at construction,
subsets and splits included (recipe_data: 8,400 graph checks for the 3,000 QM9 molecules, 5,400
of them in its two splits; the equigx tests checked 146,260 graphs, 0.57 s). A subset's graphs
come from a dataset that checked them, so subset() and split() skip it; the graphs are the same.
"""

from __future__ import annotations

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.explain.equigx import Graph, GraphDataset, data, shapes_in_noise


def test_a_subset_is_not_checked_again(monkeypatch):
    ds = shapes_in_noise(6, variant="same_count", n_nodes=8, random_state=0)
    calls = []
    real = data._check_graphs
    monkeypatch.setattr(data, "_check_graphs", lambda *a: calls.append(a) or real(*a))
    sub = ds.subset([4, -1, 0])
    train, test = ds.split(0.5, random_state=0)
    assert calls == []  # split and subset take checked graphs
    assert type(sub.graphs) is tuple and sub.graphs == (ds[4], ds[5], ds[0])
    assert sub[0] is ds[4] and len(train) + len(test) == 6
    g = Graph(pos=np.zeros((8, 3)), x=np.ones((8, 1)), label=5, node_mask=np.arange(8) < 3)
    with pytest.raises(InputError, match=r"graphs\[0\]\.label"):  # hand-built: still checked
        GraphDataset(name="mine", class_names=("a", "b"), feature_names=("one",), graphs=(g,))
    assert len(calls) == 1
