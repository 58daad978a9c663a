"""Shared validation helpers: each error names the argument, the expectation and what came."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trustlab import _checks as c
from trustlab.errors import ConfigError, InputError, describe


def test_random_state_same_seed_same_stream():
    a = c.check_random_state(7).random(5)
    b = c.check_random_state(7).random(5)
    np.testing.assert_array_equal(a, b)
    gen = np.random.default_rng(1)
    assert c.check_random_state(gen) is gen


@pytest.mark.parametrize("bad", [-1, 1.5, "seed", True])
def test_random_state_rejects_bad_values(bad):
    with pytest.raises(InputError, match="random_state: expected"):
        c.check_random_state(bad)


def test_float_array_reports_nan_position():
    with pytest.raises(InputError, match=r"x: expected finite values, got nan at index \(1, 0\)"):
        c.as_float_array([[1.0], [np.nan]], "x")


def test_float_array_shape_message():
    with pytest.raises(InputError, match=r"x: expected shape \(any, 3\), got an array of shape"):
        c.as_float_array(np.zeros((2, 2)), "x", shape=(None, 3))


def test_as_1d_accepts_pandas_and_rejects_missing():
    np.testing.assert_array_equal(c.as_1d(pd.Series([1, 2]), "y"), [1, 2])
    with pytest.raises(InputError, match="y: expected no missing values"):
        c.as_1d(np.array(["a", None], dtype=object), "y")


def test_same_length_names_each_array():
    with pytest.raises(InputError, match="y_true has 3, y_pred has 2"):
        c.check_same_length(y_true=[1, 2, 3], y_pred=[1, 2])


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(0.01, 10), min_size=2, max_size=8))
def test_normalised_vectors_pass_and_perturbed_fail(values):
    v = np.array(values) / np.sum(values)
    np.testing.assert_array_equal(c.check_probability_vector(v, "w"), v)
    with pytest.raises(InputError, match="w: expected entries summing to 1"):
        c.check_probability_vector(v * 1.01, "w")


def test_row_stochastic_names_the_row():
    a = np.full((2, 3, 3), 1 / 3)
    a[1, 2] = [0.5, 0.5, 0.5]
    with pytest.raises(
        InputError, match=r"alpha: expected rows summing to 1, got a row at index \(1, 2\)"
    ):
        c.check_row_stochastic(a, "alpha")
    a[1, 2] = [1.5, -0.5, 0.0]
    with pytest.raises(InputError, match="alpha: expected non-negative entries"):
        c.check_row_stochastic(a, "alpha")


def test_labels_unknown_values():
    with pytest.raises(InputError, match="y_true: expected values among labels"):
        c.check_labels(np.array(["a", "z"]), ["a", "b"], "y_true")
    np.testing.assert_array_equal(c.check_labels(np.array([2, 1, 2]), None, "y"), [1, 2])


def test_scalar_checks():
    assert c.check_positive_int(3, "n") == 3
    with pytest.raises(InputError, match="n: expected an integer >= 1, got 0"):
        c.check_positive_int(0, "n")
    with pytest.raises(InputError, match=r"beta: expected a number in \[0, 1\]"):
        c.check_in_range(1.5, "beta", 0, 1)
    with pytest.raises(InputError, match=r"epsilon: expected a number in \(0, inf\]"):
        c.check_in_range(0, "epsilon", 0, float("inf"), low_open=True)
    with pytest.raises(InputError, match="score: expected one of 'nll', 'entropy'"):
        c.check_choice("x", "score", ["nll", "entropy"])


def test_describe_is_short():
    assert describe(np.zeros((2, 3))) == "an array of shape (2, 3) and dtype float64"
    assert len(describe(list(range(1000)))) <= 80


def test_missing_extra_names_the_extra():
    err = ConfigError.missing_extra("torch", "llm")
    assert "pip install 'trustlab[llm]'" in str(err)
