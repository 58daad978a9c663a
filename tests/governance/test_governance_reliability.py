"""Krippendorff's alpha (ordinal) and Fleiss' kappa, written in numpy, against the packages."""

from __future__ import annotations

import math
import warnings

import krippendorff
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from statsmodels.stats import inter_rater

from trustlab.errors import InputError
from trustlab.governance import (
    coincidence_matrix,
    fleiss_kappa,
    krippendorff_alpha_ordinal,
    ratings_table,
)

nan = np.nan

# The krippendorff package's own docstring examples (krippendorff.alpha).
KRIPPENDORFF_DOC_A = [
    [nan, nan, nan, nan, nan, 3, 4, 1, 2, 1, 1, 3, 3, nan, 3],
    [1, nan, 2, 1, 3, 3, 4, 3, nan, nan, nan, nan, nan, nan, nan],
    [nan, nan, 2, 1, 3, 4, 4, nan, 2, 1, 1, 3, 3, nan, 4],
]
KRIPPENDORFF_DOC_B = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
    [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan],
]
# statsmodels' own test tables (statsmodels/stats/tests/test_inter_rater.py): the Wikipedia
# example (10 subjects, 5 categories, 14 raters) and the online-calculator tables.
WIKIPEDIA = [
    [0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7],
]  # fmt: skip
CALCULATOR = [[[7, 1], [3, 5]], [[6, 1, 0], [0, 7, 0]], [[6.99, 0.01], [6.99, 0.01]]]


def _package_alpha(data):
    try:
        with warnings.catch_warnings():  # 0/0 where nothing is pairable: NaN, as ours
            warnings.simplefilter("ignore", RuntimeWarning)
            return krippendorff.alpha(reliability_data=data, level_of_measurement="ordinal")
    except ValueError:  # one value only: the package refuses, we return NaN
        return nan


@pytest.mark.parametrize("data", [KRIPPENDORFF_DOC_A, KRIPPENDORFF_DOC_B])
def test_alpha_equals_the_package_on_its_own_examples(data):
    ours = krippendorff_alpha_ordinal(data)
    assert ours == pytest.approx(_package_alpha(data), abs=1e-12, rel=0)
    if data is KRIPPENDORFF_DOC_B:
        assert round(ours, 3) == 0.815  # the value the package documents


@pytest.mark.parametrize("table", [WIKIPEDIA, *CALCULATOR])
def test_kappa_equals_statsmodels_on_its_own_examples(table):
    assert fleiss_kappa(table) == pytest.approx(
        inter_rater.fleiss_kappa(np.asarray(table, float)), abs=1e-12, rel=0
    )
    if table is WIKIPEDIA:
        assert round(fleiss_kappa(table), 3) == 0.210  # the published value


def test_coincidence_matrix_by_hand():
    # unit 1: (1, 1) adds 2 to o[1,1]; unit 2: (2, 2) adds 2 to o[2,2]; unit 3: (1, 2, 2) adds
    # 1/2 per ordered pair: o[1,2] = o[2,1] = 2 * 1/2, o[2,2] = 2 * 1/2
    values, o = coincidence_matrix([[1, 2, 1], [1, 2, 2], [nan, nan, 2]])
    assert values.tolist() == [1.0, 2.0]
    assert o.tolist() == [[2.0, 1.0], [1.0, 3.0]]


@st.composite
def reliability(draw, missing: bool):
    raters = draw(st.integers(2, 5))
    units = draw(st.integers(2, 12))
    values = draw(st.lists(st.integers(1, 8), min_size=raters * units, max_size=raters * units))
    data = np.asarray(values, float).reshape(raters, units)
    if missing:
        mask = draw(st.lists(st.booleans(), min_size=raters * units, max_size=raters * units))
        data[np.asarray(mask).reshape(raters, units)] = nan
    return data


@settings(max_examples=80, deadline=None)
@given(data=reliability(missing=True))
def test_alpha_equals_the_package_on_random_matrices_with_missing_values(data):
    ours, theirs = krippendorff_alpha_ordinal(data), _package_alpha(data)
    pairable = (np.sum(~np.isnan(data), axis=0) >= 2).any()
    if not pairable or math.isnan(ours):
        # undefined: nothing pairable, or one value only (no expected disagreement)
        values = np.unique(data[:, np.sum(~np.isnan(data), axis=0) >= 2])
        assert not pairable or len(values[~np.isnan(values)]) <= 1
        return
    assert ours == pytest.approx(theirs, abs=1e-12, rel=0)


@settings(max_examples=80, deadline=None)
@given(data=reliability(missing=False))
def test_kappa_and_table_equal_statsmodels_on_random_matrices(data):
    table = ratings_table(data, categories=range(1, 9))
    theirs_table, cats = inter_rater.aggregate_raters(data.T.astype(int), n_cat=None)
    # statsmodels' table has a column per value present; ours one per category 1..8
    assert np.array_equal(table[:, (cats - 1).astype(int)], theirs_table)
    assert table.sum(axis=1).tolist() == [data.shape[0]] * data.shape[1]
    p_e = ((table.sum(axis=0) / table.sum()) ** 2).sum()
    ours = fleiss_kappa(table)
    if np.isclose(p_e, 1.0):
        assert math.isnan(ours)
        return
    assert ours == pytest.approx(inter_rater.fleiss_kappa(table), abs=1e-12, rel=0)


def test_perfect_agreement_and_undefined_cases():
    assert krippendorff_alpha_ordinal([[1, 2, 3], [1, 2, 3]]) == 1.0
    assert math.isnan(krippendorff_alpha_ordinal([[4, 4], [4, 4]]))
    assert math.isnan(krippendorff_alpha_ordinal([[1, nan], [nan, 2]]))  # nothing pairable
    assert fleiss_kappa([[2, 0], [0, 2]]) == 1.0
    assert math.isnan(fleiss_kappa(np.zeros((0, 3))))
    # ratings_table drops units with a missing rating
    assert ratings_table([[1, 2, 3], [1, nan, 3]], categories=[1, 2, 3]).tolist() == [
        [2, 0, 0], [0, 0, 2]
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("call", "argument"),
    [
        (lambda: krippendorff_alpha_ordinal([1, 2, 3]), "data"),
        (lambda: krippendorff_alpha_ordinal([[1, 2]]), "data"),
        (lambda: krippendorff_alpha_ordinal([["a", "b"], ["c", "d"]]), "data"),
        (lambda: fleiss_kappa([[1, 2], [3]]), "table"),
        (lambda: fleiss_kappa([[-1, 3], [1, 1]]), "table"),
        (lambda: fleiss_kappa([[1, 2], [1, 1]]), "table"),  # raters differ between rows
        (lambda: ratings_table([[1, 9], [1, 2]], categories=[1, 2]), "categories"),
    ],
)
def test_bad_input_names_the_argument(call, argument):
    with pytest.raises(InputError, match=f"^{argument}"):
        call()
