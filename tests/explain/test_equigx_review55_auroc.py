"""Review 55: the evaluation's per-graph node AUROC is a rank statistic (Mann-Whitney U, ties
counted half), not one sklearn ``roc_auc_score`` call per graph and method (the docs-figures tests
made 700 of them); sklearn stays the oracle, to 1e-12, on tie-heavy scores too."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("e3nn")
from sklearn import metrics  # noqa: E402

from trustlab.explain.equigx import (  # noqa: E402
    EquiGX,
    TensorFieldNetwork,
    evaluate_explanations,
    predict_graphs,
    shapes_in_noise,
)
from trustlab.explain.equigx.evaluation import _auroc  # noqa: E402


def _scores(rng, n, kind):
    if kind == "continuous":
        return rng.normal(size=n)
    if kind == "three values":  # many ties, across both kinds of node
        return rng.integers(0, 3, size=n).astype(float)
    if kind == "all equal":
        return np.full(n, 0.25)
    if kind == "rounded":
        return np.round(rng.normal(size=n), 1)
    return (rng.normal(size=n) * 1e-6).astype(np.float32)  # float32 scores, tiny values


@pytest.mark.parametrize("kind", ["continuous", "three values", "all equal", "rounded", "f32"])
def test_rank_auroc_equals_sklearn_with_ties(kind):
    rng = np.random.default_rng(5501)
    for _ in range(25):
        n = int(rng.integers(2, 40))
        mask = rng.random(n) < rng.uniform(0.1, 0.9)
        mask[0], mask[-1] = True, False  # both kinds of node
        score = _scores(rng, n, kind)
        assert _auroc(mask, score) == pytest.approx(metrics.roc_auc_score(mask, score), abs=1e-12)


def test_rank_auroc_keeps_sklearn_answers_where_undefined():
    with pytest.warns(UserWarning, match="one class"):
        assert np.isnan(_auroc(np.array([True, True]), np.array([0.1, 0.2])))
    with pytest.raises(ValueError, match="NaN"):
        _auroc(np.array([True, False]), np.array([np.nan, 0.2]))


def test_evaluation_auroc_equals_sklearn_without_calling_it_per_graph(monkeypatch):
    torch.manual_seed(5502)
    net = TensorFieldNetwork(n_classes=3, mul=2, l_max=1, n_layers=2, k=4, dtype="float64")
    data = shapes_in_noise(9, variant="same_count", n_nodes=10, random_state=5502)
    oracle = metrics.roc_auc_score
    calls = []
    monkeypatch.setattr(metrics, "roc_auc_score", lambda *a, **k: calls.append(1) or 0.5)
    ev = evaluate_explanations(net, data, methods=["equigx", "random"], n_random=1)
    assert calls == []  # one rank statistic per graph, not sklearn
    graphs = list(data)
    correct = predict_graphs(net, graphs).argmax(1) == data.labels
    batch = EquiGX(net).explain_many(graphs, [int(g.label) for g in graphs])
    pairs = zip(graphs, batch, correct, strict=True)
    expected = [oracle(g.node_mask, ex.node_relevance) for g, ex, ok in pairs if ok]
    assert len(expected) >= 2
    assert ev.per_graph_auroc["equigx"] == pytest.approx(expected, abs=1e-12)
