"""The exact vertex search of the known regime: the global minimum of F_y for small problems.

On the simplex (rows of alpha sum to 1), max_z eta(a_z, b_z) = 1 - min_z b_z / a_z, so

    F_y(a) = sum_g c_g - sum_g c_g min_z b_gz / a_z.

Where the minimising z_g of every group is fixed, the subtracted sum is sum_z C_z / a_z with
C_z >= 0, a convex function: F_y is concave on each such cell, the polytope
{a in simplex: b_{g z_g} a_z <= b_gz a_{z_g} for all g, z}. A concave function on a polytope
attains its minimum at a vertex, so the global minimum of F_y lies on a vertex of some cell: a
point of the simplex on K - 1 linearly independent hyperplanes, each a_z = 0 or a "minimal
tie" a_z b_gz' = a_z' b_gz where z and z' both minimise b_g. / a. for that group.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from trustlab.fairness._label import TIE_TOL, LabelProblem, label_objective

__all__ = ["VERTEX_BUDGET", "vertex_count", "vertex_minimum"]

VERTEX_BUDGET = 1_500_000  # vertex search while #(K-1)-subsets of hyperplanes x (K^2 + G K) fits


def _arrangement(conf: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Normals (N, K) of the tie hyperplanes of every group and label pair and of a_z = 0, with
    their group (-1 for a_z = 0) and label pair (N, 2)."""
    n_groups, k = conf.shape
    first, second = np.triu_indices(k, 1)
    pairs = np.arange(first.size)
    ties = np.zeros((n_groups, first.size, k))
    ties[:, pairs, first] = conf[:, second]
    ties[:, pairs, second] = -conf[:, first]
    normals = np.concatenate([ties.reshape(-1, k), np.eye(k)])
    group = np.concatenate([np.repeat(np.arange(n_groups), first.size), np.full(k, -1)])
    labels = np.column_stack([np.tile(first, n_groups), np.tile(second, n_groups)])
    labels = np.concatenate([labels, np.column_stack([np.arange(k), np.arange(k)])])
    return normals, group, labels


def vertex_count(n_groups: int, k: int) -> int:
    """How many (K-1)-subsets of the arrangement's hyperplanes there are."""
    return math.comb(n_groups * k * (k - 1) // 2 + k, k - 1)


def _subsets(n: int, size: int) -> np.ndarray:
    if size == 1:
        return np.arange(n)[:, None]
    if size == 2:
        return np.column_stack(np.triu_indices(n, 1))
    flat = itertools.chain.from_iterable(itertools.combinations(range(n), size))
    return np.fromiter(flat, dtype=np.intp).reshape(-1, size)


def _null_directions(normals: np.ndarray) -> np.ndarray:
    """The direction orthogonal to K - 1 normals (c, K-1, K): its entry z is (-1)^z times the
    minor without column z (0 if the normals are dependent).

    The minors are built row by row as exterior products (Laplace expansion along the newest
    row), a few vectorised products per column subset instead of one determinant per matrix.
    """
    n_rows, k = normals.shape[1], normals.shape[2]
    entries = np.ascontiguousarray(normals.transpose(1, 2, 0))  # (K-1, K, c)
    minors = {(z,): entries[0, z] for z in range(k)}  # minors of the rows so far, by columns
    for j in range(1, n_rows):
        row = entries[j]
        minors = {
            columns: sum(
                (-1.0) ** (j + pos) * row[z] * minors[columns[:pos] + columns[pos + 1 :]]
                for pos, z in enumerate(columns)
            )
            for columns in itertools.combinations(range(k), j + 1)
        }
    full = tuple(range(k))
    return np.stack([(-1.0) ** z * minors[full[:z] + full[z + 1 :]] for z in range(k)], axis=1)


def _vertices(normals, group, labels, conf, subsets):
    """The points of the simplex where the hyperplanes of each subset meet, kept only if every
    tie among them is a minimal tie there (within a relative 1e-9)."""
    directions = _null_directions(normals[subsets])
    directions *= np.where(directions.sum(axis=1) < 0, -1.0, 1.0)[:, None]
    size = np.abs(directions).max(axis=1)
    scale = np.linalg.norm(normals, axis=1)[subsets].prod(axis=1)
    keep = (size > 1e-12 * scale) & (directions.min(axis=1) >= -1e-12 * size)
    points = np.clip(directions[keep], 0.0, None)
    points /= points.sum(axis=1, keepdims=True)
    subsets = subsets[keep]
    groups = group[subsets]  # (c', K-1)
    with np.errstate(divide="ignore"):
        ratios = conf[np.maximum(groups, 0)] / points[:, None, :]  # (c', K-1, K)
    tie = np.take_along_axis(ratios, labels[subsets], axis=2).max(axis=2)
    minimal = (groups < 0) | (tie <= ratios.min(axis=2) * (1.0 + 1e-9))
    return points[minimal.all(axis=1)]


def vertex_minimum(problem: LabelProblem, budget: int = VERTEX_BUDGET):
    """The global minimum of F_y by enumerating the vertices of its cells, if affordable.

    Returns (row, value) of the best vertex, or None when the work, #subsets x (K^2 + G K) with
    #subsets = C(G K (K-1)/2 + K, K-1) the (K-1)-subsets of hyperplanes, exceeds ``budget``
    (the default allows K = 2 up to 864 groups, K = 3 up to 46, K = 4 up to 8 and K = 5 up to 2,
    in at most about 30 ms with K >= 3). Ties go to the lexicographically smallest row, so the
    result does not depend on the order of the groups.
    """
    conf, mass = problem.conf, problem.mass
    n_groups, k = conf.shape
    if n_groups == 0 or vertex_count(n_groups, k) * k * (k + n_groups) > budget:
        return None
    normals, group, labels = _arrangement(conf)
    subsets = _subsets(len(normals), k - 1)
    chunk = 50_000
    # the groups' own rows are vertices too (K - 1 ties of one group); taken exactly here
    points = np.concatenate(
        [conf]
        + [
            _vertices(normals, group, labels, conf, subsets[start : start + chunk])
            for start in range(0, len(subsets), chunk)
        ]
    )
    step = max(1, 200_000 // (n_groups * k))
    values = np.concatenate(
        [
            label_objective(points[start : start + step], conf, mass)
            for start in range(0, len(points), step)
        ]
    )
    lowest = values <= values.min() + TIE_TOL
    rows, values = points[lowest], values[lowest]
    first = np.lexsort(rows.T[::-1])[0]
    return rows[first], float(values[first])
