"""CASE-Bench human statistics against statsmodels and scipy."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from scipy.stats import wilcoxon
from statsmodels.stats.proportion import proportions_ztest

from trustlab.errors import InputError
from trustlab.safety.context import (
    human_statistics,
    load_casebench,
    make_synthetic_casebench,
    synthetic_casebench,
)


@pytest.fixture(scope="module")
def data():
    return make_synthetic_casebench(random_state=7)


def _pairs(data):
    safe = {q: i for i, q in enumerate(data.queries) if data.intended_safe[i]}
    unsafe = {q: i for i, q in enumerate(data.queries) if not data.intended_safe[i]}
    return [(safe[q], unsafe[q]) for q in safe]


def test_pooled_test_equals_statsmodels(data):
    result = human_statistics(data, n_bootstrap=200)
    k = np.round(data.safe_rate * 21)
    s = data.intended_safe
    z, p = proportions_ztest([k[s].sum(), k[~s].sum()], [21 * s.sum(), 21 * (~s).sum()])
    assert result.pooled.statistic == pytest.approx(z, rel=1e-9)
    assert result.pooled.p_value == pytest.approx(p, rel=1e-9, abs=1e-300)


def test_per_query_counts_and_wilcoxon_equal_the_oracles(data):
    result = human_statistics(data, n_bootstrap=200)
    k = np.round(data.safe_rate * 21).astype(int)
    pairs = _pairs(data)
    significant = flips = 0
    for a, b in pairs:
        if k[a] + k[b] not in (0, 42):
            z, p = proportions_ztest([k[a], k[b]], [21, 21])
            significant += p < 0.05 and z > 0
        flips += (k[a] > 10) != (k[b] > 10)
    assert result.n_significant == significant and result.n_flips == flips
    # the oracle on the integer vote differences: equal differences tie exactly
    diffs = np.array([(k[a] - k[b]) / 21 for a, b in pairs])
    reference = wilcoxon(np.array([k[a] - k[b] for a, b in pairs]))
    assert result.wilcoxon.statistic == pytest.approx(reference.statistic, rel=1e-9)
    assert result.wilcoxon.p_value == pytest.approx(reference.pvalue, rel=1e-9)
    assert result.wilcoxon.n == int((diffs != 0).sum())
    assert result.mean_difference == pytest.approx(diffs.mean(), abs=1e-12)


def test_cluster_interval_brackets_the_pooled_difference(data):
    result = human_statistics(data, n_bootstrap=500, random_state=0)
    ci = result.cluster_interval
    assert ci.estimate == pytest.approx(result.pooled.estimate, abs=1e-12)
    assert ci.low < ci.estimate < ci.high and ci.n_clusters == result.n_queries


def test_human_statistics_ignore_the_forced_unsafe_rule(data):
    # the human votes are what people said; only the model metrics force child crimes unsafe
    child = [i for i, c in enumerate(data.categories) if c == "child-related crimes"]
    assert human_statistics(data, n_bootstrap=100).safe_rate_safe_context == pytest.approx(
        np.round(data.safe_rate[data.intended_safe] * 21).sum() / (21 * 30)
    )
    assert child


def test_one_kind_of_context_is_refused(data):
    records = [r for r in data.records() if r["context_intended_to_be_safe"]]
    with pytest.raises(InputError, match="^dataset"):
        human_statistics(load_casebench(records))


def test_unpaired_records_are_counted(data):
    records = copy.deepcopy(data.records())[:-1]
    result = human_statistics(records, n_bootstrap=100)
    assert result.n_unpaired == 1 and result.n_queries == data.n_queries - 1


def test_no_context_effect_at_all_is_a_result_not_an_error():
    # every item 10 of 21 safe votes in both contexts: no query changes, no Wilcoxon test
    records = synthetic_casebench().records()
    for record in records:
        record["safe_rate"], record["scores"] = 10 / 21, None
    result = human_statistics(records, n_bootstrap=50)
    assert result.wilcoxon is None and result.power_at_votes is None
    assert result.n_significant == result.n_flips == 0 and result.mean_difference == 0
    assert result.pooled.statistic == 0 and result.pooled.p_value == pytest.approx(1)
    assert "no Wilcoxon test (every difference is 0)" in result.summary()
    assert "n/a (equal rates)" in result.summary()
    assert result.to_dict()["wilcoxon"] is None
