"""multiclass_dcp / dcp_inputs with ``sample_weight`` (review 54).

Oracles: float weights give the counts of a weighted confusion matrix built by hand, and rational
weights num/den the result of the records repeated num times. Defects fixed: no output said the
numbers were weighted (the summary read 'total weight 45.25 (the number of records, or the sum of
sample_weight when one was given)', to_dict and the plot nothing); a group whose records all
weigh 0 was still a group, so one weighted group gave a DCP of 0 read as parity; a total weight
that overflows float64 gave NaN group weights and a DCP of 0."""

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from trustlab.errors import InputError  # noqa: E402
from trustlab.fairness import dcp_inputs, multiclass_dcp  # noqa: E402


def _records(seed: int):
    rng = np.random.default_rng(seed)
    k, g, n = 2 + seed % 3, 2 + seed % 2, 30
    y = rng.integers(0, k, n)
    p = np.where(rng.random(n) < 0.6, y, rng.integers(0, k, n))
    groups = rng.integers(0, g, n)
    groups[:g], y[:k] = np.arange(g), np.arange(k)
    num = rng.integers(1, 5, n)  # positive, so no group or class is lost by repeating rows
    return y, p, groups, num, k, g


@pytest.mark.parametrize("seed", range(6))
def test_float_weights_give_the_hand_weighted_confusion(seed):
    y, p, groups, num, k, g = _records(seed)
    weights = num * 0.37 + 0.01 * np.arange(num.size)  # not whole numbers
    expected = np.zeros((g, k, k))
    for yi, pi, gi, wi in zip(y, p, groups, weights, strict=True):
        expected[gi, yi, pi] += wi
    inputs = dcp_inputs(y, p, groups, sample_weight=weights)
    assert np.allclose(inputs.counts, expected, rtol=0, atol=1e-12)
    totals = expected.sum(axis=(1, 2))
    assert np.allclose(inputs.group_weights, totals / totals.sum(), rtol=0, atol=1e-15)
    assert np.allclose(inputs.alpha, expected / expected.sum(axis=2, keepdims=True), atol=1e-15)


@pytest.mark.parametrize("seed", range(6))
def test_rational_weights_equal_the_records_repeated(seed):
    y, p, groups, num, _, _ = _records(seed)
    rows = np.repeat(np.arange(num.size), num)
    options = {"random_state": 1, "n_restarts": 2, "labels": sorted(set(y) | set(p))}
    weighted = multiclass_dcp(y, p, groups, sample_weight=num / 3, **options)
    repeated = multiclass_dcp(y[rows], p[rows], groups[rows], **options)
    assert weighted.known.lower == pytest.approx(repeated.known.lower, abs=1e-10)
    assert weighted.known.upper == pytest.approx(repeated.known.upper, abs=1e-10)
    assert weighted.aggregate.estimate == pytest.approx(repeated.aggregate.estimate, abs=1e-9)


ARGS = ([0, 1, 0, 1, 0, 1, 0, 1], [0, 1, 1, 0, 0, 0, 1, 1], list("aaaabbbb"))


def test_every_output_says_the_records_are_weighted():
    weights = [1, 2.5, 1, 1, 0.5, 1, 1, 0.25]
    res = multiclass_dcp(*ARGS, sample_weight=weights, random_state=0, n_restarts=1)
    first = res.summary().splitlines()[0]
    assert first == (
        "Records weighted by sample_weight (total weight 8.25 over 8 records): every share and "
        "bound below is weighted"
    )
    assert (
        res.inputs.summary()
        .splitlines()[0]
        .endswith("records weighted by sample_weight (total weight 8.25 over 8 records)")
    )
    data = res.to_dict()["inputs"]
    assert (data["weighted"], data["n_records"]) == (True, 8)
    assert res.plot().get_title().endswith(", records weighted by sample_weight")


def test_unweighted_outputs_say_so():
    res = multiclass_dcp(*ARGS, random_state=0, n_restarts=1)
    assert "records weighted" not in res.summary()
    assert res.inputs.summary().splitlines()[0].endswith("8 records, unweighted")
    data = res.to_dict()["inputs"]
    assert (data["weighted"], data["n_records"]) == (False, 8)
    assert "weighted" not in res.plot().get_title()


def test_one_group_with_weight_is_refused():
    with pytest.raises(InputError) as info:
        multiclass_dcp(*ARGS, sample_weight=[1, 1, 1, 1, 0, 0, 0, 0], random_state=0)
    assert str(info.value) == (
        "sample_weight: expected a positive weight in at least 2 groups (DCP compares groups), "
        "got one: only group 'a' weighs more than 0 (every record of 'b' has weight 0)"
    )


def test_a_zero_weight_group_beside_two_others_is_an_empty_group():
    groups = list("aaaabbbc")
    res = dcp_inputs(ARGS[0], ARGS[1], groups, sample_weight=[1, 2, 1, 1, 0, 0, 0, 1])
    assert res.group_weights[1] == 0
    assert res.empty_cells == (("b", 0), ("b", 1), ("c", 0))
    assert "with no records or only records of weight 0, weighted 0" in res.summary()


def test_a_total_weight_that_overflows_is_refused():
    with pytest.raises(InputError, match=r"^sample_weight: expected weights whose total is a fin"):
        multiclass_dcp(*ARGS, sample_weight=[1e308] * 8, aggregate=False)


@pytest.mark.parametrize("k, most", [(3, 46), (4, 8), (5, 2)])
def test_the_documented_sizes_of_the_exact_vertex_search(k, most):
    """docs/fairness-dcp.md: the vertex search (a global minimum) runs for K = 3 up to 46 groups,
    K = 4 up to 8 and K = 5 up to 2 (the claim had no test)."""
    from trustlab.fairness import _vertex as vertex
    from trustlab.fairness._label import LabelProblem

    rng = np.random.default_rng(k)
    for groups, searched in ((most, True), (most + 1, False)):
        conf = rng.dirichlet(np.ones(k), size=groups)
        problem = LabelProblem(0, conf, np.full(groups, 1.0 / groups))
        work = vertex.vertex_count(groups, k) * k * (k + groups)
        assert (work <= vertex.VERTEX_BUDGET) is searched
        if k > 3 or not searched:  # K = 3, G = 46 is searched in ~0.1 s; checked by the count
            assert (vertex.vertex_minimum(problem) is not None) is searched
