"""EquiGX beyond the rules: the contrast output, the model's masks, training (with resume), the
baselines against their oracles, and checks 5-6 of spec 10 on the shipped networks.

Checks 5-6 use graphs the networks never saw: the shapes network is scored on freshly generated
shapes (a seed not used in training or in choosing the network's settings), the QM9 network on the
held-out test part of the bundled subset. Each method is compared with random node scores, the
control that ties when a method carries no information about the ground truth.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("e3nn")
captum_attr = pytest.importorskip("captum.attr")

from test_equigx_relevance import rand_rotation  # noqa: E402  (the same random rotations)

from trustlab.errors import InputError  # noqa: E402
from trustlab.explain.equigx import (  # noqa: E402
    BASELINES,
    EquiGX,
    ExplanationEvaluation,
    PointGraph,
    TensorFieldNetwork,
    baseline_scores,
    checkpoint_data,
    checkpoint_info,
    evaluate_explanations,
    load_checkpoint,
    shapes_in_noise,
    train_tfn,
)

F64 = torch.float64


def small_net(n_classes=3, dtype="float64", seed=0, n_scalars=1, k=5):
    torch.manual_seed(seed)
    net = TensorFieldNetwork(
        n_classes=n_classes, n_scalars=n_scalars, mul=2, l_max=2, n_layers=2, k=k, radius=3.0,
        radial_hidden=8, dtype=dtype,
    )  # fmt: skip
    with torch.no_grad():
        for p in net.parameters():
            p.mul_(1.5)
    return net


def graph(n=9, seed=1):
    g = torch.Generator().manual_seed(seed)
    return PointGraph(pos=torch.randn(n, 3, generator=g, dtype=F64) * 1.2, x=torch.ones(n, 1))


# --------------------------------------------------------------------------- contrast output


@pytest.mark.parametrize("variant", ["componentwise", "block"])
def test_contrast_fast_form_equals_rules_and_conserves(variant):
    net, g = small_net(), graph()
    fast = EquiGX(net, output="contrast", variant=variant).explain(g, target=2)
    rules = EquiGX(net, output="contrast", variant=variant, method="rules", epsilon=1e-12)
    rules = rules.explain(g, target=2)
    assert abs(fast.total - 1) < 1e-9
    scale = np.abs(fast.node_relevance).max()
    assert np.abs(fast.node_relevance - rules.node_relevance).max() <= 1e-7 * scale
    assert np.abs(fast.edge_distance - rules.edge_distance).max() <= 1e-7 * scale


def test_contrast_equals_input_x_gradient_of_the_softmax_weighted_margin():
    """Oracle: with the identity NormActivation rule, layer-1 input relevance is (1/3)^L x
    captum IxG of the margin y_t - sum q_c y_c over its own value, with the scale detached."""
    net, g = small_net(), graph(seed=3)
    ex = EquiGX(net, output="contrast", norm_rule="identity").explain(g, target=0)
    logits = torch.as_tensor(ex.logits)
    p = torch.softmax(logits, 0)
    w = -p / p[1:].sum()
    w[0] = 1.0
    margin = float(logits @ w)
    h = g.x.to(F64)

    def f(x_in):  # the scalar inputs only (every other input held fixed)
        rows = []
        for xx in x_in:
            rows.append(_identity_forward(net, g.pos, xx) @ w / margin)
        return torch.stack(rows)

    attr = captum_attr.InputXGradient(f).attribute(h[None].clone().requires_grad_())[0]
    L = len(net.layers)
    np.testing.assert_allclose(
        ex.feature_relevance, (1 / 3) ** L * attr.detach().numpy(), rtol=0, atol=1e-9
    )


def _identity_forward(net, pos, h):
    """The network's forward with each NormActivation scale detached (the identity rule)."""
    from trustlab.explain.equigx.relevance import _act_scale

    edge_index = net.edges(pos, torch.zeros(len(pos), dtype=torch.long))
    Y, emb = net.geometry(pos, edge_index)
    x = net.embed(h, Y, edge_index)
    for layer in net.layers:
        m = layer.tp(x[edge_index[0]], Y, layer.radial(emb))
        y = layer.lin(net.aggregate(m, edge_index, len(pos)))
        x = y * _act_scale(layer.act, y).detach() if layer.act is not None else y
    return net.readout(x, torch.zeros(len(pos), dtype=torch.long))[0]


def test_binary_contrast_is_the_same_for_either_class():
    """For two classes the contrast of class 0 is minus that of class 1, and relevance is the
    contrast over its own value: both explanations are the same numbers."""
    net, g = small_net(n_classes=2), graph(seed=5)
    a = EquiGX(net, output="contrast").explain(g, target=0)
    b = EquiGX(net, output="contrast").explain(g, target=1)
    np.testing.assert_allclose(a.node_relevance, b.node_relevance, rtol=1e-9, atol=1e-12)
    logit = EquiGX(net).explain(g, target=0)
    assert np.abs(logit.node_relevance - a.node_relevance).max() > 1e-3  # a different question


def test_contrast_is_rotation_invariant():
    net, g = small_net(), graph(seed=7)
    R = rand_rotation(3)
    a = EquiGX(net, output="contrast").explain(g, target=1)
    b = EquiGX(net, output="contrast").explain(PointGraph(pos=g.pos @ R.T + 0.7, x=g.x), target=1)
    assert (
        np.abs(a.node_relevance - b.node_relevance).max() <= 1e-6 * np.abs(a.node_relevance).max()
    )


# --------------------------------------------------------------------------- model masks


def test_edge_mask_of_ones_is_the_plain_forward_and_zeros_silence_every_message():
    net, g = small_net(), graph()
    plain = net(g)
    E = net.edges(g.pos, torch.zeros(9, dtype=torch.long)).shape[1]
    torch.testing.assert_close(net(g, edge_mask=torch.ones(E, dtype=F64)), plain)
    assert torch.count_nonzero(net(g, edge_mask=torch.zeros(E, dtype=F64))) == 0
    with pytest.raises(InputError, match="edge_mask"):
        net(g, edge_mask=torch.ones(E + 1, dtype=F64))


def test_mask_order_zeroes_those_components_and_keeps_invariance():
    net, g = small_net(), graph(seed=2)
    torch.testing.assert_close(net(g, mask_order=[]), net(g))
    masked = net(g, mask_order=[1])
    assert not torch.allclose(masked, net(g))
    R = rand_rotation(5)
    rotated = net(PointGraph(pos=g.pos @ R.T, x=g.x), mask_order=[1])
    torch.testing.assert_close(rotated, masked, rtol=1e-9, atol=1e-12)
    # with every order l >= 1 zeroed only distances reach the output: a mirror image ties
    mirrored = net(PointGraph(pos=g.pos * torch.tensor([-1.0, 1, 1], dtype=F64), x=g.x),
                   mask_order=[1, 2])  # fmt: skip
    torch.testing.assert_close(mirrored, net(g, mask_order=[1, 2]), rtol=1e-9, atol=1e-12)
    with pytest.raises(InputError, match="mask_order"):
        net(g, mask_order=[3])
    with pytest.raises(InputError, match="mask_order"):
        net(g, mask_order="ab")


# --------------------------------------------------------------------------- training


def test_training_learns_and_a_resumed_run_ends_where_an_uninterrupted_one_does(tmp_path):
    data = shapes_in_noise(48, variant="same_count", n_nodes=10, random_state=3)
    train, valid = data.split(0.25, random_state=0)

    def fresh():
        torch.manual_seed(0)
        return TensorFieldNetwork(n_classes=3, mul=2, l_max=1, k=4, radius=2.0)

    settings = dict(max_epochs=4, batch_size=12, random_state=0, learning_rate=2e-2)
    whole = fresh()
    h = train_tfn(whole, train, validation=valid, **settings)
    assert h.epochs == (1, 2, 3, 4) and h.train_loss[-1] < h.train_loss[0]

    class Stop(Exception):
        pass

    def crash(epoch, *args):
        if epoch == 2:
            raise Stop

    broken = fresh()
    with pytest.raises(Stop):
        train_tfn(broken, train, validation=valid, checkpoint_dir=tmp_path, progress=crash,
                  **settings)  # fmt: skip
    resumed = fresh()
    h2 = train_tfn(resumed, train, validation=valid, checkpoint_dir=tmp_path, **settings)
    assert h2.epochs == h.epochs
    np.testing.assert_allclose(h2.train_loss, h.train_loss, rtol=1e-6)
    for (k, a), b in zip(whole.state_dict().items(), resumed.state_dict().values(), strict=True):
        torch.testing.assert_close(a, b, msg=k)
    assert json.loads((tmp_path / "history.json").read_text())["epochs"] == [1, 2, 3, 4]
    d = h.to_dict()
    assert d["best_epoch"] in (1, 2, 3, 4) and "TFN training" in h.summary()


def test_training_rejects_mismatched_data():
    data = shapes_in_noise(6, variant="same_count", n_nodes=8, random_state=0)
    net = TensorFieldNetwork(n_classes=5, mul=2, l_max=1, k=4)
    with pytest.raises(InputError, match="train"):
        train_tfn(net, data, max_epochs=1)
    with pytest.raises(InputError, match="model"):
        train_tfn("net", data)
    net3 = TensorFieldNetwork(n_classes=3, mul=2, l_max=1, k=4)
    with pytest.raises(InputError, match="max_epochs"):
        train_tfn(net3, data, max_epochs=0)


# --------------------------------------------------------------------------- baselines


def test_gradient_baselines_match_autograd_and_completeness():
    net, g = small_net(), graph(seed=4)
    pos, h = g.pos.clone(), g.x.to(F64)
    centre = pos.mean(0, keepdim=True)
    pc = (pos - centre).requires_grad_()
    hh = h.clone().requires_grad_()
    out = net({"pos": pc + centre, "x": hh})[0, 1]
    gp, gh = torch.autograd.grad(out, (pc, hh))
    ixg = baseline_scores(net, g, "input_x_gradient", target=1)
    np.testing.assert_allclose(ixg, ((pc * gp).sum(1) + (hh * gh).sum(1)).detach(), atol=1e-10)
    grad = baseline_scores(net, g, "gradient", target=1)
    np.testing.assert_allclose(grad, (gp.norm(dim=1) + gh.abs().sum(1)).detach(), atol=1e-10)
    # integrated gradients against an independent Gauss-Legendre path integral of the gradient
    # (no completeness check: e3nn's NormActivation jumps where a scalar channel crosses zero,
    # sigma(|x| + b) sign(x), so f(input) - f(baseline) is not the integral of the gradient)
    n_steps = 20
    ig = baseline_scores(net, g, "integrated_gradients", target=1, n_steps=n_steps)
    nodes, weights = np.polynomial.legendre.leggauss(n_steps)
    manual = torch.zeros(len(pos), dtype=F64)
    for t, w in zip((nodes + 1) / 2, weights / 2, strict=True):
        pa = (float(t) * (pos - centre)).requires_grad_()
        xa = (float(t) * h).requires_grad_()
        ga, gb = torch.autograd.grad(net({"pos": pa + centre, "x": xa})[0, 1], (pa, xa))
        manual += w * (((pos - centre) * ga).sum(1) + (h * gb).sum(1))
    # (captum builds its nodes in float32-scale arithmetic: agreement to ~1e-8)
    np.testing.assert_allclose(ig, manual.numpy(), rtol=0, atol=1e-7 * np.abs(ig).max())


def test_grad_cam_is_rotation_invariant_and_random_is_seeded():
    net, g = small_net(), graph(seed=6)
    R = rand_rotation(9)
    a = baseline_scores(net, g, "grad_cam", target=0)
    b = baseline_scores(net, PointGraph(pos=g.pos @ R.T, x=g.x), "grad_cam", target=0)
    np.testing.assert_allclose(a, b, rtol=1e-7, atol=1e-10 * np.abs(a).max())
    r1 = baseline_scores(net, g, "random", random_state=3)
    assert np.array_equal(r1, baseline_scores(net, g, "random", random_state=3))
    assert not np.array_equal(r1, baseline_scores(net, g, "random", random_state=4))


def test_gnnexplainer_mask_is_learned_and_leaves_the_model_alone():
    net, g = small_net(), graph(seed=8)
    before = {k: v.clone() for k, v in net.state_dict().items()}
    s = baseline_scores(net, g, "gnnexplainer", target=2, random_state=0)
    E = net.edges(g.pos, torch.zeros(9, dtype=torch.long)).shape[1]
    assert s.shape == (9,) and np.all(s > 0) and s.sum() == pytest.approx(s.sum())
    assert 0 < s.sum() < 2 * E  # each edge's mask (in (0, 1)) counts at both its ends
    for k, v in net.state_dict().items():
        assert torch.equal(v, before[k]), k
    assert all(p.grad is None for p in net.parameters())


def test_baseline_bad_input():
    net, g = small_net(), graph()
    with pytest.raises(InputError, match="method"):
        baseline_scores(net, g, "lime")
    with pytest.raises(InputError, match="target"):
        baseline_scores(net, g, "grad_cam", target=7)
    assert set(BASELINES) >= {"random", "gnnexplainer"}


# --------------------------------------------------------------------------- checks 5-6


@pytest.fixture(scope="module")
def shapes_eval():
    net = load_checkpoint("shapes_platonic")
    fresh = shapes_in_noise(120, variant="platonic", random_state=2026)
    return evaluate_explanations(
        net, fresh, methods=["equigx", "equigx_block", "equigx_contrast", "random", "grad_cam"],
        max_graphs=120, random_state=7,
    )  # fmt: skip


@pytest.fixture(scope="module")
def qm9_eval():
    net = load_checkpoint("qm9_carbonyl")
    test = checkpoint_data("qm9_carbonyl")["test"]
    positives = test.subset(np.flatnonzero(test.labels == 1)[:80])
    return evaluate_explanations(
        net, positives, methods=["equigx", "equigx_contrast", "random", "grad_cam"],
        max_graphs=80, random_state=7,
    )  # fmt: skip


def test_shipped_networks_reach_their_accuracy_on_held_out_graphs(shapes_eval):
    assert shapes_eval.accuracy >= 0.9
    for name in ("shapes_platonic", "qm9_carbonyl"):
        assert checkpoint_info(name)["test_accuracy"] >= 0.9


def test_check5_shapes_equigx_finds_the_shape(shapes_eval):
    auroc = shapes_eval.auroc
    assert auroc["equigx"]["n"] >= 100
    assert auroc["equigx"]["estimate"] >= 0.80
    assert auroc["equigx"]["estimate"] >= auroc["random"]["estimate"] + 0.25
    assert auroc["equigx_block"]["estimate"] >= 0.80


def test_check6_deleting_equigx_top_nodes_hurts_more_than_random(shapes_eval):
    assert shapes_eval.fidelity_gap["equigx"] >= 0.1


def test_check5_qm9_equigx_finds_the_carbonyl(qm9_eval):
    auroc = qm9_eval.auroc
    assert auroc["equigx"]["n"] >= 60
    for method in ("equigx", "equigx_contrast"):
        assert auroc[method]["estimate"] >= 0.75
        assert auroc[method]["estimate"] >= auroc["random"]["estimate"] + 0.25


def _shift_all_logits(net, seed):
    """The same network with every class logit shifted by one graph-dependent amount (the same
    vector added to each output column of the last Linear): the softmax is unchanged."""
    shifted = TensorFieldNetwork(net.config)
    shifted.load_state_dict(net.state_dict())
    lin = shifted.layers[-1].lin
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for i, ins in enumerate(lin.instructions):
            view = lin.weight_view_for_instruction(i)
            view += 3.0 * torch.randn(ins.path_shape[0], 1, generator=g, dtype=view.dtype)
    return shifted


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_contrast_ignores_a_shift_shared_by_all_logits_and_the_logit_start_does_not(seed):
    """Logits are defined up to a shift shared by the classes. The contrast output explains the
    same function before and after such a shift (identical relevance); the paper's start, which
    divides by the target logit, changes with it (and flips sign where the logit does)."""
    net, g = small_net(seed=seed), graph(seed=10 + seed)
    shifted = _shift_all_logits(net, seed)
    p0 = torch.softmax(net(g), 1)
    torch.testing.assert_close(torch.softmax(shifted(g), 1), p0, rtol=1e-9, atol=1e-12)
    a = EquiGX(net, output="contrast").explain(g, target=1)
    b = EquiGX(shifted, output="contrast").explain(g, target=1)
    scale = np.abs(a.node_relevance).max()
    assert np.abs(a.node_relevance - b.node_relevance).max() <= 1e-7 * scale
    la = EquiGX(net).explain(g, target=1)
    lb = EquiGX(shifted).explain(g, target=1)
    assert np.abs(la.node_relevance - lb.node_relevance).max() > 1e-2 * scale


def test_evaluation_result_page_and_bad_input(shapes_eval, tmp_path):
    from trustlab.audit.sections.equigx import write_page

    assert isinstance(shapes_eval, ExplanationEvaluation)
    d = json.loads(json.dumps(shapes_eval.to_dict()))
    assert set(d["auroc"]) == set(shapes_eval.methods)
    assert abs(sum(shapes_eval.relevance_parts.values()) - 1) < 1e-3
    assert set(shapes_eval.order_accuracy) == {0, 1, 2}
    assert "random deletion" in shapes_eval.summary()
    html, js = write_page(shapes_eval, tmp_path)
    text = html.read_text()
    assert "Angular orders" in text and "equigx_block" in text
    net = load_checkpoint("shapes_platonic")
    data = shapes_in_noise(3, random_state=0)
    with pytest.raises(InputError, match="methods"):
        evaluate_explanations(net, data, methods=["lime"])
    with pytest.raises(InputError, match="fraction"):
        evaluate_explanations(net, data, fraction=1.5)
    with pytest.raises(InputError, match="dataset"):
        evaluate_explanations(net, shapes_in_noise(3, variant="same_count", random_state=0))


def test_interactive_view_is_one_self_contained_file(tmp_path):
    net, g = small_net(), graph()
    path = EquiGX(net).explain(g).to_html(tmp_path / "view.html")
    text = path.read_text()
    assert "<html" in text and "plotly" in text.lower() and "node 0:" in text
    assert "<script src=" not in text.replace('<script src="data:', "")


@pytest.mark.parametrize(
    ("norm_rule", "variant", "output", "k"),
    [("released", "componentwise", "logit", 5), ("identity", "block", "contrast", 5),
     ("released", "componentwise", "contrast", None)],
)  # fmt: skip
def test_explain_many_equals_one_at_a_time(norm_rule, variant, output, k):
    net = small_net(k=k)
    graphs = [graph(n=7 + i % 3, seed=20 + i) for i in range(5)]
    targets = [0, 2, 1, None, 2]
    ex = EquiGX(net, norm_rule=norm_rule, variant=variant, output=output)
    many = ex.explain_many(graphs, targets, batch_size=3)
    for g, t, m in zip(graphs, targets, many, strict=True):
        one = ex.explain(g, target=t)
        assert m.target == one.target and np.array_equal(m.edge_index, one.edge_index)
        scale = np.abs(one.node_relevance).max()
        for name in ("node_relevance", "edge_direction", "edge_distance", "feature_relevance"):
            np.testing.assert_allclose(getattr(m, name), getattr(one, name), rtol=0,
                                       atol=1e-10 * scale, err_msg=name)  # fmt: skip
        np.testing.assert_allclose(m.kappa, one.kappa, rtol=1e-10)
    with pytest.raises(InputError, match="targets"):
        ex.explain_many(graphs, [0])
    with pytest.raises(InputError, match="batch_size"):
        ex.explain_many(graphs, batch_size=0)


def test_knn_graph_keeps_ties_so_rounding_cannot_choose_edges():
    """A cube's vertex has three neighbours at distance 1 and three at sqrt(2): with k = 4 the
    ties at sqrt(2) are all kept, and the graph is the same after a rotation, a node permutation
    or inside a batch (rounding would otherwise pick one of the tied neighbours)."""
    from trustlab.explain.equigx.data import shape_vertices

    cube = torch.as_tensor(shape_vertices("cube"), dtype=torch.float32)
    net = TensorFieldNetwork(n_classes=2, mul=2, l_max=1, k=4, radius=5.0)
    zeros = torch.zeros(8, dtype=torch.long)
    edges = net.edges(cube, zeros)
    assert edges.shape[1] == 8 * 6  # 3 at distance 1 and all 3 tied at sqrt(2), per vertex

    def as_set(e, order=None):
        e = e.T.tolist() if order is None else [[order[a], order[b]] for a, b in e.T.tolist()]
        return {tuple(x) for x in e}

    R = rand_rotation(11).to(torch.float32)
    assert as_set(net.edges(cube @ R.T + 0.3, zeros)) == as_set(edges)
    perm = torch.randperm(8, generator=torch.Generator().manual_seed(0))
    back = perm.tolist()  # new index i holds old node perm[i]
    assert as_set(net.edges(cube[perm], zeros), back) == as_set(edges)
    two = torch.cat([torch.randn(5, 3), cube])
    batch = torch.tensor([0] * 5 + [1] * 8)
    inner = net.edges(two, batch)
    inner = inner[:, inner[1] >= 5] - 5
    assert as_set(inner) == as_set(edges)
