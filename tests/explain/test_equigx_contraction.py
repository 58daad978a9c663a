"""The fast EquiGX form's dense tensor product against e3nn's own (values and gradients)."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("e3nn")

from e3nn import o3  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from trustlab.explain.equigx import EquiGX, PointGraph  # noqa: E402
from trustlab.explain.equigx._contraction import DenseTensorProduct, supports  # noqa: E402
from trustlab.explain.equigx.model import TensorFieldNetwork  # noqa: E402


def _depthwise(irreps_in1, irreps_in2, wanted):
    outs, instructions = [], []
    for i1, (mul, ir1) in enumerate(irreps_in1):
        for i2, (_, ir2) in enumerate(irreps_in2):
            for ir_out in ir1 * ir2:
                if ir_out in wanted:
                    instructions.append((i1, i2, len(outs), "uvu", True))
                    outs.append((mul, ir_out))
    return o3.TensorProduct(
        irreps_in1, irreps_in2, o3.Irreps(outs), instructions,
        shared_weights=False, internal_weights=False,
    )  # fmt: skip


def _random_irreps(rng, l_max, muls):
    parts = []
    for order in range(l_max + 1):
        for p in (1, -1):
            if rng.random() < 0.7:
                parts.append((int(rng.choice(muls)), (order, p)))
    return o3.Irreps(parts or [(1, (0, 1))])


def _top(t) -> float:
    """The largest absolute value (0 for an empty tensor: a graph without edges)."""
    return float(t.detach().abs().max()) if t.numel() else 0.0


def _check(tp, rng, E=37):
    tp = tp.to(torch.float64)
    dense = DenseTensorProduct(tp)
    x1 = torch.tensor(rng.normal(size=(E, tp.irreps_in1.dim)), requires_grad=True)
    x2 = torch.tensor(rng.normal(size=(E, tp.irreps_in2.dim)), requires_grad=True)
    w = torch.tensor(rng.normal(size=(E, tp.weight_numel)), requires_grad=True)
    ref, got = tp(x1, x2, w), dense(x1, x2, w)
    assert got.shape == ref.shape
    scale = _top(ref) or 1.0
    assert _top(ref - got) <= 1e-12 * scale
    probe = torch.tensor(rng.normal(size=ref.shape))
    g_ref = torch.autograd.grad((ref * probe).sum(), (x1, x2, w))
    g_got = torch.autograd.grad((got * probe).sum(), (x1, x2, w))
    for a, b in zip(g_ref, g_got, strict=True):
        assert a.shape == b.shape
        bound = 1e-12 * (_top(a) or 1.0)
        assert _top(a - b) <= bound
    if dense.gathered:
        unordered = dense.unordered(x1, x2, w)
        assert torch.equal(unordered.index_select(1, dense.source), got)
        # a permutation: every output column comes from one column of the unordered product
        assert sorted(dense.source.tolist()) == list(range(ref.shape[1]))


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    l_max=st.integers(0, 2),
    sh_l=st.integers(1, 3),
    kind=st.sampled_from(["uvu", "fully_connected"]),
)
def test_dense_product_equals_e3nn_in_values_and_gradients(seed, l_max, sh_l, kind):
    rng = np.random.default_rng(seed)
    irreps_in1 = _random_irreps(rng, l_max, muls=(1, 2, 3, 8))  # mixed multiplicities
    irreps_in2 = o3.Irreps.spherical_harmonics(sh_l)
    if kind == "uvu":
        wanted = {ir for _, ir in _random_irreps(rng, 2, muls=(1,))}
        tp = _depthwise(irreps_in1, irreps_in2, wanted)
    else:
        irreps_out = _random_irreps(rng, 2, muls=(1, 4, 5))
        tp = o3.FullyConnectedTensorProduct(
            irreps_in1, irreps_in2, irreps_out, shared_weights=False, internal_weights=False
        )
    if not tp.instructions:
        return
    assert supports(tp)
    # the depthwise products take the gathered form, the fully connected the grouped one
    assert DenseTensorProduct(tp).gathered == (kind == "uvu")
    assert DenseTensorProduct(tp).grouped == (kind != "uvu")
    _check(tp, rng)
    _check(tp, rng, E=0)  # a graph without edges (one node)


@pytest.mark.parametrize(
    "instructions",
    [
        # two depthwise paths into one output block: neither the gathered nor the grouped form
        [(0, 0, 0, "uvu", True), (1, 1, 0, "uvu", True), (1, 0, 1, "uvu", True)],
        # depthwise and fully connected paths in one product
        [(0, 0, 0, "uvu", True), (1, 0, 1, "uvw", True), (0, 1, 1, "uvw", True)],
    ],
    ids=["uvu-shared-output", "uvu-and-uvw"],
)
def test_dense_product_general_form_equals_e3nn(instructions):
    tp = o3.TensorProduct(
        "2x0e+2x1o", "1x0e+1x1o", "2x0e+2x1o", instructions,
        shared_weights=False, internal_weights=False,
    )  # fmt: skip
    dense = DenseTensorProduct(tp.to(torch.float64))
    assert not dense.gathered and not dense.grouped
    _check(tp, np.random.default_rng(len(instructions)))
    _check(tp, np.random.default_rng(len(instructions)), E=0)


def test_dense_product_in_float32_reads_the_float32_coefficients():
    tp = _depthwise(o3.Irreps("8x0e+8x1o+8x2e"), o3.Irreps.spherical_harmonics(2),
                    {o3.Irrep("0e"), o3.Irrep("1o"), o3.Irrep("2e")})  # fmt: skip
    dense = DenseTensorProduct(tp)
    g = torch.Generator().manual_seed(0)
    args = [torch.randn(50, n, generator=g) for n in (72, 9, tp.weight_numel)]
    ref, got = tp(*args), dense(*args)
    assert got.dtype == torch.float32
    assert float((ref - got).abs().max()) <= 1e-5 * float(ref.abs().max())


def test_unsupported_products_are_left_to_e3nn():
    sh = o3.Irreps.spherical_harmonics(1)
    shared = o3.FullyConnectedTensorProduct("2x0e+2x1o", sh, "2x0e", shared_weights=True)
    assert not supports(shared)
    two_copies = o3.FullyConnectedTensorProduct(
        "2x0e", "2x0e", "2x0e", shared_weights=False, internal_weights=False
    )
    assert not supports(two_copies)
    elementwise = o3.TensorProduct(
        "2x0e", "2x0e", "2x0e", [(0, 0, 0, "uuu", True)],
        shared_weights=False, internal_weights=False,
    )  # fmt: skip
    assert not supports(elementwise)
    assert not supports(object())


@pytest.mark.parametrize("tp", ["uvu", "fully_connected"])
@pytest.mark.parametrize("variant", ["componentwise", "block"])
def test_fast_form_unchanged_by_the_dense_products(tp, variant):
    """Control: the fast form with e3nn's own products gives the same relevance."""
    torch.manual_seed(3)
    net = TensorFieldNetwork(
        n_classes=3, n_scalars=2, mul=4, l_max=2, n_layers=3, k=4, radius=3.0, tp=tp,
        dtype="float64",
    )  # fmt: skip
    rng = np.random.default_rng(5)
    graph = PointGraph(pos=rng.normal(size=(9, 3)), x=rng.normal(size=(9, 2)))
    dense = EquiGX(net, variant=variant)
    assert all(isinstance(p, DenseTensorProduct) for p in dense._products)
    plain = EquiGX(net, variant=variant)
    plain._products = [layer.tp for layer in net.layers]
    a, b = dense.explain(graph, target=1), plain.explain(graph, target=1)
    scale = np.abs(b.node_relevance).max()
    for name in (
        "node_relevance",
        "feature_relevance",
        "edge_distance",
        "edge_direction_components",
    ):
        assert np.abs(getattr(a, name) - getattr(b, name)).max() <= 1e-12 * scale, name


@pytest.mark.parametrize("tp", ["uvu", "fully_connected"])
@pytest.mark.parametrize("variant", ["componentwise", "block"])
def test_a_graph_without_edges_explains_like_the_rules(tp, variant):
    """One node has no neighbours: the fast form ran its products on zero edges and failed
    ("cannot reshape tensor of 0 elements"); it now gives what the rule path gives."""
    torch.manual_seed(4)
    net = TensorFieldNetwork(
        n_classes=3, n_scalars=2, mul=4, l_max=2, n_layers=3, k=4, radius=3.0, tp=tp,
        dtype="float64",
    )  # fmt: skip
    graph = PointGraph(pos=np.zeros((1, 3)), x=np.array([[0.5, -1.0]]))
    fast = EquiGX(net, variant=variant).explain(graph, target=1)
    rules = EquiGX(net, variant=variant, method="rules").explain(graph, target=1)
    assert fast.edge_distance.shape == rules.edge_distance.shape == (0,)
    np.testing.assert_allclose(fast.node_relevance, rules.node_relevance, rtol=0, atol=1e-12)
    np.testing.assert_allclose(fast.feature_relevance, rules.feature_relevance, rtol=0, atol=1e-12)


def test_dense_linear_equals_e3nn_linear_and_follows_its_weights():
    from trustlab.explain.equigx._contraction import DenseLinear

    lin = o3.Linear("3x0e+2x1o+2x2e+1x1o", "2x0e+3x1o+1x2e", biases=False).to(torch.float64)
    dense = DenseLinear(lin)
    rng = np.random.default_rng(0)
    x = torch.tensor(rng.normal(size=(11, lin.irreps_in.dim)), requires_grad=True)
    probe = torch.tensor(rng.normal(size=(11, lin.irreps_out.dim)))
    for step in range(3):
        ref, got = lin(x), dense(x)
        assert float((ref - got).detach().abs().max()) <= 1e-12 * float(ref.detach().abs().max())
        (g_ref,) = torch.autograd.grad((ref * probe).sum(), x)
        (g_got,) = torch.autograd.grad((got * probe).sum(), x)
        assert float((g_ref - g_got).abs().max()) <= 1e-12 * float(g_ref.abs().max())
        # the weights change in place (an optimiser step, then a loaded state): read again
        if step == 0:
            opt = torch.optim.SGD(lin.parameters(), lr=0.5)
            opt.zero_grad()
            (lin(x.detach()) ** 2).sum().backward()
            opt.step()
        else:
            state = lin.state_dict()
            state["weight"] = torch.randn_like(state["weight"])
            lin.load_state_dict(state)
