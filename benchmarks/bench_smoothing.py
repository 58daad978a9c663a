"""Certify digits with cost-sensitive randomized smoothing: trustlab against a per-sample loop.

The peer is a loop like the authors' ``core.Smooth.certify`` (CS-RS, itself Cohen's code): one
point at a time, its noise drawn in batches of ``--peer-batch`` (400 in their certify.py), the
labels counted in Python, statsmodels' Clopper-Pearson bounds. It draws each point's noise from
the same stream as trustlab (the run's seed and the point's index), so both must produce
identical counts; the script checks that, then prints both times and the ratio.

    python benchmarks/bench_smoothing.py            # 100 test digits, n = 10,000
    python benchmarks/bench_smoothing.py --quick    # 20 digits, n = 2,000
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch
from scipy.stats import norm
from statsmodels.stats.proportion import proportion_confint

from trustlab.robustness import (
    SmoothedClassifier,
    certify_dataset,
    digits_model,
    load_digits_split,
    make_cost_matrix,
    train_smoothed,
)


def peer_certify(model, X, y, costs, sigma, n0, n, alpha, seed, batch):
    """One point at a time, as the authors' loop does (on CPU)."""
    model.eval()
    out = []
    for i, (x, label) in enumerate(zip(X, y, strict=True)):
        rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed, spawn_key=(i,))))
        selection = _sample_noise(model, x, n0, batch, rng, sigma)
        top = int(selection.argmax())
        counts = _sample_noise(model, x, n, batch, rng, sigma)
        targets = [int(j) for j in np.flatnonzero(costs[label] > 0)]
        if not targets:  # nothing harmful for this label
            out.append((top, counts, np.inf))
            continue
        bound_a = proportion_confint(counts[top], n, alpha=2 * (alpha / 2), method="beta")[0]
        per_target = alpha / (2 * len(targets))
        bound_b = max(
            proportion_confint(counts[j], n, alpha=2 * per_target, method="beta")[1]
            for j in targets
        )
        radius = sigma / 2 * (norm.ppf(bound_a) - norm.ppf(bound_b))
        out.append((top, counts, -np.inf if top in targets else radius))
    return out


def _sample_noise(model, x, num, batch_size, rng, sigma):
    with torch.no_grad():
        counts = np.zeros(10, dtype=int)
        remaining = num
        while remaining > 0:
            size = min(batch_size, remaining)
            remaining -= size
            batch = np.repeat(x[None], size, axis=0)
            noise = rng.standard_normal(batch.shape, dtype=np.float32) * np.float32(sigma)
            predictions = model(torch.from_numpy(batch + noise)).argmax(1)
            for index in predictions.numpy():  # the authors' _count_arr
                counts[index] += 1
        return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="20 digits at n = 2,000")
    parser.add_argument("--points", type=int, default=100)
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--n0", type=int, default=100)
    parser.add_argument("--sigma", type=float, default=0.25)
    parser.add_argument("--alpha", type=float, default=0.001)
    parser.add_argument("--batch", type=int, default=10_000, help="trustlab's batch size")
    parser.add_argument("--peer-batch", type=int, default=400, help="the loop's batch size")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (both)")
    parser.add_argument("--n-jobs", type=int, default=1, help="trustlab's joblib workers")
    args = parser.parse_args()
    if args.quick:
        args.points, args.n = 20, 2_000
    torch.set_num_threads(args.threads)

    X_train, y_train = load_digits_split("train")
    X, y = load_digits_split("test")
    X, y = X[: args.points], y[: args.points]
    costs = make_cost_matrix(10, {3: [8]}) + make_cost_matrix(10, {j: [3] for j in (5, 8, 9)})
    model = digits_model("mlp", hidden=128, random_state=0)
    train_smoothed(model, X_train, y_train, costs, "gaussian", sigma=args.sigma, max_epochs=5,
                   random_state=0)  # fmt: skip
    settings = dict(n0=args.n0, n=args.n, alpha=args.alpha, cost_matrix=costs, random_state=0)

    smooth = SmoothedClassifier(model, args.sigma, 10, batch_size=args.batch)
    start = time.perf_counter()
    ours = certify_dataset(smooth, X, y, n_jobs=args.n_jobs, **settings)
    ours_seconds = time.perf_counter() - start

    start = time.perf_counter()
    peer = peer_certify(model, X, y, costs, args.sigma, args.n0, args.n, args.alpha, 0,
                        args.peer_batch)  # fmt: skip
    peer_seconds = time.perf_counter() - start

    same_counts = all(np.array_equal(ours.counts[i], c) for i, (_, c, _) in enumerate(peer))
    same_tops = all(ours.top_classes[i] == t for i, (t, _, _) in enumerate(peer))
    radius_gap = max(
        abs(ours.raw["radius_cs"][i] - r)
        if np.isfinite(r)
        else float(ours.raw["radius_cs"][i] != r)
        for i, (_, _, r) in enumerate(peer)
    )
    print(f"certify {len(X)} digits, n0 = {args.n0}, n = {args.n}, sigma = {args.sigma}, "
          f"torch threads = {args.threads}")  # fmt: skip
    print(f"  trustlab certify_dataset  {ours_seconds:8.2f} s  (batch {args.batch}, "
          f"n_jobs {args.n_jobs})")  # fmt: skip
    print(f"  per-sample loop (authors) {peer_seconds:8.2f} s  (batch {args.peer_batch})")
    print(f"  ratio (loop / trustlab)   {peer_seconds / ours_seconds:8.2f} x")
    print(f"  identical counts: {same_counts}, identical top classes: {same_tops}, "
          f"largest group-radius difference: {radius_gap:.2e}")  # fmt: skip
    if not (same_counts and same_tops):
        raise SystemExit("the two implementations disagree")


if __name__ == "__main__":
    main()
