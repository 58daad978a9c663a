"""Benchmark: EquiGX explanation time per graph (issue 25).

On one random-initialised e3nn tensor-field network (depthwise "uvu" tensor products by default,
``l_max`` 2, 8 channels per irrep, 3 convolutions, kNN graph with k = 8) and graphs from the
shapes-in-noise generator (28 nodes), the script times per graph:

* ours: ``EquiGX(model, method="fast")`` (one modified backward pass, the tensor products and
  Linear layers as dense matrix products), one graph at a time and all graphs in one pass
  (``explain_many``);
* trustlab's rule-by-rule path on the same model (``method="rules"``: each rule vectorised per
  layer, one gradient call per tensor product);
* the spec's rules written out literally (:func:`literal_rules` below, the shape of the authors'
  released code, written from the spec): the tensor-product rule as three separate
  forward-and-gradient passes, one per input (x, Y, w), each dividing by the messages; the Linear
  rule as a loop over instructions and input channels; the released NormActivation rule;
* captum ``IntegratedGradients`` with 50 steps on the positions and node features (a generic
  attribution: 50 forward/backward passes).

It prints seconds per graph (CPU seconds of this process, one thread) and the ratios, and
checks that the two EquiGX paths agree. Run ``python benchmarks/bench_equigx.py`` or
``--graphs 5 --tp fully_connected``.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np


def literal_rules(net, graph, target, eps=1e-7):
    """Node relevance by the spec's rules, step by step (released NormActivation rule)."""
    import math

    import torch

    from trustlab.explain.equigx.model import as_graph_tensors
    from trustlab.explain.equigx.relevance import _act_scale

    def signed(z):
        return z + eps * torch.where(z >= 0, 1.0, -1.0).to(z.dtype)

    pos, h, _ = as_graph_tensors(graph, next(net.parameters()).dtype)
    n = len(pos)
    ei = net.edges(pos, torch.zeros(n, dtype=torch.long))
    src, dst = ei
    with torch.no_grad():
        Y, emb = net.geometry(pos, ei)
        x = net.embed(h, Y, ei)
        saved = []
        for layer in net.layers:
            w = layer.radial(emb)
            m = layer.tp(x[src], Y, w)
            S = torch.zeros(n, m.shape[1], dtype=m.dtype).index_add(0, dst, m)
            agg = S / math.sqrt(net.config.avg_neighbors)
            y = layer.lin(agg)
            z = layer.act(y) if layer.act is not None else y
            saved.append((x, w, m, S, agg, y))
            x = z
        R = torch.zeros_like(x)
        R[:, target] = x[:, target] / signed(x[:, target].sum())
    edge = torch.zeros(ei.shape[1], dtype=pos.dtype)
    for k in range(len(net.layers) - 1, -1, -1):
        layer = net.layers[k]
        xk, w, m, S, agg, y = saved[k]
        if layer.act is not None:  # released rule: divide by the scale, renormalise
            Rs = R / _act_scale(layer.act, y)
            R = Rs * (R.sum() / Rs.sum())
        lin = layer.lin  # LRP-0 per instruction, per input channel u, per component
        Rin = torch.zeros_like(agg)
        sl_in, sl_out = lin.irreps_in.slices(), lin.irreps_out.slices()
        for i, ins in enumerate(lin.instructions):
            W = lin.weight_view_for_instruction(i)
            mi, ir = lin.irreps_in[ins.i_in]
            mo, _ = lin.irreps_out[ins.i_out]
            xs = agg[:, sl_in[ins.i_in]].reshape(n, mi, ir.dim)
            ys = y[:, sl_out[ins.i_out]].reshape(n, mo, ir.dim)
            Rs_ = R[:, sl_out[ins.i_out]].reshape(n, mo, ir.dim)
            cols = []
            for u in range(mi):
                contrib = ins.path_weight * W[u][None, :, None] * xs[:, u : u + 1, :]
                cols.append((contrib / signed(ys) * Rs_).sum(1, keepdim=True))
            Rin[:, sl_in[ins.i_in]] += torch.cat(cols, 1).reshape(n, mi * ir.dim)
        Rm = m / signed(S)[dst] * Rin[dst]  # Z-rule to the messages
        parts = []
        for which in range(3):  # one input at a time, as the rule is written
            inputs = [xk.clone(), Y.clone(), w.clone()]
            inputs[which].requires_grad_()
            with torch.enable_grad():
                out = layer.tp(inputs[0][src], inputs[1], inputs[2])
                (g,) = torch.autograd.grad((out * (Rm / signed(out)).detach()).sum(),
                                           inputs[which])  # fmt: skip
            parts.append(inputs[which].detach() * g / 3)
        R = parts[0]
        edge += parts[1].sum(1) + parts[2].sum(1)
    f = h.shape[1]
    node = R[:, :f].sum(1)
    emb_part = Y * (R[:, f:] / signed(torch.zeros_like(R[:, f:]).index_add(0, dst, Y)))[dst]
    edge += emb_part.sum(1)
    node = node.index_add(0, src, edge / 2).index_add(0, dst, edge / 2)
    return node.detach().numpy()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--graphs", type=int, default=10)
    ap.add_argument("--tp", default="uvu", choices=["uvu", "fully_connected"])
    ap.add_argument("--l-max", type=int, default=2)
    ap.add_argument("--mul", type=int, default=8)
    ap.add_argument("--layers", type=int, default=3)
    ap.add_argument("--k", type=int, default=8)
    ap.add_argument("--steps", type=int, default=50)
    args = ap.parse_args()
    for name in ("graphs", "l_max", "mul", "layers", "k", "steps"):
        minimum = 0 if name == "l_max" else 1
        if getattr(args, name) < minimum:  # one line, exit 2, instead of a traceback
            ap.error(f"--{name.replace('_', '-')}: expected an integer >= {minimum}, "
                     f"got {getattr(args, name)}")  # fmt: skip

    import torch
    from captum.attr import IntegratedGradients

    from trustlab.explain.equigx import EquiGX, TensorFieldNetwork, shapes_in_noise

    torch.set_num_threads(1)
    torch.manual_seed(0)
    data = shapes_in_noise(args.graphs, random_state=0)
    net = TensorFieldNetwork(
        n_classes=len(data.class_names),
        n_scalars=data[0].x.shape[1],
        mul=args.mul,
        l_max=args.l_max,
        n_layers=args.layers,
        k=args.k,
        radius=3.0,
        tp=args.tp,
    )
    fast, rules = EquiGX(net, method="fast"), EquiGX(net, method="rules")
    fast.explain(data[0])  # warm up
    times = {"fast": [], "rules": [], "literal": [], "ig": []}

    for g in data:
        t0 = time.process_time()
        a = fast.explain(g)
        t1 = time.process_time()
        rules.explain(g)
        t2 = time.process_time()
        times["fast"].append(t1 - t0)
        times["rules"].append(t2 - t1)
        t2 = time.process_time()
        literal_rules(net, g, a.target)
        times["literal"].append(time.process_time() - t2)

        pos = torch.as_tensor(g.pos, dtype=torch.float32)
        x = torch.as_tensor(g.x, dtype=torch.float32)

        def forward(p, h):
            return torch.cat([net({"pos": p[i], "x": h[i]}) for i in range(p.shape[0])])

        t3 = time.process_time()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            IntegratedGradients(forward).attribute(
                (pos[None], x[None]), target=a.target, n_steps=args.steps, internal_batch_size=1
            )
        times["ig"].append(time.process_time() - t3)

    med = {k: float(np.median(v)) for k, v in times.items()}
    # the same graphs explained together: one backward pass for the batch
    fast.explain_many(list(data)[:2])  # warm up
    t0 = time.process_time()
    batched = fast.explain_many(list(data))
    med["batched"] = (time.process_time() - t0) / len(data)
    del batched
    # agreement, in float64 (a float32 network's relevance is as precise as its logit allows)
    import dataclasses

    net64 = TensorFieldNetwork(dataclasses.replace(net.config, dtype="float64"))
    net64.load_state_dict({k: v.double() for k, v in net.state_dict().items()})
    f64, r64 = EquiGX(net64), EquiGX(net64, method="rules", epsilon=1e-12)
    few = list(data)[:5]
    many = f64.explain_many(few)
    diffs = {"rules": 0.0, "literal": 0.0, "batched": 0.0}
    for g, m in zip(few, many, strict=True):
        a = f64.explain(g)
        scale = np.abs(a.node_relevance).max()
        others = {
            "rules": r64.explain(g, a.target).node_relevance,
            "literal": literal_rules(net64, g, a.target, eps=1e-12),
            "batched": m.node_relevance,
        }
        for name, v in others.items():
            diffs[name] = max(diffs[name], float(np.abs(v - a.node_relevance).max() / scale))
    print(
        f"{args.graphs} graphs of {len(data[0].pos)} nodes; TFN {args.tp}, l_max {args.l_max}, "
        f"mul {args.mul}, {args.layers} layers, k {args.k}; CPU s per graph (median, 1 thread)"
    )
    print(f"  EquiGX fast form      {med['fast']:.4f} s")
    print(
        f"  fast, {len(data)} graphs per pass {med['batched']:.4f} s   (literal rules / this: "
        f"{med['literal'] / med['batched']:.1f}x)"
    )
    print(f"  EquiGX rule-by-rule   {med['rules']:.4f} s   ratio {med['rules'] / med['fast']:.2f}x")
    print(
        f"  spec's rules, literal {med['literal']:.4f} s   ratio "
        f"{med['literal'] / med['fast']:.2f}x"
    )
    print(
        f"  captum IG ({args.steps} steps)  {med['ig']:.4f} s   ratio "
        f"{med['ig'] / med['fast']:.1f}x"
    )
    print(
        f"  float64, {len(few)} graphs, max |difference| / max |relevance| against the fast form: "
        + ", ".join(f"{k} {v:.1e}" for k, v in diffs.items())
    )


if __name__ == "__main__":
    main()
