"""Numerical care shared by the packages: column standardisation without overflow, and
subnormal floats in torch models.

:func:`column_mean_scale` gives each column's mean and standard deviation with the column
divided by a power of 2 near its largest magnitude first (:func:`power_of_2`; exact, so ordinary
data give the same numbers as ``X.mean(axis=0)`` / ``X.std(axis=0)``): the squares of activations
past ~1e154 overflowed (below ~1e-154 they vanished), so the scale was inf (or 0).
:func:`standardised` divides by them without overflow in ``X - mean``.

Subnormal (denormal) floats in torch models: a CPU slows down on every operation that reads or
writes one, often several times over.

Weight decay drives unused weights towards zero, and in float32 they end below 1.2e-38, where
they are subnormal: half of the shipped watermark predictor's weights were, which made it 2.6x
slower on the CPU than the same network with those weights at zero (the outputs are equal).
:func:`flush_denormals` runs a block with the CPU flushing subnormal results (and inputs) to zero;
:func:`zero_denormals` sets a module's subnormal weights to zero.

Seeded torch draws: :func:`seeded_torch` runs a block with torch's global random stream seeded and
the caller's restored afterwards; :func:`torch_seed` is the one conversion of an int seed to
torch's 64-bit seeds. ``torch.manual_seed`` inside ``torch.random.fork_rng(devices=[])``
does not do that: it also seeds every GPU's stream (``torch.cuda.manual_seed_all``, queued until
CUDA starts if it has not), and those were not forked.

AUROC by ranks: :func:`auroc_rows` is the one rank-sum (Mann-Whitney) AUROC of the packages, for
many score rows at once (bootstrap resamples, seeds); ties count half, as in scikit-learn's
``roc_auc_score``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import numpy as np


def column_mean_scale(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each column's mean and standard deviation of a 2-d float array, computed on the column
    divided by a power of 2 near its largest magnitude (exact); a column whose deviation is at
    most 1e-12 times the largest magnitude in ``X`` is constant and gets scale 1."""
    size = power_of_2(np.abs(X).max(axis=0))
    mean = (X / size).mean(axis=0) * size
    scale = (X / size).std(axis=0) * size
    scale[scale <= 1e-12 * float(np.abs(X).max())] = 1.0  # no information: leave it unscaled
    return mean, scale


def root_mean_square(values: Any, axis: Any = None) -> Any:
    """``sqrt(mean(values**2, axis))`` on the values divided by a power of 2 near their largest
    magnitude along ``axis`` (:func:`power_of_2`; exact, so ordinary values give the same
    numbers): the squares of values past ~1e154 overflowed (inf) and below ~1e-154 vanished (0).
    Computed in float64; an empty slice gives NaN, as the plain formula does."""
    values = np.asarray(values, dtype=np.float64)
    size = power_of_2(np.abs(values).max(axis=axis, keepdims=True, initial=0.0))
    rms = np.sqrt(((values / size) ** 2).mean(axis=axis, keepdims=True)) * size
    return np.squeeze(rms, axis=axis)


def power_of_2(magnitude: Any) -> Any:
    """2^(e-1) for 2^(e-1) <= ``magnitude`` < 2^e (elementwise, float64; exact for subnormals
    too); 1 where it is 0 or not finite. Dividing by it shifts exponents only; 2^(e-1), not 2^e,
    which overflows to inf for magnitudes >= 2^1023 (about 9e307)."""
    magnitude = np.asarray(magnitude, dtype=np.float64)
    usable = np.isfinite(magnitude) & (magnitude > 0)
    size = np.ldexp(1.0, np.frexp(np.where(usable, magnitude, 1.0))[1] - 1)
    return np.where(usable, size, 1.0)


def standardised(X: np.ndarray, mean: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """``(X - mean) / scale``, also where ``X - mean`` passes the float range (a value and its
    column mean of opposite signs near 1.8e308): then computed on halves, ``(X/2 - mean/2) /
    scale * 2`` (exact; ordinary data take the plain expression)."""
    with np.errstate(over="ignore"):
        z = (X - mean) / scale
    if np.isinf(z).any() and np.isfinite(X).all():
        z = (X * 0.5 - mean * 0.5) / scale * 2.0
    return z


def auroc_rows(labels: Any, scores: np.ndarray) -> np.ndarray:
    """AUROC of each row of ``scores`` (m, n), True in ``labels`` = positive: the Mann-Whitney U
    of the positives over (positives x negatives), ties counted half (average ranks), which is
    ``sklearn.metrics.roc_auc_score``. ``labels`` is one vector (n,) for every row or one per
    row (m, n). NaN for a row with one class only and for a row with a NaN score (scipy's
    ``rankdata`` propagates it).

    The rank sums are sums of half-integers, exact in float64 (n below about 2**25), so the
    result does not depend on the order of summation: one rounding, in the final division.
    """
    from scipy.stats import rankdata

    labels = np.asarray(labels, dtype=bool)
    ranks = rankdata(scores, axis=-1)
    n_pos = labels.sum(axis=-1)
    n_neg = labels.shape[-1] - n_pos
    with np.errstate(invalid="ignore", divide="ignore"):
        auc = ((ranks * labels).sum(axis=-1) - n_pos * (n_pos + 1) / 2.0) / (n_pos * n_neg)
    return np.where((n_pos > 0) & (n_neg > 0), auc, np.nan)


#: The smallest normal float32.
_TINY32 = 1.1754944e-38


def _flushing(torch: Any) -> bool:
    """Whether the CPU flushes subnormal results to zero now (torch has no getter)."""
    return float(torch.tensor(_TINY32, dtype=torch.float32) / 4) == 0.0


@contextlib.contextmanager
def flush_denormals() -> Iterator[None]:
    """Flush subnormal floats to zero inside the block (where the CPU supports it); the mode is
    restored afterwards."""
    import torch

    before = _flushing(torch)
    changed = not before and torch.set_flush_denormal(True)
    try:
        yield
    finally:
        if changed:
            torch.set_flush_denormal(False)


def zero_denormals(module: Any) -> int:
    """Set the subnormal entries of ``module``'s floating-point parameters and buffers to zero;
    returns how many there were."""
    import torch

    count = 0
    with torch.no_grad():
        for t in [*module.parameters(), *module.buffers()]:
            if not t.is_floating_point():
                continue
            tiny = torch.finfo(t.dtype).tiny
            sub = (t != 0) & (t.abs() < tiny)
            n = int(sub.sum())
            if n:
                t[sub] = 0.0
                count += n
    return count


#: torch's generators take seeds 0 .. 2**64 - 1.
TORCH_SEED_BOUND = 2**64


def torch_seed(seed: int) -> int:
    """The seed torch's generators are given for an int ``seed``: ``seed mod 2**64``. torch reads
    a seed in [-2**63, 2**64) so itself (a negative one plus 2**64); one of 2**64 or more it
    refused with a raw ``ValueError`` (Overflow when unpacking long long)."""
    return int(seed) % TORCH_SEED_BOUND


@contextlib.contextmanager
def seeded_torch(seed: int) -> Iterator[None]:
    """Run a block with torch's global CPU random stream seeded with ``seed`` (as
    ``torch.manual_seed`` seeds it, so CPU draws are the same) and restore the caller's stream
    afterwards. Where CUDA is in use (initialised), every GPU's stream is forked and seeded too,
    so draws on a GPU are seeded and the caller's GPU streams are left as they were; otherwise no
    GPU stream is read or seeded (and CUDA is not started). Any int seed (:func:`torch_seed`)."""
    import torch

    seed = torch_seed(seed)

    cuda = torch.cuda.is_available() and torch.cuda.is_initialized()
    devices = list(range(torch.cuda.device_count())) if cuda else []
    with torch.random.fork_rng(devices=devices, device_type="cuda"):
        torch.default_generator.manual_seed(seed)
        if cuda:
            torch.cuda.manual_seed_all(seed)
        yield
