"""EquiGX relevance propagation for :class:`~trustlab.explain.equigx.model.TensorFieldNetwork`.

The rules (spec 10, "Relevance rules"), applied from the output down:

1. start: relevance 1 on the target class of the explained graph (so everything sums to 1);
2. sum readout and message aggregation: the Z-rule, ``R_e = z_e / (sum z + eps sign) R``;
3. tensor product ``m = TP(x, Y; w)`` (multilinear): each of the node features x (taken before
   the gather, so a node's out-edges add up), the spherical harmonics Y and the radial weights w
   gets ``a * d/da [sum_c m_c stopgrad(R_c / m_c)] / 3``, a third of the relevance each. ``R_w``
   summed over the weights is the edge *distance* relevance (it is not propagated into the
   radial MLP, by design) and ``R_Y`` per SH component the edge *direction* relevance. The
   ratio ``R_c / m_c`` is taken as the aggregation share ``(R / S)_dst`` that ``R_c = m_c (R/S)``
   was built from (the same number, without dividing by messages that vanish by symmetry);
4. e3nn ``Linear``: LRP-0 per instruction and per m-component, with ``ins.i_in`` / ``ins.i_out``
   (inputs and outputs may differ; several instructions may feed one output) and a sign-aware
   stabiliser ``eps sign(z)``;
5. ``NormActivation``: ``"released"`` divides R by the per-irrep scale s, then rescales so the
   layer conserves (the authors' rule); ``"identity"`` passes R through. The scale is computed as
   e3nn's forward does: squared norms clamped at eps^2, then the square root;
6. input embedding: the scalar inputs' relevance is the input-feature relevance; the relevance of
   the aggregated SH part of ``x0`` is scattered back to the edges (share ``Y_ij / sum_j Y_ij``)
   and added to the edge-direction relevance;
7. node importance: ``n_i = sum_f R^h_if + (sum_{e: src=i} E_e + sum_{e: dst=i} E_e) / 2`` with
   ``E_e`` the edge's total (direction + distance, all layers).

``method="fast"`` computes the same relevance as one modified backward pass (gradient x input
with the NormActivation scale detached (identity rule) or the activation passed as the identity
(released rule, times the per-layer factors kappa = sum R_out / sum(R_out / s)), times ``(1/3)^k``
at depth k): no component-wise divisions, and equal to ``method="rules"`` up to the stabiliser.
Its pass evaluates the tensor products and the Linear layers as dense (batched) matrix products
read off the e3nn modules themselves (``_contraction``; equal values, a cheaper backward).

``variant="block"`` (a trustlab extension, not the paper's) replaces every ``R_k / y_k`` by
``R_J y_k / |y_J|^2`` per irrep block J; it conserves and makes node relevance exactly rotation
invariant. The componentwise variant is the paper's.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from trustlab._checks import check_choice, check_non_negative, check_positive_int
from trustlab._lazy import require
from trustlab.errors import InputError

torch = require("torch", "graph")
o3 = require("e3nn.o3", "graph")
e3nn_nn = require("e3nn.nn", "graph")

from trustlab.explain.equigx._contraction import (  # noqa: E402
    DenseLinear,
    DenseTensorProduct,
    supports,
)
from trustlab.explain.equigx.explanation import ZERO_OUTPUT, GraphExplanation  # noqa: E402
from trustlab.explain.equigx.model import TensorFieldNetwork, as_graph_tensors  # noqa: E402

__all__ = ["EquiGX", "GraphExplanation"]

SUPPORTED = (
    "a trustlab TensorFieldNetwork whose convolutions use an e3nn TensorProduct with external "
    "per-edge weights ('fully_connected' FullyConnectedTensorProduct or depthwise 'uvu'), an e3nn "
    "Linear without biases and an e3nn NormActivation (or none in the last layer)"
)

# ------------------------------------------------------------------------------------- helpers


def _signed(z: Any, eps: float) -> Any:
    """``z + eps sign(z)`` with sign(0) = +1; 1 where that is 0 (``eps = 0``: nothing to share)."""
    return torch.where(z == 0, eps or 1.0, z + eps * torch.where(z >= 0, 1.0, -1.0).to(z.dtype))


def _block_index(irreps: Any) -> Any:
    """For each component of ``irreps``, the index of its irrep copy (block J)."""
    idx, k = [], 0
    for mul, ir in irreps:
        for _ in range(mul):
            idx += [k] * ir.dim
            k += 1
    return torch.tensor(idx, dtype=torch.long), k


def _block_sum(v: Any, irreps: Any) -> Any:
    """Per-block sums ``(rows, n_blocks)`` of a ``(rows, irreps.dim)`` tensor."""
    idx, nb = _block_index(irreps)
    return torch.zeros(v.shape[0], nb, dtype=v.dtype).index_add(1, idx, v)


def _modulator(R: Any, y: Any, irreps: Any, eps: float, variant: str) -> Any:
    """``R / (y + eps sign y)`` (componentwise) or ``R_J y / (|y_J|^2 + eps^2)`` (block)."""
    if variant == "componentwise":
        return R / _signed(y, eps)
    idx, _ = _block_index(irreps)
    RJ = _block_sum(R, irreps)
    n2 = _block_sum(y * y, irreps)
    return (RJ / _signed(n2, eps * eps))[:, idx] * y


class _Project(torch.autograd.Function):
    """Identity forward; backward projects the gradient onto ``y`` per irrep block (block rule)."""

    @staticmethod
    def forward(ctx: Any, y: Any, idx: Any, nb: int, eps: float) -> Any:
        ctx.save_for_backward(y, idx)
        ctx.nb, ctx.eps = nb, eps
        return y.view_as(y)

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        y, idx = ctx.saved_tensors
        zeros = torch.zeros(y.shape[0], ctx.nb, dtype=y.dtype)
        gy = zeros.index_add(1, idx, g * y)
        n2 = zeros.clone().index_add(1, idx, y * y)
        return (gy / _signed(n2, ctx.eps * ctx.eps))[:, idx] * y, None, None, None


def _project(y: Any, irreps: Any, eps: float) -> Any:
    idx, nb = _block_index(irreps)
    return _Project.apply(y, idx, nb, eps)


def _per_graph(v: Any, batch: Any, n_graphs: int) -> Any:
    """Per-graph sums (float64) of a node-level tensor."""
    rows = v.reshape(v.shape[0], -1).sum(1).to(torch.float64)
    return torch.zeros(n_graphs, dtype=torch.float64).index_add(0, batch, rows)


def _act_scale(act: Any, y: Any) -> Any:
    """The NormActivation scale per component: ``sigma(|y_J| + b) / |y_J|`` as e3nn computes
    it (squared norms clamped at eps^2, then the square root)."""
    norms = act.norm(y)
    if act._eps_squared > 0:
        norms = torch.clamp(norms, min=act._eps_squared).sqrt()
    arg = norms + act.biases if act.bias else norms
    s = act.scalar_nonlinearity(arg)
    if act.normalize:
        s = s / norms
    idx, _ = _block_index(act.irreps_in)
    return s[:, idx]


def _check_model(model: Any) -> None:
    if not isinstance(model, TensorFieldNetwork):
        raise InputError.bad("model", SUPPORTED, model)
    irreps = model.input_irreps
    for k, layer in enumerate(model.layers):
        tp, lin, act = layer.tp, layer.lin, layer.act
        ok = (
            isinstance(tp, o3.TensorProduct)
            and not tp.internal_weights
            and not tp.shared_weights
            and isinstance(lin, o3.Linear)
            and lin.bias_numel == 0
            and lin.internal_weights
            and (act is None or isinstance(act, e3nn_nn.NormActivation))
        )
        if not ok:
            raise InputError.bad(f"model.layers[{k}]", SUPPORTED, layer)
        if tp.irreps_in1 != irreps or tp.irreps_in2 != model.sh_irreps:
            raise InputError.bad(
                f"model.layers[{k}].tp irreps", f"inputs {irreps} x {model.sh_irreps}", tp
            )
        if lin.irreps_in != tp.irreps_out:
            raise InputError.bad(f"model.layers[{k}].lin.irreps_in", str(tp.irreps_out), lin)
        if act is not None and act.irreps_in != lin.irreps_out:
            raise InputError.bad(f"model.layers[{k}].act.irreps_in", str(lin.irreps_out), act)
        if k == len(model.layers) - 1 and act is not None:
            raise InputError.bad("model.layers[-1].act", "None (linear last layer)", act)
        irreps = lin.irreps_out
    if any(ir.l != 0 or ir.p != 1 for _, ir in irreps):
        raise InputError.bad("model output irreps", "scalars (n x 0e)", str(irreps))


def linear_rule(lin: Any, x: Any, y: Any, R: Any, eps: float, variant: str = "componentwise"):
    """LRP-0 through an e3nn ``Linear`` (no bias), per instruction and per m-component.

    ``y = lin(x)``; returns the relevance of ``x`` given the relevance ``R`` of ``y``:
    ``R_{u,m} = sum_v alpha W_uv x_{u,m} / (y_{v,m} + eps sign y_{v,m}) R_{v,m}``, with the
    instructions' ``i_in`` / ``i_out`` (several instructions may write one output).

    Examples
    --------
    >>> import torch
    >>> from e3nn import o3
    >>> lin = o3.Linear("2x0e+1x1o", "3x0e+1x1o")
    >>> x = torch.randn(4, 5)
    >>> y = lin(x)
    >>> bool(torch.allclose(linear_rule(lin, x, y, y, 1e-9).sum(), y.sum(), atol=1e-4))
    True
    """
    mod = _modulator(R, y, lin.irreps_out, eps, variant)
    out = torch.zeros_like(x)
    sl_in, sl_out = lin.irreps_in.slices(), lin.irreps_out.slices()
    n = x.shape[0]
    for i, ins in enumerate(lin.instructions):
        W = lin.weight_view_for_instruction(i)  # (mul_in, mul_out)
        mi, ir = lin.irreps_in[ins.i_in]
        mo, _ = lin.irreps_out[ins.i_out]
        xs = x[:, sl_in[ins.i_in]].reshape(n, mi, ir.dim)
        ms = mod[:, sl_out[ins.i_out]].reshape(n, mo, ir.dim)
        part = ins.path_weight * torch.einsum("nud,uv,nvd->nud", xs, W, ms)
        out[:, sl_in[ins.i_in]] += part.reshape(n, mi * ir.dim)
    return out


def tp_rule(tp: Any, x: Any, Y: Any, w: Any, src: Any, mod: Any) -> tuple[Any, Any, Any]:
    """The tensor-product rule: ``(R_x (nodes, pre-gather), R_Y (edges, per component), R_w
    (edges, per weight))`` = ``a * d/da [sum m * mod] / 3`` for ``m = tp(x[src], Y, w)``."""
    with torch.enable_grad():
        xl = x.detach().requires_grad_()
        Yl = Y.detach().requires_grad_()
        wl = w.detach().requires_grad_()
        m = tp(xl[src], Yl, wl)
        gx, gY, gw = torch.autograd.grad((m * mod.detach()).sum(), [xl, Yl, wl])
    return xl.detach() * gx / 3, Yl.detach() * gY / 3, wl.detach() * gw / 3


def _scatter_rule(z: Any, dst: Any, n: int, R: Any, irreps: Any, eps: float, variant: str):
    """Z-rule from node sums ``S_i = sum_{e->i} z_e`` back to the terms: ``R_e = z_e (R/S)_i``."""
    S = torch.zeros(n, z.shape[1], dtype=z.dtype).index_add(0, dst, z)
    return z * _modulator(R, S, irreps, eps, variant)[dst]


# ------------------------------------------------------------------------------------- explainer


class EquiGX:
    """EquiGX relevance propagation for an e3nn :class:`TensorFieldNetwork`.

    Parameters
    ----------
    model : TensorFieldNetwork
        The network (random or trained); its dtype is used for the graph.
    norm_rule : {"released", "identity"}
        NormActivation rule: the authors' "1/s then renormalise" or pass-through.
    variant : {"componentwise", "block"}
        The paper's componentwise divisions, or the block variant (trustlab extension: exactly
        rotation invariant and conserving).
    method : {"fast", "rules"}
        One modified backward pass, or the explicit rule-by-rule path (equal as epsilon -> 0).
    output : {"logit", "contrast"}
        What is explained: the target logit (the paper's start, relevance 1 on the target class),
        or (trustlab extension) the *contrast* ``y_t - sum_{c != t} q_c y_c`` with ``q`` the
        other classes' softmax probabilities renormalised (held constant); for two classes it is
        the log-odds ``y_t - y_other``. A logit is only defined up to a shift shared by all
        classes, so its sign (and the sign of every relevance that starts from it) can be
        arbitrary; the contrast is shift-invariant.
    epsilon : float
        The stabiliser (sign-aware); the fast form needs none.

    Examples
    --------
    >>> import torch
    >>> from trustlab.explain.equigx.model import TensorFieldNetwork, PointGraph
    >>> torch.manual_seed(0) and None
    >>> net = TensorFieldNetwork(n_classes=2, mul=2, l_max=1, n_layers=2, k=4, dtype="float64")
    >>> g = PointGraph(pos=torch.randn(7, 3, dtype=torch.float64), x=torch.ones(7, 1))
    >>> ex = EquiGX(net).explain(g, target=1)
    >>> round(ex.total, 6), round(float(ex.node_relevance.sum()), 6)
    (1.0, 1.0)
    """

    def __init__(
        self,
        model: Any,
        *,
        norm_rule: str = "released",
        variant: str = "componentwise",
        method: str = "fast",
        output: str = "logit",
        epsilon: float = 1e-7,
    ) -> None:
        _check_model(model)
        self.model = model
        self.norm_rule = check_choice(norm_rule, "norm_rule", ("released", "identity"))
        self.variant = check_choice(variant, "variant", ("componentwise", "block"))
        self.method = check_choice(method, "method", ("fast", "rules"))
        self.output = check_choice(output, "output", ("logit", "contrast"))
        # finite: an infinite stabiliser absorbed all relevance in the rules path (total 0)
        # while the fast form ignored it (total 1); True is not a number
        self.epsilon = check_non_negative(epsilon, "epsilon")
        # the fast form's tensor products as dense batched matrix products (equal values; a
        # cheaper backward than e3nn's per-path einsums); e3nn's own where not supported
        self._products = [
            DenseTensorProduct(layer.tp) if supports(layer.tp) else layer.tp
            for layer in model.layers
        ]
        self._linears = [DenseLinear(layer.lin) for layer in model.layers]

    # ---------------------------------------------------------------- input
    def _prepare(self, graph: Any) -> tuple[Any, Any, Any]:
        model = self.model
        dtype = next(model.parameters()).dtype
        pos, h, batch = as_graph_tensors(graph, dtype)
        if h.shape[1] != model.config.n_scalars:
            raise InputError.bad(
                "graph.x",
                f"{model.config.n_scalars} scalar features per node (the model's input irreps "
                f"{model.input_irreps})",
                f"{h.shape[1]} features",
            )
        if int(batch.max()) != int(batch.min()):
            raise InputError.bad("graph.batch", "a single graph (one batch index)", "several")
        return pos, h, model.edges(pos, torch.zeros_like(batch))

    def explain(self, graph: Any, target: int | None = None) -> GraphExplanation:
        """Explain the model's output for ``target`` (default: the predicted class) on one graph
        (a :class:`~trustlab.explain.equigx.model.PointGraph`, a dict, or any object with
        ``pos`` and ``x``)."""
        pos, h, edge_index = self._prepare(graph)
        if self.method == "fast":
            batch = torch.zeros(len(pos), dtype=torch.long)
            parts = self._fast(pos, h, edge_index, batch, [target])
            parts["kappa"] = [float(k[0]) for k in parts["kappa"]]
            target, logits = parts["targets"][0], parts["logits"][0]
        else:
            with torch.no_grad():
                logits = self.model(dict(pos=pos, x=h))[0]
            target = self._target(target, logits)
            parts = self._rules(pos, h, edge_index, self._weights(target, logits))
        return self._result(parts, pos, edge_index, target, logits)

    def explain_many(
        self, graphs: Any, targets: Any = None, *, batch_size: int = 64
    ) -> list[GraphExplanation]:
        """Explain several graphs; the fast form runs ``batch_size`` graphs in one backward pass
        (each graph's relevance is the same as from :meth:`explain`, to rounding).

        ``targets``: one class per graph, or None for each graph's predicted class.

        Examples
        --------
        >>> import torch
        >>> from trustlab.explain.equigx.model import TensorFieldNetwork, PointGraph
        >>> net = TensorFieldNetwork(n_classes=2, mul=2, l_max=1, k=4, dtype="float64")
        >>> gs = [PointGraph(pos=torch.randn(6, 3), x=torch.ones(6, 1)) for _ in range(3)]
        >>> [round(e.total, 6) for e in EquiGX(net).explain_many(gs, targets=[0, 1, 1])]
        [1.0, 1.0, 1.0]
        """
        if isinstance(graphs, dict) or hasattr(graphs, "pos"):
            raise InputError.bad("graphs", "a sequence of graphs (explain() takes one)", graphs)
        graphs = list(graphs)
        if targets is not None:
            if isinstance(targets, (int, np.integer)):
                raise InputError.bad("targets", f"{len(graphs)} class indices", targets)
            targets = list(targets)
            if len(targets) != len(graphs):
                raise InputError.bad("targets", f"{len(graphs)} class indices", len(targets))
        batch_size = check_positive_int(batch_size, "batch_size")  # numpy integers too
        if self.method != "fast":
            return [
                self.explain(g, None if targets is None else targets[i])
                for i, g in enumerate(graphs)
            ]
        out: list[GraphExplanation] = []
        for start in range(0, len(graphs), batch_size):
            chunk = graphs[start : start + batch_size]
            prepared = [self._prepare(g)[:2] for g in chunk]
            sizes = [len(p) for p, _ in prepared]
            pos = torch.cat([p for p, _ in prepared])
            h = torch.cat([x for _, x in prepared])
            batch = torch.repeat_interleave(torch.arange(len(chunk)), torch.tensor(sizes))
            edge_index = self.model.edges(pos, batch)
            wanted = [None] * len(chunk) if targets is None else targets[start : start + len(chunk)]
            parts = self._fast(pos, h, edge_index, batch, wanted)
            chosen, logits = parts["targets"], parts["logits"]
            offsets = np.concatenate([[0], np.cumsum(sizes)])
            edge_graph = batch[edge_index[1]]
            for i in range(len(chunk)):
                nodes = slice(int(offsets[i]), int(offsets[i + 1]))
                edges = edge_graph == i
                one = {
                    "R_h": parts["R_h"][nodes],
                    "R_emb": parts["R_emb"][edges],
                    "layer_x": [t[nodes] for t in parts["layer_x"]],
                    "layer_Y": [t[edges] for t in parts["layer_Y"]],
                    "layer_w": [t[edges] for t in parts["layer_w"]],
                    "kappa": [float(k[i]) for k in parts["kappa"]],
                }
                local = edge_index[:, edges] - int(offsets[i])
                out.append(self._result(one, pos[nodes], local, chosen[i], logits[i]))
        return out

    def _target(self, target: Any, logits: Any) -> int:
        n_classes = logits.shape[0]
        if target is None:
            return int(torch.argmax(logits))
        if isinstance(target, bool) or not isinstance(target, (int, np.integer)):
            raise InputError.bad("target", f"a class index in 0..{n_classes - 1}", target)
        if not 0 <= int(target) < n_classes:
            raise InputError.bad("target", f"a class index in 0..{n_classes - 1}", target)
        return int(target)

    def _weights(self, target: int, logits: Any) -> Any:
        """The output explained, as weights on the class logits (one-hot, or the contrast)."""
        n_classes = logits.shape[0]
        weights = torch.zeros(n_classes, dtype=logits.dtype)
        weights[target] = 1.0
        if self.output == "contrast" and n_classes > 1:
            p = torch.softmax(logits, 0)
            others = torch.arange(n_classes) != target
            weights[others] = -p[others] / p[others].sum().clamp_min(1e-300)
        return weights

    # ---------------------------------------------------------------- fast form
    def _fast(self, pos: Any, h: Any, edge_index: Any, batch: Any, targets: list) -> dict:
        """The modified backward pass for every graph of ``batch`` at once, for one target (or
        None: the predicted class) per graph. Its forward values are the network's (the
        modifications act on the backward only), so the logits come from the same pass;
        ``kappa`` comes back per layer as a (G,) array."""
        model, eps, block = self.model, self.epsilon, self.variant == "block"
        src, n = edge_index[0], len(pos)
        with torch.no_grad():
            Y, emb = model.geometry(pos, edge_index)
        with torch.enable_grad():
            h_in = h.detach().clone().requires_grad_()
            Y_emb = Y.detach().clone().requires_grad_()
            if block:
                aggY = model.aggregate(Y_emb, edge_index, n)
                x = torch.cat([h_in, _project(aggY, model.sh_irreps, eps)], dim=1)
            else:
                x = model.embed(h_in, Y_emb, edge_index)
            xs, Ys, ms, acts = [], [], [], []
            for layer, product, linear in zip(
                model.layers, self._products, self._linears, strict=True
            ):
                Yk = Y.detach().clone().requires_grad_()
                with torch.no_grad():
                    wk = layer.radial(emb)
                xs.append(x)
                Ys.append(Yk)
                reorder = not block and getattr(product, "gathered", False)
                # a depthwise product's columns are put in e3nn's order after the sum over
                # edges (fewer rows to move); only sums over all of them use m itself
                m = product.unordered(x[src], Yk, wk) if reorder else product(x[src], Yk, wk)
                # the product is linear in its weights, so sum_j w_j dm/dw_j = m: the weights'
                # relevance per edge is m . dm, and the weights need no gradient of their own
                # (whose slice-by-slice backward inside e3nn cost more than the rest)
                ms.append(m)
                if block:
                    m = _project(m, layer.tp.irreps_out, eps)
                agg = model.aggregate(m, edge_index, n)
                if reorder:
                    agg = agg.index_select(1, product.source)
                if block:
                    agg = _project(agg, layer.lin.irreps_in, eps)
                y = linear(agg)
                if block:
                    y = _project(y, layer.lin.irreps_out, eps)
                if layer.act is not None:
                    with torch.no_grad():  # constants of the backward pass
                        if self.norm_rule == "identity":
                            const = _act_scale(layer.act, y)
                        else:
                            const = layer.act(y) - y
                    z = y * const if self.norm_rule == "identity" else y + const
                    acts.append((y, z))
                    x = z
                else:
                    x = y
            scores = model.readout(x, batch)
            logits = scores.detach()
            chosen = [self._target(t, logits[i]) for i, t in enumerate(targets)]
            weights = torch.stack([self._weights(t, logits[i]) for i, t in enumerate(chosen)])
            out = (scores * weights).sum(1)
            # relevance 1 on the target: each graph's output divided by its own (constant) value
            value = out.detach()
            value = torch.where(value != 0, value, torch.full_like(value, self.epsilon or 1.0))
            yhat = (out / value).sum()
            wrt = [h_in, Y_emb, *xs, *Ys, *ms, *[z for _, z in acts]]
            grads = torch.autograd.grad(yhat, wrt, allow_unused=True)
        grads = [torch.zeros_like(t) if g is None else g for t, g in zip(wrt, grads, strict=True)]
        L = len(model.layers)
        g_h, g_Yemb = grads[0], grads[1]
        g_x, g_Y, g_m = grads[2 : 2 + L], grads[2 + L : 2 + 2 * L], grads[2 + 2 * L : 2 + 3 * L]
        g_z = grads[2 + 3 * L :]
        G = weights.shape[0]
        ones = torch.ones(G, dtype=torch.float64)
        kappa = [ones.clone() for _ in range(L)]
        if self.norm_rule == "released":
            for j, ((y, z), g) in enumerate(zip(acts, g_z, strict=True)):
                num = _per_graph((z * g).detach(), batch, G)
                den = _per_graph((y * g).detach(), batch, G)
                kappa[j] = torch.where(den != 0, num / torch.where(den != 0, den, 1.0), 1.0)
        dst = edge_index[1]
        factors = []
        for k in range(L):
            f = (1 / 3) ** (L - k) * torch.stack(kappa[k:]).prod(0)
            factors.append(f.to(pos.dtype))
        node_f = [f[batch][:, None] for f in factors]
        edge_f = [f[batch[dst]][:, None] for f in factors]
        layer_x = [node_f[k] * (xs[k] * g_x[k]).detach() for k in range(L)]
        layer_Y = [edge_f[k] * (Ys[k] * g_Y[k]).detach() for k in range(L)]
        layer_w = [edge_f[k][:, 0] * (ms[k] * g_m[k]).detach().sum(1) for k in range(L)]
        R_h = node_f[0] * (h_in * g_h).detach()
        R_emb = edge_f[0] * (Y_emb * g_Yemb).detach()
        return dict(
            R_h=R_h, R_emb=R_emb, layer_x=layer_x, layer_Y=layer_Y, layer_w=layer_w, kappa=kappa,
            logits=logits, targets=chosen,
        )  # fmt: skip

    # ---------------------------------------------------------------- rules path
    def _rules(self, pos: Any, h: Any, edge_index: Any, weights: Any) -> dict:
        model, eps, variant = self.model, self.epsilon, self.variant
        src, dst, n = edge_index[0], edge_index[1], len(pos)
        with torch.no_grad():
            Y, emb = model.geometry(pos, edge_index)
            x = model.embed(h, Y, edge_index)
            saved = []
            for layer in model.layers:
                w = layer.radial(emb)
                m = layer.tp(x[src], Y, w)
                S = torch.zeros(n, m.shape[1], dtype=m.dtype).index_add(0, dst, m)
                agg = S / math.sqrt(model.config.avg_neighbors)
                y = layer.lin(agg)
                z = layer.act(y) if layer.act is not None else y
                saved.append(dict(x=x, w=w, m=m, S=S, agg=agg, y=y, z=z))
                x = z
            # rule 1 + readout Z-rule: relevance 1 on the target, shared over the nodes
            # (the contrast output weighs each class column; the logit output is one-hot)
            Z = x * weights
            R = Z / _signed(Z.sum(), eps)
            L = len(model.layers)
            layer_x, layer_Y, layer_w, kappa = [None] * L, [None] * L, [None] * L, [1.0] * L
            for k in range(L - 1, -1, -1):
                layer, s = model.layers[k], saved[k]
                if layer.act is not None and self.norm_rule == "released":
                    Rs = R / _act_scale(layer.act, s["y"])
                    kappa[k] = float(R.sum() / Rs.sum()) if float(Rs.sum()) != 0 else 1.0
                    R = Rs * kappa[k]
                R_agg = linear_rule(layer.lin, s["agg"], s["y"], R, eps, variant)
                # Z-rule to the edges: R_m = m * (R_agg / S)[dst]
                share = _modulator(R_agg, s["S"], layer.lin.irreps_in, eps, variant)[dst]
                if variant == "componentwise":
                    # R_m / m is exactly the share R_m was built from: take it as is rather
                    # than divide by messages that vanish by symmetry (e.g. the cross product
                    # of parallel vectors), where R_m / (m + eps) would lose the gradient
                    mod = share
                else:
                    mod = _modulator(s["m"] * share, s["m"], layer.tp.irreps_out, eps, variant)
                R_x, R_Y, R_w = tp_rule(layer.tp, s["x"], Y, s["w"], src, mod)
                layer_x[k], layer_Y[k], layer_w[k] = R_x, R_Y, R_w.sum(1)
                R = R_x
            f = h.shape[1]
            R_h = R[:, :f]
            R_emb = _scatter_rule(Y, dst, n, R[:, f:], model.sh_irreps, eps, variant)
        return dict(
            R_h=R_h, R_emb=R_emb, layer_x=layer_x, layer_Y=layer_Y, layer_w=layer_w, kappa=kappa
        )

    # ---------------------------------------------------------------- result
    def _result(self, parts: dict, pos: Any, edge_index: Any, target: int, logits: Any):
        def np_(t: Any) -> np.ndarray:
            return t.detach().cpu().numpy().astype(np.float64)

        ei = np_(edge_index).astype(np.int64)
        if not np.any(np_(logits)):  # e.g. positions in other units than the training's
            warnings.warn(f"EquiGX: {ZERO_OUTPUT} (radius {self.model.config.radius:g})",
                          UserWarning, stacklevel=3)  # fmt: skip
        R_h = np_(parts["R_h"])
        emb = np_(parts["R_emb"])
        layer_Y = [np_(t) for t in parts["layer_Y"]]
        layer_w = [np_(t) for t in parts["layer_w"]]
        comps = emb + sum(layer_Y)
        direction = comps.sum(1)
        distance = sum(layer_w) if layer_w else np.zeros(ei.shape[1])
        E = direction + distance
        n = pos.shape[0]
        node = R_h.sum(1).copy()
        np.add.at(node, ei[0], E / 2)
        np.add.at(node, ei[1], E / 2)
        return GraphExplanation(
            target=target,
            total=float(R_h.sum() + E.sum()),
            norm_rule=self.norm_rule,
            output=self.output,
            variant=self.variant,
            method=self.method,
            logits=np_(logits),
            node_relevance=node.reshape(n),
            feature_relevance=R_h,
            edge_index=ei,
            edge_direction=direction,
            edge_distance=np.asarray(distance, dtype=np.float64),
            positions=np_(pos),
            edge_direction_components=comps,
            embedding_direction=emb,
            layer_node=tuple(np_(t).sum(1) for t in parts["layer_x"]),
            layer_direction=tuple(y.sum(1) for y in layer_Y),
            layer_distance=tuple(layer_w),
            layer_node_components=tuple(np_(t) for t in parts["layer_x"]),
            layer_direction_components=tuple(layer_Y),
            kappa=tuple(float(k) for k in parts["kappa"]),
        )
