"""Aggregate tables: ``aggregates_from_table`` recovers the aggregates and names every problem."""

import re

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trustlab.errors import InputError
from trustlab.fairness import aggregates_from_table


def aggregate_frame(weights, label_dist, pred_dist, names=("a", "b", "c")):
    frame = pd.DataFrame({"group": [f"g{i}" for i in range(len(weights))], "weight": weights})
    for k, name in enumerate(names):
        frame[f"label:{name}"] = label_dist[:, k]
    for k, name in enumerate(names):
        frame[f"pred:{name}"] = pred_dist[:, k]
    return frame


AGG = aggregate_frame(
    np.array([0.5, 0.3, 0.2]),
    np.array([[0.2, 0.3, 0.5], [0.6, 0.2, 0.2], [0.3, 0.3, 0.4]]),
    np.array([[0.25, 0.25, 0.5], [0.5, 0.3, 0.2], [0.3, 0.4, 0.3]]),
)


def test_rounded_shares_are_renormalised():
    rounded = AGG.copy()
    rounded["label:a"] += 0.0004  # published percentages rarely sum to exactly 1
    _, weights, names, label_dist, pred_dist = aggregates_from_table(rounded)
    assert names == ["a", "b", "c"]
    np.testing.assert_allclose(label_dist.sum(axis=1), 1.0, atol=1e-15)
    assert label_dist[0, 0] == pytest.approx(0.2004 / 1.0004, abs=1e-15)


@settings(max_examples=25, deadline=None)
@given(st.integers(2, 6), st.integers(2, 5), st.integers(0, 2**32 - 1))
def test_aggregates_from_table_recovers_the_table(n_groups, n_labels, seed):
    rng = np.random.default_rng(seed)
    weights = rng.dirichlet(np.ones(n_groups))
    label_dist = rng.dirichlet(np.ones(n_labels), size=n_groups)
    pred_dist = rng.dirichlet(np.ones(n_labels), size=n_groups)
    names = [f"c{k}" for k in range(n_labels)]
    groups, w, got_names, pi, p = aggregates_from_table(
        aggregate_frame(weights, label_dist, pred_dist, names)
    )
    assert groups == [f"g{i}" for i in range(n_groups)] and got_names == names
    np.testing.assert_allclose(w, weights, atol=1e-12)
    np.testing.assert_allclose(pi, label_dist, atol=1e-12)
    np.testing.assert_allclose(p, pred_dist, atol=1e-12)


def test_aggregates_from_table_needs_two_classes():
    with pytest.raises(InputError, match="at least 2 classes"):
        aggregates_from_table(AGG[["group", "weight", "label:a", "pred:a"]])


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda f: f.drop(columns="group"), "expected a column named 'group', got columns weight,"),
        (lambda f: f.assign(**{"pred:d": 0.0}), "a column 'label:d' to match 'pred:d'"),
        (lambda f: f.assign(**{"label:b": "x"}), "'label:b'.*'x'.*group 'g0'"),
        (lambda f: f.iloc[:1], "at least 2 groups, got 1 row"),
    ],
)
def test_bad_table_names_the_data_argument(change, message):
    with pytest.raises(InputError) as err:
        aggregates_from_table(change(AGG.copy()))
    assert err.value.argument == "data"
    assert str(err.value).startswith("data: expected")
    assert re.search(message, str(err.value)), str(err.value)


def test_a_table_is_required():
    with pytest.raises(InputError, match="^data: expected a table"):
        aggregates_from_table([[0.5, 0.5]])
