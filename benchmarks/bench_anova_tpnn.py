"""Benchmark: ANOVA-TPNN against a comparable neural additive model, time to convergence.

The work (issue 4): 10,000 rows x 10 features, every main effect and every pair (55
components), a regression target with known main effects and interactions plus noise. Target:
the full ANOVA-TPNN fit in under 2 minutes on this CPU.

* ours: ``trustlab.explain.anova_tpnn.ANOVATPNN`` with its defaults (10 basis neurons per
  component, Adam, early stopping on a 15 % validation split);
* baseline: a neural additive model with pairs (NA2M-like: one ReLU network with hidden layers
  (32, 16) per component, centred afterwards), trained by the same loop: the same
  preprocessing, split, optimiser, batch size and early stopping
  (``NeuralAdditiveBaseline`` in ``benchmarks/nam_baseline.py``).

Each fit runs until early stopping; the script prints the seconds, the epochs, the test RMSE
against the noiseless truth, and the ratio of the fit times (baseline / ours).

Run ``python benchmarks/bench_anova_tpnn.py`` (full) or with ``--quick`` (a small run).
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def make_data(n: int, d: int, seed: int):
    """Independent uniform features; y = main effects + three pairs + N(0, 0.1^2) noise."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1.0, 1.0, size=(n, d))
    truth = (
        np.sin(np.pi * X[:, 0])
        + X[:, 1] ** 2
        + 0.5 * X[:, 2]
        + np.exp(X[:, 3]) / 2
        + 2 * X[:, 0] * X[:, 2]
        + np.sin(2 * X[:, 1]) * X[:, 3]
        + np.maximum(X[:, 4], 0) * X[:, 5]
    )
    return X, truth, truth + 0.1 * rng.standard_normal(n)


def timed_fit(model, X, y):
    start = time.perf_counter()
    model.fit(X, y)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2,000 rows x 5 features")
    parser.add_argument("--n-jobs", type=int, default=1, help="torch threads for both models")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    n, d = (2_000, 6) if args.quick else (10_000, 10)

    from nam_baseline import NeuralAdditiveBaseline  # beside this script

    from trustlab.explain.anova_tpnn import ANOVATPNN

    X, _, y = make_data(n, d, args.seed)
    X_test, truth_test, _ = make_data(5_000, d, args.seed + 1)
    common = dict(random_state=args.seed, n_jobs=args.n_jobs)
    models = {
        "ANOVA-TPNN (trustlab)": ANOVATPNN(**common),
        "neural additive baseline": NeuralAdditiveBaseline(**common),
    }
    print(
        f"{n:,} rows x {d} features, all pairs ({d + d * (d - 1) // 2} components), "
        f"{args.n_jobs} thread(s)"
    )
    seconds = {}
    for name, model in models.items():
        seconds[name] = timed_fit(model, X, y)
        rmse = float(np.sqrt(np.mean((model.predict(X_test) - truth_test) ** 2)))
        epochs = model.history_["n_epochs"]
        print(
            f"  {name:<26} {seconds[name]:7.1f} s  {epochs:4d} epochs "
            f"({seconds[name] / epochs:.3f} s/epoch)  test RMSE vs truth {rmse:.4f}"
        )
    ours, baseline = seconds.values()
    print(f"ratio baseline / ANOVA-TPNN time to convergence: {baseline / ours:.2f}")
    if not args.quick:
        verdict = "met" if ours < 120 else "MISSED"
        print(f"target: ANOVA-TPNN full fit under 120 s: {verdict} ({ours:.1f} s)")


if __name__ == "__main__":
    main()
