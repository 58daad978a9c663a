"""FastPD's computations over a whole ensemble: the blocks of trees, their tables and weights.

:class:`Engine` splits a calibrated ensemble into :class:`~._kernel.Chunk` blocks (run in
threads with ``n_jobs`` workers), builds each block's tables from the background once, and sums
the blocks' contributions to PD functions, SHAP values, interaction values and components. It
trusts its inputs: :class:`~trustlab.explain.fastpd.FastPD` validates rows and arguments.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from itertools import combinations

import numpy as np

from trustlab.errors import ResourceError
from trustlab.explain.fastpd._ensemble import TreeEnsemble
from trustlab.explain.fastpd._kernel import Chunk, scatter, split_trees, unique_rows
from trustlab.explain.fastpd._subsets import (
    pair_slot_tables,
    pair_tables,
    shap_slot_tables,
    shap_tables,
    slot_pairs,
)

__all__ = ["Engine"]

# Memory guards. Tables hold 2^k entries per leaf (k: distinct features on its path).
TABLE_BUDGET_BYTES = 2**30
RESULT_BUDGET_BYTES = 2**30
# The one-table-per-slot form of the SHAP (pair) tables is used while all of them fit in this.
SLOT_TABLE_BYTES = 2**28


class Engine:
    """The blocks of trees of one calibrated ensemble, with the background they average over."""

    def __init__(self, ensemble: TreeEnsemble, background: np.ndarray, n_workers: int):
        self.ensemble = ensemble
        self.background = background
        self.n_workers = n_workers
        self.n_features = ensemble.n_features
        self.n_outputs = ensemble.n_outputs
        self.chunks = [Chunk(ensemble, ids) for ids in split_trees(ensemble, n_workers)]
        self.plans: dict[int, tuple] = {}

    @property
    def max_width(self) -> int:
        """The most distinct features on one root-to-leaf path."""
        return max(c.max_width for c in self.chunks)

    # ------------------------------------------------------------------ values

    def pd(self, X: np.ndarray, features: Sequence[int]) -> np.ndarray:
        """(n, n_outputs) PD values of the feature subset at the rows of X."""
        features = np.asarray(list(features), dtype=np.int64)
        n_b = len(self.background)

        def one(chunk, _):
            mask = chunk.subset_masks(features)
            weights = chunk.pd_weights(mask, self.blocks(self.background, chunk), n_b)
            return self.by_block(
                X, chunk, lambda XT, w: chunk.pd(XT, mask, w), weights, chunk.n_outputs
            )

        total = sum(self.map(one))
        return total.T + self.ensemble.offset

    def intercept(self) -> np.ndarray:
        """offset + sum over leaves of value * (share of background rows reaching the leaf)."""
        self.ensure_tables(shap=False, pairs=False)
        reach = [(c.values * c.cache["h"][c.offset][:, None]).sum(axis=0) for c in self.chunks]
        return self.ensemble.offset + sum(reach)

    def shap(self, X: np.ndarray) -> np.ndarray:
        """(n, d, n_outputs) exact interventional SHAP values."""
        d, n_out = self.n_features, self.n_outputs
        self.check_result_size(len(X) * d * n_out, "fewer rows")
        self.ensure_tables(shap=True, pairs=False)
        weights = [self._shap_weights(c) for c in self.chunks]
        total = self._sum(
            lambda c, w: self.by_block(X, c, c.shap, w, d * n_out), weights, (d * n_out, len(X))
        )
        return total.T.reshape(len(X), d, n_out)

    def interactions(self, X: np.ndarray) -> np.ndarray:
        """(n, d, d, n_outputs) SHAP interaction values (the diagonal holds the rest of phi)."""
        d, n_out = self.n_features, self.n_outputs
        self.check_result_size(len(X) * d * d * n_out, "fewer rows")
        phi = self.shap(X)
        self.ensure_tables(shap=True, pairs=True)
        weights = [self._pair_weights(c) for c in self.chunks]
        total = self._sum(
            lambda c, w: self.by_block(X, c, c.interactions, w, d * d * n_out),
            weights,
            (d * d * n_out, len(X)),
        )
        values = total.T.reshape(len(X), d, d, n_out)
        diagonal = np.arange(d)
        values[:, diagonal, diagonal] = phi - values.sum(axis=2)
        return values

    def components(self, X: np.ndarray, order: int) -> tuple[list[tuple[int, ...]], np.ndarray]:
        """The components up to ``order`` (feature subsets, by size) and their values
        (n, n_components, n_outputs)."""
        keys, plans = self._component_plan(order)
        n_out = self.n_outputs
        self.check_result_size(len(X) * len(keys) * n_out, "max_order")
        self.ensure_tables(shap=False, pairs=False)
        rows = len(keys) * n_out
        total = self._sum(
            lambda c, p: self.by_block(X, c, c.components, (p, rows), rows), plans, (rows, len(X))
        )
        return keys, total.T.reshape(len(X), len(keys), n_out)

    def n_components(self, order: int) -> int:
        """How many components up to ``order`` the ensemble has (feature subsets on a path)."""
        return len(self._component_plan(order)[0])

    def check_result_size(self, n_values: int, advice: str) -> None:
        if n_values * 8 > RESULT_BUDGET_BYTES:
            raise ResourceError(
                f"the result would hold {n_values} numbers ({n_values * 8 / 2**30:.1f} GiB); "
                f"use {advice}" + (" or evaluate fewer rows" if advice == "max_order" else "")
            )

    # ------------------------------------------------------------------ tables and weights

    def ensure_tables(self, *, shap: bool, pairs: bool) -> None:
        """Build the histograms (and SHAP / interaction tables) of every block of trees once."""
        entries = sum(c.n_entries for c in self.chunks)
        n_tables = 2 + 2 * shap + 3 * pairs  # histogram, its signed copy, compact tables
        if entries * 8 * n_tables > TABLE_BUDGET_BYTES:
            raise ResourceError(
                f"exact SHAP values and components need 2^k table entries per leaf (k: distinct "
                f"features on its path); the widest path here uses {self.max_width} features, "
                f"{entries} entries per table and {n_tables} tables "
                f"({entries * 8 * n_tables / 2**30:.1f} GiB). Use shallower trees (max_depth); "
                "pd_function and pd_grid have no such limit"
            )
        # One table per slot (per slot pair) saves work at evaluation where it fits; else the
        # compact two (three) tables, with the slot arithmetic done per row.
        slot_bytes = 8 * sum(c.n_entries * c.max_width for c in self.chunks)
        pair_bytes = 8 * sum(c.n_entries * len(slot_pairs(c.max_width)) for c in self.chunks)
        shap_slots, pair_slots = slot_bytes <= SLOT_TABLE_BYTES, pair_bytes <= SLOT_TABLE_BYTES

        def build(chunk, _):
            if "h" not in chunk.cache:
                blocks = self.blocks(self.background, chunk)
                chunk.cache["h"] = chunk.histogram(blocks, len(self.background))
            width = chunk.max_width
            if shap and "shap" not in chunk.cache and "shap_slots" not in chunk.cache:
                if shap_slots:
                    chunk.cache["shap_slots"] = chunk.group_tables(shap_slot_tables, width)
                else:
                    chunk.cache["shap"] = chunk.group_tables(shap_tables, 2)
            if pairs and "pairs" not in chunk.cache and "pair_slots" not in chunk.cache:
                if pair_slots:
                    n_pairs = len(slot_pairs(width))
                    chunk.cache["pair_slots"] = chunk.group_tables(pair_slot_tables, n_pairs)
                else:
                    chunk.cache["pairs"] = chunk.group_tables(pair_tables, 3)

        self.map(build)

    def _shap_weights(self, chunk: Chunk) -> list:
        if "shap_weights" not in chunk.cache:
            chunk.cache["shap_weights"] = [
                scatter(
                    chunk.slot_feature[: chunk.n_wider[j], j],
                    chunk.values[: chunk.n_wider[j]],
                    self.n_features,
                )
                for j in range(chunk.max_width)
            ]
        return chunk.cache["shap_weights"]

    def _pair_weights(self, chunk: Chunk) -> dict:
        if "pair_weights" not in chunk.cache:
            d = self.n_features
            weights = {}
            for k in range(1, chunk.max_width):
                m = chunk.n_wider[k]
                fj, fk = chunk.slot_feature[:m, :k], chunk.slot_feature[:m, k]
                half = chunk.values[:m] / 2
                for j in range(k):
                    weights[j, k] = scatter(fj[:, j] * d + fk, half, d * d) + scatter(
                        fk * d + fj[:, j], half, d * d
                    )
            chunk.cache["pair_weights"] = weights
        return chunk.cache["pair_weights"]

    def _component_plan(self, order: int) -> tuple[list[tuple[int, ...]], list]:
        """The components (global feature subsets) and, per chunk, per slot subset S: the leaves
        having those slots and the sparse map from them to the components."""
        if order in self.plans:
            return self.plans[order]
        d = self.n_features
        entries = []  # (chunk index, slot mask, leaf count, sorted features padded with d)
        for ci, chunk in enumerate(self.chunks):
            for size in range(1, min(order, chunk.max_width) + 1):
                for slots in combinations(range(chunk.max_width), size):
                    m = chunk.n_wider[slots[-1]]
                    feats = np.sort(chunk.slot_feature[:m, list(slots)], axis=1)
                    padded = np.full((m, order), d, dtype=np.int64)
                    padded[:, :size] = feats
                    entries.append((ci, sum(1 << s for s in slots), m, padded))
        if not entries:
            self.plans[order] = ([], [[] for _ in self.chunks])
            return self.plans[order]
        rows, inverse = unique_rows(np.vstack([e[3] for e in entries]), base=d + 1)
        found = [tuple(int(f) for f in row if f < d) for row in rows]
        by_size = sorted(range(len(found)), key=lambda i: (len(found[i]), found[i]))
        rank = np.empty(len(found), dtype=np.int64)
        rank[by_size] = np.arange(len(found))
        ids = rank[inverse]
        sorted_keys = [found[i] for i in by_size]
        plans: list[list] = [[] for _ in self.chunks]
        start = 0
        for ci, mask, m, _ in entries:
            chunk = self.chunks[ci]
            sign = -1.0 if mask.bit_count() % 2 else 1.0  # (-1)^|S|: see Chunk.components
            weights = scatter(ids[start : start + m], sign * chunk.values[:m], len(found))
            plans[ci].append((mask, m, weights))
            start += m
        self.plans[order] = (sorted_keys, plans)
        return self.plans[order]

    # ------------------------------------------------------------------ running

    def map(self, fn: Callable, per_chunk: Sequence | None = None) -> list:
        """``fn(chunk, arg)`` for every chunk: in threads when there are several workers."""
        args = per_chunk if per_chunk is not None else [None] * len(self.chunks)
        if self.n_workers == 1 or len(self.chunks) == 1:
            return [fn(c, a) for c, a in zip(self.chunks, args, strict=True)]
        from joblib import Parallel, delayed

        return Parallel(n_jobs=self.n_workers, prefer="threads")(
            delayed(fn)(c, a) for c, a in zip(self.chunks, args, strict=True)
        )

    def _sum(self, fn: Callable, per_chunk: Sequence, shape: tuple[int, int]) -> np.ndarray:
        """The sum over chunks of ``fn(chunk, arg)``, arrays of ``shape``."""
        total = np.zeros(shape)
        for part in self.map(fn, per_chunk):
            total += part
        return total

    def blocks(self, X: np.ndarray, chunk: Chunk, out_rows: int = 0) -> Iterator[np.ndarray]:
        """Row blocks of X as (features x rows), cast the way the model casts its input."""
        step = chunk.block_rows(out_rows)
        dtype = self.ensemble.input_dtype
        for start in range(0, len(X), step):
            yield np.ascontiguousarray(X[start : start + step].T.astype(dtype))

    def by_block(self, X, chunk, method, arg, out_rows: int) -> np.ndarray:
        out = np.empty((out_rows, len(X)))
        start = 0
        for XT in self.blocks(X, chunk, out_rows):
            out[:, start : start + XT.shape[1]] = method(XT, arg)
            start += XT.shape[1]
        return out
