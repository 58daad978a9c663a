"""One stratified train/test split of labelled items, shared by the datasets that hold their own
items (graphs, images) rather than a table."""

from __future__ import annotations

from typing import Any

import numpy as np

from trustlab._checks import check_random_state
from trustlab.errors import InputError

__all__ = ["split_indices"]


def split_indices(
    labels: np.ndarray,
    n_classes: int,
    test_size: Any,
    *,
    stratify: bool = True,
    random_state: Any = None,
    items: str = "items",
) -> tuple[np.ndarray, np.ndarray]:
    """``(train, test)`` positions: ``test_size`` of the items (of each class, when stratified)
    go to the test part, drawn with ``random_state``; both parts come shuffled.

    Examples
    --------
    >>> train, test = split_indices(np.array([0, 0, 1, 1]), 2, 0.5, random_state=0)
    >>> sorted(np.concatenate([train, test]).tolist())
    [0, 1, 2, 3]
    """
    if isinstance(test_size, bool) or not isinstance(test_size, (int, float, np.floating)):
        raise InputError.bad("test_size", "a number in (0, 1)", test_size)
    if not 0.0 < float(test_size) < 1.0:
        raise InputError.bad("test_size", "a number in (0, 1)", test_size)
    if not isinstance(stratify, bool):
        raise InputError.bad("stratify", "True or False", stratify)
    rng = check_random_state(random_state)
    if len(labels) < 2:
        raise InputError.bad("dataset", f"at least 2 {items} to split", len(labels))
    groups = (
        [np.flatnonzero(labels == c) for c in range(n_classes)]
        if stratify
        else [np.arange(len(labels))]
    )
    test: list[int] = []
    train: list[int] = []
    for members in groups:
        members = rng.permutation(members)
        n_test = int(round(float(test_size) * len(members)))
        test += members[:n_test].tolist()
        train += members[n_test:].tolist()
    if not test or not train:
        raise InputError.bad("test_size", f"a fraction leaving {items} in both parts", test_size)
    return rng.permutation(train), rng.permutation(test)
