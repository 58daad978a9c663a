"""FastPD against shap's interventional TreeExplainer (full background) on the same work.

The data follow the paper's runtime experiment (Liu et al. 2025): d = 7 correlated Gaussian
features, y = 3 sin x1 + 2.5 cos(.3 x2) + 1.12 x3 + sin(x4 x5) + .7 x6 x7 + noise. The model is
larger than the paper's (xgboost, 20 trees of depth 5): xgboost with 100 trees of depth 6. For
each n, the background and the explained rows both have n rows, and both methods compute exact
interventional SHAP values of all n rows against all n background rows.

shap's cost is a fixed amount per explained row (each row is one pass over the trees and the whole
background), so by default it is timed on ``--shap-rows`` rows and scaled to n; ``--shap-rows 0``
times it on all n rows (at n = 5000 that takes most of an hour). The two results are also
compared on the rows both computed.

    python benchmarks/bench_fastpd.py            # n = 500, 1000, 2000, 5000
    python benchmarks/bench_fastpd.py --quick    # a small run
"""

from __future__ import annotations

import argparse
import contextlib
import io
import time

import numpy as np


def simulate(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    d = 7
    cov = 3.0 * np.eye(d)
    cov[np.arange(d), d - 1 - np.arange(d)] += 0.6
    X = rng.multivariate_normal(np.ones(d), cov, size=n)
    y = (
        3 * np.sin(X[:, 0])
        + 2.5 * np.cos(0.3 * X[:, 1])
        + 1.12 * X[:, 2]
        + np.sin(X[:, 3] * X[:, 4])
        + 0.7 * X[:, 5] * X[:, 6]
        + rng.normal(0.0, 0.1, n)
    )
    return X.astype(np.float32).astype(np.float64), y


def time_fastpd(model, background, rows, repeats: int) -> tuple[float, np.ndarray]:
    from trustlab.explain import FastPD

    best, phi = np.inf, None
    for _ in range(repeats):
        start = time.perf_counter()
        phi = FastPD(model).fit(background).shap_values(rows)  # construction included
        best = min(best, time.perf_counter() - start)
    return best, phi


def time_shap(model, background, rows) -> tuple[float, np.ndarray]:
    import shap

    masker = shap.maskers.Independent(background, max_samples=len(background))
    start = time.perf_counter()
    with contextlib.redirect_stderr(io.StringIO()):  # shap's progress bar
        explainer = shap.TreeExplainer(model, data=masker, feature_perturbation="interventional")
        values = explainer.shap_values(rows)
    return time.perf_counter() - start, np.asarray(values)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, small model")
    parser.add_argument("--sizes", type=int, nargs="*", help="background sizes n")
    parser.add_argument(
        "--shap-rows",
        type=int,
        default=None,
        help="rows shap explains, its time scaled to n (0: all n rows; default 200, quick 50)",
    )
    parser.add_argument("--repeats", type=int, default=3, help="FastPD runs per n (best kept)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    import xgboost as xgb

    sizes = args.sizes or ([200, 400] if args.quick else [500, 1000, 2000, 5000])
    trees, depth = (20, 4) if args.quick else (100, 6)
    shap_rows = args.shap_rows if args.shap_rows is not None else (50 if args.quick else 200)
    rng = np.random.default_rng(args.seed)
    X_train, y_train = simulate(5000, rng)
    model = xgb.XGBRegressor(
        n_estimators=trees, max_depth=depth, learning_rate=0.1, n_jobs=1, random_state=args.seed
    ).fit(X_train, y_train)
    X, _ = simulate(2 * max(sizes), rng)

    print(f"xgboost: {trees} trees of depth {depth}, d = 7; background n = explained rows n")
    print("both single-threaded; FastPD time includes building the explainer\n")
    header = (
        f"{'n':>6} {'FastPD s':>9} {'shap s':>10} {'ratio':>8} {'FastPD/n us':>12} {'max diff':>9}"
    )
    print(header)
    print("-" * len(header))
    ours = {}
    for n in sizes:
        background, rows = X[:n], X[max(sizes) : max(sizes) + n]
        ours[n], phi = time_fastpd(model, background, rows, args.repeats)
        m = n if shap_rows == 0 else min(shap_rows, n)
        seconds, theirs = time_shap(model, background, rows[:m])
        shap_n = seconds * n / m
        mark = "" if m == n else "*"
        diff = float(np.abs(phi[:m] - theirs).max())
        print(
            f"{n:>6} {ours[n]:>9.3f} {shap_n:>9.2f}{mark:1} {shap_n / ours[n]:>8.0f} "
            f"{1e6 * ours[n] / n:>12.1f} {diff:>9.1e}"
        )
    if shap_rows != 0:
        print(f"\n* shap timed on {shap_rows} explained rows and scaled linearly to n rows")
    first = sizes[0]
    print(f"\nFastPD against n (time(n) / time({first}) beside n / {first}):")
    for n in sizes:
        print(f"  n = {n:>5}: {ours[n] / ours[first]:6.2f}  (n ratio {n / first:5.1f})")


if __name__ == "__main__":
    main()
