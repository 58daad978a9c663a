"""Benchmark: dynamic tau at inference for region-sparse classification (issue 26).

On BAM-lite images (64x64, SLIC with 64 segments) and the shipped trained model ``p2p_dynamic``
(delta 0.99, images of a seed it never saw) -- or, with ``--untrained``, untrained networks of
:mod:`trustlab.explain.regions.models` (the selector's logit head tilted so that more groups are kept
as tau grows, the certainty threshold set at a quantile of the confidences so images stop at
different levels) -- the script times per image (CPU seconds of this process, one thread):

* ours: :func:`dynamic_tau_sequential` with ``levels_fn=Selector.select_levels`` (the selector's
  backbone once per image, then the classifier level by level only on the images whose selection
  changed since their previous level: what ``RegionSparseClassifier.explain`` runs);
* ours without skipping repeated selections, and the all-levels batch (:func:`dynamic_tau`);
* the spec's loop (``dynamic_tau_sequential`` without ``levels_fn``): start at 0.05 and add 0.05
  until certain, the selector and classifier run once per level on the images still looking
  (as one batch, and with the selector in chunks of 16 images like ours: the fairer baseline);

checks that all give the same tau* for every image, and times SLIC per image. Run
``python benchmarks/bench_regions.py [--images 64] [--untrained [--quantile 0.6]]``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--images", type=int, default=64)
    ap.add_argument("--quantile", type=float, default=0.6)
    ap.add_argument("--untrained", action="store_true")
    args = ap.parse_args()

    import torch

    from trustlab.explain.regions import (
        TAU_GRID,
        Classifier,
        Selector,
        bam_lite,
        checkpoint_data,
        dynamic_tau,
        dynamic_tau_sequential,
        hard_selection,
        load_checkpoint,
        masked_logits,
        superpixels,
    )

    torch.set_num_threads(1)
    torch.manual_seed(0)
    if args.untrained:
        data = bam_lite(args.images, random_state=0)
    else:
        data = checkpoint_data("test", random_state=3).subset(range(args.images))
    t0 = time.process_time()
    seg_np = superpixels(data.images, n_segments=64)
    slic = (time.process_time() - t0) / args.images
    x = torch.as_tensor(data.images)
    seg = torch.as_tensor(seg_np, dtype=torch.long)
    if args.untrained:
        sel, clf = Selector().eval(), Classifier(data.n_classes).eval()
        with torch.no_grad():
            mu0, _, sizes = sel.select(x, seg, 0.0)
            sel.logit_head.weight.mul_(4.0 / sel.logit_head.weight.sum())
            sel.logit_head.bias.sub_(mu0[sizes > 0].median() + 2.0)
            levels = sel.select_levels(x, seg, TAU_GRID)
            conf = torch.stack(
                [torch.softmax(masked_logits(clf, x, seg, hard_selection(levels[:, i], sizes > 0)),
                               1).amax(1) for i in range(len(TAU_GRID))], 1,
            )  # fmt: skip
        delta = float(np.quantile(conf.numpy(), args.quantile))
        what = f"untrained networks, delta {delta:.4f} (quantile {args.quantile})"
    else:
        model = load_checkpoint("p2p_dynamic")
        sel, clf, delta = model.selector_, model.classifier_, 0.99
        what = "the shipped p2p_dynamic model, delta 0.99"

    def select_fn(xx, ss, tt):
        return sel.select(xx, ss, tt)[0]

    def select_chunked(xx, ss, tt, step=16):  # the loop's selector in cache-sized chunks too
        k = int(ss.max()) + 1
        return torch.cat(
            [sel.select(xx[i : i + step], ss[i : i + step], tt[i : i + step], k)[0]
             for i in range(0, len(xx), step)]
        )  # fmt: skip

    dynamic_tau(select_fn, clf, x[:4], seg[:4], delta, levels_fn=sel.select_levels)  # warm up

    def timed(fn):
        t0 = time.process_time()
        out = fn()
        return out, time.process_time() - t0

    with torch.no_grad():
        ours, t_ours = timed(
            lambda: dynamic_tau_sequential(
                select_fn, clf, x, seg, delta, levels_fn=sel.select_levels
            )
        )
        every, t_every = timed(
            lambda: dynamic_tau_sequential(
                select_fn, clf, x, seg, delta, levels_fn=sel.select_levels, skip_repeats=False
            )
        )
        batch, t_batch = timed(
            lambda: dynamic_tau(
                select_fn, clf, x, seg, delta, chunk_size=len(x), levels_fn=sel.select_levels
            )
        )
        loop, t_loop = timed(lambda: dynamic_tau_sequential(select_fn, clf, x, seg, delta))
        loop16, t_loop16 = timed(lambda: dynamic_tau_sequential(select_chunked, clf, x, seg, delta))
    same = all(np.array_equal(r.tau, loop.tau) for r in (ours, every, batch, loop16))
    n = len(x)
    print(
        f"{n} BAM-lite images 64x64, SLIC 64 segments; {what}; mean tau* {ours.tau.mean():.3f}; "
        "one thread, CPU seconds"
    )
    for label, r, t in (
        ("ours: backbone once, changed selections only", ours, t_ours),
        ("backbone once, every level", every, t_every),
        ("backbone once, all levels in one batch", batch, t_batch),
        ("the spec's loop", loop, t_loop),
        ("the spec's loop, selector in chunks of 16", loop16, t_loop16),
    ):
        print(
            f"  {label:<46} {n / t:7.1f} images/s  (the loop / this: {t_loop / t:5.2f}x, "
            f"classifier rows {r.classifier_rows})"
        )
    print(f"  identical tau*: {same}")
    print(f"  SLIC: {slic * 1e3:.1f} ms per image")


if __name__ == "__main__":
    main()
