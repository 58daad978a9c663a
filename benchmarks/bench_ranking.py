"""Benchmark: label-free model ranking, trustlab against a straightforward scipy/numpy reference.

The work (issue 5): 50 models x 100,000 items x 10 classes, entropy score, 1,000 bootstrap
resamples of the items (paired across models), 95% percentile intervals. Target: under 10 s.

* ours: ``trustlab.evaluation.rank_models`` (per-item scores once, resampled means as
  ``counts @ scores`` in bounded chunks), with and without labels;
* reference: ``scipy.stats.entropy`` per model, then for each resample ``scores[idx].mean(0)``
  with numpy fancy indexing, and ``np.percentile``;
* also: the bootstrap kernel alone with the two ways to draw multiplicities the brief names,
  bincount of uniform indices (what trustlab uses) and ``rng.multinomial``.

Run ``python benchmarks/bench_ranking.py`` (full) or with ``--quick`` (a small run).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy import stats

from trustlab.evaluation import rank_models
from trustlab.evaluation._bootstrap import resampled_means


def make_outputs(n_models: int, n: int, n_classes: int, seed: int):
    """Softmax outputs of models of growing skill on the same items, and the true labels."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, n_classes, size=n)
    outputs = {}
    for m in range(n_models):
        logits = rng.standard_normal((n, n_classes))
        logits[np.arange(n), labels] += 0.5 + 2.5 * m / max(1, n_models - 1)
        outputs[f"model_{m:02d}"] = np.exp(logits - logits.max(axis=1, keepdims=True))
        outputs[f"model_{m:02d}"] /= outputs[f"model_{m:02d}"].sum(axis=1, keepdims=True)
    return outputs, labels


def reference(outputs, n_bootstrap: int, seed: int):
    """Entropy with scipy per model, then one fancy-indexing gather per resample."""
    scores = np.column_stack([stats.entropy(p, axis=1) for p in outputs.values()])
    rng = np.random.default_rng(seed)
    n = len(scores)
    boot = np.empty((n_bootstrap, scores.shape[1]))
    for b in range(n_bootstrap):
        boot[b] = scores[rng.integers(0, n, size=n)].mean(axis=0)
    return scores.mean(axis=0), np.percentile(boot, [2.5, 97.5], axis=0).T


def timed(fn):
    start = time.perf_counter()
    value = fn()
    return time.perf_counter() - start, value


def kernel_comparison(n: int, n_columns: int, n_resamples: int, seed: int) -> None:
    """Resampled means of an (n, C) matrix: bincount multiplicities vs rng.multinomial."""
    rng = np.random.default_rng(seed)
    values = rng.random((n, n_columns))
    chunk = max(1, 4_000_000 // n)

    def with_bincount():
        for start in range(0, n_resamples, chunk):
            size = min(chunk, n_resamples - start)
            resampled_means(values, rng.integers(0, n, size=(size, n)))

    def with_multinomial():
        uniform = np.full(n, 1.0 / n)
        for start in range(0, n_resamples, chunk):
            size = min(chunk, n_resamples - start)
            counts = rng.multinomial(n, uniform, size=size).astype(np.float64)
            _ = (counts @ values) / n

    t_bincount, _ = timed(with_bincount)
    t_multinomial, _ = timed(with_multinomial)
    print(
        f"bootstrap kernel, {n_resamples} resamples of {n} rows x {n_columns} columns: "
        f"bincount {t_bincount:.2f} s, multinomial {t_multinomial:.2f} s "
        f"(multinomial / bincount = {t_multinomial / t_bincount:.1f}x)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a small run (seconds)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if args.quick:
        n_models, n, n_classes, n_bootstrap = 10, 10_000, 10, 200
    else:
        n_models, n, n_classes, n_bootstrap = 50, 100_000, 10, 1000
    print(
        f"work: {n_models} models x {n} items x {n_classes} classes, "
        f"{n_bootstrap} bootstrap resamples, entropy score"
    )
    outputs, labels = make_outputs(n_models, n, n_classes, args.seed)

    t_ours, ours = timed(
        lambda: rank_models(outputs, score="entropy", n_bootstrap=n_bootstrap, random_state=1)
    )
    t_labels, with_labels = timed(
        lambda: rank_models(
            outputs, score="entropy", labels=labels, n_bootstrap=n_bootstrap, random_state=1
        )
    )
    t_ref, (ref_scores, ref_intervals) = timed(lambda: reference(outputs, n_bootstrap, seed=1))

    score_error = np.max(np.abs(ours.scores - ref_scores))
    width_ratio = np.median(np.diff(ours.score_intervals, axis=1) / np.diff(ref_intervals, axis=1))
    print(f"trustlab rank_models (no labels):   {t_ours:8.2f} s")
    print(
        f"trustlab rank_models (with labels): {t_labels:8.2f} s  (Spearman rho "
        f"{with_labels.spearman:.3f}, Kendall tau {with_labels.kendall:.3f})"
    )
    print(f"reference (scipy + indexing):       {t_ref:8.2f} s")
    print(f"ratio reference / trustlab:         {t_ref / t_ours:8.1f}x")
    print(
        f"max |score difference|: {score_error:.2e}; median interval width ratio "
        f"ours/reference: {width_ratio:.3f}"
    )
    kernel_comparison(n, 2 * n_models, min(n_bootstrap, 100), args.seed)


if __name__ == "__main__":
    main()
