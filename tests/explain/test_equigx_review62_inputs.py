"""Review 62: numbers the EquiGX public boundary refused or took wrongly.

- ``EquiGX(epsilon=inf)`` was accepted: the rules path then shared every relevance into the
  stabiliser (total 0) while the fast form ignored it (total 1); ``epsilon=True`` read as 1.
- ``explain_many(batch_size=np.int64(2))`` was refused as "expected a positive integer, got 2".
- ``evaluate_explanations(fraction=np.float32(0.2))`` (or a numpy ``confidence_level``) was
  refused as "expected a number in (0, 1), got 0.2".
- a pandas DataFrame of positions (columns x, y, z) was refused with torch's "expected sequence
  of length 8 at dim 0 (got 3)"; it is now read as its numbers.
- ``baseline_scores(target=True)`` explained class 1; ``n_steps=0`` or ``2.5`` raised captum's
  AssertionError or a TypeError.
- ``recipe_data`` of a string, None or a spec with a misspelt key raised ValueError or TypeError.
- ``predict_graphs(batch_size=-1)`` returned no logits; a single graph, a PointGraph, a dict or
  another model raised bare TypeError or AttributeError.
- a hand-built ``GraphDataset`` with a label outside its classes or a node mask of another length
  (or of numbers other than 0/1) reached training and scoring as bare IndexError / ValueError.
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("e3nn")
pd = pytest.importorskip("pandas")

from trustlab.errors import InputError  # noqa: E402
from trustlab.explain.equigx import (  # noqa: E402
    EquiGX,
    PointGraph,
    TensorFieldNetwork,
    baseline_scores,
    evaluate_explanations,
    shapes_in_noise,
)


@pytest.fixture(scope="module")
def net():
    torch.manual_seed(62)
    return TensorFieldNetwork(n_classes=3, mul=2, l_max=1, k=4, radius=2.0, dtype="float64")


@pytest.fixture(scope="module")
def graph():
    rng = np.random.default_rng(62)
    return PointGraph(pos=rng.normal(size=(7, 3)), x=np.ones((7, 1)))


@pytest.mark.parametrize("eps", [float("inf"), True, float("nan"), -1e-7])
def test_epsilon_must_be_a_finite_number(net, eps):
    with pytest.raises(InputError, match="epsilon"):
        EquiGX(net, epsilon=eps)


def test_numpy_batch_size_is_an_integer(net, graph):
    many = EquiGX(net).explain_many([graph, graph, graph], batch_size=np.int64(2))
    assert [round(e.total, 9) for e in many] == [1.0, 1.0, 1.0]


def test_numpy_fraction_and_confidence_level_are_numbers(net):
    # both pass their check: the first argument refused is the next one, n_random (checked
    # before any graph is explained, so the test needs no evaluation run)
    data = shapes_in_noise(3, variant="same_count", n_nodes=8, random_state=0)
    with pytest.raises(InputError, match="^n_random"):
        evaluate_explanations(
            net, data, methods=["random"], n_random=0, fraction=np.float32(0.25),
            confidence_level=np.float32(0.9),
        )  # fmt: skip


def test_pandas_positions_give_the_numpy_explanation(net, graph):
    frame = pd.DataFrame(np.asarray(graph.pos), columns=["x", "y", "z"])
    a = EquiGX(net).explain({"pos": frame, "x": pd.Series(np.ones(7))}, target=2)
    b = EquiGX(net).explain(graph, target=2)
    np.testing.assert_array_equal(a.node_relevance, b.node_relevance)


def test_baseline_target_true_is_not_class_one(net, graph):
    with pytest.raises(InputError, match="target"):
        baseline_scores(net, graph, "grad_cam", target=True)


@pytest.mark.parametrize("steps", [0, 2.5])
def test_baseline_n_steps_is_checked(net, graph, steps):
    # captum asserted 'The number of steps has to be larger than zero'; numpy a TypeError on 2.5
    with pytest.raises(InputError, match="^n_steps"):
        baseline_scores(net, graph, "integrated_gradients", n_steps=steps)


@pytest.mark.parametrize(
    "spec", ["shapes_in_noise", None, {"source": "shapes_in_noise", "n_graph": 30}]
)
def test_recipe_data_names_a_bad_spec(spec):
    # a string: dict() raised ValueError; None: TypeError; a misspelt key: the generator's
    # TypeError 'unexpected keyword argument'
    from trustlab.explain.equigx import recipe_data

    with pytest.raises(InputError, match="^data"):
        recipe_data(spec)


def test_predict_graphs_checks_its_arguments(net, graph):
    from trustlab.explain.equigx import predict_graphs

    # batch_size -1 returned a (0, 3) array of logits for 2 graphs; 0 a bare ValueError
    for size in (-1, 0, 2.5):
        with pytest.raises(InputError, match="^batch_size"):
            predict_graphs(net, [graph, graph], batch_size=size)
    with pytest.raises(InputError, match="^graphs"):  # was "TypeError: not iterable"
        predict_graphs(net, graph)
    with pytest.raises(InputError, match="^model"):  # was a TypeError from torch
        predict_graphs(torch.nn.Linear(2, 2), [graph])
    # a PointGraph or a dict is a graph too (was "AttributeError: no attribute 'n_nodes'")
    as_dict = {"pos": graph.pos, "x": graph.x}
    logits = predict_graphs(net, [graph, as_dict], batch_size=1)
    np.testing.assert_allclose(logits[0], logits[1], rtol=0, atol=0)
    np.testing.assert_allclose(logits[0], net(graph).detach().numpy()[0], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(
    ("label", "mask", "argument"),
    [
        (5, np.arange(8) < 3, "graphs[0].label"),  # train_tfn: bare 'IndexError: Target 5'
        (True, np.arange(8) < 3, "graphs[0].label"),
        (0, np.array([True, True, False]), "graphs[0].node_mask"),  # numpy broadcast error
        (0, np.array([2, 0, 0, 0, 0, 0, 0, 1]), "graphs[0].node_mask"),  # sklearn multiclass
    ],
)
def test_hand_built_dataset_is_checked(label, mask, argument):
    from trustlab.explain.equigx import Graph, GraphDataset

    g = Graph(pos=np.zeros((8, 3)), x=np.ones((8, 1)), label=label, node_mask=mask)
    with pytest.raises(InputError, match=argument.replace("[", r"\[").replace("]", r"\]")):
        GraphDataset(name="mine", class_names=("a", "b"), feature_names=("one",), graphs=(g,))
