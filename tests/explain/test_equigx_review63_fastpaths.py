"""Review 63 (speed): the evaluation's per-graph node average precision is computed in the same
float operations as sklearn's ``average_precision_score``, without one sklearn call per graph and
method, and equal to it bit for bit (ties too); a baseline asked for a given target of a trustlab
network spends no forward pass on checking the target (``random`` runs no forward at all)."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("e3nn")
from sklearn import metrics  # noqa: E402

from trustlab.errors import InputError  # noqa: E402
from trustlab.explain.equigx import (  # noqa: E402
    TensorFieldNetwork,
    baseline_scores,
    evaluate_explanations,
    shapes_in_noise,
)
from trustlab.explain.equigx.evaluation import _ap  # noqa: E402


@pytest.mark.parametrize("kind", ["continuous", "three values", "all equal", "rounded", "f32"])
def test_node_average_precision_is_sklearns_bit_for_bit(kind):
    rng = np.random.default_rng(6301)
    for _ in range(25):
        n = int(rng.integers(2, 40))
        mask = rng.random(n) < rng.uniform(0.1, 0.9)
        mask[0], mask[-1] = True, False  # both kinds of node
        score = {
            "continuous": rng.normal(size=n),
            "three values": rng.integers(0, 3, size=n).astype(float),
            "all equal": np.full(n, 0.25),
            "rounded": np.round(rng.normal(size=n), 1),
            "f32": (rng.normal(size=n) * 1e-6).astype(np.float32),
        }[kind]
        assert _ap(mask, score) == float(metrics.average_precision_score(mask, score))


def test_node_average_precision_keeps_sklearns_answers_where_undefined():
    with pytest.warns(UserWarning, match="No positive class"):
        assert _ap(np.array([False, False]), np.array([0.1, 0.2])) == 0.0
    assert _ap(np.array([True, True]), np.array([0.1, 0.2])) == 1.0
    with pytest.raises(ValueError, match="NaN"):
        _ap(np.array([True, False]), np.array([np.nan, 0.2]))


@pytest.fixture(scope="module")
def net_and_graphs():
    torch.manual_seed(6302)
    net = TensorFieldNetwork(n_classes=3, mul=2, l_max=1, n_layers=2, k=4, dtype="float64")
    return net, shapes_in_noise(6, variant="same_count", n_nodes=10, random_state=6302)


def test_the_evaluation_does_not_call_sklearn_per_graph_for_average_precision(
    net_and_graphs, monkeypatch
):
    net, data = net_and_graphs
    calls = []
    monkeypatch.setattr(metrics, "average_precision_score", lambda *a, **k: calls.append(1) or 0.5)
    ev = evaluate_explanations(net, data, methods=["random"], n_random=1)
    assert calls == [] and ev.average_precision["random"]["n"] == ev.n_explained


def test_a_given_target_costs_no_forward_pass_and_scores_as_the_predicted_one(
    net_and_graphs, monkeypatch
):
    net, data = net_and_graphs
    g = data[0]
    predicted = baseline_scores(net, g, "grad_cam")  # target None: the forward finds it
    with torch.no_grad():
        logits = net({"pos": torch.as_tensor(g.pos), "x": torch.as_tensor(g.x)})[0]
    target = int(torch.argmax(logits))
    forwards = []
    real = TensorFieldNetwork.forward

    def counting(self, *args, **kwargs):
        forwards.append(1)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(TensorFieldNetwork, "forward", counting)
    assert np.array_equal(baseline_scores(net, g, "grad_cam", target=target), predicted)
    assert len(forwards) == 1  # grad_cam's own pass only
    baseline_scores(net, g, "random", target=0, random_state=1)
    assert len(forwards) == 1
    with pytest.raises(InputError, match=r"target.*0\.\.2"):
        baseline_scores(net, g, "random", target=3)
    with pytest.raises(InputError, match="target"):
        baseline_scores(net, g, "grad_cam", target=True)
