"""The FastPD kernel: a block of trees flattened into levels (routing) and leaves (tables).

:class:`Chunk` holds a block of trees of one ensemble: the internal nodes level by level, so that
one pass routes every row to every leaf at once (the row's failure mask at each leaf), and the
leaves sorted by width with their slot features and values. Its methods evaluate a leaf table
(histogram, SHAP, interaction and component tables) at rows; :mod:`._engine` combines the chunks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from trustlab.errors import ResourceError
from trustlab.explain.fastpd._ensemble import LGBM_ZERO, TreeEnsemble, goes_left
from trustlab.explain.fastpd._subsets import popcounts, slot_pairs, subset_sum

__all__ = ["Chunk", "split_trees", "scatter", "unique_rows", "MAX_PATH_WIDTH"]

# Paths with more distinct features than this are refused (tables hold 2^k entries per leaf).
MAX_PATH_WIDTH = 30
# Work arrays are (leaves x rows); rows are processed in blocks of about this many elements.
BLOCK_ELEMENTS = 2**22
# Trees are split into blocks of about this many leaves (and at least one block per worker).
CHUNK_LEAVES = 4096


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


class Chunk:
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
        if width.max(initial=0) > MAX_PATH_WIDTH:
            raise ResourceError(
                f"a root-to-leaf path uses {int(width.max())} distinct features; FastPD supports "
                f"at most {MAX_PATH_WIDTH}: use shallower trees (max_depth)"
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
        return max(16, BLOCK_ELEMENTS // max(self.n_leaves, out_rows, 1))

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
                    zero = level.zero_missing[:, None] & (np.abs(x) <= LGBM_ZERO)
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
            subset_sum(prob, width)
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
                slot_pairs(self.max_width), self.cache["pair_slots"], strict=True
            ):
                out += weights[j, k] @ np.take(table, index[: self.n_wider[k]])
            return out
        t0, t1, t2 = self.cache["pairs"]
        base = np.take(t0, index[: self.n_wider[1]])
        without = [  # T1(a without j), for every slot j
            np.take(t1, index[: self.n_wider[j]] - (agree[: self.n_wider[j]] & (1 << j)))
            for j in range(self.max_width)
        ]
        for j, k in slot_pairs(self.max_width):
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
                block[:, popcounts(width) % 2 == 1] *= -1.0
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


def unique_rows(rows: np.ndarray, base: int) -> tuple[np.ndarray, np.ndarray]:
    """np.unique(rows, axis=0, return_inverse=True), fast: rows of digits < base as integers."""
    width = rows.shape[1]
    if width * np.log2(base) >= 62:  # the code would overflow int64
        found, inverse = np.unique(rows, axis=0, return_inverse=True)
        return found, inverse.ravel()
    powers = base ** np.arange(width - 1, -1, -1, dtype=np.int64)
    codes, first, inverse = np.unique(rows @ powers, return_index=True, return_inverse=True)
    return rows[first], inverse.ravel()


def scatter(targets: np.ndarray, values: np.ndarray, n_targets: int):
    """Sparse (n_targets * outputs) x leaves matrix sending leaf l's value to row targets[l]."""
    from scipy import sparse

    m, n_out = values.shape
    rows = (targets[:, None] * n_out + np.arange(n_out)).ravel()
    cols = np.repeat(np.arange(m), n_out)
    data = values.ravel()
    keep = data != 0.0
    return sparse.csr_array((data[keep], (rows[keep], cols[keep])), shape=(n_targets * n_out, m))


def split_trees(ensemble: TreeEnsemble, n_parts: int) -> list[list[int]]:
    """Consecutive groups of trees with about CHUNK_LEAVES leaves, at least n_parts groups."""
    leaves = np.array([int((t.feature < 0).sum()) for t in ensemble.trees], dtype=np.int64)
    total = int(leaves.sum())
    n_groups = min(max(-(-total // CHUNK_LEAVES), n_parts, 1), len(leaves))
    group = np.minimum((np.cumsum(leaves) - leaves) * n_groups // total, n_groups - 1)
    return [np.nonzero(group == g)[0].tolist() for g in np.unique(group)]
