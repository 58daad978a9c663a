"""Paired comparisons (McNemar, Wilson intervals) against statsmodels and pandas (the oracles)."""

from __future__ import annotations

import json
import math

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from matplotlib.figure import Figure
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.proportion import proportion_confint

from trustlab.errors import InputError
from trustlab.evaluation.statistics import (
    PairedComparison,
    mcnemar_test,
    paired_comparison,
    wilson_interval,
)

SPEC_TABLE = [[30, 5], [15, 50]]


def outcomes(table, seed=0):
    """Paired boolean vectors with the 2x2 ``table`` ([[both, first only], [second only,
    neither]]), in shuffled order."""
    (both, only_first), (only_second, neither) = table
    first = [True] * both + [True] * only_first + [False] * only_second + [False] * neither
    second = [True] * both + [False] * only_first + [True] * only_second + [False] * neither
    order = np.random.default_rng(seed).permutation(len(first))
    return np.array(first)[order], np.array(second)[order]


# ---- the spec's fixture (C2) -------------------------------------------------------------------


def test_spec_fixture_exact_and_corrected_chi_square():
    exact = paired_comparison(*outcomes(SPEC_TABLE), exact=True)
    chi2 = paired_comparison(*outcomes(SPEC_TABLE), exact=False, correction=True)
    # as printed in the spec
    assert round(exact.p_value, 6) == 0.041389
    assert round(chi2.p_value, 6) == 0.044171
    # and against statsmodels
    assert exact.p_value == pytest.approx(mcnemar(SPEC_TABLE, exact=True).pvalue, abs=1e-12)
    reference = mcnemar(SPEC_TABLE, exact=False, correction=True)
    assert chi2.p_value == pytest.approx(reference.pvalue, abs=1e-12)
    assert chi2.statistic == pytest.approx(reference.statistic, abs=1e-12)
    assert chi2.statistic == pytest.approx((abs(5 - 15) - 1) ** 2 / 20, abs=1e-15)  # 4.05
    assert exact.statistic == 5.0
    assert exact.table == ((30, 5), (15, 50))
    assert exact.n == 100
    assert exact.rate_first == pytest.approx(0.35) and exact.rate_second == pytest.approx(0.45)
    assert exact.method == "McNemar (exact binomial)"
    assert "continuity" in chi2.method


def test_spec_fixture_through_mcnemar_test():
    assert round(mcnemar_test(5, 15).p_value, 6) == 0.041389
    assert round(mcnemar_test(5, 15, exact=False, correction=True).p_value, 6) == 0.044171
    # the default chi-square stays uncorrected: (b - c)^2 / (b + c) = 5
    assert mcnemar_test(5, 15, exact=False).statistic == 5.0
    assert mcnemar_test(5, 15, exact=False).p_value == pytest.approx(stats.chi2.sf(5.0, 1))


# ---- hypothesis: statsmodels to 1e-12 ----------------------------------------------------------

counts = st.integers(0, 300)


@settings(max_examples=300, deadline=None)
@given(both=counts, b=counts, c=counts, neither=counts)
def test_mcnemar_equals_statsmodels_over_tables(both, b, c, neither):
    if b + c == 0:
        return
    table = [[both, b], [c, neither]]
    cases = [
        (mcnemar_test(b, c), mcnemar(table, exact=True)),
        (mcnemar_test(b, c, exact=False), mcnemar(table, exact=False, correction=False)),
        (
            mcnemar_test(b, c, exact=False, correction=True),
            mcnemar(table, exact=False, correction=True),
        ),
    ]
    for ours, theirs in cases:
        assert ours.statistic == pytest.approx(float(theirs.statistic), rel=0, abs=1e-12)
        assert ours.p_value == pytest.approx(float(theirs.pvalue), rel=0, abs=1e-12)
        assert 0.0 <= ours.p_value <= 1.0  # statsmodels clips the doubled exact tail at 1


@settings(max_examples=150, deadline=None)
@given(table=st.tuples(counts, counts, counts, counts), exact=st.booleans(), corr=st.booleans())
def test_paired_comparison_table_equals_pandas_crosstab(table, exact, corr):
    both, b, c, neither = table
    if both + b + c + neither == 0:
        return
    first, second = outcomes([[both, b], [c, neither]], seed=both + b)
    result = paired_comparison(first, second, exact=exact, correction=corr)
    cross = pd.crosstab(
        pd.Categorical(first, [True, False]), pd.Categorical(second, [True, False]), dropna=False
    )
    assert result.table == tuple(tuple(int(x) for x in row) for row in cross.to_numpy())
    assert result.rate_first == pytest.approx(first.mean(), abs=1e-15)
    assert result.rate_second == pytest.approx(second.mean(), abs=1e-15)
    if b + c == 0:
        assert result.p_value == 1.0 and result.statistic == 0.0
    else:
        reference = mcnemar([[both, b], [c, neither]], exact=exact, correction=corr)
        assert result.p_value == pytest.approx(float(reference.pvalue), rel=0, abs=1e-12)


def test_exact_p_is_clipped_at_one_like_statsmodels():
    # b = c: the doubled binomial tail exceeds 1 before clipping
    assert 2.0 * stats.binom.cdf(4, 8, 0.5) > 1.0
    assert mcnemar_test(4, 4).p_value == 1.0 == float(mcnemar([[0, 4], [4, 0]]).pvalue)


def test_corrected_statistic_is_not_clipped_at_zero_like_statsmodels():
    # statsmodels: (|b - c| - 1)^2 / (b + c) even when b = c
    ours = mcnemar_test(3, 3, exact=False, correction=True)
    assert ours.statistic == pytest.approx(1 / 6)
    assert ours.p_value == pytest.approx(
        float(mcnemar([[0, 3], [3, 0]], exact=False).pvalue), abs=1e-12
    )


def test_no_discordant_pairs_is_p_one_not_an_error():
    result = paired_comparison([True, False, True], [True, False, True])
    assert result.p_value == 1.0 and result.statistic == 0.0 and result.discordant == 0
    assert "no discordant pairs" in result.summary()
    with pytest.raises(InputError):  # the low-level test still refuses it
        mcnemar_test(0, 0)


# ---- Wilson intervals --------------------------------------------------------------------------


@st.composite
def binomials(draw):
    n = draw(st.integers(1, 5000))
    k = draw(st.one_of(st.just(0), st.just(n), st.integers(0, n)))
    level = draw(st.floats(0.5, 0.999))
    return k, n, level


@settings(max_examples=400, deadline=None)
@given(binomials())
def test_wilson_equals_statsmodels(case):
    k, n, level = case
    low, high = wilson_interval(k, n, level)
    ref_low, ref_high = proportion_confint(k, n, alpha=1.0 - level, method="wilson")
    assert low == pytest.approx(ref_low, rel=0, abs=1e-12)
    assert high == pytest.approx(ref_high, rel=0, abs=1e-12)
    assert 0.0 <= low <= k / n <= high <= 1.0


@settings(max_examples=200, deadline=None)
@given(binomials())
def test_wilson_ends_invert_the_score_test(case):
    # independent of any formula: at each interior end p0 the score statistic equals z
    k, n, level = case
    z = stats.norm.isf((1.0 - level) / 2.0)
    p = k / n
    for p0 in wilson_interval(k, n, level):
        if 0.0 < p0 < 1.0:
            score = abs(p - p0) / math.sqrt(p0 * (1.0 - p0) / n)
            assert score == pytest.approx(z, rel=1e-7)


@pytest.mark.parametrize("n", [1, 2, 7, 100])
def test_wilson_edges_are_exact(n):
    assert wilson_interval(0, n)[0] == 0.0
    assert wilson_interval(n, n)[1] == 1.0
    assert wilson_interval(0, n)[1] == pytest.approx(proportion_confint(0, n, method="wilson")[1])


def test_paired_comparison_intervals_are_wilson():
    result = paired_comparison(*outcomes(SPEC_TABLE), confidence_level=0.9)
    assert result.interval_first == pytest.approx(
        proportion_confint(35, 100, alpha=0.1, method="wilson"), abs=1e-12
    )
    assert result.interval_second == pytest.approx(
        proportion_confint(45, 100, alpha=0.1, method="wilson"), abs=1e-12
    )


# ---- the result and bad inputs -----------------------------------------------------------------


def test_result_shape_json_summary_and_plot():
    result = paired_comparison(*outcomes(SPEC_TABLE))
    assert isinstance(result, PairedComparison)
    data = json.loads(json.dumps(result.to_dict()))
    assert data["table"] == [[30, 5], [15, 50]]
    assert set(data) >= {
        "table",
        "rate_first",
        "rate_second",
        "interval_first",
        "interval_second",
        "p_value",
        "statistic",
        "method",
        "n",
    }
    text = result.summary()
    assert "100 pairs" in text and "p = 0.0414" in text
    ax = result.plot(ax=Figure().add_subplot())
    assert len(ax.patches) == 2
    assert [round(p.get_height(), 2) for p in ax.patches] == [0.35, 0.45]


def test_outcomes_may_be_zero_one_integers():
    a = paired_comparison([1, 0, 1, 1], [0, 0, 1, 0])
    b = paired_comparison([True, False, True, True], [False, False, True, False])
    assert a == b


@pytest.mark.parametrize(
    ("first", "second", "argument"),
    [
        ([True, False], [True], "second"),
        ([True, 2], [True, False], "first"),
        ([True, False], [0.5, 1.0], "second"),
        (["yes", "no"], [True, False], "first"),
        ([], [], "first"),
        ([[True, False], [True, True]], [True, False], "first"),
    ],
)
def test_bad_outcomes_are_named(first, second, argument):
    with pytest.raises(InputError) as info:
        paired_comparison(first, second)
    assert info.value.argument == argument


@pytest.mark.parametrize(
    ("kwargs", "argument"),
    [
        ({"exact": "yes"}, "exact"),
        ({"correction": 1}, "correction"),
        ({"confidence_level": 1.0}, "confidence_level"),
    ],
)
def test_bad_options_are_named(kwargs, argument):
    with pytest.raises(InputError) as info:
        paired_comparison([True, False], [False, False], **kwargs)
    assert info.value.argument == argument


@pytest.mark.parametrize(
    ("args", "argument"),
    [
        ((3, 2), "successes"),
        ((-1, 2), "successes"),
        ((1, 0), "trials"),
        ((1.5, 3), "successes"),
        ((1, 3, 0.0), "confidence_level"),
    ],
)
def test_bad_wilson_inputs_are_named(args, argument):
    with pytest.raises(InputError) as info:
        wilson_interval(*args)
    assert info.value.argument == argument


def test_correction_is_keyword_only_and_needs_a_bool():
    with pytest.raises(TypeError):
        mcnemar_test(5, 15, False, True)  # noqa: FBT003 - the point of the test
    with pytest.raises(InputError) as info:
        mcnemar_test(5, 15, exact=False, correction="no")
    assert info.value.argument == "correction"
