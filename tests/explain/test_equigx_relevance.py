"""EquiGX relevance rules on random-initialised e3nn TFNs (float64, no training).

Checks of spec 10: (1) oracle equality with captum InputXGradient on the spec's wrappers,
(2) each e3nn Linear rule against captum LRP (EpsilonRule) on an equivalent nn.Linear,
(3) conservation per tensor product and for the whole model, (4) rotation / translation
invariance and permutation equivariance (componentwise and block variants); the fast form against
the rule-by-rule path; bad inputs.
"""

from __future__ import annotations

import dataclasses
import math
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("e3nn")
captum_attr = pytest.importorskip("captum.attr")

from e3nn import o3  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from trustlab.errors import InputError  # noqa: E402
from trustlab.explain.equigx import EquiGX, GraphExplanation, PointGraph  # noqa: E402
from trustlab.explain.equigx.model import TensorFieldNetwork  # noqa: E402
from trustlab.explain.equigx.relevance import _act_scale, linear_rule, tp_rule  # noqa: E402

F64 = torch.float64
RULES_EPS = 1e-12  # the rule path's stabiliser in the oracle comparisons


def make_net(tp="uvu", seed=0, n_layers=3, l_max=2, mul=2, k=None, n_scalars=2, n_classes=3):
    torch.manual_seed(seed)
    radius = 2.5 if k is None else 5.0
    net = TensorFieldNetwork(
        n_classes=n_classes,
        n_scalars=n_scalars,
        mul=mul,
        l_max=l_max,
        n_layers=n_layers,
        tp=tp,
        k=k,
        radius=radius,
        radial_hidden=8,
        dtype="float64",
    )
    # scale the weights up a little so relevance is not dominated by one path
    with torch.no_grad():
        for p in net.parameters():
            p.mul_(1.5)
    return net


def make_graph(n=9, seed=1, n_scalars=2):
    g = torch.Generator().manual_seed(seed)
    pos = torch.randn(n, 3, generator=g, dtype=F64) * 1.2
    x = torch.rand(n, n_scalars, generator=g, dtype=F64) + 0.5
    return PointGraph(pos=pos, x=x)


def rand_rotation(seed):
    g = torch.Generator().manual_seed(seed)
    q, r = torch.linalg.qr(torch.randn(3, 3, generator=g, dtype=F64))
    q = q * torch.sign(torch.diagonal(r))
    if torch.det(q) < 0:
        q[:, 0] = -q[:, 0]
    return q


def rel(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return float(np.abs(a - b).max() / max(np.abs(b).max(), 1e-300))


# ------------------------------------------------------------------ the spec's oracle wrappers


def wrapper_pieces(net, graph):
    """Edge index, SH, radial weights per layer, exactly as the model computes them."""
    pos, h = graph.pos, graph.x
    ei = net.edges(pos, torch.zeros(len(pos), dtype=torch.long))
    Y, emb = net.geometry(pos, ei)
    ws = [layer.radial(emb).detach() for layer in net.layers]
    return ei, h, Y.detach(), ws


def oracle_forward(net, ei, target, mode, record=None):
    """forward(h, Y_emb, Y_1, w_1, ..., Y_L, w_L) -> (1, C) with output / stopgrad(output[target]);
    mode "detached": NormActivation scale detached; "identity": activation passed as identity."""
    L = len(net.layers)
    src, dst = ei

    def f(h, Y_emb, *yw):
        n, dt = h.shape[0], h.dtype
        agg = torch.zeros(n, Y_emb.shape[1], dtype=dt).index_add(0, dst, Y_emb)
        x = torch.cat([h, agg / math.sqrt(net.config.avg_neighbors)], 1)
        for k, layer in enumerate(net.layers):
            Yk, wk = yw[2 * k], yw[2 * k + 1]
            m = layer.tp(x[src], Yk, wk)
            a = torch.zeros(n, m.shape[1], dtype=dt).index_add(0, dst, m)
            y = layer.lin(a / math.sqrt(net.config.avg_neighbors))
            if layer.act is not None:
                if mode == "detached":
                    z = y * _act_scale(layer.act, y).detach()
                else:
                    z = y + (layer.act(y) - y).detach()
                if record is not None:
                    record.append((y, z))
                x = z
            else:
                x = y
        out = x.sum(0, keepdim=True) / math.sqrt(net.config.avg_neighbors)
        return out / out[0, target].detach()

    assert L == len(net.layers)
    return f


def captum_ixg(net, graph, target, mode):
    ei, h, Y, ws = wrapper_pieces(net, graph)
    inputs = [h.clone(), Y.clone()]
    for w in ws:
        inputs += [Y.clone(), w.clone()]
    f = oracle_forward(net, ei, target, mode)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        attr = captum_attr.InputXGradient(f).attribute(tuple(inputs), target=target)
    return ei, [a.detach() for a in attr]


def kappas(net, graph, target):
    """The released rule's per-layer factors sum(R_out) / sum(R_out / s) = z.g / y.g."""
    ei, h, Y, ws = wrapper_pieces(net, graph)
    rec = []
    inputs = [h, Y]
    for w in ws:
        inputs += [Y, w]
    out = oracle_forward(net, ei, target, "identity", rec)(*inputs)[0, target]
    gz = torch.autograd.grad(out, [z for _, z in rec])
    ks = [
        float(((z * g).sum() / (y * g).sum()).detach()) for (y, z), g in zip(rec, gz, strict=True)
    ]
    return ks + [1.0]


# ------------------------------------------------------------------ check 1


@pytest.mark.parametrize("tp", ["uvu", "fully_connected"])
@pytest.mark.parametrize("method", ["rules", "fast"])
def test_identity_mode_equals_scaled_input_x_gradient(tp, method):
    net, graph, target = make_net(tp), make_graph(), 1
    L = len(net.layers)
    ex = EquiGX(net, norm_rule="identity", method=method, epsilon=RULES_EPS).explain(graph, target)
    _, attr = captum_ixg(net, graph, target, "detached")
    h_attr, emb_attr = attr[0], attr[1]
    scale = max(np.abs(ex.feature_relevance).max(), np.abs(ex.edge_direction_components).max())
    tol = 1e-7 * scale
    assert np.abs(ex.feature_relevance - (1 / 3) ** L * h_attr.numpy()).max() <= tol
    assert np.abs(ex.embedding_direction - (1 / 3) ** L * emb_attr.numpy()).max() <= tol
    for k in range(L):
        f = (1 / 3) ** (L - k)
        Y_attr, w_attr = attr[2 + 2 * k], attr[3 + 2 * k]
        assert np.abs(ex.layer_direction_components[k] - f * Y_attr.numpy()).max() <= tol
        assert np.abs(ex.layer_distance[k] - f * w_attr.sum(1).numpy()).max() <= tol
    # the relevance is not trivially small: the comparison has teeth
    assert np.abs(ex.edge_distance).max() > 1e-3


@pytest.mark.parametrize("tp", ["uvu", "fully_connected"])
@pytest.mark.parametrize("method", ["rules", "fast"])
def test_released_mode_equals_kappa_scaled_input_x_gradient(tp, method):
    net, graph, target = make_net(tp, seed=3), make_graph(seed=4), 2
    L = len(net.layers)
    ex = EquiGX(net, norm_rule="released", method=method, epsilon=RULES_EPS).explain(graph, target)
    _, attr = captum_ixg(net, graph, target, "identity")
    ks = kappas(net, graph, target)
    assert np.allclose(ex.kappa, ks, rtol=1e-7, atol=0)
    assert all(abs(k - 1) > 1e-3 for k in ks[:-1])  # the renormalisation really acts
    scale = max(np.abs(ex.feature_relevance).max(), np.abs(ex.edge_direction_components).max())
    tol = 1e-7 * scale
    f0 = (1 / 3) ** L * math.prod(ks)
    assert np.abs(ex.feature_relevance - f0 * attr[0].numpy()).max() <= tol
    for k in range(L):
        f = (1 / 3) ** (L - k) * math.prod(ks[k:])
        assert np.abs(ex.layer_direction_components[k] - f * attr[2 + 2 * k].numpy()).max() <= tol
        assert np.abs(ex.layer_distance[k] - f * attr[3 + 2 * k].sum(1).numpy()).max() <= tol


@pytest.mark.parametrize("method", ["fast", "rules"])
def test_float32_identity_mode_within_spec_tolerance(method):
    net = make_net("uvu", seed=13, n_layers=2)
    net32 = TensorFieldNetwork(dataclasses.replace(net.config, dtype="float32"))
    net32.load_state_dict({k: v.float() for k, v in net.state_dict().items()})
    g64 = make_graph(seed=14)
    graph = PointGraph(pos=g64.pos.float(), x=g64.x.float())
    ex = EquiGX(net32, norm_rule="identity", method=method).explain(graph, target=0)
    _, attr = captum_ixg(net32, graph, 0, "detached")
    L = len(net32.layers)
    tol = 1e-4 * np.abs(ex.edge_direction_components).max()
    for k in range(L):
        f = (1 / 3) ** (L - k)
        assert np.abs(ex.layer_direction_components[k] - f * attr[2 + 2 * k].numpy()).max() <= tol
    assert ex.total == pytest.approx(1.0, abs=1e-4)


# ------------------------------------------------------------------ check 2


def test_linear_rule_equals_captum_lrp_epsilon():
    from captum.attr._utils.lrp_rules import EpsilonRule

    torch.manual_seed(5)
    # irreps in != out, and several instructions (0e from two inputs) write one output
    torch.set_default_dtype(F64)
    try:
        lin = o3.Linear("2x0e+3x0e+2x1o+1x2e", "4x0e+3x1o+2x2e")
    finally:
        torch.set_default_dtype(torch.float32)
    assert len({ins.i_out for ins in lin.instructions}) < len(lin.instructions)
    n = 6
    x = torch.randn(n, lin.irreps_in.dim, dtype=F64)
    y = lin(x).detach()
    x = x.detach()
    sl_in, sl_out = lin.irreps_in.slices(), lin.irreps_out.slices()
    checked = 0
    for i_out, (mo, ir) in enumerate(lin.irreps_out):
        inss = [(i, ins) for i, ins in enumerate(lin.instructions) if ins.i_out == i_out]
        blocks = [
            (ins.path_weight * lin.weight_view_for_instruction(i).detach()).T for i, ins in inss
        ]
        muls = [lin.irreps_in[ins.i_in].mul for _, ins in inss]
        dense = torch.nn.Linear(sum(muls), mo, bias=False).to(F64)
        with torch.no_grad():
            dense.weight.copy_(torch.cat(blocks, 1))
        dense.rule = EpsilonRule(epsilon=1e-9)
        seq = torch.nn.Sequential(dense)
        for d in range(ir.dim):
            xin = torch.cat(
                [
                    x[:, sl_in[ins.i_in]].reshape(n, mu, ir.dim)[:, :, d]
                    for (_, ins), mu in zip(inss, muls, strict=True)
                ],
                1,
            )
            for v in range(mo):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    ref = captum_attr.LRP(seq).attribute(xin.clone(), target=v).detach()
                R = torch.zeros_like(y)
                col = sl_out[i_out].start + v * ir.dim + d
                R[:, col] = y[:, col]
                ours = linear_rule(lin, x, y, R, 1e-9).detach()
                got = torch.cat(
                    [
                        ours[:, sl_in[ins.i_in]].reshape(n, mu, ir.dim)[:, :, d]
                        for (_, ins), mu in zip(inss, muls, strict=True)
                    ],
                    1,
                )
                assert rel(got.numpy(), ref.numpy()) <= 1e-6
                # nothing leaks into other components
                assert float(ours.abs().sum()) == pytest.approx(float(got.abs().sum()), rel=1e-12)
                checked += 1
    assert checked == lin.irreps_out.dim


# ------------------------------------------------------------------ check 3


@pytest.mark.parametrize("kind", ["fully_connected", "uvu"])
def test_tensor_product_rule_gives_each_input_a_third(kind):
    net = make_net(kind, seed=7)
    layer = net.layers[1]
    g = torch.Generator().manual_seed(8)
    n, E = 5, 12
    x = torch.randn(n, layer.tp.irreps_in1.dim, dtype=F64, generator=g)
    Y = torch.randn(E, layer.tp.irreps_in2.dim, dtype=F64, generator=g)
    w = torch.randn(E, layer.tp.weight_numel, dtype=F64, generator=g)
    src = torch.randint(0, n, (E,), generator=g)
    mod = torch.randn(E, layer.tp.irreps_out.dim, dtype=F64, generator=g)
    m = layer.tp(x[src], Y, w).detach()
    total = float((m * mod).sum())
    Rx, RY, Rw = tp_rule(layer.tp, x, Y, w, src, mod)
    assert abs(total) > 1e-3
    for R in (Rx, RY, Rw):
        assert float(R.sum()) == pytest.approx(total / 3, rel=1e-12)
    assert Rx.shape == x.shape and RY.shape == Y.shape and Rw.shape == w.shape


@pytest.mark.parametrize("norm_rule", ["released", "identity"])
@pytest.mark.parametrize("variant", ["componentwise", "block"])
def test_conservation_per_layer_and_whole_model(norm_rule, variant):
    net, graph = make_net("fully_connected", seed=11, k=4), make_graph(seed=12)
    ex = EquiGX(
        net, norm_rule=norm_rule, variant=variant, method="rules", epsilon=RULES_EPS
    ).explain(graph, target=0)
    incoming = 1.0
    for k in range(len(net.layers) - 1, -1, -1):
        third = incoming / 3
        assert ex.layer_node[k].sum() == pytest.approx(third, abs=1e-6)
        assert ex.layer_direction[k].sum() == pytest.approx(third, abs=1e-6)
        assert ex.layer_distance[k].sum() == pytest.approx(third, abs=1e-6)
        incoming = ex.layer_node[k].sum()
    # the node relevance entering the first layer splits into inputs and embedding SH
    assert ex.feature_relevance.sum() + ex.embedding_direction.sum() == pytest.approx(
        ex.layer_node[0].sum(), abs=1e-9
    )
    assert ex.total == pytest.approx(1.0, abs=1e-6)
    assert ex.node_relevance.sum() == pytest.approx(ex.total, abs=1e-12)
    parts = ex.feature_relevance.sum() + ex.edge_direction.sum() + ex.edge_distance.sum()
    assert parts == pytest.approx(ex.total, abs=1e-12)


@settings(max_examples=8, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(4, 9),
    tp=st.sampled_from(["uvu", "fully_connected"]),
    norm_rule=st.sampled_from(["released", "identity"]),
    variant=st.sampled_from(["componentwise", "block"]),
)
def test_fast_form_conserves_and_matches_rules(seed, n, tp, norm_rule, variant):
    net = make_net(tp, seed=seed, n_layers=2, l_max=1, k=3)
    graph = make_graph(n=n, seed=seed + 1)
    kw = dict(norm_rule=norm_rule, variant=variant, epsilon=1e-14)
    fast = EquiGX(net, method="fast", **kw).explain(graph, target=1)
    rules = EquiGX(net, method="rules", **kw).explain(graph, target=1)
    assert fast.total == pytest.approx(1.0, abs=1e-9)
    scale = np.abs(fast.node_relevance).max()
    assert np.abs(fast.node_relevance - rules.node_relevance).max() <= 1e-6 * scale
    assert rel(rules.edge_direction, fast.edge_direction) <= 1e-6
    assert rel(rules.edge_distance, fast.edge_distance) <= 1e-6


@pytest.mark.parametrize("norm_rule", ["released", "identity"])
@pytest.mark.parametrize("variant", ["componentwise", "block"])
def test_fast_form_equals_rules_path_per_component(norm_rule, variant):
    net, graph = make_net("fully_connected", seed=21), make_graph(seed=22)
    kw = dict(norm_rule=norm_rule, variant=variant, epsilon=RULES_EPS)
    fast = EquiGX(net, method="fast", **kw).explain(graph, target=0)
    rules = EquiGX(net, method="rules", **kw).explain(graph, target=0)
    for a, b in zip(fast.layer_direction_components, rules.layer_direction_components, strict=True):
        assert rel(b, a) <= 1e-7
    for a, b in zip(fast.layer_node_components, rules.layer_node_components, strict=True):
        assert rel(b, a) <= 1e-7
    assert rel(rules.feature_relevance, fast.feature_relevance) <= 1e-7
    assert rel(rules.embedding_direction, fast.embedding_direction) <= 1e-7
    assert np.allclose(fast.kappa, rules.kappa, rtol=1e-7)


def test_block_variant_differs_from_componentwise():
    net, graph = make_net("fully_connected", seed=21), make_graph(seed=22)
    a = EquiGX(net, variant="block").explain(graph, target=0)
    b = EquiGX(net, variant="componentwise").explain(graph, target=0)
    assert rel(a.node_relevance, b.node_relevance) > 1e-3


# ------------------------------------------------------------------ check 4


def transformed(graph, seed):
    R = rand_rotation(seed)
    shift = torch.tensor([0.7, -1.3, 2.1], dtype=F64)
    return PointGraph(pos=graph.pos @ R.T + shift, x=graph.x)


@pytest.mark.parametrize(
    ("variant", "method", "tol"),
    [
        ("componentwise", "fast", 1e-6),
        ("componentwise", "rules", 1e-6),
        ("block", "fast", 1e-12),
        ("block", "rules", 1e-12),
    ],
)
def test_rotation_and_translation_invariance(variant, method, tol):
    net, graph = make_net("fully_connected", seed=31), make_graph(seed=32)
    eps = 1e-12 if method == "rules" else 1e-7
    ex = EquiGX(net, variant=variant, method=method, epsilon=eps)
    a = ex.explain(graph, target=0)
    b = ex.explain(transformed(graph, 33), target=0)
    assert np.array_equal(a.edge_index, b.edge_index)
    assert rel(b.node_relevance, a.node_relevance) <= tol
    assert rel(b.edge_direction, a.edge_direction) <= tol
    assert rel(b.edge_distance, a.edge_distance) <= tol
    assert rel(b.feature_relevance, a.feature_relevance) <= tol
    # SH components themselves rotate: they are not invariant one by one
    assert rel(b.edge_direction_components, a.edge_direction_components) > 1e-3


@pytest.mark.parametrize("variant", ["componentwise", "block"])
def test_node_permutation_permutes_relevance(variant):
    net, graph = make_net("uvu", seed=41, k=4), make_graph(seed=42)
    perm = torch.randperm(9, generator=torch.Generator().manual_seed(43))
    pg = PointGraph(pos=graph.pos[perm], x=graph.x[perm])
    ex = EquiGX(net, variant=variant)
    a, b = ex.explain(graph, target=2), ex.explain(pg, target=2)
    p = perm.numpy()
    assert rel(b.node_relevance, a.node_relevance[p]) <= 1e-12
    assert rel(b.feature_relevance, a.feature_relevance[p]) <= 1e-12
    inv = np.argsort(p)  # old index -> new index
    edges_a = {
        (int(inv[s]), int(inv[d])): (a.edge_direction[e], a.edge_distance[e])
        for e, (s, d) in enumerate(a.edge_index.T)
    }
    edges_b = {
        (int(s), int(d)): (b.edge_direction[e], b.edge_distance[e])
        for e, (s, d) in enumerate(b.edge_index.T)
    }
    assert edges_a.keys() == edges_b.keys()
    for key, (d1, r1) in edges_a.items():
        d2, r2 = edges_b[key]
        assert d2 == pytest.approx(d1, rel=1e-10, abs=1e-14)
        assert r2 == pytest.approx(r1, rel=1e-10, abs=1e-14)


# ------------------------------------------------------------------ result object


def test_result_dict_summary_plot_and_target_default(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    net, graph = make_net("uvu", seed=51, n_layers=2, l_max=1), make_graph(seed=52)
    ex = EquiGX(net).explain(graph)
    assert isinstance(ex, GraphExplanation)
    assert ex.target == int(np.argmax(ex.logits))
    d = ex.to_dict()
    assert d["target"] == ex.target and len(d["node_relevance"]) == 9
    assert len(d["layer_totals"]) == 2
    assert "EquiGX" in ex.summary() and "top nodes" in ex.summary()
    ax = ex.plot()
    assert ax.name == "3d"
    written = ex.write(tmp_path)
    assert any(p.name == "equigx.png" for p in written)
    import matplotlib.pyplot as plt

    plt.close("all")


def test_model_save_load_roundtrip(tmp_path):
    net, graph = make_net("fully_connected", seed=61, n_layers=2), make_graph(seed=62)
    net.save(tmp_path / "m")
    back = TensorFieldNetwork.load(tmp_path / "m")
    assert back.config == net.config
    assert torch.equal(back(graph), net(graph))


# ------------------------------------------------------------------ bad inputs


def test_unsupported_model_is_named_with_what_is_supported():
    with pytest.raises(InputError) as info:
        EquiGX(torch.nn.Linear(3, 2))
    msg = str(info.value)
    assert info.value.argument == "model"
    assert "fully_connected" in msg and "uvu" in msg and "NormActivation" in msg


def test_model_with_mismatched_irreps_is_rejected():
    net = make_net("uvu", seed=71, n_layers=3)
    net.layers[1], net.layers[2] = net.layers[2], net.layers[1]
    with pytest.raises(InputError, match="irreps"):
        EquiGX(net)


def test_model_with_gate_or_biased_linear_is_rejected():
    net = make_net("uvu", seed=72, n_layers=2)
    lin = net.layers[0].lin
    net.layers[0].lin = o3.Linear(lin.irreps_in, lin.irreps_out, biases=True).to(F64)
    with pytest.raises(InputError, match="model.layers\\[0\\]"):
        EquiGX(net)


def test_bad_graphs_and_options():
    net, graph = make_net("uvu", seed=81, n_layers=2), make_graph(seed=82)
    ex = EquiGX(net)
    with pytest.raises(InputError) as info:
        ex.explain({"x": graph.x})
    assert info.value.argument == "graph.pos"
    with pytest.raises(InputError) as info:
        ex.explain(PointGraph(pos=graph.pos, x=torch.ones(9, 3, dtype=F64)))
    assert info.value.argument == "graph.x" and "2x0e" in str(info.value)
    with pytest.raises(InputError) as info:
        ex.explain(PointGraph(pos=graph.pos[:, :2], x=graph.x))
    assert info.value.argument == "graph.pos"
    with pytest.raises(InputError) as info:
        ex.explain(graph, target=3)
    assert info.value.argument == "target"
    with pytest.raises(InputError):
        ex.explain(PointGraph(pos=graph.pos, x=graph.x, batch=torch.arange(9) % 2))
    with pytest.raises(InputError):
        EquiGX(net, norm_rule="gamma")
    with pytest.raises(InputError):
        EquiGX(net, variant="half")
    with pytest.raises(InputError):
        TensorFieldNetwork(tp="gate")


def test_stabiliser_is_sign_aware():
    # y = -eps / 2: a sign-aware stabiliser shrinks the share (1/3), a plain +eps flips it (-1)
    torch.set_default_dtype(F64)
    try:
        lin = o3.Linear("1x0e", "1x0e")
    finally:
        torch.set_default_dtype(torch.float32)
    eps = 1e-2
    alpha_w = float(lin(torch.ones(1, 1, dtype=F64)).detach())
    x = torch.full((1, 1), -0.5 * eps / alpha_w, dtype=F64)
    y = lin(x).detach()
    R = linear_rule(lin, x, y, torch.ones_like(y), eps).detach()
    assert float(R.sum()) == pytest.approx(1 / 3, rel=1e-12)
