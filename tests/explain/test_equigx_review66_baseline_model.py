"""``baseline_scores`` names a model that is no TensorFieldNetwork (review 66).

Measured before: ``baseline_scores(None, graph, "gradient")`` raised a bare
``AttributeError: 'NoneType' object has no attribute 'parameters'`` (a string model the same for
'str'), where ``EquiGX``, ``predict_graphs``, ``train_tfn`` and ``evaluate_explanations`` refuse it
as an InputError naming ``model``. Now ``baseline_scores`` does too, before any other check; a
network (and a subclass of one) is scored as before.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("e3nn")
torch = pytest.importorskip("torch")

from trustlab.errors import InputError  # noqa: E402


@pytest.fixture(scope="module")
def net_and_graph():
    from trustlab.explain.equigx import TensorFieldNetwork, shapes_in_noise

    torch.manual_seed(0)
    net = TensorFieldNetwork(n_classes=3, mul=2, l_max=1, k=4, radius=2.0)
    graph = shapes_in_noise(1, variant="same_count", n_nodes=8, random_state=0)[0]
    return net, graph


@pytest.mark.parametrize("model", [None, "net", torch.nn.Linear(3, 3)])
@pytest.mark.parametrize("method", ["random", "gradient"])
def test_a_model_that_is_no_network_is_named(net_and_graph, model, method):
    from trustlab.explain.equigx import baseline_scores

    _, graph = net_and_graph
    with pytest.raises(InputError) as info:
        baseline_scores(model, graph, method, target=0)
    assert info.value.argument == "model"
    assert "TensorFieldNetwork" in str(info.value)


def test_a_network_is_scored_as_before(net_and_graph):
    from trustlab.explain.equigx import baseline_scores

    net, graph = net_and_graph
    scores = baseline_scores(net, graph, "grad_cam", target=0)
    assert scores.shape == (8,) and np.isfinite(scores).all()
