"""The paired percentile bootstrap of ranking, vectorised.

The per-item statistics are computed once; each resample is then a vector of multiplicities (a
bincount of uniform indices) and the resampled means of every column are one matrix product
``counts @ values``, in chunks of resamples so that memory stays bounded. One resample serves all
models (and their correctness), so the intervals are paired.
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy import stats

# Resamples are drawn in chunks of at most this many indices (about 32 MB of int64 each); the
# pairwise rank correlations are chunked by the same bound.
CHUNK_ELEMENTS = 4_000_000
# Mean scores closer than this (relative to max(1, |score|)) are one value: the same model's
# outputs given two ways (logits, or logits shifted by a constant) differ in the last bits only,
# and those bits must neither order the models nor move the rank correlations.
TIE_TOLERANCE = 1e-12


def resample_counts(indices: np.ndarray) -> np.ndarray:
    """(R, n) multiplicities of each item in each resample, from (R, n) resample indices."""
    n_resamples, n = indices.shape
    offsets = (np.arange(n_resamples, dtype=np.int64) * n)[:, None]
    counts = np.bincount((indices + offsets).ravel(), minlength=n_resamples * n)
    return counts.reshape(n_resamples, n)


def resampled_means(values: np.ndarray, indices: np.ndarray, counts=None) -> np.ndarray:
    """Column means of ``values[indices[b]]`` for each row ``b`` of ``indices``, via counts.

    float32 ``values`` must hold integers (0/1 correctness): the products and partial sums are
    then integers below 2**24, exact in float32, and the product runs twice as fast. An infinite
    value (a summed token NLL that overflowed) makes the mean of every resample that draws it
    infinite; in the product, the resamples that leave it out would get 0 * inf = NaN.
    """
    counts = resample_counts(indices) if counts is None else counts
    weights = counts.astype(values.dtype)
    finite = np.isfinite(values)
    if finite.all():
        return (weights @ values).astype(np.float64) / values.shape[0]
    sums = (weights @ np.where(finite, values, 0.0)).astype(np.float64)
    drawn = [(weights @ mask) > 0 for mask in (np.isposinf(values), np.isneginf(values))]
    sums = np.where(drawn[0], np.inf, sums)
    sums = np.where(drawn[1], np.where(drawn[0], np.nan, -np.inf), sums)
    sums = np.where((weights @ np.isnan(values)) > 0, np.nan, sums)
    return sums / values.shape[0]


def bootstrap_index_chunks(n: int, n_bootstrap: int, rng: np.random.Generator):
    """Uniform resample indices, (chunk, n) at a time, at most CHUNK_ELEMENTS per chunk."""
    step = max(1, CHUNK_ELEMENTS // n)
    for start in range(0, n_bootstrap, step):
        yield rng.integers(0, n, size=(min(step, n_bootstrap - start), n))


def bootstrap_means(blocks: list[np.ndarray], n_bootstrap: int, rng: np.random.Generator):
    """Per (n, C) block, the (n_bootstrap, C) resampled column means; one resample for all."""
    outs = [np.empty((n_bootstrap, block.shape[1])) for block in blocks]
    done = 0
    for indices in bootstrap_index_chunks(len(blocks[0]), n_bootstrap, rng):
        counts = resample_counts(indices)
        for out, block in zip(outs, blocks, strict=True):
            out[done : done + len(indices)] = resampled_means(block, indices, counts)
        done += len(indices)
    return outs


def warn_if_too_few(n_bootstrap: int, level: float) -> None:
    """Warn when ``n_bootstrap`` resamples cannot give a ``level`` percentile interval: each tail
    of ``(1 - level) / 2`` needs a resample beyond the interval's end, so fewer than
    ``ceil(2 / (1 - level))`` give (about) the range of the resamples, which need not even hold
    the estimate (one resample gives one value)."""
    need = int(np.ceil(2.0 / (1.0 - level) - 1e-9))
    if 0 < n_bootstrap < need:
        warnings.warn(
            f"n_bootstrap={n_bootstrap}: a {100 * level:g}% percentile interval needs at least "
            f"{need} resamples (one beyond each end); these intervals are about the range of "
            f"the resamples, not {100 * level:g}% intervals (1000 or more is usual)",
            stacklevel=3,
        )


def percentile_interval(samples: np.ndarray, level: float) -> np.ndarray:
    """Percentile interval along axis 0 (NaN samples ignored), shape samples.shape[1:] + (2,).

    An end between two equal samples is that sample, and an end between a finite sample and an
    infinite one is that infinity (the linear interpolation's limit): numpy's interpolation takes
    inf - inf there and would give NaN. Finite samples take numpy's interpolation unchanged.

    The two neighbouring samples are only looked up when some sample is infinite or a negative
    zero (between two equal zeros numpy's interpolation may flip the sign, the sample keeps it)
    or an end came out NaN (an end on a sample whose next one is more than the largest float
    above it: numpy's interpolation takes inf * 0 there; the sample is the end): otherwise they
    change nothing, and each lookup costs as much as the interpolation.
    """
    tail = (1.0 - level) / 2.0
    samples = np.asarray(samples)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # an all-NaN column gives NaN, not noise
        bounds = np.nanquantile(samples, [tail, 1.0 - tail], axis=0)
        special = np.isinf(samples).any() or np.isnan(bounds).any()
        if not (special or np.signbit(samples[samples == 0]).any()):
            return np.moveaxis(bounds, 0, -1)
        below = np.nanquantile(samples, [tail, 1.0 - tail], axis=0, method="lower")
        above = np.nanquantile(samples, [tail, 1.0 - tail], axis=0, method="higher")
    one_infinite = np.isinf(below) != np.isinf(above)
    bounds = np.where(one_infinite, np.where(np.isinf(below), below, above), bounds)
    bounds = np.where(below == above, below, bounds)
    return np.moveaxis(bounds, 0, -1)


def interval_pair(samples: np.ndarray, level: float) -> tuple[float, float]:
    """The percentile interval of 1-D ``samples`` (a rank correlation) as a pair of floats.

    Its ends are resampled values (the lower one rounded down, the upper up, as in
    :func:`rank_interval`): a rank correlation of a few models takes a few values only, and an
    interpolated end (-0.7 for two models, whose rho is -1 or 1) is none of them.
    """
    tail = (1.0 - level) / 2.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all NaN gives NaN, not noise
        low = np.nanquantile(samples, tail, method="lower")
        high = np.nanquantile(samples, 1.0 - tail, method="higher")
    return float(low), float(high)


def merge_near_ties(values: np.ndarray) -> np.ndarray:
    """``values`` (M,) or (B, M) with, in each row, every run of values each within
    TIE_TOLERANCE of the next set to the run's smallest, so that they rank as ties (an infinite
    or NaN value is never merged with another)."""
    values = np.asarray(values, dtype=np.float64)
    rows = np.atleast_2d(values)
    order = np.argsort(rows, axis=1, kind="stable")
    ascending = np.take_along_axis(rows, order, axis=1)
    scale = np.maximum(1.0, np.maximum(np.abs(ascending[:, 1:]), np.abs(ascending[:, :-1])))
    # an infinite neighbour makes the tolerance infinite and NaN compares False: both start a run
    with np.errstate(invalid="ignore"):  # inf - inf is NaN: a start, without a RuntimeWarning
        starts = ~(np.diff(ascending, axis=1) <= TIE_TOLERANCE * scale) | np.isinf(scale)
    starts = np.column_stack([np.ones(len(rows), dtype=bool), starts])
    first = np.maximum.accumulate(np.where(starts, np.arange(rows.shape[1]), 0), axis=1)
    merged = np.empty_like(rows)
    np.put_along_axis(merged, order, np.take_along_axis(ascending, first, axis=1), axis=1)
    return merged.reshape(values.shape)


def descending_ranks(confidence: np.ndarray) -> np.ndarray:
    """Rank 1 for the most confident model of each row; tied models share the best rank."""
    return stats.rankdata(-confidence, method="min", axis=-1).astype(np.int64)


def rank_interval(confidence_samples: np.ndarray, level: float) -> np.ndarray:
    """Each model's (M, 2) range of ranks over the resamples (rows of ``confidence_samples``)."""
    ranks = descending_ranks(confidence_samples)
    tail = (1.0 - level) / 2.0
    low = np.quantile(ranks, tail, axis=0, method="lower")
    high = np.quantile(ranks, 1.0 - tail, axis=0, method="higher")
    return np.column_stack([low, high]).astype(np.int64)
