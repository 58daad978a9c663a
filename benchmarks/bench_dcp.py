"""Benchmark of multiclass DCP: known regime, aggregate regime, and a brute-force reference.

There is no peer library for multiclass DCP. For each (K labels, G groups) the script times
``dcp_from_confusion`` (known regime, 10 greedy attempts, local search from both starts) and
``dcp_from_aggregates`` (5 restarts) on synthetic problems drawn like the authors'
``generate_tests``; at K = 3 it also times a global minimisation of the same objective by SciPy's
differential evolution (softmax parametrisation, per label) as a reference point, and prints how
far the known-regime upper bound is from it.

    python benchmarks/bench_dcp.py            # (3, 5), (6, 20), (10, 50)
    python benchmarks/bench_dcp.py --quick    # smaller and fewer repeats
"""

from __future__ import annotations

import argparse
import time
from functools import partial

import numpy as np
from scipy.optimize import differential_evolution

from trustlab.fairness import dcp_from_aggregates, dcp_from_confusion
from trustlab.fairness._dcp_known import clip_confusions
from trustlab.fairness._eta import eta


def problem(n_labels: int, n_groups: int, seed: int):
    rng = np.random.default_rng(seed)
    alpha = rng.random((n_groups, n_labels, n_labels))
    alpha /= alpha.sum(axis=2, keepdims=True)
    weights = rng.random(n_groups)
    weights /= weights.sum()
    dist = rng.random((n_groups, n_labels))
    dist /= dist.sum(axis=1, keepdims=True)
    pred = np.einsum("gy,gyz->gz", dist, alpha)
    return alpha, weights, dist, pred


def best_time(fn, repeats: int) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return best, out


def differential_evolution_dcp(alpha, weights, dist, seed: int) -> float:
    """Global minimum of sum_y F_y by differential evolution on softmax(logits), per label."""
    clipped = clip_confusions(alpha)
    total = 0.0
    for y in range(alpha.shape[1]):
        conf, mass = clipped[:, y, :], weights * dist[:, y]

        def objective(logits, conf=conf, mass=mass):
            row = np.exp(logits - logits.max())
            row /= row.sum()
            return float(mass @ eta(row[None, :], conf).max(axis=1))

        res = differential_evolution(
            objective, [(-8.0, 8.0)] * alpha.shape[1], tol=1e-10, seed=seed, polish=True
        )
        total += res.fun
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, fewer repeats")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--skip-aggregate",
        action="store_true",
        help="time the known regime only (the aggregate regime takes minutes at K=10, G=50)",
    )
    args = parser.parse_args()
    sizes = [(3, 5), (6, 20)] if args.quick else [(3, 5), (6, 20), (10, 50)]
    repeats = 2 if args.quick else 3
    restarts = 2 if args.quick else 5
    print(
        f"{'K':>3} {'G':>3} {'known s':>9} {'lower':>8} {'upper':>8} {'ratio':>6} "
        f"{'aggregate s':>12} {'estimate':>9}"
    )
    for n_labels, n_groups in sizes:
        alpha, weights, dist, pred = problem(n_labels, n_groups, args.seed)
        known = partial(dcp_from_confusion, alpha, weights, dist, random_state=args.seed)
        known_s, res = best_time(known, repeats)
        agg_s, estimate = float("nan"), float("nan")
        if not args.skip_aggregate:
            aggregate = partial(
                dcp_from_aggregates, weights, dist, pred, restarts=restarts, random_state=args.seed
            )
            agg_s, agg = best_time(aggregate, 1)
            estimate = agg.estimate
        print(
            f"{n_labels:>3} {n_groups:>3} {known_s:>9.3f} {res.lower:>8.4f} {res.upper:>8.4f} "
            f"{res.ratio:>6.2f} {agg_s:>12.3f} {estimate:>9.4f}"
        )
    alpha, weights, dist, _ = problem(3, 5, args.seed)
    known_s, res = best_time(lambda: dcp_from_confusion(alpha, weights, dist, random_state=0), 3)
    de_s, de_value = best_time(lambda: differential_evolution_dcp(alpha, weights, dist, 0), 1)
    print(
        f"reference K=3 G=5: differential evolution {de_s:.3f} s (DCP {de_value:.6f}); "
        f"known regime {known_s:.3f} s (bracket [{res.lower:.6f}, {res.upper:.6f}]); "
        f"time ratio DE / ours = {de_s / known_s:.1f}"
    )


if __name__ == "__main__":
    main()
