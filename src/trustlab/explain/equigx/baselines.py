"""Generic node attributions beside EquiGX, for the evaluation (spec 10, "Baselines").

Each baseline maps ``(model, graph, target)`` to one score per node (higher = more important):

- ``random``: uniform scores (the chance control, AUROC 0.5 in expectation);
- ``gradient``: the plain gradient, ``|d y_target / d pos_i|`` (its norm, invariant to rotations),
  plus ``|d y / d x_i|`` summed over features;
- ``input_x_gradient``: captum ``InputXGradient`` on the positions centred at their mean and the
  node features, summed per node (signed, as relevance);
- ``integrated_gradients``: captum ``IntegratedGradients`` (50 steps) from the baseline where every
  node sits at the centroid with zero features, summed per node;
- ``grad_cam``: activation x gradient of the node features entering the last convolution, summed
  over channels;
- ``gnnexplainer``: a GNNExplainer-style soft edge mask (sigmoid of logits drawn from N(0, 0.4^2))
  that multiplies the edges' spherical harmonics and messages, fitted by 100 Adam steps at learning
  rate 0.01 on cross-entropy + 1e-4 sum(mask) + 0.01 mean entropy(mask); a node scores the sum of
  its incident edges' masks.

Gradient baselines differentiate through positions, so they see distance and direction at once and
cannot split them; EquiGX can.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from trustlab._checks import check_positive_int, check_random_state
from trustlab._lazy import require
from trustlab.errors import InputError

torch = require("torch", "graph")

from trustlab.explain.equigx.model import TensorFieldNetwork, as_graph_tensors  # noqa: E402

__all__ = ["BASELINES", "baseline_scores"]

BASELINES = (
    "random",
    "gradient",
    "input_x_gradient",
    "integrated_gradients",
    "grad_cam",
    "gnnexplainer",
)


def _wrapped(model: Any, centre: Any, target: int):
    def f(pos_c: Any, x: Any) -> Any:
        rows = []
        for p, xx in zip(pos_c, x, strict=True):  # captum batches the steps along dim 0
            rows.append(model({"pos": p + centre, "x": xx})[0, target])
        return torch.stack(rows)

    return f


def baseline_scores(
    model: Any,
    graph: Any,
    method: str,
    *,
    target: int | None = None,
    n_steps: int = 50,
    random_state: Any = None,
) -> np.ndarray:
    """Node scores (n,) of one baseline ``method`` (one of :data:`BASELINES`) for ``target``
    (default: the predicted class).

    Examples
    --------
    >>> import torch
    >>> from trustlab.explain.equigx import TensorFieldNetwork, shapes_in_noise
    >>> torch.manual_seed(0) and None
    >>> g = shapes_in_noise(1, variant="same_count", n_nodes=8, random_state=0)[0]
    >>> net = TensorFieldNetwork(n_classes=3, mul=2, l_max=1, k=4, radius=2.0)
    >>> baseline_scores(net, g, "grad_cam", target=0).shape
    (8,)
    """
    if not isinstance(model, TensorFieldNetwork):  # not an AttributeError on .parameters()
        raise InputError.bad("model", "a trustlab TensorFieldNetwork", model)
    if method not in BASELINES:
        raise InputError.bad("method", f"one of {BASELINES}", method)
    # captum asserted on 0 steps and numpy raised a TypeError on 2.5
    n_steps = check_positive_int(n_steps, "n_steps")
    dtype = next(model.parameters()).dtype
    pos, h, _ = as_graph_tensors(graph, dtype)
    n = pos.shape[0]
    n_classes = _n_classes_without_forward(model, h, target)
    if n_classes is None:  # the predicted class, or a model that only its output describes
        with torch.no_grad():
            logits = model({"pos": pos, "x": h})[0]
        n_classes = logits.shape[0]
        if target is None:
            target = int(torch.argmax(logits))
    ok = isinstance(target, (int, np.integer)) and not isinstance(target, bool)  # True: no class
    if not (ok and 0 <= int(target) < n_classes):
        raise InputError.bad("target", f"a class index in 0..{n_classes - 1}", target)
    target = int(target)
    if method == "random":
        return check_random_state(random_state).random(n)
    if method in ("gradient", "input_x_gradient", "integrated_gradients"):
        centre = pos.mean(0, keepdim=True).detach()
        pos_c = (pos - centre).detach()[None].requires_grad_()
        x = h.detach()[None].clone().requires_grad_()
        f = _wrapped(model, centre, target)
        if method == "gradient":
            with torch.enable_grad():
                gp, gx = torch.autograd.grad(f(pos_c, x).sum(), (pos_c, x))
            return (gp[0].norm(dim=1) + gx[0].abs().sum(1)).detach().numpy().astype(float)
        from captum.attr import InputXGradient, IntegratedGradients

        if method == "input_x_gradient":
            ap, ax = InputXGradient(f).attribute((pos_c, x))
        else:
            ap, ax = IntegratedGradients(f).attribute(
                (pos_c, x),
                baselines=(torch.zeros_like(pos_c), torch.zeros_like(x)),
                n_steps=n_steps,
                internal_batch_size=n_steps,
            )
        return (ap[0].sum(1) + ax[0].sum(1)).detach().numpy().astype(float)
    if method == "grad_cam":
        with torch.enable_grad():
            out, hidden = model({"pos": pos, "x": h}, return_hidden=True)
            (g,) = torch.autograd.grad(out[0, target], hidden)
        return (hidden * g).sum(1).detach().numpy().astype(float)
    # gnnexplainer
    gen = torch.Generator().manual_seed(int(check_random_state(random_state).integers(2**31)))
    edge_index = model.edges(pos, torch.zeros(n, dtype=torch.long))
    E = edge_index.shape[1]
    logit = (0.4 * torch.randn(E, generator=gen, dtype=dtype)).requires_grad_()
    opt = torch.optim.Adam([logit], lr=1e-2)
    label = torch.tensor([target])
    with torch.enable_grad():
        for _ in range(100):
            m = torch.sigmoid(logit)
            out = model({"pos": pos, "x": h}, edge_mask=m)
            ent = -(m * torch.log(m + 1e-15) + (1 - m) * torch.log(1 - m + 1e-15))
            loss = (
                torch.nn.functional.cross_entropy(out, label) + 1e-4 * m.sum() + 0.01 * ent.mean()
            )
            (logit.grad,) = torch.autograd.grad(loss, [logit])  # the model's weights stay put
            opt.step()
    m = torch.sigmoid(logit).detach().numpy().astype(float)
    ei = edge_index.numpy()
    score = np.zeros(n)
    np.add.at(score, ei[0], m)
    np.add.at(score, ei[1], m)
    return score


def _n_classes_without_forward(model: Any, h: Any, target: Any) -> int | None:
    """The class count of a trustlab network asked for a given ``target`` on a graph with its
    number of node features: its config says it, so no forward pass is spent on checking the
    target (the evaluation passes the label of every graph). None otherwise: the forward pass
    finds the predicted class, or raises on the graph as it always did. A subclass may change
    what its forward returns (another head), so only the class itself is read off its config."""
    if target is None or type(model) is not TensorFieldNetwork:
        return None
    if h.shape[1] != model.config.n_scalars:
        return None
    return int(model.config.n_classes)
