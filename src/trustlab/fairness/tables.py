"""Aggregate statistics read from a table with one row per group: the input of the aggregate regime.

Published statistics (a census table, an election, a report) rarely come as arrays: this checks a
table in :data:`AGGREGATE_FORMAT` and turns it into the arguments of
:func:`~trustlab.fairness.dcp_from_aggregates`. Every error names the argument ``data`` and says
which column, row or group is wrong.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from trustlab._checks import repeated
from trustlab.errors import InputError

__all__ = ["AGGREGATE_FORMAT", "SHARE_TOLERANCE", "AggregateTable", "aggregates_from_table"]

#: Shares in a row may be rounded (e.g. published percentages); within this they are renormalised.
SHARE_TOLERANCE = 1e-3

AGGREGATE_FORMAT = """\
AGG.csv has one row per group and these columns:

  group        the group's name
  weight       the group's share of the population (the column sums to 1)
  label:NAME   per class NAME: share of the group whose true label is NAME
  pred:NAME    per class NAME: share of the group predicted as NAME

Each row's label: shares sum to 1, and so do its pred: shares; the same
class names appear in both. Sums within 0.001 of 1 are renormalised.
Example with the classes yes and no:

  group,weight,label:yes,label:no,pred:yes,pred:no
  north,0.4,0.30,0.70,0.25,0.75
  south,0.6,0.50,0.50,0.55,0.45
"""


class AggregateTable(NamedTuple):
    """The aggregates of a table, in the order :func:`~trustlab.fairness.dcp_from_aggregates`
    takes them; every share renormalised to sum to exactly 1."""

    groups: list[str]  # the group names, one per row
    group_weights: np.ndarray  # (G,) w_g
    labels: list[str]  # the class names, in the order of the label: columns
    label_dist: np.ndarray  # (G, K) pi_g^y
    pred_dist: np.ndarray  # (G, K) p_g^z


def aggregates_from_table(data: Any) -> AggregateTable:
    """Check an aggregate table (see :data:`AGGREGATE_FORMAT`) and return its aggregates.

    Parameters
    ----------
    data : pandas.DataFrame
        One row per group with the columns ``group``, ``weight``, ``label:NAME`` and
        ``pred:NAME`` for every class NAME (at least 2). Shares summing to within
        :data:`SHARE_TOLERANCE` of 1 are renormalised.

    Returns
    -------
    AggregateTable
        ``(groups, group_weights, labels, label_dist, pred_dist)``.

    Raises
    ------
    InputError
        Naming ``data``, when a column is missing or unexpected, a group name is missing or
        repeats, a share is not a non-negative number (an empty cell is named as such) or the
        shares of a row or of the weight column do not sum to 1.

    Examples
    --------
    >>> import pandas as pd
    >>> table = pd.DataFrame({"group": ["north", "south"], "weight": [0.4, 0.6],
    ...                       "label:yes": [0.3, 0.5], "label:no": [0.7, 0.5],
    ...                       "pred:yes": [0.25, 0.55], "pred:no": [0.75, 0.45]})
    >>> agg = aggregates_from_table(table)
    >>> agg.labels, agg.pred_dist[1].tolist()
    (['yes', 'no'], [0.55, 0.45])
    """
    if not hasattr(data, "columns"):
        raise InputError.bad("data", "a table (pandas DataFrame)", data)
    label_names = _class_names(data)
    groups = _group_names(data["group"])
    if len(groups) < 2:
        raise _bad_table("one row per group, at least 2 groups", f"{len(groups)} row(s)")
    duplicated = repeated(groups)
    if duplicated:
        raise _bad_table("one row per group", f"group {duplicated[0]!r} repeated")
    weights = _numbers(data, "weight", groups)
    label_dist = np.column_stack([_numbers(data, f"label:{n}", groups) for n in label_names])
    pred_dist = np.column_stack([_numbers(data, f"pred:{n}", groups) for n in label_names])
    _check_sums_to_one(weights[None, :], ["all groups"], "weight")
    _check_sums_to_one(label_dist, groups, "label:*")
    _check_sums_to_one(pred_dist, groups, "pred:*")
    return AggregateTable(
        groups,
        weights / weights.sum(),
        label_names,
        label_dist / label_dist.sum(axis=1, keepdims=True),
        pred_dist / pred_dist.sum(axis=1, keepdims=True),
    )


def _class_names(data) -> list[str]:
    """The class names of the label: columns, checked against the pred: columns."""
    columns = [str(c) for c in data.columns]
    repeated = [c for i, c in enumerate(columns) if c in columns[:i]]
    if repeated:
        raise _bad_table("one column per name", f"column {repeated[0]!r} more than once")
    for column in ("group", "weight"):
        if column not in columns:
            raise InputError(
                f"data: expected a column named {column!r}, got columns "
                f"{', '.join(columns[:20])}{', ...' if len(columns) > 20 else ''}",
                argument="data",
            )
    label_names = [c.removeprefix("label:") for c in columns if c.startswith("label:")]
    pred_names = [c.removeprefix("pred:") for c in columns if c.startswith("pred:")]
    unexpected = [c for c in columns if c not in ("group", "weight") and ":" not in c]
    unexpected += [c for c in columns if ":" in c and not c.startswith(("label:", "pred:"))]
    if unexpected:
        raise _bad_table(
            "only group, weight, label:NAME and pred:NAME columns", f"column {unexpected[0]!r}"
        )
    if len(label_names) < 2:
        raise _bad_table(
            "label:NAME columns for at least 2 classes", f"{len(label_names)} label: column(s)"
        )
    for name in label_names:
        if name not in pred_names:
            raise _bad_table(
                f"a column 'pred:{name}' to match 'label:{name}'",
                "none" + _renamed(name, "label", columns),
            )
    for name in pred_names:
        if name not in label_names:
            raise _bad_table(
                f"a column 'label:{name}' to match 'pred:{name}'",
                "none" + _renamed(name, "pred", columns),
            )
    return label_names


def _renamed(name: str, prefix: str, columns: list[str]) -> str:
    """A hint when ``prefix:name`` looks like pandas' name for a repeated column of a CSV file
    ('label:yes.1' for a second 'label:yes'), which would otherwise read as a class 'yes.1'."""
    stem, dot, number = name.rpartition(".")
    if dot and number.isdigit() and f"{prefix}:{stem}" in columns:
        return (
            f" ('{prefix}:{name}' may be a repeated '{prefix}:{stem}' column, renamed on reading)"
        )
    return ""


def _group_names(column) -> list[str]:
    """The group names as text; an empty cell (read as NaN) is refused, not named 'nan'."""
    import pandas as pd

    missing = pd.isna(column).to_numpy()
    if missing.any():
        row = int(np.argmax(missing)) + 1
        raise _bad_table("a name in column 'group' in every row", f"an empty cell in row {row}")
    return [str(g) for g in column.tolist()]


def _bad_table(expected: str, got: str) -> InputError:
    return InputError(f"data: expected {expected}, got {got}", argument="data")


def _numbers(data, column: str, groups: list[str]) -> np.ndarray:
    import pandas as pd

    values = pd.to_numeric(data[column], errors="coerce").to_numpy(dtype=float)
    for i, value in enumerate(values):
        cell = data[column].iloc[i]
        # pandas reads True/False as 1/0: a share of True is no number (a weight True, False
        # gave one group all the weight and a DCP of 0)
        if not math.isfinite(value) or value < 0 or isinstance(cell, (bool, np.bool_)):
            shown = cell.item() if isinstance(cell, np.generic) else cell  # -0.4, not np.float64
            got = "an empty cell" if pd.isna(cell) else repr(shown)
            raise _bad_table(
                f"non-negative numbers in column {column!r}",
                f"{got} in the row of group {groups[i]!r}",
            )
    return np.asarray(values)


def _check_sums_to_one(shares: np.ndarray, rows: list[str], columns: str) -> None:
    for row, total in zip(rows, shares.sum(axis=1), strict=True):
        if abs(total - 1.0) > SHARE_TOLERANCE:
            where = "the weight column" if row == "all groups" else f"the row of group {row!r}"
            raise _bad_table(f"{columns} shares summing to 1 in {where}", f"sum {total:.6g}")
