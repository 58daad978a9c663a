"""Benchmark: EquiGX explanation time per graph (issue 25).

On one random-initialised e3nn tensor-field network (depthwise "uvu" tensor products by default,
``l_max`` 2, 8 channels per irrep, 3 convolutions, kNN graph with k = 8) and graphs from the
shapes-in-noise generator (28 nodes), the script times per graph:

* ours: ``EquiGX(model, method="fast")`` (one modified backward pass);
* the literal rule-by-rule path of the spec on the same model (``method="rules"``);
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
    times = {"fast": [], "rules": [], "ig": []}
    max_diff = 0.0
    for g in data:
        t0 = time.process_time()
        a = fast.explain(g)
        t1 = time.process_time()
        b = rules.explain(g)
        t2 = time.process_time()
        times["fast"].append(t1 - t0)
        times["rules"].append(t2 - t1)
        diff = np.abs(a.node_relevance - b.node_relevance).max() / np.abs(a.node_relevance).max()
        max_diff = max(max_diff, float(diff))

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
    print(
        f"{args.graphs} graphs of {len(data[0].pos)} nodes; TFN {args.tp}, l_max {args.l_max}, "
        f"mul {args.mul}, {args.layers} layers, k {args.k}; CPU s per graph (median, 1 thread)"
    )
    print(f"  EquiGX fast form      {med['fast']:.4f} s")
    print(f"  EquiGX rule-by-rule   {med['rules']:.4f} s   ratio {med['rules'] / med['fast']:.2f}x")
    print(
        f"  captum IG ({args.steps} steps)  {med['ig']:.4f} s   ratio "
        f"{med['ig'] / med['fast']:.1f}x"
    )
    print(f"  fast vs rules: max relative node-relevance difference {max_diff:.2e}")


if __name__ == "__main__":
    main()
