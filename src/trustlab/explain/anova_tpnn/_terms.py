"""Which components an ANOVA-TPNN has: the terms a user names, or pairs found by a screen.

:func:`resolve_terms` reads ``interactions`` ("all", "auto" or a list of feature tuples);
:func:`screen_pairs` ranks pairs by how much of an additive model's residual their cells explain
(a FAST-like screen, Lou et al. 2013) for ``interactions="auto"``.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np

from trustlab._checks import check_choice
from trustlab.errors import InputError
from trustlab.explain.anova_tpnn._encoding import feature_index
from trustlab.explain.anova_tpnn.results import component_name

__all__ = ["resolve_terms", "screen_pairs", "split_component"]

_SCREEN_BINS = 8
_SCREEN_SWEEPS = 5


def split_component(text: str, names: Sequence[str] = ()) -> list[str]:
    """The features of a component named ``"age & income"`` (or ``"age&income"``). Where the
    text splits into feature ``names`` at " & ", that split (a feature called
    "R & D" stays whole in ``"R & D & age"``); else split at " & " where the text has it, so a
    feature called "R&D" stays whole in ``"R&D & age"``."""
    known = _split_known(text.strip(), set(map(str, names)))
    if known is not None:
        return known
    return [s.strip() for s in text.split(" & " if " & " in text else "&")]


def _split_known(text: str, names: set) -> list[str] | None:
    """``text`` as feature names joined by " & ", or None."""
    if text in names:
        return [text]
    start = text.find(" & ")
    while start >= 0:
        rest = _split_known(text[start + 3 :].strip(), names)
        if text[:start].strip() in names and rest is not None:
            return [text[:start].strip(), *rest]
        start = text.find(" & ", start + 1)
    return None


def resolve_terms(
    order: int, interactions: Any, names: Sequence[str]
) -> list[tuple[int, ...]] | str:
    """The interaction terms (tuples of feature indices), or "auto" to screen for pairs."""
    d = len(names)
    if isinstance(interactions, str):
        check_choice(interactions, "interactions", ("all", "auto"))
        if interactions == "auto":
            return "auto"
        return [t for m in range(2, order + 1) for t in itertools.combinations(range(d), m)]
    if not isinstance(interactions, Sequence):
        raise InputError.bad(
            "interactions", "'all', 'auto' or a list of feature tuples", interactions
        )
    terms: list[tuple[int, ...]] = []
    seen: set[frozenset] = set()
    for item in interactions:
        members = split_component(item, names) if isinstance(item, str) else item
        if isinstance(members, str) or not isinstance(members, Sequence):
            raise InputError.bad("interactions", "tuples of feature names or indices", item)
        term = tuple(sorted(feature_index(m, names, "interactions") for m in members))
        if not 2 <= len(term) <= order or len(set(term)) != len(term):
            raise InputError.bad(
                "interactions", f"terms of 2 to order={order} distinct features", item
            )
        if frozenset(term) in seen:  # named as the component is ("a & b"), not as a tuple
            named = component_name([names[j] for j in term])
            raise InputError(
                f"interactions: expected each term once, got {named!r} twice",
                argument="interactions",
            )
        seen.add(frozenset(term))
        terms.append(term)
    return terms


def screen_pairs(x_num, x_cat, categorical, target: np.ndarray, max_pairs: int) -> list[tuple]:
    """Pairs ranked by how much of an additive model's residual their cells explain (FAST-like).

    Each feature is cut into 8 equal-frequency bins (categorical: its levels); an additive
    model of bin means is backfitted to the target (one column per class for classification);
    a pair's score is the count-weighted sum of squares of the residual's cell means over its
    2-D bins, less what noise alone gives on as many cells.
    """
    n, d = x_num.shape
    bins = []
    for j in range(d):
        if categorical[j]:
            bins.append(x_cat[:, j])
        else:
            bins.append(
                np.minimum(((x_num[:, j] + 1.0) / 2.0 * _SCREEN_BINS).astype(int), _SCREEN_BINS - 1)
            )
    residual = target - target.mean(axis=0)
    fitted = np.zeros((d, *residual.shape))
    for _ in range(_SCREEN_SWEEPS):
        for j in range(d):
            partial = residual + fitted[j]
            fitted[j] = _bin_means(bins[j], partial)[bins[j]]
            residual = partial - fitted[j]
    noise = float(np.mean(residual**2))
    scores = {}
    for j, k in itertools.combinations(range(d), 2):
        cells = bins[j] * (bins[k].max() + 1) + bins[k]
        means = _bin_means(cells, residual)
        counts = np.bincount(cells)
        used = counts > 0
        explained = float((counts[used, None] * means[used] ** 2).sum()) / n
        scores[(j, k)] = explained - (used.sum() - 1) * noise / n
    ranked = sorted(scores, key=lambda pair: -scores[pair])
    return sorted(p for p in ranked[:max_pairs] if scores[p] > 0)


def _bin_means(codes: np.ndarray, values: np.ndarray) -> np.ndarray:
    counts = np.bincount(codes).astype(float)
    sums = np.stack(
        [
            np.bincount(codes, weights=values[:, t], minlength=len(counts))
            for t in range(values.shape[1])
        ],
        axis=1,
    )
    return sums / np.maximum(counts, 1.0)[:, None]
