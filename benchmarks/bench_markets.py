"""Market price: trustlab's sort-based O(m log m) price against the brute-force breakpoint scan.

The brute force evaluates the revenue at every candidate price (each user's budget per
distance), O(m^2), as in the spec's oracle. Both run on the same m = 10,000 users (--quick:
2,000) and must agree; then trustlab alone at m = 1,000,000 (--quick: 100,000), d = 10 features,
timed end to end (validation, scores, sort, outcome). Target: m = 10^6 in under 2 s.
Run: python benchmarks/bench_markets.py [--quick]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from trustlab.strategic import market_price


def brute_force_price(w, b0, X, budgets):
    """The best price by scanning every candidate: O(m) work for each of up to m candidates."""
    u = -(X @ w + b0) / np.linalg.norm(w)
    rejected = u > 0
    beta = np.full(u.shape, -np.inf)
    beta[rejected] = budgets[rejected] / u[rejected]
    best_price, best_revenue = np.inf, 0.0
    for rho in np.unique(beta[beta > 0]):
        revenue = rho * u[beta >= rho].sum()
        if revenue > best_revenue:  # ascending candidates: ties keep the lowest price
            best_price, best_revenue = rho, revenue
    return best_price, best_revenue


def population(m, d, rng):
    X = rng.normal(size=(m, d))
    w = rng.normal(size=d)
    w[0] = abs(w[0]) + 0.1
    return w, -0.5, X, rng.lognormal(sigma=1.0, size=m)


def timed(fn, *args, repeats=1):
    best = np.inf
    for _ in range(repeats):
        start = time.perf_counter()
        value = fn(*args)
        best = min(best, time.perf_counter() - start)
    return value, best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    d = 10
    small, large = (2_000, 100_000) if args.quick else (10_000, 1_000_000)

    case = population(small, d, rng)
    ours, ours_s = timed(market_price, *case, repeats=3)
    (peer_price, peer_revenue), peer_s = timed(brute_force_price, *case)
    agree = ours.price == peer_price and np.isclose(ours.revenue, peer_revenue, rtol=1e-12)
    print(
        f"m={small:,}: trustlab {ours_s:.4f} s, brute-force scan {peer_s:.3f} s, "
        f"same-size ratio {peer_s / ours_s:.0f}x; prices agree: {agree}",
        flush=True,
    )

    big = population(large, d, rng)
    result, big_s = timed(market_price, *big, repeats=3)
    print(
        f"m={large:,}: trustlab {big_s:.3f} s (price {result.price:.6g}, "
        f"{result.n_buyers:,} buyers); brute force at m={small:,} / trustlab at m={large:,}: "
        f"{peer_s / big_s:.1f}x",
        flush=True,
    )
    if large < 1_000_000:
        target = "not measured (run without --quick)"
    else:
        target = "met" if big_s < 2.0 else "NOT met"
    print(f"target (m = 10^6 under 2 s): {target}")


if __name__ == "__main__":
    main()
