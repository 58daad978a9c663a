"""The synthetic polytope of the spec's check S1 (imported by the polytope tests)."""

from __future__ import annotations

import numpy as np


def synthetic_polytope(
    n_safe=1500, n_unsafe=1500, d=16, n_true=4, push=0.5, seed=0, sample_seed=None
):
    """Safe points uniform in the polytope {x in [-2, 2]^d : n_k' x <= 1} of ``n_true`` random
    unit normals, unsafe points pushed at least ``push`` across exactly one facet.

    ``sample_seed`` draws other points from the same polytope (a held-out set).
    Returns (acts, unsafe, categories, normals): the category of an unsafe point names the
    facet it crosses ("facet0" ...), safe points are "safe".
    """
    rng = np.random.default_rng(seed)
    normals = rng.normal(size=(n_true, d))
    normals /= np.linalg.norm(normals, axis=1, keepdims=True)
    if sample_seed is not None:  # other points from the same polytope
        rng = np.random.default_rng([seed, sample_seed])

    def inside(points):
        return (points @ normals.T <= 1.0).all(axis=1)

    safe = _rejection_sample(rng, d, n_safe, inside)
    unsafe, facets = [], []
    while len(unsafe) < n_unsafe:
        x = _rejection_sample(rng, d, 1, inside)[0]
        k = int(rng.integers(n_true))
        x = x + (1.0 + push + rng.uniform(0.0, 1.0) - normals[k] @ x) * normals[k]
        others = np.delete(normals, k, axis=0) @ x
        if (others <= 1.0).all():
            unsafe.append(x)
            facets.append(f"facet{k}")
    acts = np.vstack([safe, np.array(unsafe)])
    labels = np.r_[np.zeros(n_safe, dtype=bool), np.ones(n_unsafe, dtype=bool)]
    categories = np.array(["safe"] * n_safe + facets)
    return acts, labels, categories, normals


def _rejection_sample(rng, d, n, inside):
    out = []
    while sum(len(o) for o in out) < n:
        points = rng.uniform(-2.0, 2.0, size=(4 * n + 16, d))
        out.append(points[inside(points)])
    return np.vstack(out)[:n]
