"""Input checks of the DCP functions in :mod:`trustlab.fairness.dcp` (shapes, names, orders,
starting points, sample weights, labels): each error names the public argument."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from trustlab._checks import (
    as_1d,
    as_float_array,
    check_probability_vector,
    check_row_stochastic,
    is_missing,
)
from trustlab._labels import sorted_unique
from trustlab.errors import InputError
from trustlab.fairness._greedy import label_orders


def frozen(array: np.ndarray) -> np.ndarray:
    """A read-only float copy, for a result's fields."""
    array = np.array(array, dtype=np.float64)
    array.setflags(write=False)
    return array


def rows_sum_to_one(rows: np.ndarray) -> np.ndarray:
    """Rows renormalised, so validated rows (summing to 1 within 1e-6) sum to 1 exactly."""
    return rows / rows.sum(axis=1, keepdims=True)


def python_names(names) -> tuple:
    """Label or group names as Python values (numpy scalars turned into int, str ...)."""
    values = names.tolist() if hasattr(names, "tolist") else names
    return tuple(n.item() if isinstance(n, np.generic) else n for n in values)


def check_sizes(n_groups: int, n_labels: int, group_arg: str, label_arg: str) -> None:
    if n_groups < 2:
        raise InputError(
            f"{group_arg}: expected at least 2 groups (DCP compares groups), got {n_groups}",
            argument=group_arg,
        )
    if n_labels < 2:
        raise InputError(
            f"{label_arg}: expected at least 2 labels, got {n_labels}", argument=label_arg
        )


def given_names(names: Any, name: str) -> Any:
    """Names given in their order (``labels=``, ``groups=``), checked to be a sequence: a set
    has no order to pair names with positions, and a number or a 0-d array is no sequence (a
    string, np.str_ too, is read as its characters). A sequence or array is returned as given,
    its dtype kept (uint64 ids beyond 2**63 would become floats through Python ints, datetime64
    names integers); an iterator is read once into a list."""
    if isinstance(names, str):
        return names
    if isinstance(names, (set, frozenset)) or not hasattr(names, "__iter__"):
        raise InputError.bad(name, "a sequence of names in order (a list, tuple or array)", names)
    if getattr(names, "ndim", 1) == 0:  # np.array("ab"): tolist() would give the string
        raise InputError.bad(name, "a sequence of names in order (a list, tuple or array)", names)
    return names if hasattr(names, "__len__") and hasattr(names, "__getitem__") else list(names)


def name_sequence(names: Any, name: str) -> tuple:
    """:func:`given_names` as a tuple of Python values."""
    return python_names(given_names(names, name))


def check_no_missing(names: tuple, name: str) -> None:
    """A missing name (None, NaN) names no class or group."""
    missing = [i for i, v in enumerate(names) if is_missing(v)]
    if missing:
        raise InputError(
            f"{name}: expected no missing names, got {names[missing[0]]!r} at index {missing[0]}",
            argument=name,
        )


def check_names(names: Sequence[Any] | None, size: int, name: str) -> tuple:
    if names is None:
        return tuple(range(size))
    names = name_sequence(names, name)
    check_no_missing(names, name)
    if len(names) != size:
        raise InputError.bad(name, f"{size} names", list(names))
    try:
        distinct = len(set(names))
    except TypeError:  # a list or dict among the names
        raise InputError.bad(
            name, "hashable names (numbers, strings, tuples)", list(names)
        ) from None
    if distinct != size:
        raise InputError.bad(name, "distinct names", list(names))
    # the summary, tables and plots show names as text: 1 and "1" would be one bar, one row
    seen: dict[str, Any] = {}
    for value in names:
        first = seen.setdefault(str(value), value)
        if first is not value:
            raise InputError(
                f"{name}: expected names that stay distinct as text, got {first!r} and "
                f"{value!r}, which both read as {str(value)!r}",
                argument=name,
            )
    return names


def check_common(group_weights, label_dist) -> tuple[np.ndarray, np.ndarray]:
    """w (G,) summing to 1 and pi (G, K) with rows summing to 1, consistent in G."""
    weights = check_probability_vector(group_weights, "group_weights")
    dist = check_row_stochastic(label_dist, "label_dist")
    if dist.ndim != 2 or dist.shape[0] != weights.size:
        raise InputError.bad(
            "label_dist", f"shape ({weights.size}, K) to match group_weights", dist
        )
    check_sizes(weights.size, dist.shape[1], "group_weights", "label_dist")
    return weights, rows_sum_to_one(dist)


def check_orders(permutations, n_labels: int) -> np.ndarray:
    """Injected greedy orders: shape (T, K, K-1), row [t, y] a permutation of the labels != y."""
    try:
        orders = np.asarray(permutations)
    except (TypeError, ValueError):
        raise InputError.bad("permutations", "an integer array", permutations) from None
    if orders.ndim != 3 or orders.shape[1:] != (n_labels, n_labels - 1) or orders.shape[0] < 1:
        raise InputError.bad(
            "permutations", f"shape (attempts, {n_labels}, {n_labels - 1})", orders
        )
    if orders.dtype.kind not in "iu":
        raise InputError.bad("permutations", "an integer array", orders)
    if not (np.sort(orders, axis=2) == label_orders(n_labels)).all():
        raise InputError(
            "permutations: expected row [t, y] to list every label index except y exactly once",
            argument="permutations",
        )
    return orders.astype(np.intp)


def check_init(init, n_groups: int, n_labels: int) -> tuple[np.ndarray, np.ndarray]:
    if not isinstance(init, (tuple, list)) or len(init) != 2:
        raise InputError.bad("init", "a pair (baseline (K, K), confusions (G, K, K))", init)
    baseline = check_row_stochastic(init[0], "init[0]")
    confusions = check_row_stochastic(init[1], "init[1]")
    if baseline.shape != (n_labels, n_labels):
        raise InputError.bad("init[0]", f"shape ({n_labels}, {n_labels})", baseline)
    if confusions.shape != (n_groups, n_labels, n_labels):
        raise InputError.bad("init[1]", f"shape ({n_groups}, {n_labels}, {n_labels})", confusions)
    return baseline, confusions


def records(values, name: str) -> np.ndarray:
    """One column of records (labels, predictions or groups) as a 1-D array, missing values
    refused. A plain list mixing text and NaN would become strings, NaN the name 'nan': such a
    list is checked as Python objects first."""
    array = as_1d(values, name)
    if array.dtype.kind in "US" and not hasattr(values, "dtype"):
        as_1d(np.asarray(values, dtype=object), name)
    return array


def check_sample_weight(sample_weight, n: int) -> np.ndarray:
    if sample_weight is None:
        return np.ones(n)
    weights = as_float_array(sample_weight, "sample_weight", ndim=1)
    if weights.size != n:
        raise InputError.bad("sample_weight", f"{n} weights, one per record", weights)
    if (weights < 0).any():
        first = int(np.flatnonzero(weights < 0)[0])
        raise InputError(
            f"sample_weight: expected non-negative weights, got {weights[first]:g} at index "
            f"{first} ({int((weights < 0).sum())} negative value(s) in all)",
            argument="sample_weight",
        )
    with np.errstate(over="ignore"):  # an overflowing total is refused below
        total = weights.sum()
    if total <= 0:
        raise InputError.bad("sample_weight", "a positive total weight", float(total))
    if not np.isfinite(total):  # every share would be inf/inf: NaN group weights, a DCP of 0
        raise InputError(
            f"sample_weight: expected weights whose total is a finite float64, got a total that "
            f"overflows (largest weight {weights.max():g}); divide the weights by a constant",
            argument="sample_weight",
        )
    return weights


def check_weighted_groups(group_totals: np.ndarray, groups: tuple) -> None:
    """At least two groups weigh more than 0: with one, the DCP is 0 by construction."""
    heavy = np.flatnonzero(group_totals > 0)
    if heavy.size < 2:
        zero = ", ".join(repr(groups[i]) for i in np.flatnonzero(group_totals <= 0)[:5])
        raise InputError(
            f"sample_weight: expected a positive weight in at least 2 groups (DCP compares "
            f"groups), got one: only group {groups[heavy[0]]!r} weighs more than 0 "
            f"(every record of {zero}{' ...' if (group_totals <= 0).sum() > 5 else ''} "
            "has weight 0)",
            argument="sample_weight",
        )


def check_labels(values: np.ndarray, labels: Sequence[Any] | None, name: str) -> np.ndarray:
    """The label set: given ``labels`` (checked to cover ``values``) or the sorted unique values."""
    if labels is None:
        return sorted_unique(values, name)
    labels_arr = label_array(list(labels))
    if labels_arr.ndim != 1:  # e.g. [[0], [1]]: numpy's searchsorted failed with "object too deep"
        raise InputError.bad("labels", "a flat sequence of label values", list(labels))
    if len(sorted_unique(labels_arr, "labels")) != len(labels_arr):  # [0, None]: no order
        raise InputError.bad("labels", "distinct values", list(labels))
    check_no_missing(python_names(labels_arr), "labels")
    unknown = np.setdiff1d(sorted_unique(values, name), labels_arr)
    if unknown.size:
        shown = ", ".join(repr(v) for v in unknown[:5].tolist())
        raise InputError(
            f"{name}: expected values among labels={labels_arr.tolist()!r}, got unknown "
            f"value(s) {shown}",
            argument=name,
        )
    return labels_arr


def label_array(labels: list) -> np.ndarray:
    """Given labels as an array; integers beyond int64 (the ids of a uint64 column, as the CLI's
    --labels reads them) are uint64, not the float64 numpy makes of them (2**64 - 1 became
    1.8446744073709552e+19, and 2**64 - 2 the same number)."""
    array = np.asarray(labels)
    integers = all(
        isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)) for v in labels
    )
    if array.dtype.kind == "f" and integers and all(v >= 0 for v in labels):
        try:
            return np.asarray(labels, dtype=np.uint64)
        except OverflowError:  # beyond 2**64: no integer array holds it
            pass
    return array


def union_of_labels(y_true: np.ndarray, y_pred: np.ndarray) -> np.ndarray:
    """The sorted union of the true and predicted labels; labels of different types (numbers
    and text: concatenating would turn 0 into "0") name y_pred, the one not like y_true."""
    true_names, pred_names = sorted_unique(y_true, "y_true"), sorted_unique(y_pred, "y_pred")
    true_kind, pred_kind = label_kind(true_names), label_kind(pred_names)
    if true_kind != pred_kind:
        raise InputError(
            f"y_pred: expected predicted labels of the same type as the true labels ({true_kind}, "
            f"dtype {y_true.dtype}), got {pred_kind} (dtype {y_pred.dtype}, e.g. "
            f"{python_names(pred_names[:1])[0]!r})",
            argument="y_pred",
        )
    return sorted_unique(np.concatenate([true_names, pred_names]), "y_true")


def label_kind(names: np.ndarray) -> str:
    """The kind of distinct labels (one comparable type): numbers, text or other values."""
    if names.dtype.kind in "biuf":
        return "numbers"
    if names.dtype.kind in "US":
        return "text"
    kinds = {
        "numbers" if isinstance(v, (int, float, np.number, np.bool_))
        else "text" if isinstance(v, (str, bytes, np.str_, np.bytes_))
        else "other values"
        for v in names.tolist()
    }  # fmt: skip
    return kinds.pop() if len(kinds) == 1 else "mixed values"


def index_of(values: np.ndarray, names: np.ndarray, name: str) -> np.ndarray:
    """Position of every value in ``names`` (which need not be sorted)."""
    names = np.asarray(names)
    try:
        order = np.argsort(names, kind="stable")
        where = np.searchsorted(names, values, sorter=order)
    except TypeError:
        raise InputError.bad(name, "values of the same type as the labels", values) from None
    index = order[np.minimum(where, names.size - 1)]
    if not (names[index] == values).all():  # e.g. numbers among string labels
        raise InputError.bad(name, f"values among {names.tolist()!r}", values)
    return index
