"""Shared validation helpers: each error names the argument, the expectation and what came."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trustlab import _checks as c
from trustlab.errors import ConfigError, InputError, describe
from trustlab.fairness._inputs import check_labels


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


def test_float_array_allow_nan_still_refuses_infinity():
    assert np.isnan(c.as_float_array([np.nan, 1.0], "x", allow_nan=True)[0])
    with pytest.raises(InputError, match=r"x: expected finite values, got -?inf at index \(1,\)"):
        c.as_float_array([np.nan, -np.inf], "x", allow_nan=True)


def test_float_array_shape_message():
    with pytest.raises(InputError, match=r"x: expected shape \(any, 3\), got an array of shape"):
        c.as_float_array(np.zeros((2, 2)), "x", shape=(None, 3))


def test_as_1d_accepts_pandas_and_rejects_missing():
    np.testing.assert_array_equal(c.as_1d(pd.Series([1, 2]), "y"), [1, 2])
    with pytest.raises(InputError, match="y: expected no missing values"):
        c.as_1d(np.array(["a", None], dtype=object), "y")


def test_float_array_refuses_complex_values():
    """numpy casts complex arrays to float by dropping the imaginary parts, with a warning only."""
    for value in (np.array([[1 + 1j, 0], [0, 2]]), pd.Series([1j, 2.0]), pd.DataFrame({"a": [1j]})):
        with pytest.raises(InputError, match="x: expected real numbers"):
            c.as_float_array(value, "x")
    np.testing.assert_array_equal(c.as_float_array(np.array([1 + 0j]).real, "x"), [1.0])


def test_pandas_missing_values_are_nan_and_dates_are_refused():
    """pd.NA of a nullable boolean column or an object column is NaN, as scikit-learn reads it
    (it was refused as "numeric array-like"); dates and durations are refused by name in every
    container (a Series or datetime64 array was read as nanoseconds since 1970)."""
    frame = pd.DataFrame({"a": [1, 2], "b": pd.array([True, None], dtype="boolean")})
    got = c.as_float_array(frame, "X", allow_nan=True)
    assert np.array_equal(got, [[1.0, 1.0], [2.0, np.nan]], equal_nan=True)
    got = c.as_float_array(np.array([0.5, pd.NA], dtype=object), "X", allow_nan=True)
    assert np.array_equal(got, [0.5, np.nan], equal_nan=True)
    with pytest.raises(InputError, match="X: expected finite values, got nan"):
        c.as_float_array(frame, "X")  # missing values where none may be: named as NaN
    dates = pd.to_datetime(["2020-01-01", "2021-06-30"])
    for value in (pd.Series(dates), dates.to_numpy(), pd.DataFrame({"d": dates, "x": [1, 2]}),
                  pd.Series(pd.to_timedelta([1, 2], unit="s"))):  # fmt: skip
        with pytest.raises(InputError, match="X: expected numbers, not dates or durations"):
            c.as_float_array(value, "X", allow_nan=True)
    with pytest.raises(InputError, match="X: expected numeric array-like"):
        c.as_float_array(np.array(["1", "x", None], dtype=object), "X", allow_nan=True)


def test_as_1d_refuses_a_list_whose_labels_merge_as_text():
    with pytest.raises(
        InputError, match=r"y: expected labels that stay distinct as text, got 1 and '1'"
    ):
        c.as_1d([1, "1", 2], "y")
    for missing in (np.nan, None):  # a list of text made NaN the label "nan"
        with pytest.raises(InputError, match="y: expected no missing values, got .* at index 1"):
            c.as_1d(["h", missing, "h"], "y")
    np.testing.assert_array_equal(c.as_1d([1, "a"], "y"), ["1", "a"])  # no two labels merge
    np.testing.assert_array_equal(c.as_1d(["1", "1"], "y"), ["1", "1"])


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
        check_labels(np.array(["a", "z"]), ["a", "b"], "y_true")
    np.testing.assert_array_equal(check_labels(np.array([2, 1, 2]), None, "y"), [1, 2])


def test_scalar_checks():
    assert c.check_positive_int(3, "n") == 3
    with pytest.raises(InputError, match="n: expected an integer >= 1, got 0"):
        c.check_positive_int(0, "n")
    with pytest.raises(InputError, match=r"beta: expected a number in \[0, 1\]"):
        c.check_in_range(1.5, "beta", 0, 1)
    with pytest.raises(InputError, match=r"epsilon: expected a number in \(0, inf\]"):
        c.check_in_range(0, "epsilon", 0, float("inf"), low_open=True)
    # float() reads True as 1.0 and "0.5" as 0.5; neither is a number here
    for value in (True, np.bool_(False), "0.5", b"1"):
        with pytest.raises(InputError, match="beta: expected a number, got"):
            c.check_in_range(value, "beta", 0, 1)
        with pytest.raises(InputError, match="beta: expected a number, got"):
            c.check_probability(value, "beta", open_ends=False)
    assert c.check_in_range(np.float32(0.5), "beta", 0, 1) == 0.5
    assert c.check_in_range(np.array(1), "beta", 0, 1) == 1.0
    with pytest.raises(InputError, match="score: expected one of 'nll', 'entropy'"):
        c.check_choice("x", "score", ["nll", "entropy"])


def test_describe_gives_a_path_as_its_text():
    # an error about a path said "got PosixPath PosixPath('d1')"
    from pathlib import Path

    assert describe(Path("d1") / "model") == repr(str(Path("d1") / "model"))


def test_describe_is_short():
    assert describe(np.zeros((2, 3))) == "an array of shape (2, 3) and dtype float64"
    assert len(describe(list(range(1000)))) <= 80


def test_describe_is_one_line_for_a_multi_line_repr():
    # an xgboost model's repr spans lines, so the CLI's one-line error took two
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    class Wide:
        def __repr__(self):
            return "Wide(a=1,\n     b=2)"

    assert describe(Wide()) == "Wide Wide(a=1, b=2)"
    text = describe(make_pipeline(StandardScaler(), StandardScaler()))
    assert "\n" not in text and text.startswith("Pipeline Pipeline(steps=[")
    # the line breaks inside a string value stay escaped, its spaces kept
    assert describe({"a": "x  y\nz"}) == "dict {'a': 'x  y\\nz'}"


def test_a_numpy_scalar_is_described_by_its_value():
    # check_positive_int(np.int64(0), "k") said "got an array of shape () and dtype int64"
    assert describe(np.int64(0)) == "0"
    assert describe(np.float64(2.5)) == "2.5"
    assert describe(np.str_("a")) == "'a'"
    with pytest.raises(InputError, match=r"^k: expected an integer >= 1, got 0$"):
        c.check_positive_int(np.int64(0), "k")
    with pytest.raises(InputError, match=r"^p: expected a number in \[0, 1\], got 2.0$"):
        c.check_in_range(np.float64(2.0), "p", 0, 1)


def test_missing_extra_names_the_extra():
    err = ConfigError.missing_extra("torch", "llm")
    assert "pip install 'trustlab[llm]'" in str(err)


@pytest.mark.parametrize(
    ("check", "good", "bad"),
    [
        (c.check_positive, [1e-300, 2, 3.5], [0, -1, float("inf"), float("nan"), "x", None]),
        (c.check_non_negative, [0, 2.5], [-1e-9, float("inf"), float("nan")]),
        (c.check_probability, [0.5, 1e-9], [0, 1, 1.5]),
    ],
)
def test_number_checks_accept_and_name_what_they_refuse(check, good, bad):
    for value in good:
        assert check(value, "alpha") == float(value)
    for value in bad:
        with pytest.raises(InputError, match="^alpha: expected"):
            check(value, "alpha")


def test_probability_with_closed_ends_accepts_zero_and_one():
    assert c.check_probability(0, "p", open_ends=False) == 0.0
    assert c.check_probability(1, "p", open_ends=False) == 1.0


@given(st.integers(-64, 64).filter(lambda n: n != 0))
def test_n_jobs_follows_joblibs_rule(n_jobs):
    from joblib import effective_n_jobs

    assert c.check_n_jobs(n_jobs) == effective_n_jobs(n_jobs)


@pytest.mark.parametrize("bad", [0, 1.5, "2", True])
def test_n_jobs_refuses_zero_and_non_integers(bad):
    with pytest.raises(InputError, match="n_jobs: expected None or a non-zero integer"):
        c.check_n_jobs(bad)
    assert c.check_n_jobs(None) == 1


def test_bool_string_and_callable_checks():
    assert c.check_bool(np.bool_(True), "flag") is True
    with pytest.raises(InputError, match="flag: expected True or False, got 1"):
        c.check_bool(1, "flag")
    assert c.check_string("a", "name") == "a"
    assert c.check_string(None, "name", allow_none=True) is None
    with pytest.raises(InputError, match="name: expected a non-empty string, got ' '"):
        c.check_string(" ", "name")
    assert c.check_callable(len, "fn") is len
    with pytest.raises(InputError, match="fn: expected a callable"):
        c.check_callable(3, "fn")


def test_existing_file(tmp_path):
    path = tmp_path / "a.txt"
    path.write_text("x")
    assert c.check_existing_file(str(path), "--data") == path
    with pytest.raises(InputError, match="--data: expected an existing file"):
        c.check_existing_file(tmp_path / "missing.txt", "--data")
    with pytest.raises(InputError, match="--data: expected a file path"):
        c.check_existing_file(3, "--data")


def test_class_indices():
    np.testing.assert_array_equal(c.check_class_indices([0.0, 2.0, 1.0], "y"), [0, 2, 1])
    assert c.check_class_indices(np.array([1, 0], dtype=np.uint8), "y").dtype == np.int64
    for bad in ([0.5, 1.0], ["a", "b"]):
        with pytest.raises(InputError, match="y: expected integer class indices"):
            c.check_class_indices(bad, "y")
    # a negative index is named, with the classes when their number is known (it said 'got an
    # array of shape (2,) and dtype int64', K unfilled)
    with pytest.raises(InputError, match=r"y: expected class indices 0\.\.K-1, got 'index -1'"):
        c.check_class_indices([0, -1], "y")
    with pytest.raises(InputError, match=r"y: expected class indices 0\.\.2, got 'index -2'"):
        c.check_class_indices([0, -2, -1], "y", num_classes=3)
    with pytest.raises(InputError, match="y: expected class indices 0..2, got 'index 3'"):
        c.check_class_indices([0, 3], "y", num_classes=3)


def test_require_names_the_extra_to_install():
    from trustlab._lazy import require

    assert require("json", "dev").dumps([1]) == "[1]"
    with pytest.raises(ConfigError, match=r"pip install 'trustlab\[llm\]'"):
        require("no_such_module_for_trustlab.sub", "llm")


def test_require_names_the_package_that_is_missing_or_that_fails_to_import(tmp_path, monkeypatch):
    """A module whose own import failed was reported as the package to install: a dependency
    it lacks is the one named, and a package that is there but fails to import says so."""
    from trustlab._lazy import require

    for name, body in [
        ("needs_dep_for_trustlab", "import no_such_dependency_for_trustlab\n"),
        ("broken_for_trustlab", "from json import no_such_name_for_trustlab\n"),
    ]:
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text(body)
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ConfigError) as err:
        require("needs_dep_for_trustlab", "llm")
    assert str(err.value).startswith(
        "this feature needs the optional package 'no_such_dependency_for_trustlab'; install it "
        "with: pip install 'trustlab[llm]'"
    )
    with pytest.raises(ConfigError) as err:
        require("broken_for_trustlab", "llm")
    assert str(err.value).startswith(
        "the optional package 'broken_for_trustlab' could not be imported (cannot import name "
        "'no_such_name_for_trustlab' from 'json'"
    )
    assert "trustlab[llm]" in str(err.value)


def test_lazy_names_import_on_first_use_only():
    from trustlab._lazy import lazy_names

    getattr_, all_, dir_ = lazy_names(
        "json", {".decoder": ["JSONDecodeError"], "os.path": ["join"]}
    )
    assert all_ == ["JSONDecodeError", "join"] and dir_() == ["JSONDecodeError", "join"]
    from json.decoder import JSONDecodeError
    from os.path import join

    assert getattr_("JSONDecodeError") is JSONDecodeError and getattr_("join") is join
    with pytest.raises(AttributeError, match="module 'json' has no attribute 'nope'"):
        getattr_("nope")


def test_check_finite_rows_names_the_first_value_by_row_and_column():
    from trustlab._checks import check_finite_rows

    X = np.zeros((3, 2))
    X[1, 1], X[2, 0] = -np.inf, np.nan
    with pytest.raises(
        InputError, match=r"^X: expected finite values, got -inf at row 1, column 1 \(2 "
    ):
        check_finite_rows(X, "X")
    check_finite_rows(np.ones((2, 2)), "X")
