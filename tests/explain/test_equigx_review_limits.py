"""EquiGX settings that used to end badly (review pass 2): an evaluation --fraction that deletes
every node of a graph (blamed graph.pos), and an infinite radial cut-off or neighbour count (a
network whose output is 0 on every graph, trained and saved as 'Infinity' without a word)."""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("e3nn")

from trustlab.errors import InputError  # noqa: E402
from trustlab.explain.equigx import (  # noqa: E402
    TensorFieldNetwork,
    evaluate_explanations,
    shapes_in_noise,
)


@pytest.fixture(scope="module")
def setup():
    torch.manual_seed(0)
    data = shapes_in_noise(3, variant="same_count", n_nodes=10, random_state=0)
    return TensorFieldNetwork(n_classes=3, mul=2, l_max=1, k=4, radius=2.0), data


@pytest.mark.parametrize("fraction", [0.95, 0.91])  # ceil(fraction * 10) = 10 nodes
def test_a_fraction_deleting_every_node_names_fraction(setup, fraction):
    net, data = setup
    with pytest.raises(InputError, match=r"^fraction: .*smallest has 10 nodes: below 0\.9\)"):
        evaluate_explanations(net, data, methods=["random"], n_random=1, fraction=fraction)


def test_the_largest_fraction_leaving_a_node_still_evaluates(setup):
    net, data = setup
    ev = evaluate_explanations(net, data, methods=["random"], n_random=1, fraction=0.9)
    assert 0.0 <= ev.accuracy_after_deletion["random"] <= 1.0


@pytest.mark.parametrize("name", ["radius", "avg_neighbors"])
def test_an_infinite_cut_off_or_neighbour_count_is_refused(name):
    with pytest.raises(InputError, match=rf"^{name}: expected a finite positive number"):
        TensorFieldNetwork(n_classes=2, mul=1, l_max=1, k=4, **{name: math.inf})


def test_the_plot_draws_an_auroc_of_zero_and_a_lower_bound_of_zero(setup):
    """``estimate or nan`` / ``low or estimate`` dropped zeros: an AUROC of 0 drew no bar and an
    interval [0, 0.2] around 0.1 lost its lower half."""
    import dataclasses

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    net, data = setup
    ev = evaluate_explanations(net, data, methods=["random", "gradient"], n_random=1)
    ev = dataclasses.replace(ev, auroc={
        "random": {"estimate": 0.1, "low": 0.0, "high": 0.2, "n": 2},
        "gradient": {"estimate": 0.0, "low": 0.0, "high": 0.0, "n": 2},
    })  # fmt: skip
    ax = ev.plot()
    bars = ax.containers[0].lines[2][0].get_segments()  # the horizontal error bars
    widths = [p.get_width() for p in ax.patches]
    plt.close(ax.figure)
    assert widths == [0.1, 0.0]
    assert [s[:, 0].tolist() for s in bars] == [[0.0, 0.2], [0.0, 0.0]]


def test_the_page_without_equigx_says_there_is_no_relevance_split(setup, tmp_path):
    """Without 'equigx' among the methods the page showed an empty 'EquiGX relevance on' table."""
    from trustlab.audit.sections.equigx import write_page

    net, data = setup
    ev = evaluate_explanations(net, data, methods=["random"], n_random=1)
    assert ev.relevance_parts == {}
    html, _ = write_page(ev, tmp_path)
    text = html.read_text()
    assert "No relevance split:" in text and "was not among the methods, or every" in text
    assert "EquiGX relevance on" not in text


def test_relevance_shares_leave_out_graphs_whose_output_is_zero(setup):
    """A graph without messages (relevance all 0) was averaged in: the shares no longer summed to
    1 (two graphs, one of them empty: 0.5)."""
    import dataclasses
    import warnings

    import numpy as np

    from trustlab.explain.equigx.data import Graph

    net, data = setup
    g = data[0]
    far = Graph(pos=100.0 * g.pos, x=g.x, label=g.label, node_mask=g.node_mask)
    two = dataclasses.replace(data, graphs=(g, far))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the empty graph's own warning
        ev = evaluate_explanations(net, two, methods=["equigx"], n_random=1)
        one = evaluate_explanations(net, data.subset([0]), methods=["equigx"], n_random=1)
    assert sum(ev.relevance_parts.values()) == pytest.approx(1.0, abs=1e-5)
    assert ev.relevance_parts == pytest.approx(one.relevance_parts, abs=1e-9)
    assert np.isfinite(list(ev.relevance_parts.values())).all()
