"""Review 55: ``EquiGX(epsilon=0)`` is accepted ("a number >= 0"; the fast form needs no
stabiliser), but the block variant and the rule path divided 0 by 0 on a node without edges (a
radius graph) and returned NaN relevance without a word. A sum of nothing now shares nothing."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("e3nn")

from trustlab.explain.equigx import EquiGX, PointGraph, TensorFieldNetwork  # noqa: E402


def test_epsilon_zero_on_a_node_without_edges_conserves_and_matches_the_fast_form():
    torch.manual_seed(5503)
    net = TensorFieldNetwork(n_classes=3, n_scalars=2, mul=2, l_max=2, n_layers=2, k=None,
                             radius=1.6, dtype="float64")  # fmt: skip
    rng = np.random.default_rng(5503)
    pos = np.vstack([rng.normal(size=(6, 3)) * 0.7, [[20.0, 0.0, 0.0]]])  # node 6: no edges
    g = PointGraph(pos=pos, x=rng.normal(size=(7, 2)))
    fast = EquiGX(net, epsilon=0).explain(g, target=1)
    assert np.isfinite(fast.node_relevance).all() and fast.total == pytest.approx(1, abs=1e-9)
    for kwargs in (
        {"method": "rules"},
        {"variant": "block"},
        {"variant": "block", "method": "rules"},
    ):
        ex = EquiGX(net, epsilon=0, **kwargs).explain(g, target=1)
        assert np.isfinite(ex.node_relevance).all(), kwargs
        assert ex.node_relevance.sum() == pytest.approx(1, abs=1e-9), kwargs
        assert ex.node_relevance[6] == 0.0, kwargs
        if kwargs == {"method": "rules"}:  # without a stabiliser the two paths are one
            assert ex.node_relevance == pytest.approx(fast.node_relevance, abs=1e-9)
        else:  # the block variant: as with a stabiliser too small to matter
            tiny = EquiGX(net, epsilon=1e-150, **kwargs).explain(g, target=1)
            assert ex.node_relevance == pytest.approx(tiny.node_relevance, abs=1e-9), kwargs
