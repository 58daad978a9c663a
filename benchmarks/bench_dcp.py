"""Benchmark of multiclass DCP: known regime, aggregate regime, and a brute-force reference.

There is no peer library for multiclass DCP. For each (K labels, G groups) the script times
``dcp_from_confusion`` (known regime, 10 greedy attempts, local search) in CPU seconds
(``time.process_time``, one BLAS/OpenMP thread), best of the repeats and averaged over seeds,
against the authors' method on the same work (no vertex search, no extra local starts) and
prints both upper bounds; then ``dcp_from_aggregates`` (5 restarts; its default reduced
sequential LP) against the authors' joint sequential LP on the same aggregates and seed (the
reference kept in ``tests/fairness/dcp_joint_reference.py``), with both estimates (best of the
restarts; lower is better). The joint method takes about 200 CPU-s at K = 10, G = 50, so it runs
only up to ``--joint-max-labels`` labels (default 6). At K = 3 it also times a global
minimisation of the known-regime objective by SciPy's differential evolution (softmax
parametrisation, per label) and prints how far the known-regime upper bound is from it.

    python benchmarks/bench_dcp.py                        # (3, 5), (6, 20), (10, 50)
    python benchmarks/bench_dcp.py --quick                # smaller and fewer repeats
    python benchmarks/bench_dcp.py --joint-max-labels 10  # also the joint method at K = 10
"""

from __future__ import annotations

import os

for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")  # before numpy loads its BLAS

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from functools import partial  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
from scipy.optimize import differential_evolution  # noqa: E402

from trustlab.fairness import dcp_from_aggregates, dcp_from_confusion  # noqa: E402
from trustlab.fairness._eta import eta  # noqa: E402
from trustlab.fairness._greedy import random_orders  # noqa: E402
from trustlab.fairness._known import solve_known  # noqa: E402
from trustlab.fairness._label import clip_confusions  # noqa: E402

# the authors' joint aggregate method lives with the tests, as the reference it is
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "fairness"))
from dcp_joint_reference import solve_joint  # noqa: E402


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


def best_cpu_time(fn, repeats: int) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(repeats):
        start = time.process_time()
        out = fn()
        best = min(best, time.process_time() - start)
    return best, out


def authors_method(alpha, weights, dist, seed: int) -> float:
    """The authors' known-regime upper bound on the same work (same greedy orders)."""
    orders = random_orders(np.random.default_rng(seed), 10, alpha.shape[1])
    solution = solve_known(
        clip_confusions(alpha), weights[:, None] * dist, orders, local_starts=0, vertex_budget=0
    )
    return float(solution.upper.sum())


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


def known_row(n_labels: int, n_groups: int, seeds: int, repeats: int) -> str:
    ours_s, authors_s, ours_up, authors_up, lower = [], [], [], [], []
    for seed in range(seeds):
        alpha, weights, dist, _ = problem(n_labels, n_groups, seed)
        ours = partial(dcp_from_confusion, alpha, weights, dist, random_state=seed)
        seconds, res = best_cpu_time(ours, repeats)
        ours_s.append(seconds)
        ours_up.append(res.upper)
        lower.append(res.lower)
        seconds, upper = best_cpu_time(partial(authors_method, alpha, weights, dist, seed), repeats)
        authors_s.append(seconds)
        authors_up.append(upper)
    ours_t, authors_t = np.mean(ours_s), np.mean(authors_s)
    return (
        f"{n_labels:>3} {n_groups:>3} {ours_t:>8.3f} {authors_t:>10.3f} {ours_t / authors_t:>12.2f} "
        f"{np.mean(ours_up):>9.4f} {np.mean(authors_up):>11.4f} {np.mean(lower):>8.4f}"
    )


def aggregate_row(n_labels: int, n_groups: int, seed: int, restarts: int, joint: bool) -> str:
    """Ours (dcp_from_aggregates) and the authors' joint method on the same aggregates."""
    _, weights, dist, pred = problem(n_labels, n_groups, seed)
    ours = partial(dcp_from_aggregates, weights, dist, pred, n_restarts=restarts, random_state=seed)
    ours_s, res = best_cpu_time(ours, 1)
    if not joint:
        skipped = f"{'-':>10} {'-':>12}"
        return (
            f"{n_labels:>3} {n_groups:>3} {ours_s:>8.3f} {skipped} {res.estimate:>9.4f} {'-':>11}"
        )
    rng = np.random.default_rng(seed)
    authors = partial(solve_joint, weights, dist, pred, restarts=restarts, rng=rng)
    joint_s, joint_res = best_cpu_time(authors, 1)
    return (
        f"{n_labels:>3} {n_groups:>3} {ours_s:>8.3f} {joint_s:>10.3f} {ours_s / joint_s:>12.3f} "
        f"{res.estimate:>9.4f} {joint_res.value:>11.4f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, fewer repeats")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--skip-aggregate", action="store_true", help="time the known regime only")
    parser.add_argument(
        "--joint-max-labels",
        type=int,
        default=6,
        help="time the authors' joint aggregate method up to this many labels (200 s at K=10)",
    )
    args = parser.parse_args()
    sizes = [(3, 5), (6, 20)] if args.quick else [(3, 5), (6, 20), (10, 50)]
    repeats, seeds = (2, 1) if args.quick else (3, 3)
    restarts = 2 if args.quick else 5
    print("known regime, CPU seconds (best of repeats) and bounds, means over seeds, one thread")
    print(
        f"{'K':>3} {'G':>3} {'ours s':>8} {'authors s':>10} {'ours/authors':>12} "
        f"{'ours UB':>9} {'authors UB':>11} {'LB':>8}"
    )
    for n_labels, n_groups in sizes:
        print(known_row(n_labels, n_groups, seeds, repeats), flush=True)
    if not args.skip_aggregate:
        print(f"aggregate regime ({restarts} restarts), CPU seconds and estimates, one thread")
        print(
            f"{'K':>3} {'G':>3} {'ours s':>8} {'authors s':>10} {'ours/authors':>12} "
            f"{'ours J*':>9} {'authors J*':>11}"
        )
        for n_labels, n_groups in sizes:
            joint = n_labels <= args.joint_max_labels
            print(aggregate_row(n_labels, n_groups, args.seed, restarts, joint), flush=True)
    alpha, weights, dist, _ = problem(3, 5, args.seed)
    known_s, res = best_cpu_time(
        lambda: dcp_from_confusion(alpha, weights, dist, random_state=0), 3
    )
    de_s, de_value = best_cpu_time(lambda: differential_evolution_dcp(alpha, weights, dist, 0), 1)
    print(
        f"reference K=3 G=5: differential evolution {de_s:.3f} s (DCP {de_value:.6f}); "
        f"known regime {known_s:.3f} s (bracket [{res.lower:.6f}, {res.upper:.6f}], upper - DE "
        f"{res.upper - de_value:+.1e}); time ratio DE / ours = {de_s / known_s:.1f}"
    )


if __name__ == "__main__":
    main()
