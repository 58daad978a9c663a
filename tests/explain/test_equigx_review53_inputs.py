"""Graphs a chemist brings (review 53): coordinates beyond float32's range are named as such (not
'NaN or infinity'), a --graph file without 'x' for a network with several node features is refused
naming --graph, a one-atom summary says '1 node', and the docs say that a kNN network's input
embedding reads neighbours beyond the radial cut-off (a second molecule however far away)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from cli_helpers import one_line, run_main

torch = pytest.importorskip("torch")
pytest.importorskip("e3nn")

from trustlab.errors import InputError  # noqa: E402
from trustlab.explain.equigx import EquiGX, load_checkpoint  # noqa: E402
from trustlab.explain.equigx.model import TensorFieldNetwork  # noqa: E402

PAGE = Path(__file__).resolve().parents[2] / "docs" / "explain-equigx.md"
FORMALDEHYDE = {
    "pos": [[0.0, 0.0, 0.0], [1.21, 0.0, 0.0], [-0.6, 0.94, 0.0], [-0.6, -0.94, 0.0]],
    "x": [[0, 1, 0, 0, 0], [0, 0, 0, 1, 0], [1, 0, 0, 0, 0], [1, 0, 0, 0, 0]],
}


@pytest.fixture(scope="module")
def net32():
    torch.manual_seed(0)
    return TensorFieldNetwork(n_classes=2, mul=2, l_max=1, n_layers=1, k=3, radius=2.0)


@pytest.mark.parametrize("name", ["pos", "x"])
def test_finite_values_beyond_float32_are_not_called_nan(net32, name):
    graph = {"pos": np.random.default_rng(0).normal(size=(5, 3)), "x": np.ones((5, 1))}
    graph[name] = graph[name].copy()
    graph[name][1, 0] = 1e300  # finite in the file, infinite in float32
    with pytest.raises(InputError, match=r"float32's range .*got 'values up to 1e\+300'") as exc:
        EquiGX(net32).explain(graph)
    assert exc.value.argument == f"graph.{name}" and "NaN" not in str(exc.value)
    graph[name][1, 0] = np.nan  # a real NaN is still named so
    with pytest.raises(InputError, match="NaN or infinity"):
        net32(graph)


def test_a_one_node_summary_says_one_node(net32):
    with pytest.warns(UserWarning, match="output is 0"):
        ex = EquiGX(net32).explain({"pos": [[0.0, 0.0, 0.0]], "x": [[1.0]]})
    assert "1 node, 0 edges;" in ex.summary()


def test_a_graph_file_without_x_for_a_network_of_five_features(capsys, tmp_path):
    def run(*args):
        return run_main(args, capsys)

    no_x = tmp_path / "no_x.json"
    no_x.write_text(json.dumps({"pos": FORMALDEHYDE["pos"]}))
    npz = tmp_path / "no_x.npz"
    np.savez(npz, pos=np.array(FORMALDEHYDE["pos"]))
    for path in (no_x, npz):
        code, _, err = run("explain", "equigx", "explain", "--checkpoint", "qm9_carbonyl",
                           "--graph", path)  # fmt: skip
        line = one_line(err)
        assert code == 2, err
        assert line.startswith("trustlab: error: --graph: expected 'x' (5 features per node")
        assert "graph.x" not in line
    with_x = tmp_path / "with_x.json"
    with_x.write_text(json.dumps(FORMALDEHYDE))
    code, out, err = run("explain", "equigx", "explain", "--checkpoint", "qm9_carbonyl",
                         "--graph", with_x)  # fmt: skip
    assert code == 0, err
    assert "4 nodes, 12 edges" in out


def test_a_far_second_molecule_changes_the_first_and_the_docs_say_so():
    net = load_checkpoint("qm9_carbonyl")
    pos, x = np.array(FORMALDEHYDE["pos"]), np.array(FORMALDEHYDE["x"], dtype=float)
    with torch.no_grad():
        one = net({"pos": pos, "x": x})[0].numpy()
        two = net({"pos": np.vstack([pos, pos + [1e4, 0, 0]]), "x": np.vstack([x, x])})[0].numpy()
    assert np.abs(two - 2 * one).max() > 0.5  # the embedding reads the far neighbours
    text = " ".join(PAGE.read_text().split())
    assert "also where they lie beyond the radial cut-off" in text
    assert "(-6.17, 9.45)" in text and f"({2 * one[0]:.2f}, {2 * one[1]:.2f})" in text
    assert f"({two[0]:.2f}, {two[1]:.2f})" == "(-6.17, 9.45)"


def test_an_evaluation_of_one_graph_says_one_graph():
    from trustlab.audit.sections.equigx import build_page
    from trustlab.explain.equigx import checkpoint_data, evaluate_explanations

    net = load_checkpoint("shapes_platonic")
    test = checkpoint_data("shapes_platonic")["test"]
    ev = evaluate_explanations(net, test, methods=["equigx", "random"], max_graphs=1, n_random=1)
    assert ev.n_graphs == 1 and ev.n_explained == 1
    assert ": 1 graph, accuracy 1.000; 1 correctly classified graph with ground truth" in (
        ev.summary()
    )
    page = build_page(ev)
    assert page.sections[0].summary.startswith("1 graph, accuracy 1.000;")


def test_an_evaluation_with_a_one_node_graph_names_the_dataset(net32):
    from trustlab.explain.equigx import evaluate_explanations
    from trustlab.explain.equigx.data import Graph, GraphDataset

    rng = np.random.default_rng(0)
    graphs = (
        Graph(pos=rng.normal(size=(6, 3)), x=np.ones((6, 1)), label=1, node_mask=np.arange(6) < 3),
        Graph(pos=np.zeros((1, 3)), x=np.ones((1, 1)), label=0, node_mask=np.array([True])),
    )
    data = GraphDataset("mixed", ("a", "b"), ("one",), graphs)
    with pytest.raises(InputError, match=r"^dataset: .*got 'graph 1 with 1 node'") as exc:
        evaluate_explanations(net32, data, methods=["random"], n_random=1)
    assert "1 nodes" not in str(exc.value) and "below 0" not in str(exc.value)
