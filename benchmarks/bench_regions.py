"""Benchmark: dynamic tau at inference for region-sparse classification (issue 26).

On 64 BAM-lite images (64x64, SLIC with 64 segments) and untrained networks of
:mod:`trustlab.explain.regions.models` (the selector's logit head tilted so that more groups are kept
as tau grows, the certainty threshold set at a quantile of the confidences so images stop at
different levels), the script times per image (CPU seconds of this process, one thread):

* ours: :func:`dynamic_tau` with ``levels_fn=Selector.select_levels`` (the selector's backbone once
  per image, every level's masked image through the classifier in chunks of the batch size);
* ours, the loop with the backbone once (``dynamic_tau_sequential(..., levels_fn=...)``): every
  level's group logits first, then the classifier level by level on the images still looking;
* the spec's loop (:func:`dynamic_tau_sequential`): start at 0.05 and add 0.05 until certain, the
  selector and classifier run once per level on the images still looking;

checks that all give the same tau* for every image, and times SLIC per image. The networks are
untrained (training comes later in issue 26): the timings are what matters here. Run
``python benchmarks/bench_regions.py [--images 64] [--quantile 0.6]``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--images", type=int, default=64)
    ap.add_argument("--quantile", type=float, default=0.6)
    args = ap.parse_args()

    import torch

    from trustlab.explain.regions import (
        TAU_GRID,
        Classifier,
        Selector,
        bam_lite,
        dynamic_tau,
        dynamic_tau_sequential,
        hard_selection,
        masked_logits,
        superpixels,
    )

    torch.set_num_threads(1)
    torch.manual_seed(0)
    data = bam_lite(args.images, random_state=0)
    t0 = time.process_time()
    seg_np = superpixels(data.images, n_segments=64)
    slic = (time.process_time() - t0) / args.images
    x = torch.as_tensor(data.images)
    seg = torch.as_tensor(seg_np, dtype=torch.long)
    sel, clf = Selector().eval(), Classifier(data.n_classes).eval()
    with torch.no_grad():
        mu0, _, sizes = sel.select(x, seg, 0.0)
        sel.logit_head.weight.mul_(4.0 / sel.logit_head.weight.sum())
        sel.logit_head.bias.sub_(mu0[sizes > 0].median() + 2.0)
        levels = sel.select_levels(x, seg, TAU_GRID)
        conf = torch.stack(
            [torch.softmax(masked_logits(clf, x, seg, hard_selection(levels[:, i], sizes > 0)), 1)
             .amax(1) for i in range(len(TAU_GRID))], 1,
        )  # fmt: skip
    delta = float(np.quantile(conf.numpy(), args.quantile))

    def select_fn(xx, ss, tt):
        return sel.select(xx, ss, tt)[0]

    dynamic_tau(select_fn, clf, x[:4], seg[:4], delta, levels_fn=sel.select_levels)  # warm up
    t0 = time.process_time()
    ours = dynamic_tau(
        select_fn, clf, x, seg, delta, chunk_size=len(x), levels_fn=sel.select_levels
    )
    t_ours = time.process_time() - t0
    t0 = time.process_time()
    loop = dynamic_tau_sequential(select_fn, clf, x, seg, delta)
    t_loop = time.process_time() - t0
    t0 = time.process_time()
    early = dynamic_tau_sequential(select_fn, clf, x, seg, delta, levels_fn=sel.select_levels)
    t_early = time.process_time() - t0
    same = bool(np.array_equal(ours.tau, loop.tau) and np.array_equal(early.tau, loop.tau))
    n = len(x)
    print(
        f"{n} BAM-lite images 64x64, SLIC 64 segments; delta {delta:.4f} (quantile "
        f"{args.quantile}); mean tau* {ours.tau.mean():.3f}; one thread, CPU seconds"
    )
    print(
        f"  ours, backbone once, levels batched    {n / t_ours:7.1f} images/s   "
        f"(the loop / this: {t_loop / t_ours:.2f}x)"
    )
    print(
        f"  ours, backbone once, classifier loop   {n / t_early:7.1f} images/s   "
        f"(the loop / this: {t_loop / t_early:.2f}x)"
    )
    print(
        f"  the spec's loop                        {n / t_loop:7.1f} images/s   "
        f"classifier rows {ours.classifier_rows} batched vs {loop.classifier_rows} in the loops"
    )
    print(f"  identical tau*: {same}")
    print(f"  SLIC: {slic * 1e3:.1f} ms per image")


if __name__ == "__main__":
    main()
