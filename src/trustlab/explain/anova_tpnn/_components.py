"""A fitted group of ANOVA-TPNN components, evaluated in numpy float64.

The network (:mod:`._torch`) groups the components by order and by the pattern of numeric and
categorical positions; after training each group's parameters are exported into a
:class:`TermGroup`, whose sum-to-zero constants are recomputed on all training rows. Predictions
and components are computed from these groups, without torch.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from scipy.special import expit

__all__ = ["TermGroup"]

_CHUNK_ELEMENTS = 2**21  # rows are evaluated in blocks of about this many neuron values


@dataclass(frozen=True)
class TermGroup:
    """The fitted components of one order and one numeric/categorical pattern, in float64, with
    their sum-to-zero constants. Parameters are laid out per position p (the p-th feature of
    every component), as in the torch network."""

    features: np.ndarray  # (C, m) feature indices
    pattern: np.ndarray  # (m,) bool: is position p categorical
    threshold: np.ndarray  # (m, C, K)
    log_temperature: np.ndarray  # (m, C, K)
    level_weights: np.ndarray  # (m, C, L, K); L = 0 without categorical positions
    beta: np.ndarray  # (C, K, O)
    mean_sigmoid: np.ndarray | None = None  # (m, C, K), mean of sigma(z) over the training rows
    mean_level: np.ndarray | None = None  # (m, C, K), mean of w[x] over the training rows

    ARRAYS = (
        "features",
        "pattern",
        "threshold",
        "log_temperature",
        "level_weights",
        "beta",
        "mean_sigmoid",
        "mean_level",
    )

    def _row_chunk(self) -> int:
        return max(1, _CHUNK_ELEMENTS // max(1, self.beta.size))

    def _sigmoids(self, p: int, x_num: np.ndarray) -> np.ndarray:
        x = x_num[:, self.features[:, p]]  # (n, C)
        return expit((x[:, :, None] - self.threshold[p]) * np.exp(-self.log_temperature[p]))

    def _levels(self, p: int, x_cat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        codes = x_cat[:, self.features[:, p]]  # (n, C); -1: a level unseen in training
        component = np.arange(codes.shape[1])[None, :]
        values = self.level_weights[p][component, np.maximum(codes, 0)]  # (n, C, K)
        return values, (codes >= 0)[:, :, None]

    def with_constants(self, x_num: np.ndarray, x_cat: np.ndarray) -> TermGroup:
        """The same group with its constants computed on these (the training) rows."""
        mean_sigmoid = np.ones(self.threshold.shape)
        mean_level = np.zeros(self.threshold.shape)
        chunk = self._row_chunk()
        for p, is_categorical in enumerate(self.pattern):
            total = np.zeros(self.threshold.shape[1:])
            for start in range(0, len(x_num), chunk):
                if is_categorical:
                    total += self._levels(p, x_cat[start : start + chunk])[0].sum(axis=0)
                else:
                    total += self._sigmoids(p, x_num[start : start + chunk]).sum(axis=0)
            (mean_level if is_categorical else mean_sigmoid)[p] = total / len(x_num)
        return replace(self, mean_sigmoid=mean_sigmoid, mean_level=mean_level)

    def with_untrained_levels_neutral(self, x_cat: np.ndarray, trained: np.ndarray) -> TermGroup:
        """The same group with every level that no trained-on row (``x_cat[trained]``) holds, a
        level found only in the rows held out for early stopping, set to the mean weight over
        the other rows of ``x_cat`` (all training rows): such a level never got a gradient and
        would keep its random start; this way its neuron is 0 once the constants are taken on
        all rows, as for a level unseen in training."""
        if not self.pattern.any():
            return self
        weights = self.level_weights.copy()
        for p in np.flatnonzero(self.pattern):
            for c, j in enumerate(self.features[:, p]):
                seen = np.bincount(x_cat[trained, j], minlength=weights.shape[2]) > 0
                counts = np.bincount(x_cat[:, j], minlength=weights.shape[2]) * seen
                if not seen.all() and counts.sum() > 0:
                    weights[p, c, ~seen] = counts @ weights[p, c] / counts.sum()
        return replace(self, level_weights=weights)

    def neuron(self, p: int, x_num: np.ndarray, x_cat: np.ndarray) -> np.ndarray:
        """phi of position p for every row, component and basis: (n, C, K)."""
        if self.pattern[p]:
            values, known = self._levels(p, x_cat)
            return np.where(known, values - self.mean_level[p], 0.0)
        return 1.0 - self._sigmoids(p, x_num) / self.mean_sigmoid[p]

    def values(self, x_num: np.ndarray, x_cat: np.ndarray) -> np.ndarray:
        """Component values (n, C, O)."""
        chunk = self._row_chunk()
        parts = []
        for start in range(0, len(x_num), chunk):
            rows = slice(start, start + chunk)
            product = self.neuron(0, x_num[rows], x_cat[rows])
            for p in range(1, len(self.pattern)):
                product = product * self.neuron(p, x_num[rows], x_cat[rows])
            parts.append(np.einsum("nck,cko->nco", product, self.beta))
        return np.concatenate(parts, axis=0)
