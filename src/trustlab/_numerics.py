"""Numerical care shared by the packages: column standardisation without overflow, and
subnormal floats in torch models.

:func:`column_mean_scale` gives each column's mean and standard deviation with the column
divided by a power of 2 near its largest magnitude first (exact, so ordinary data give the same
numbers as ``X.mean(axis=0)`` / ``X.std(axis=0)``): the squares of activations past ~1e154
overflowed (below ~1e-154 they vanished), so the scale was inf (or 0).

Subnormal (denormal) floats in torch models: a CPU slows down on every operation that reads or
writes one, often several times over.

Weight decay drives unused weights towards zero, and in float32 they end below 1.2e-38, where
they are subnormal: half of the shipped watermark predictor's weights were, which made it 2.6x
slower on the CPU than the same network with those weights at zero (the outputs are equal).
:func:`flush_denormals` runs a block with the CPU flushing subnormal results (and inputs) to zero;
:func:`zero_denormals` sets a module's subnormal weights to zero.
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
    size = np.ldexp(1.0, np.frexp(np.abs(X).max(axis=0))[1])
    mean = (X / size).mean(axis=0) * size
    scale = (X / size).std(axis=0) * size
    scale[scale <= 1e-12 * float(np.abs(X).max())] = 1.0  # no information: leave it unscaled
    return mean, scale


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
