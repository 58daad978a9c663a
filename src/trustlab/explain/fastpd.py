"""FastPD: exact partial dependence, functional decomposition and SHAP for tree ensembles.

FastPD (Liu, Steensgaard, Wright, Pfister, Hiabu, ICML 2025) evaluates the empirical
interventional partial-dependence function of a tree ensemble,

    v_U(x) = (1/n_b) sum_i m(x_U, z_i,-U)        (z_i: the background rows),

for any feature subset U, exactly and in time linear in the number of background and evaluation
rows. From the PD functions come the functional decomposition (Moebius inversion)

    m_S(x) = sum_{V subset of S} (-1)^{|S|-|V|} v_V(x),   sum_S m_S(x) = m(x),

interventional SHAP values phi_j = sum_{S containing j} m_S / |S| and SHAP interaction values.

How it is computed here. A leaf l constrains each feature on its root path to an interval; call
the k_l distinct features on the path the leaf's *slots*. A row satisfies some of those
constraints: its failure set F (a k_l-bit mask). The leaf's share of v_U(x) is
``value_l * P_l(U) * [x satisfies the slots in U]``, where P_l(U) is the fraction of background
rows that satisfy every slot outside U, i.e. whose failure set lies inside U. So each leaf needs
only the histogram h_l of the background failure sets (the augmentation step), a 2^k_l table:

- P_l is the subset sum (zeta transform) of h_l and the Moebius transform of P_l is h_l itself,
  so a leaf contributes ``value_l * (-1)^|S \\ a| * h_l(S & a)`` to m_S(x), where a is the set of
  slots x satisfies;
- the leaf's SHAP value for slot j is ``R'(a) - Q(a \\ j)`` with R', Q zeta transforms of P_l
  weighted by Shapley weights of |U| (and likewise three tables give SHAP interaction values).

Everything is vectorised over all leaves of a block of trees and all rows; the failure masks of
all rows at all leaves come from one level-by-level pass over the nodes. Cost: O(n_nodes * n)
for routing, O(sum_l 2^k_l) for the tables, O(n_leaves * k * n) for SHAP values: linear in the
number of background and evaluation rows, exponential only in the number of distinct features
on one root-to-leaf path (at most the tree depth).

References
----------
Liu, J., Steensgaard, T., Wright, M. N., Pfister, N., Hiabu, M. (2025). Fast estimation of
partial dependence functions using trees. ICML 2025, arXiv:2410.13448.
Hiabu, M., Meyer, J. T., Wright, M. N. (2023). Unifying local and global model explanations by
functional decomposition of low dimensional structures. AISTATS.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from math import comb
from typing import Any

import numpy as np

from trustlab._checks import as_float_array, check_finite, check_positive_int
from trustlab.errors import InputError, ResourceError
from trustlab.explain._trees import TreeEnsemble, as_tree_ensemble, calibrate, goes_left

__all__ = [
    "FastPD",
    "Decomposition",
    "PartialDependence",
    "Importance",
    "plot_shap_summary",
]

# Memory guards. Tables hold 2^k entries per leaf (k: distinct features on its path).
_TABLE_BUDGET_BYTES = 2**30
_RESULT_BUDGET_BYTES = 2**30
_MAX_PATH_WIDTH = 30
# The one-table-per-slot form of the SHAP (pair) tables is used while all of them fit in this.
_SLOT_TABLE_BYTES = 2**28
# Work arrays are (leaves x rows); rows are processed in blocks of about this many elements.
_BLOCK_ELEMENTS = 2**22
_CHUNK_LEAVES = 4096
_LGBM_ZERO = 1e-35


# =========================================================================== subset transforms


def _popcounts(width: int) -> np.ndarray:
    return np.bitwise_count(np.arange(1 << width, dtype=np.int64)).astype(np.int64)


def _subset_sum(table: np.ndarray, width: int) -> None:
    """In place, for every row: t[m] <- sum of t[s] over the subsets s of the bit mask m."""
    rows = table.shape[0]
    for j in range(width):
        view = table.reshape(rows, -1, 2, 1 << j)
        view[:, :, 1, :] += view[:, :, 0, :]


def _shapley_weights(width: int) -> tuple[np.ndarray, np.ndarray]:
    """Weights by |U| of the SHAP tables R' and Q = R + R' (see the module docstring).

    w(u) = u! (k-u-1)! / k! is the Shapley weight of a coalition of size u among k players;
    R(a) = sum_{U in a} w(|U|) P(U) and R'(a) = sum_{U in a} w(|U|-1) P(U).
    """
    w = np.zeros(width + 1)
    for u in range(width):
        w[u] = 1.0 / (width * comb(width - 1, u))
    w_shift = np.zeros(width + 1)
    w_shift[1:] = w[:-1]
    return w_shift, w + w_shift


def _interaction_weights(width: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Weights of the tables T0, T1, T2 giving the Shapley interaction index of a pair.

    With w2(u) = u! (k-u-2)! / (k-1)!: SII_jk(a) = T0(a) - T1(a\\j) - T1(a\\k) + T2(a\\jk), where
    T0, T1, T2 weight P(U) by w2(|U|-2), w2(|U|-2) + w2(|U|-1), w2(|U|-2) + 2 w2(|U|-1) + w2(|U|).
    """
    w2 = np.zeros(width + 1)
    for u in range(width - 1):
        w2[u] = 1.0 / ((width - 1) * comb(width - 2, u))
    s1 = np.zeros(width + 1)
    s1[1:] = w2[:-1]
    s2 = np.zeros(width + 1)
    s2[2:] = w2[:-2]
    return s2, s2 + s1, s2 + 2 * s1 + w2


def _slot_pairs(width: int) -> list[tuple[int, int]]:
    """Slot pairs (j, k), j < k, ordered by k then j: a narrower leaf's pairs are a prefix."""
    return [(j, k) for k in range(1, width) for j in range(k)]


def _zeta_weighted(prob: np.ndarray, width: int, weights: np.ndarray) -> np.ndarray:
    table = prob * weights[_popcounts(width)]
    _subset_sum(table, width)
    return table


def _shap_tables(prob: np.ndarray, width: int) -> list[np.ndarray]:
    """R' and Q for a group of leaves of one width."""
    return [_zeta_weighted(prob, width, w) for w in _shapley_weights(width)]


def _shap_slot_tables(prob: np.ndarray, width: int) -> list[np.ndarray]:
    """Per slot j, the leaf's SHAP value as a function of a: R'(a) - Q(a without j)."""
    r_prime, q = _shap_tables(prob, width)
    masks = np.arange(1 << width)
    return [r_prime - q[:, masks & ~(1 << j)] for j in range(width)]


def _pair_tables(prob: np.ndarray, width: int) -> list[np.ndarray]:
    """T0, T1, T2 for a group of leaves of one width."""
    return [_zeta_weighted(prob, width, w) for w in _interaction_weights(width)]


def _pair_slot_tables(prob: np.ndarray, width: int) -> list[np.ndarray]:
    """Per slot pair (j, k): T0(a) - T1(a without j) - T1(a without k) + T2(a without j, k)."""
    t0, t1, t2 = _pair_tables(prob, width)
    masks = np.arange(1 << width)
    return [
        t0
        - t1[:, masks & ~(1 << j)]
        - t1[:, masks & ~(1 << k)]
        + t2[:, masks & ~((1 << j) | (1 << k))]
        for j, k in _slot_pairs(width)
    ]


# =========================================================================== the engine


@dataclass
class _Side:
    """Where the masks of the left (or right) children of one level's nodes go."""

    leaf_src: np.ndarray  # parents whose child on this side is a leaf ...
    leaf_col: np.ndarray  # ... and that leaf's index
    inner_src: np.ndarray | None  # parents whose child is internal (None: all of them)


@dataclass
class _Level:
    """The internal nodes at one depth; the next level is their internal left children, then
    their internal right children."""

    feature: np.ndarray
    threshold: np.ndarray
    nan_left: np.ndarray
    zero_missing: np.ndarray | None
    bit: np.ndarray  # 1 << (slot of the node's feature on its path), in the chunk's mask dtype
    left: _Side
    right: _Side


class _Chunk:
    """A block of trees flattened for FastPD: levels of nodes for routing, leaves with slots.

    Leaves are sorted by width (number of slots) descending, so the leaves having a slot j are a
    prefix ``[:n_wider[j]]``. Tables are flat arrays; leaf l owns ``[offset[l], offset[l] +
    2^width[l])``.
    """

    def __init__(self, ensemble: TreeEnsemble, tree_ids: Sequence[int]):
        trees = [ensemble.trees[i] for i in tree_ids]
        sizes = np.array([len(t.feature) for t in trees])
        starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        feature = np.concatenate([t.feature for t in trees])
        left = np.concatenate(
            [np.where(t.left >= 0, t.left + s, -1) for t, s in zip(trees, starts, strict=True)]
        )
        right = np.concatenate(
            [np.where(t.right >= 0, t.right + s, -1) for t, s in zip(trees, starts, strict=True)]
        )
        threshold = np.concatenate([t.threshold for t in trees])
        nan_left = np.concatenate([t.nan_left for t in trees])
        zero = None
        if any(t.zero_missing is not None for t in trees):
            zero = np.concatenate(
                [
                    t.zero_missing if t.zero_missing is not None else np.zeros(len(t.feature), bool)
                    for t in trees
                ]
            )
        value = np.concatenate([t.value for t in trees])
        self.strict = ensemble.strict
        self.n_features = ensemble.n_features
        self.n_outputs = ensemble.n_outputs

        slot, leaves, paths = _walk_paths(feature, left, right, starts)
        width = np.array([len(p) for p in paths], dtype=np.int64)
        if width.max(initial=0) > _MAX_PATH_WIDTH:
            raise ResourceError(
                f"a root-to-leaf path uses {int(width.max())} distinct features; FastPD supports "
                f"at most {_MAX_PATH_WIDTH}: use shallower trees (max_depth)"
            )
        order = np.argsort(-width, kind="stable")
        self.leaf_nodes = np.asarray(leaves, dtype=np.int64)[order]
        self.width = width[order]
        self.max_width = int(self.width.max(initial=0))
        self.slot_feature = np.full((len(order), max(self.max_width, 1)), -1, dtype=np.int64)
        for row, leaf in enumerate(order):
            self.slot_feature[row, : width[leaf]] = paths[leaf]
        self.values = value[self.leaf_nodes]
        self.mask_dtype = next(
            t
            for t in (np.uint8, np.uint16, np.uint32, np.uint64)
            if self.max_width <= 8 * np.dtype(t).itemsize
        )
        self.full = ((np.int64(1) << self.width) - 1).astype(self.mask_dtype)
        self.n_wider = np.array([(self.width > j).sum() for j in range(self.max_width)], dtype=int)
        sizes_2k = np.int64(1) << self.width
        self.offset = np.concatenate([[0], np.cumsum(sizes_2k)[:-1]]).astype(np.int64)
        self.n_entries = int(sizes_2k.sum())
        self.groups = [
            (int(k), int(np.argmax(self.width == k)), int((self.width == k).sum()))
            for k in np.unique(self.width)
        ]
        self.levels = _levels(feature, left, right, threshold, nan_left, zero, slot, starts, self)
        self.cache: dict[str, Any] = {}  # tables and sparse maps, built on first use

    @property
    def n_leaves(self) -> int:
        return len(self.leaf_nodes)

    def block_rows(self, out_rows: int = 0) -> int:
        """Rows per block so that (leaves x rows) and (out_rows x rows) arrays stay moderate."""
        return max(16, _BLOCK_ELEMENTS // max(self.n_leaves, out_rows, 1))

    # ------------------------------------------------------------------ routing

    def fail_masks(self, XT: np.ndarray) -> np.ndarray:
        """For columns of XT (features x rows, cast): the failure mask of every row at every leaf.

        Level by level: a child's mask is its parent's plus the bit of the parent's slot when the
        row goes the other way at the parent.
        """
        n = XT.shape[1]
        fails = np.zeros((self.n_leaves, n), dtype=self.mask_dtype)
        has_nan = bool(np.isnan(XT).any())
        n_roots = len(self.levels[0].feature) if self.levels else 0
        current = np.zeros((n_roots, n), dtype=self.mask_dtype)
        for level in self.levels:
            x = XT[level.feature]
            if has_nan or level.zero_missing is not None:
                go = goes_left(x, level.threshold[:, None], level.nan_left[:, None], self.strict)
                if level.zero_missing is not None:
                    zero = level.zero_missing[:, None] & (np.abs(x) <= _LGBM_ZERO)
                    go = np.where(zero, level.nan_left[:, None], go)
            elif self.strict:
                go = x < level.threshold[:, None]
            else:
                go = x <= level.threshold[:, None]
            bit = level.bit[:, None]
            right_fail = go * bit  # going left fails the right child's constraint
            parts = []
            for side, masks in (
                (level.left, current | (bit - right_fail)),
                (level.right, current | right_fail),
            ):
                if len(side.leaf_src):
                    fails[side.leaf_col] = masks[side.leaf_src]
                parts.append(masks if side.inner_src is None else masks[side.inner_src])
            current = parts[0] if not len(parts[1]) else np.concatenate(parts)
        return fails

    # ------------------------------------------------------------------ tables

    def histogram(self, blocks: Iterator[np.ndarray], n_background: int) -> np.ndarray:
        """h_l(F): the fraction of background rows whose failure set at leaf l is F."""
        counts = np.zeros(self.n_entries)
        for XT in blocks:
            index = self.offset[:, None] + self.fail_masks(XT)
            counts += np.bincount(index.ravel(), minlength=self.n_entries)
        return counts / n_background

    def group_tables(self, make: Callable[[np.ndarray, int], list], n_tables: int) -> list:
        """Flat tables built width group by width group from P by ``make(P, width)``.

        P_l(U), the fraction of background rows whose failures at leaf l lie inside U, is the
        subset sum of the histogram. ``make`` may return fewer tables for narrow groups (slot
        tables exist only up to the width); those entries stay zero and are never read.
        """
        hist = self.cache["h"]
        out = [np.zeros(self.n_entries) for _ in range(n_tables)]
        for width, start, count in self.groups:
            if width == 0:
                continue
            lo = self.offset[start]
            hi = lo + count * (1 << width)
            prob = hist[lo:hi].reshape(count, 1 << width).copy()
            _subset_sum(prob, width)
            for table, segment in zip(out, make(prob, width), strict=False):
                table[lo:hi] = segment.ravel()
        return out

    # ------------------------------------------------------------------ evaluation

    def _agreement(self, XT: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        agree = self.full[:, None] ^ self.fail_masks(XT)
        return agree, self.offset[:, None] + agree

    def shap(self, XT: np.ndarray, weights: list) -> np.ndarray:
        """(features * outputs) x rows: phi_j = R'(a) - Q(a \\ j) per leaf and slot j."""
        agree, index = self._agreement(XT)
        out = np.zeros((self.n_features * self.n_outputs, XT.shape[1]))
        if "shap_slots" in self.cache:  # one table per slot: a single gather
            for j, table in enumerate(self.cache["shap_slots"]):
                out += weights[j] @ np.take(table, index[: self.n_wider[j]])
            return out
        r_prime, q = self.cache["shap"]
        base = np.take(r_prime, index)
        for j in range(self.max_width):
            m = self.n_wider[j]
            removed = index[:m] - (agree[:m] & self.mask_dtype(1 << j))
            out += weights[j] @ (base[:m] - np.take(q, removed))
        return out

    def interactions(self, XT: np.ndarray, weights: dict) -> np.ndarray:
        """(features^2 * outputs) x rows: half the Shapley interaction index per ordered pair."""
        agree, index = self._agreement(XT)
        d2 = self.n_features * self.n_features
        out = np.zeros((d2 * self.n_outputs, XT.shape[1]))
        if self.max_width < 2:
            return out
        if "pair_slots" in self.cache:
            for (j, k), table in zip(
                _slot_pairs(self.max_width), self.cache["pair_slots"], strict=True
            ):
                out += weights[j, k] @ np.take(table, index[: self.n_wider[k]])
            return out
        t0, t1, t2 = self.cache["pairs"]
        base = np.take(t0, index[: self.n_wider[1]])
        without = [  # T1(a without j), for every slot j
            np.take(t1, index[: self.n_wider[j]] - (agree[: self.n_wider[j]] & (1 << j)))
            for j in range(self.max_width)
        ]
        for j, k in _slot_pairs(self.max_width):
            m = self.n_wider[k]
            both = np.take(t2, index[:m] - (agree[:m] & ((1 << j) | (1 << k))))
            out += weights[j, k] @ (base[:m] - without[j][:m] - without[k][:m] + both)
        return out

    def components(self, XT: np.ndarray, plan: tuple[list, int]) -> np.ndarray:
        """(components * outputs) x rows: value * (-1)^|S \\ a| * h(S & a) per leaf and S.

        As S & a lies inside S, (-1)^|S \\ a| = (-1)^|S| (-1)^|S & a|: the first sign is in the
        weights, the second in the signed histogram, leaving one gather per leaf, row and S.
        """
        subsets, n_rows = plan
        agree, index = self._agreement(XT)
        signed = self.signed_histogram()
        out = np.zeros((n_rows, XT.shape[1]))
        for subset, m, weights in subsets:
            outside = agree[:m] & self.mask_dtype(((1 << self.max_width) - 1) & ~subset)
            out += weights @ np.take(signed, index[:m] - outside)
        return out

    def signed_histogram(self) -> np.ndarray:
        """h_l(F) * (-1)^|F|."""
        if "h_signed" not in self.cache:
            signed = self.cache["h"].copy()
            for width, start, count in self.groups:
                lo = self.offset[start]
                block = signed[lo : lo + count * (1 << width)].reshape(count, 1 << width)
                block[:, _popcounts(width) % 2 == 1] *= -1.0
            self.cache["h_signed"] = signed
        return self.cache["h_signed"]

    def pd_weights(self, subset_mask: np.ndarray, blocks: Iterator[np.ndarray], n_b: int):
        """value_l * P_l(U) for one feature subset U (given as per-leaf slot masks)."""
        outside = ~subset_mask
        inside = np.zeros(self.n_leaves)
        for XT in blocks:
            inside += ((self.fail_masks(XT) & outside[:, None]) == 0).sum(axis=1)
        return self.values * (inside / n_b)[:, None]

    def pd(self, XT: np.ndarray, subset_mask: np.ndarray, leaf_weights: np.ndarray) -> np.ndarray:
        """outputs x rows: sum over leaves consistent with x on U of value_l * P_l(U)."""
        consistent = (self.fail_masks(XT) & subset_mask[:, None]) == 0
        return leaf_weights.T @ consistent.astype(np.float64)

    def subset_masks(self, features: np.ndarray) -> np.ndarray:
        """Per leaf, the mask of the slots whose feature is in ``features``."""
        bits = np.int64(1) << np.arange(self.slot_feature.shape[1], dtype=np.int64)
        return (np.isin(self.slot_feature, features) * bits).sum(axis=1).astype(np.int64)


def _walk_paths(feature, left, right, roots) -> tuple[np.ndarray, list[int], list[tuple]]:
    """Depth-first walk: the slot of every internal node and the slot features of every leaf."""
    feature_l, left_l, right_l = feature.tolist(), left.tolist(), right.tolist()
    slot = np.full(len(feature_l), -1, dtype=np.int64)
    leaves: list[int] = []
    paths: list[tuple] = []
    stack = [(int(r), ()) for r in reversed(roots.tolist())]
    while stack:
        node, path = stack.pop()
        f = feature_l[node]
        if f < 0:
            leaves.append(node)
            paths.append(path)
            continue
        if f in path:
            slot[node] = path.index(f)
            child_path = path
        else:
            slot[node] = len(path)
            child_path = path + (f,)
        stack.append((right_l[node], child_path))
        stack.append((left_l[node], child_path))
    return slot, leaves, paths


def _levels(feature, left, right, threshold, nan_left, zero, slot, roots, chunk) -> list[_Level]:
    column = np.full(len(feature), -1, dtype=np.int64)
    column[chunk.leaf_nodes] = np.arange(chunk.n_leaves)
    parents = roots[feature[roots] >= 0]
    levels = []
    while len(parents):
        sides = []
        for children in (left[parents], right[parents]):
            is_leaf = feature[children] < 0
            inner = np.nonzero(~is_leaf)[0]
            sides.append(
                _Side(
                    leaf_src=np.nonzero(is_leaf)[0],
                    leaf_col=column[children[is_leaf]],
                    inner_src=None if len(inner) == len(children) else inner,
                )
            )
        levels.append(
            _Level(
                feature=feature[parents],
                threshold=threshold[parents],
                nan_left=nan_left[parents],
                zero_missing=None if zero is None or not zero[parents].any() else zero[parents],
                bit=(np.int64(1) << slot[parents]).astype(chunk.mask_dtype),
                left=sides[0],
                right=sides[1],
            )
        )
        parents = np.concatenate([c[~(feature[c] < 0)] for c in (left[parents], right[parents])])
    return levels


def _unique_rows(rows: np.ndarray, base: int) -> tuple[np.ndarray, np.ndarray]:
    """np.unique(rows, axis=0, return_inverse=True), fast: rows of digits < base as integers."""
    width = rows.shape[1]
    if width * np.log2(base) >= 62:  # the code would overflow int64
        found, inverse = np.unique(rows, axis=0, return_inverse=True)
        return found, inverse.ravel()
    powers = base ** np.arange(width - 1, -1, -1, dtype=np.int64)
    codes, first, inverse = np.unique(rows @ powers, return_index=True, return_inverse=True)
    return rows[first], inverse.ravel()


def _scatter(targets: np.ndarray, values: np.ndarray, n_targets: int):
    """Sparse (n_targets * outputs) x leaves matrix sending leaf l's value to row targets[l]."""
    from scipy import sparse

    m, n_out = values.shape
    rows = (targets[:, None] * n_out + np.arange(n_out)).ravel()
    cols = np.repeat(np.arange(m), n_out)
    data = values.ravel()
    keep = data != 0.0
    return sparse.csr_array((data[keep], (rows[keep], cols[keep])), shape=(n_targets * n_out, m))


def _split_trees(ensemble: TreeEnsemble, n_parts: int) -> list[list[int]]:
    """Consecutive groups of trees with about _CHUNK_LEAVES leaves, at least n_parts groups."""
    leaves = np.array([int((t.feature < 0).sum()) for t in ensemble.trees], dtype=np.int64)
    total = int(leaves.sum())
    n_groups = min(max(-(-total // _CHUNK_LEAVES), n_parts, 1), len(leaves))
    group = np.minimum((np.cumsum(leaves) - leaves) * n_groups // total, n_groups - 1)
    return [np.nonzero(group == g)[0].tolist() for g in np.unique(group)]


def _squeeze_output(arr: np.ndarray) -> np.ndarray:
    """Drop the trailing output axis of a single-output result (shap's convention)."""
    return arr[..., 0] if arr.shape[-1] == 1 else arr


# =========================================================================== results


def _subset_label(subset: tuple[int, ...], names: Sequence[str], sep: str = ":") -> str:
    """'a:b' in JSON keys (R's notation for an interaction), 'a × b' in text and plots."""
    return sep.join(names[j] for j in subset) if subset else "(intercept)"


_TIMES = " \u00d7 "


def _floats(arr: Any) -> Any:
    return np.asarray(arr, dtype=np.float64).tolist()


@dataclass(frozen=True)
class Decomposition:
    """Components m_S of the functional decomposition at the evaluation rows.

    Attributes
    ----------
    components : dict
        Feature-index tuple (sorted) -> array (n,) for one output or (n, n_outputs). The empty
        tuple holds m_empty, the mean prediction on the background. A subset that is absent is
        exactly zero: no root-to-leaf path in the ensemble uses all of its features.
    feature_names, output_names : tuple of str
    output_kind : str
        What is decomposed, e.g. ``"probability"`` or ``"log-odds"``.
    max_order : int
        Largest subset size computed.
    complete : bool
        True when ``max_order`` reaches the widest path, so the components sum to the prediction.
    n_background : int
    """

    components: dict[tuple[int, ...], np.ndarray]
    feature_names: tuple[str, ...]
    output_names: tuple[str, ...]
    output_kind: str
    max_order: int
    complete: bool
    n_background: int

    @property
    def n_rows(self) -> int:
        return int(self.components[()].shape[0])

    def component(self, *features: int | str) -> np.ndarray:
        """m_S for the given features (names or indices, any order); zeros when absent.

        Raises InputError for a subset larger than ``max_order`` of a truncated decomposition.
        """
        key = tuple(sorted(_resolve_features(features, self.feature_names, "features")))
        if key in self.components:
            return self.components[key]
        self._check_order(key)
        return np.zeros_like(self.components[()])

    def _check_order(self, key: Any) -> None:
        """A subset above max_order of a truncated decomposition was not computed."""
        if not self.complete and len(key) > self.max_order:
            raise InputError.bad("features", f"at most max_order={self.max_order} features", key)

    def prediction(self) -> np.ndarray:
        """The sum of all components: the model output when ``complete``."""
        return sum(self.components.values())

    def pd_function(self, *features: int | str) -> np.ndarray:
        """v_U = sum of m_V over the subsets V of U (needs |U| <= max_order)."""
        key = set(_resolve_features(features, self.feature_names, "features"))
        self._check_order(key)
        return sum(v for s, v in self.components.items() if set(s) <= key)

    def shap_values(self) -> np.ndarray:
        """phi_j = sum over S containing j of m_S / |S|; exact SHAP values when ``complete``."""
        first = self.components[()]
        out = np.zeros((first.shape[0], len(self.feature_names), *first.shape[1:]))
        for subset, values in self.components.items():
            for j in subset:
                out[:, j] += values / len(subset)
        return out

    def importance(self) -> dict[tuple[int, ...], np.ndarray]:
        """Mean |m_S| over the rows for every non-empty component (per output)."""
        return {s: np.abs(v).mean(axis=0) for s, v in self.components.items() if s}

    def to_dict(self) -> dict:
        names = self.feature_names
        return {
            "method": "fastpd",
            "feature_names": list(names),
            "output_names": list(self.output_names),
            "output_kind": self.output_kind,
            "max_order": int(self.max_order),
            "complete": bool(self.complete),
            "n_rows": self.n_rows,
            "n_background": int(self.n_background),
            "components": {_subset_label(s, names): _floats(v) for s, v in self.components.items()},
            "importance": {
                _subset_label(s, names): _floats(v) for s, v in self.importance().items()
            },
        }

    def summary(self) -> str:
        top = sorted(self.importance().items(), key=lambda kv: -float(np.sum(kv[1])))[:8]
        lines = [
            f"FastPD decomposition of the {self.output_kind}: {self.n_rows} rows, "
            f"{len(self.components) - 1} components up to order {self.max_order}"
            + (" (complete)" if self.complete else " (truncated)")
            + f", background {self.n_background} rows",
            "largest components (mean |m_S|):",
        ]
        lines += [
            f"  {_subset_label(s, self.feature_names, _TIMES)}: {np.sum(v):.4g}" for s, v in top
        ]
        return "\n".join(lines)

    def plot(self, ax: Any = None, *, top: int = 15) -> Any:
        """Horizontal bars of the largest components' mean |m_S| (summed over outputs)."""
        ax = _new_axes(ax, (6, 0.3 * top + 1))
        items = sorted(self.importance().items(), key=lambda kv: -float(np.sum(kv[1])))[:top]
        labels = [_subset_label(s, self.feature_names, _TIMES) for s, _ in items][::-1]
        ax.barh(labels, [float(np.sum(v)) for _, v in items][::-1], color="tab:blue")
        ax.set_xlabel(f"mean |m_S| ({self.output_kind})")
        ax.set_title("FastPD components")
        return ax


@dataclass(frozen=True)
class PartialDependence:
    """An interventional PD function on a grid of one or two features.

    ``values`` has shape (g,) + (n_outputs,) for one feature, (g1, g2, n_outputs) for two:
    ``m_empty + m_j`` (resp. ``+ m_k + m_jk``) on the grid, exactly the background average.
    """

    features: tuple[str, ...]
    grid: tuple[np.ndarray, ...]
    values: np.ndarray
    output_names: tuple[str, ...]
    output_kind: str
    n_background: int

    def to_dict(self) -> dict:
        return {
            "features": list(self.features),
            "grid": [_floats(g) for g in self.grid],
            "values": _floats(self.values),
            "output_names": list(self.output_names),
            "output_kind": self.output_kind,
            "n_background": int(self.n_background),
        }

    def summary(self) -> str:
        low, high = float(self.values.min()), float(self.values.max())
        return (
            f"partial dependence of the {self.output_kind} on {' and '.join(self.features)}: "
            f"{'x'.join(str(len(g)) for g in self.grid)} grid points, range [{low:.4g}, {high:.4g}]"
        )

    def plot(self, ax: Any = None, *, output: int | str | None = None) -> Any:
        """A line per output (one feature) or a filled contour of one output (two features)."""
        ax = _new_axes(ax, (5, 3.5))
        if len(self.features) == 1:
            outputs = range(len(self.output_names)) if output is None else [self._output(output)]
            for o in outputs:
                ax.plot(self.grid[0], self.values[:, o], marker=".", label=self.output_names[o])
            if len(outputs) > 1:
                ax.legend(fontsize="small")
            ax.set_xlabel(self.features[0])
            ax.set_ylabel(f"PD ({self.output_kind})")
        else:
            o = self._output(0 if output is None else output)
            mesh = ax.contourf(self.grid[1], self.grid[0], self.values[:, :, o], levels=12)
            ax.figure.colorbar(mesh, ax=ax, label=f"PD ({self.output_names[o]})")
            ax.set_xlabel(self.features[1])
            ax.set_ylabel(self.features[0])
        ax.set_title("partial dependence")
        return ax

    def _output(self, output: int | str) -> int:
        return _resolve_output(output, self.output_names)


@dataclass(frozen=True)
class Importance:
    """Global importance: mean |SHAP| per feature and mean |m_S| per component.

    ``shap`` has shape (n_features, n_outputs); ``components`` maps non-empty feature-index
    tuples to arrays (n_outputs,).
    """

    feature_names: tuple[str, ...]
    output_names: tuple[str, ...]
    output_kind: str
    shap: np.ndarray
    components: dict[tuple[int, ...], np.ndarray] = field(default_factory=dict)
    n_rows: int = 0
    max_order: int = 0

    @classmethod
    def from_values(cls, shap_values: np.ndarray, decomposition: Decomposition) -> Importance:
        """Mean absolute SHAP values and components over the same rows.

        Parameters
        ----------
        shap_values : array (n, d) or (n, d, n_outputs), from :meth:`FastPD.shap_values`
        decomposition : Decomposition of the same rows, from :meth:`FastPD.decompose`
        """
        n = decomposition.n_rows
        phi = np.asarray(shap_values, dtype=np.float64)
        if phi.shape[:2] != (n, len(decomposition.feature_names)):
            raise InputError.bad(
                "shap_values", f"shape ({n}, {len(decomposition.feature_names)}, ...)", phi
            )
        return cls(
            feature_names=decomposition.feature_names,
            output_names=decomposition.output_names,
            output_kind=decomposition.output_kind,
            shap=np.abs(phi.reshape(n, phi.shape[1], -1)).mean(axis=0),
            components={s: np.atleast_1d(v) for s, v in decomposition.importance().items()},
            n_rows=n,
            max_order=decomposition.max_order,
        )

    def top_features(self, k: int = 10) -> list[str]:
        """Feature names by mean |SHAP| (summed over outputs), largest first."""
        order = np.argsort(-self.shap.sum(axis=1), kind="stable")[:k]
        return [self.feature_names[j] for j in order]

    def top_interactions(self, k: int = 10) -> list[tuple[tuple[str, str], float]]:
        """Feature pairs by mean |m_jk| (summed over outputs), largest first."""
        pairs = [(s, float(np.sum(v))) for s, v in self.components.items() if len(s) == 2]
        pairs.sort(key=lambda sv: -sv[1])
        return [((self.feature_names[s[0]], self.feature_names[s[1]]), v) for s, v in pairs[:k]]

    def to_dict(self) -> dict:
        names = self.feature_names
        return {
            "feature_names": list(names),
            "output_names": list(self.output_names),
            "output_kind": self.output_kind,
            "n_rows": int(self.n_rows),
            "max_order": int(self.max_order),
            "mean_abs_shap": {n: _floats(self.shap[j]) for j, n in enumerate(names)},
            "mean_abs_component": {
                _subset_label(s, names): _floats(v) for s, v in self.components.items()
            },
            "top_interactions": [
                {"features": list(p), "mean_abs": v} for p, v in self.top_interactions(10)
            ],
        }

    def summary(self) -> str:
        total = self.shap.sum(axis=1)
        lines = [f"FastPD importance of the {self.output_kind} over {self.n_rows} rows"]
        lines.append("mean |SHAP| (summed over outputs):")
        for j in np.argsort(-total, kind="stable")[:10]:
            lines.append(f"  {self.feature_names[j]}: {total[j]:.4g}")
        pairs = self.top_interactions(5)
        if pairs:
            lines.append("strongest pairwise interactions (mean |m_jk|):")
            lines += [f"  {a}{_TIMES}{b}: {v:.4g}" for (a, b), v in pairs]
        return "\n".join(lines)

    def plot(self, ax: Any = None, *, kind: str = "shap", top: int = 10) -> Any:
        """Bars of mean |SHAP| per feature (``kind="shap"``) or of mean |m_S| (``"components"``)."""
        if kind not in ("shap", "components"):
            raise InputError.bad("kind", "'shap' or 'components'", kind)
        ax = _new_axes(ax, (6, 0.3 * top + 1))
        if kind == "shap":
            order = np.argsort(-self.shap.sum(axis=1), kind="stable")[:top][::-1]
            labels = [self.feature_names[j] for j in order]
            left = np.zeros(len(order))
            for o, name in enumerate(self.output_names):
                ax.barh(labels, self.shap[order, o], left=left, label=name)
                left += self.shap[order, o]
            if len(self.output_names) > 1:
                ax.legend(fontsize="small")
            ax.set_xlabel(f"mean |SHAP| ({self.output_kind})")
        else:
            items = sorted(self.components.items(), key=lambda kv: -float(np.sum(kv[1])))[:top]
            labels = [_subset_label(s, self.feature_names, _TIMES) for s, _ in items][::-1]
            ax.barh(labels, [float(np.sum(v)) for _, v in items][::-1], color="tab:blue")
            ax.set_xlabel(f"mean |m_S| ({self.output_kind})")
        ax.set_title("FastPD importance")
        return ax


def _new_axes(ax: Any, size: tuple[float, float]) -> Any:
    if ax is not None:
        return ax
    from matplotlib.figure import Figure

    return Figure(figsize=size, layout="constrained").subplots()


def _resolve_output(output: int | str, names: Sequence[str]) -> int:
    if isinstance(output, str):
        if output not in names:
            raise InputError.bad("output", f"one of {list(names)}", output)
        return list(names).index(output)
    if isinstance(output, (int, np.integer)) and 0 <= output < len(names):
        return int(output)
    raise InputError.bad("output", f"an output name or an index below {len(names)}", output)


def _resolve_features(features: Any, names: Sequence[str], argument: str) -> list[int]:
    """Feature names or indices (one, or a sequence) -> distinct indices, in the given order."""
    if isinstance(features, (str, int, np.integer)):
        features = [features]
    items = list(features)
    out = []
    for item in items:
        if isinstance(item, str):
            if item not in names:
                shown = ", ".join(list(names)[:20])
                raise InputError.bad(argument, f"feature names among: {shown}", item)
            out.append(list(names).index(item))
        elif isinstance(item, (int, np.integer)) and not isinstance(item, bool):
            if not 0 <= item < len(names):
                raise InputError.bad(argument, f"feature indices in [0, {len(names)})", item)
            out.append(int(item))
        else:
            raise InputError.bad(argument, "feature names or integer indices", item)
    if len(set(out)) != len(out):
        raise InputError.bad(argument, "distinct features", items)
    return out


# =========================================================================== the explainer


class FastPD:
    """Exact interventional PD functions, decomposition and SHAP values for a tree ensemble.

    Parameters
    ----------
    model : fitted tree model
        scikit-learn DecisionTree, RandomForest, ExtraTrees, GradientBoosting or
        HistGradientBoosting (regressor or classifier), an xgboost Booster / XGBModel, or a
        LightGBM Booster / LGBMModel. See :mod:`trustlab.explain._trees` for what is decomposed:
        the prediction for regressors, the class probabilities for forest classifiers and the raw
        margin (log-odds, softmax logits) for boosting classifiers.
    background : array-like (n_b, n_features)
        The rows the PD functions average over (for example the training data). NaN marks a
        missing value where the model accepts them; it follows each tree's default direction.
    max_order : int, optional
        Default largest component order for :meth:`decompose` and :meth:`importance`. SHAP
        values and interaction values are always exact (all orders).
    n_jobs : int, optional
        Threads over blocks of trees (joblib); None or 1 runs in the calling thread.
    feature_names : sequence of str, optional
        Defaults to the background's columns, then the model's, then ``x0, x1, ...``.

    Attributes
    ----------
    expected_value_ : float or ndarray (n_outputs,)
        m_empty: the mean model output over the background.
    feature_names_, output_names_ : tuple of str
    output_kind_ : str
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.ensemble import GradientBoostingRegressor
    >>> from trustlab.explain import FastPD
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 3)); y = X[:, 0] * X[:, 1] + X[:, 2]
    >>> model = GradientBoostingRegressor(n_estimators=20, max_depth=3).fit(X, y)
    >>> explainer = FastPD(model, X)
    >>> phi = explainer.shap_values(X[:5])
    >>> bool(np.allclose(phi.sum(1), model.predict(X[:5]) - explainer.expected_value_))
    True
    """

    def __init__(
        self,
        model: Any,
        background: Any,
        *,
        max_order: int | None = None,
        n_jobs: int | None = None,
        feature_names: Sequence[str] | None = None,
    ):
        self.model = model
        self.max_order = None if max_order is None else check_positive_int(max_order, "max_order")
        self.n_jobs = n_jobs
        ensemble = as_tree_ensemble(model)
        self.n_features_in_ = ensemble.n_features
        self.feature_names_, self._named = self._feature_names(ensemble, background, feature_names)
        self._ensemble = ensemble  # provisional offset; _rows needs the missing-value policy
        self.background_ = self._rows(background, "background")
        probe_rows = np.unique(np.linspace(0, len(self.background_) - 1, 64).astype(int))
        self.ensemble_ = calibrate(model, ensemble, self.background_[probe_rows])
        self._ensemble = self.ensemble_
        self.output_names_ = self.ensemble_.output_names
        self.output_kind_ = self.ensemble_.output_kind
        n_parts = 1 if n_jobs in (None, 1) else _effective_jobs(n_jobs)
        self._chunks = [
            _Chunk(self.ensemble_, ids) for ids in _split_trees(self.ensemble_, n_parts)
        ]
        self._plans: dict[int, tuple] = {}

    @property
    def expected_value_(self) -> float | np.ndarray:
        """m_empty, the mean output over the background (a float for a single output)."""
        value = self._intercept()
        return float(value[0]) if len(value) == 1 else value

    # ------------------------------------------------------------------ public API

    def pd_function(self, X_eval: Any, subset: Any) -> np.ndarray:
        """The interventional PD function v_U at the rows of ``X_eval``.

        ``v_U(x) = mean over background rows z of model(x_U, z_rest)``, computed exactly (equal
        to that brute-force average up to floating-point rounding).

        Parameters
        ----------
        X_eval : array-like (n, n_features)
        subset : feature name or index, or a sequence of them (may be empty: the mean output)

        Returns
        -------
        ndarray (n,) for a single-output model, else (n, n_outputs).

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn.tree import DecisionTreeRegressor
        >>> from trustlab.explain import FastPD
        >>> X = np.random.default_rng(1).normal(size=(100, 2)); y = X[:, 0] + X[:, 1]
        >>> fp = FastPD(DecisionTreeRegressor(max_depth=3).fit(X, y), X)
        >>> fp.pd_function(X[:3], [0]).shape
        (3,)
        """
        X = self._rows(X_eval, "X_eval")
        features = _resolve_features(subset, self.feature_names_, "subset")
        return _squeeze_output(self._pd(X, features))

    def decompose(self, X_eval: Any, max_order: int | None = None) -> Decomposition:
        """All components m_S with |S| <= max_order at the rows of ``X_eval``.

        ``max_order`` defaults to the explainer's, then to the widest root-to-leaf path (the
        complete decomposition, whose components sum to the model output).

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn.ensemble import RandomForestRegressor
        >>> from trustlab.explain import FastPD
        >>> X = np.random.default_rng(2).normal(size=(150, 3)); y = X[:, 0] * X[:, 1]
        >>> rf = RandomForestRegressor(n_estimators=10, max_depth=4, random_state=0).fit(X, y)
        >>> dec = FastPD(rf, X).decompose(X[:4])
        >>> bool(np.allclose(dec.prediction(), rf.predict(X[:4])))
        True
        """
        X = self._rows(X_eval, "X_eval")
        width = max(c.max_width for c in self._chunks)
        order = max_order if max_order is not None else self.max_order
        order = width if order is None else check_positive_int(order, "max_order")
        order = max(min(order, width), 1)
        keys, plans = self._component_plan(order)
        n_out = self.ensemble_.n_outputs
        self._check_result_size(len(X) * len(keys) * n_out, "max_order")
        self._ensure_tables(shap=False, pairs=False)
        total = np.zeros((len(keys) * n_out, len(X)))
        rows = len(keys) * n_out
        for part in self._map(
            lambda c, p: self._by_block(X, c, c.components, (p, rows), rows), plans
        ):
            total += part
        values = total.T.reshape(len(X), len(keys), n_out)
        components = {(): _squeeze_output(np.tile(self._intercept(), (len(X), 1)))}
        for i, key in enumerate(keys):
            components[key] = _squeeze_output(values[:, i])
        return Decomposition(
            components=components,
            feature_names=self.feature_names_,
            output_names=self.output_names_,
            output_kind=self.output_kind_,
            max_order=order,
            complete=order >= width,
            n_background=len(self.background_),
        )

    def shap_values(self, X_eval: Any) -> np.ndarray:
        """Exact interventional SHAP values with the whole background.

        They equal ``sum over S containing j of m_S / |S|`` of the complete decomposition, and
        shap's interventional TreeExplainer given ``maskers.Independent(bg,
        max_samples=len(bg))``. Each row sums to the output minus :attr:`expected_value_`.

        Returns
        -------
        ndarray (n, n_features) for a single-output model, else (n, n_features, n_outputs).

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn.ensemble import HistGradientBoostingClassifier
        >>> from trustlab.explain import FastPD
        >>> X = np.random.default_rng(3).normal(size=(300, 3)); y = X[:, 0] + X[:, 1] > 0
        >>> clf = HistGradientBoostingClassifier(max_iter=10).fit(X, y)
        >>> FastPD(clf, X[:100]).shap_values(X[:5]).shape   # log-odds: one output
        (5, 3)
        """
        X = self._rows(X_eval, "X_eval")
        return _squeeze_output(self._shap(X))

    def interaction_values(self, X_eval: Any) -> np.ndarray:
        """Exact interventional SHAP interaction values, laid out as shap's.

        Off the diagonal, ``[i, j, k]`` is half the Shapley interaction index of features j and k
        (``sum over S containing j and k of m_S / (|S| - 1)``); the diagonal holds the rest of
        the SHAP value, so ``values.sum(axis=2)`` equals :meth:`shap_values`. For an additive
        model the off-diagonal entries are zero.

        Returns
        -------
        ndarray (n, d, d) for a single-output model, else (n, d, d, n_outputs).
        """
        X = self._rows(X_eval, "X_eval")
        d, n_out = self.n_features_in_, self.ensemble_.n_outputs
        self._check_result_size(len(X) * d * d * n_out, "fewer rows")
        phi = self._shap(X)
        self._ensure_tables(shap=True, pairs=True)
        total = np.zeros((d * d * n_out, len(X)))
        for part in self._map(
            lambda c, w: self._by_block(X, c, c.interactions, w, d * d * n_out),
            [self._pair_weights(c) for c in self._chunks],
        ):
            total += part
        values = total.T.reshape(len(X), d, d, n_out)
        diagonal = np.arange(d)
        values[:, diagonal, diagonal] = phi - values.sum(axis=2)
        return _squeeze_output(values)

    def pd_grid(
        self,
        features: Any,
        grid: Any = None,
        *,
        grid_resolution: int = 20,
        percentiles: tuple[float, float] = (0.05, 0.95),
    ) -> PartialDependence:
        """The PD function of one or two features on a grid, for PD plots.

        Parameters
        ----------
        features : a feature (name or index) or a pair of them
        grid : array (one feature) or pair of arrays (two), optional
            Defaults to ``grid_resolution`` quantiles of the background between ``percentiles``
            (the distinct values when there are fewer).

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn.ensemble import GradientBoostingRegressor
        >>> from trustlab.explain import FastPD
        >>> X = np.random.default_rng(4).normal(size=(200, 2)); y = X[:, 0] * X[:, 1]
        >>> fp = FastPD(GradientBoostingRegressor(n_estimators=20).fit(X, y), X)
        >>> fp.pd_grid([0, 1], grid_resolution=5).values.shape
        (5, 5, 1)
        """
        index = _resolve_features(features, self.feature_names_, "features")
        if len(index) not in (1, 2):
            raise InputError.bad("features", "one or two features", features)
        grids = self._grids(index, grid, grid_resolution, percentiles)
        mesh = np.meshgrid(*grids, indexing="ij")
        X = np.zeros((mesh[0].size, self.n_features_in_))
        for j, values in zip(index, mesh, strict=True):
            X[:, j] = values.ravel()
        values = self._pd(X, index).reshape(*[len(g) for g in grids], -1)
        return PartialDependence(
            features=tuple(self.feature_names_[j] for j in index),
            grid=tuple(grids),
            values=values,
            output_names=self.output_names_,
            output_kind=self.output_kind_,
            n_background=len(self.background_),
        )

    def importance(self, X_eval: Any = None, *, max_order: int | None = None) -> Importance:
        """Mean |SHAP| per feature and mean |m_S| per component over ``X_eval`` (default: the
        background), as glex's variable importance."""
        X = self.background_ if X_eval is None else self._rows(X_eval, "X_eval")
        return Importance.from_values(self._shap(X), self.decompose(X, max_order=max_order))

    # ------------------------------------------------------------------ internals

    def _feature_names(self, ensemble, background, names) -> tuple[tuple[str, ...], bool]:
        d = ensemble.n_features
        if names is not None:
            names = tuple(str(n) for n in names)
            if len(names) != d or len(set(names)) != d:
                raise InputError.bad("feature_names", f"{d} distinct names", list(names))
            return names, True
        if ensemble.feature_names is not None and len(ensemble.feature_names) == d:
            return tuple(ensemble.feature_names), True
        columns = getattr(background, "columns", None)
        if columns is not None and len(columns) == d:
            return tuple(str(c) for c in columns), True
        return tuple(f"x{j}" for j in range(d)), False

    def _rows(self, X: Any, name: str) -> np.ndarray:
        """Validate rows: the model's features (by name for data frames), NaN only if allowed."""
        columns = getattr(X, "columns", None)
        if columns is not None and self._named:
            columns = [str(c) for c in columns]
            missing = [c for c in self.feature_names_ if c not in columns]
            if missing:
                raise InputError.bad(
                    name, f"the feature columns {list(self.feature_names_)}", columns
                )
            X = X.iloc[:, [columns.index(c) for c in self.feature_names_]]
        arr = as_float_array(X, name, ndim=2, allow_nan=True)
        d = self.n_features_in_
        if arr.shape[1] != d:
            raise InputError.bad(name, f"{d} feature columns, as the model", arr)
        if np.isinf(arr).any():
            check_finite(np.where(np.isnan(arr), 0.0, arr), name)
        if not self._ensemble.allows_missing and np.isnan(arr).any():
            where = tuple(int(i) for i in np.argwhere(np.isnan(arr))[0])
            raise InputError(
                f"{name}: expected no missing values ({self._ensemble.model_name} does not accept "
                f"NaN), got NaN at index {where}",
                argument=name,
            )
        return arr

    def _map(self, fn: Callable, per_chunk: Sequence | None = None) -> list:
        args = per_chunk if per_chunk is not None else [None] * len(self._chunks)
        if self.n_jobs in (None, 1) or len(self._chunks) == 1:
            return [fn(c, a) for c, a in zip(self._chunks, args, strict=True)]
        from joblib import Parallel, delayed

        return Parallel(n_jobs=self.n_jobs, prefer="threads")(
            delayed(fn)(c, a) for c, a in zip(self._chunks, args, strict=True)
        )

    def _blocks(self, X: np.ndarray, chunk: _Chunk, out_rows: int = 0) -> Iterator[np.ndarray]:
        """Row blocks of X as (features x rows), cast the way the model casts its input."""
        step = chunk.block_rows(out_rows)
        dtype = self.ensemble_.input_dtype
        for start in range(0, len(X), step):
            yield np.ascontiguousarray(X[start : start + step].T.astype(dtype))

    def _by_block(self, X, chunk, method, arg, out_rows: int) -> np.ndarray:
        out = np.empty((out_rows, len(X)))
        start = 0
        for XT in self._blocks(X, chunk, out_rows):
            out[:, start : start + XT.shape[1]] = method(XT, arg)
            start += XT.shape[1]
        return out

    def _pd(self, X: np.ndarray, features: Sequence[int]) -> np.ndarray:
        """(n, n_outputs) PD values of the feature subset at the rows of X."""
        features = np.asarray(list(features), dtype=np.int64)
        n_b = len(self.background_)

        def one(chunk, _):
            mask = chunk.subset_masks(features)
            weights = chunk.pd_weights(mask, self._blocks(self.background_, chunk), n_b)
            return self._by_block(
                X, chunk, lambda XT, w: chunk.pd(XT, mask, w), weights, chunk.n_outputs
            )

        total = sum(self._map(one))
        return total.T + self._ensemble.offset

    def _ensure_tables(self, *, shap: bool, pairs: bool) -> None:
        """Build the histograms (and SHAP / interaction tables) of every block of trees once."""
        entries = sum(c.n_entries for c in self._chunks)
        n_tables = 2 + 2 * shap + 3 * pairs  # histogram, its signed copy, compact tables
        if entries * 8 * n_tables > _TABLE_BUDGET_BYTES:
            width = max(c.max_width for c in self._chunks)
            raise ResourceError(
                f"exact SHAP values and components need 2^k table entries per leaf (k: distinct "
                f"features on its path); the widest path here uses {width} features, "
                f"{entries} entries per table and {n_tables} tables "
                f"({entries * 8 * n_tables / 2**30:.1f} GiB). Use shallower trees (max_depth); "
                "pd_function and pd_grid have no such limit"
            )
        # One table per slot (per slot pair) saves work at evaluation where it fits; else the
        # compact two (three) tables, with the slot arithmetic done per row.
        slot_bytes = 8 * sum(c.n_entries * c.max_width for c in self._chunks)
        pair_bytes = 8 * sum(c.n_entries * len(_slot_pairs(c.max_width)) for c in self._chunks)
        shap_slots, pair_slots = slot_bytes <= _SLOT_TABLE_BYTES, pair_bytes <= _SLOT_TABLE_BYTES

        def build(chunk, _):
            if "h" not in chunk.cache:
                blocks = self._blocks(self.background_, chunk)
                chunk.cache["h"] = chunk.histogram(blocks, len(self.background_))
            width = chunk.max_width
            if shap and "shap" not in chunk.cache and "shap_slots" not in chunk.cache:
                if shap_slots:
                    chunk.cache["shap_slots"] = chunk.group_tables(_shap_slot_tables, width)
                else:
                    chunk.cache["shap"] = chunk.group_tables(_shap_tables, 2)
            if pairs and "pairs" not in chunk.cache and "pair_slots" not in chunk.cache:
                if pair_slots:
                    n_pairs = len(_slot_pairs(width))
                    chunk.cache["pair_slots"] = chunk.group_tables(_pair_slot_tables, n_pairs)
                else:
                    chunk.cache["pairs"] = chunk.group_tables(_pair_tables, 3)

        self._map(build)

    def _shap(self, X: np.ndarray) -> np.ndarray:
        d, n_out = self.n_features_in_, self.ensemble_.n_outputs
        self._check_result_size(len(X) * d * n_out, "fewer rows")
        self._ensure_tables(shap=True, pairs=False)
        total = np.zeros((d * n_out, len(X)))
        weights = [self._shap_weights(c) for c in self._chunks]
        for part in self._map(lambda c, w: self._by_block(X, c, c.shap, w, d * n_out), weights):
            total += part
        return total.T.reshape(len(X), d, n_out)

    def _shap_weights(self, chunk: _Chunk) -> list:
        if "shap_weights" not in chunk.cache:
            chunk.cache["shap_weights"] = [
                _scatter(
                    chunk.slot_feature[: chunk.n_wider[j], j],
                    chunk.values[: chunk.n_wider[j]],
                    self.n_features_in_,
                )
                for j in range(chunk.max_width)
            ]
        return chunk.cache["shap_weights"]

    def _pair_weights(self, chunk: _Chunk) -> dict:
        if "pair_weights" not in chunk.cache:
            d = self.n_features_in_
            weights = {}
            for k in range(1, chunk.max_width):
                m = chunk.n_wider[k]
                fj, fk = chunk.slot_feature[:m, :k], chunk.slot_feature[:m, k]
                half = chunk.values[:m] / 2
                for j in range(k):
                    weights[j, k] = _scatter(fj[:, j] * d + fk, half, d * d) + _scatter(
                        fk * d + fj[:, j], half, d * d
                    )
            chunk.cache["pair_weights"] = weights
        return chunk.cache["pair_weights"]

    def _component_plan(self, order: int) -> tuple[list[tuple[int, ...]], list]:
        """The components (global feature subsets) and, per chunk, per slot subset S: the leaves
        having those slots and the sparse map from them to the components."""
        if order in self._plans:
            return self._plans[order]
        from itertools import combinations

        d = self.n_features_in_
        entries = []  # (chunk index, slot mask, leaf count, sorted features padded with d)
        for ci, chunk in enumerate(self._chunks):
            for size in range(1, min(order, chunk.max_width) + 1):
                for slots in combinations(range(chunk.max_width), size):
                    m = chunk.n_wider[slots[-1]]
                    feats = np.sort(chunk.slot_feature[:m, list(slots)], axis=1)
                    padded = np.full((m, order), d, dtype=np.int64)
                    padded[:, :size] = feats
                    entries.append((ci, sum(1 << s for s in slots), m, padded))
        if not entries:
            self._plans[order] = ([], [[] for _ in self._chunks])
            return self._plans[order]
        rows, inverse = _unique_rows(np.vstack([e[3] for e in entries]), base=d + 1)
        found = [tuple(int(f) for f in row if f < d) for row in rows]
        by_size = sorted(range(len(found)), key=lambda i: (len(found[i]), found[i]))
        rank = np.empty(len(found), dtype=np.int64)
        rank[by_size] = np.arange(len(found))
        ids = rank[inverse]
        sorted_keys = [found[i] for i in by_size]
        plans: list[list] = [[] for _ in self._chunks]
        start = 0
        for ci, mask, m, _ in entries:
            chunk = self._chunks[ci]
            sign = -1.0 if mask.bit_count() % 2 else 1.0  # (-1)^|S|: see _Chunk.components
            weights = _scatter(ids[start : start + m], sign * chunk.values[:m], len(found))
            plans[ci].append((mask, m, weights))
            start += m
        self._plans[order] = (sorted_keys, plans)
        return self._plans[order]

    def _intercept(self) -> np.ndarray:
        """offset + sum over leaves of value * (share of background rows reaching the leaf)."""
        self._ensure_tables(shap=False, pairs=False)
        reach = [(c.values * c.cache["h"][c.offset][:, None]).sum(axis=0) for c in self._chunks]
        return self.ensemble_.offset + sum(reach)

    def _check_result_size(self, n_values: int, advice: str) -> None:
        if n_values * 8 > _RESULT_BUDGET_BYTES:
            raise ResourceError(
                f"the result would hold {n_values} numbers ({n_values * 8 / 2**30:.1f} GiB); "
                f"use {advice}" + (" or evaluate fewer rows" if advice == "max_order" else "")
            )

    def _grids(self, index, grid, resolution, percentiles) -> list[np.ndarray]:
        if grid is None:
            resolution = check_positive_int(resolution, "grid_resolution", minimum=2)
            out = []
            for j in index:
                column = self.background_[:, j]
                column = column[~np.isnan(column)]
                distinct = np.unique(column)
                if len(distinct) <= resolution:
                    out.append(distinct)
                else:
                    qs = np.linspace(percentiles[0], percentiles[1], resolution)
                    out.append(np.unique(np.quantile(column, qs)))
            return out
        if len(index) == 1:  # an array, or a sequence holding one array
            single = np.asarray(grid, dtype=object)
            grids = [grid[0]] if single.ndim >= 1 and len(single) == 1 else [grid]
        else:
            grids = list(grid)
        if len(grids) != len(index):
            raise InputError.bad("grid", f"{len(index)} grid arrays, one per feature", grid)
        return [as_float_array(g, "grid", ndim=1) for g in grids]


def _effective_jobs(n_jobs: int) -> int:
    from joblib import effective_n_jobs

    return max(1, effective_n_jobs(n_jobs))


# =========================================================================== plots


def plot_shap_summary(
    values: Any,
    X: Any = None,
    feature_names: Sequence[str] | None = None,
    *,
    kind: str = "beeswarm",
    output: int | None = None,
    output_names: Sequence[str] | None = None,
    max_display: int = 10,
    ax: Any = None,
) -> Any:
    """A SHAP summary plot: a beeswarm (dots coloured by feature value) or mean |SHAP| bars.

    Parameters
    ----------
    values : array (n, d) or (n, d, n_outputs)
        SHAP values, as :meth:`FastPD.shap_values` returns them.
    X : array-like (n, d), optional
        The explained rows; colours the beeswarm by feature value.
    kind : "beeswarm" or "bar"
        For several outputs, ``"bar"`` stacks the outputs; ``"beeswarm"`` shows ``output``
        (default: the output with the largest mean |SHAP|).
    output_names : sequence of str, optional
        Names of the outputs, for the legend (e.g. ``FastPD.output_names_``).

    Returns
    -------
    matplotlib Axes

    Examples
    --------
    >>> import numpy as np
    >>> from trustlab.explain.fastpd import plot_shap_summary
    >>> ax = plot_shap_summary(np.random.default_rng(0).normal(size=(50, 3)), kind="bar")
    >>> ax.get_xlabel()
    'mean |SHAP|'
    """
    phi = as_float_array(values, "values")
    if phi.ndim not in (2, 3):
        raise InputError.bad("values", "an array of shape (n, d) or (n, d, n_outputs)", phi)
    if phi.ndim == 2:
        phi = phi[:, :, None]
    n, d, n_out = phi.shape
    names = (
        [f"x{j}" for j in range(d)] if feature_names is None else [str(f) for f in feature_names]
    )
    if len(names) != d:
        raise InputError.bad("feature_names", f"{d} names", list(names))
    if kind not in ("beeswarm", "bar"):
        raise InputError.bad("kind", "'beeswarm' or 'bar'", kind)
    outputs = [f"output {o}" for o in range(n_out)] if output_names is None else output_names
    if len(outputs) != n_out:
        raise InputError.bad("output_names", f"{n_out} names", list(outputs))
    mean_abs = np.abs(phi).mean(axis=0)  # (d, n_out)
    order = np.argsort(-mean_abs.sum(axis=1), kind="stable")[:max_display][::-1]
    ax = _new_axes(ax, (6, 0.35 * len(order) + 1.2))
    labels = [names[j] for j in order]
    if kind == "bar":
        left = np.zeros(len(order))
        for o in range(n_out):
            ax.barh(labels, mean_abs[order, o], left=left, label=str(outputs[o]))
            left += mean_abs[order, o]
        if n_out > 1:
            ax.legend(fontsize="small")
        ax.set_xlabel("mean |SHAP|")
        return ax
    o = int(np.argmax(mean_abs.sum(axis=0))) if output is None else int(output)
    if not 0 <= o < n_out:
        raise InputError.bad("output", f"an index below {n_out}", output)
    colours = None
    if X is not None:
        Xv = as_float_array(X, "X", shape=(n, d), allow_nan=True)
        low, high = np.nanpercentile(Xv, 5, axis=0), np.nanpercentile(Xv, 95, axis=0)
        colours = np.clip((Xv - low) / np.where(high > low, high - low, 1.0), 0, 1)
    for row, j in enumerate(order):
        x = phi[:, j, o]
        y = row + _swarm_offsets(x)
        c = "tab:blue" if colours is None else colours[:, j]
        points = ax.scatter(x, y, c=c, s=8, cmap="coolwarm", vmin=0, vmax=1, linewidths=0)
    ax.set_yticks(range(len(order)), labels)
    ax.axvline(0.0, color="grey", linewidth=0.8)
    ax.set_xlabel("SHAP value" + ("" if n_out == 1 else f" ({outputs[o]})"))
    if colours is not None:
        ax.figure.colorbar(points, ax=ax, label="feature value (low to high)", ticks=[])
    return ax


def _swarm_offsets(x: np.ndarray, bins: int = 60, width: float = 0.4) -> np.ndarray:
    """Deterministic vertical offsets that stack points falling in the same horizontal bin."""
    if len(x) == 0:
        return np.zeros(0)
    span = float(x.max() - x.min()) or 1.0
    bin_of = np.floor((x - x.min()) / span * (bins - 1)).astype(int)
    order = np.lexsort((x, bin_of))
    rank = np.empty(len(x), dtype=int)
    _, starts = np.unique(bin_of[order], return_index=True)
    position = np.arange(len(x)) - np.repeat(starts, np.diff(np.append(starts, len(x))))
    rank[order] = position
    crowd = max(int(np.bincount(bin_of).max()), 1)
    sign = np.where(rank % 2 == 0, 1.0, -1.0)
    return sign * np.ceil(rank / 2) * min(width / crowd * 2, 0.08)
