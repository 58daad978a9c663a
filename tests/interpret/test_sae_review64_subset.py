"""Review 64: `sae score --n-test N` (N < 50) kept a plain random subset of explain's held-out
examples, which left on average 3.1 of the 10 quantiles without an example at N = 10 (1,000
seeds). Now the subset is spread over the quantiles as evenly as N allows."""

from types import SimpleNamespace

import numpy as np

from trustlab.cli.interpret import _test_subset


def examples(sizes):
    return tuple(SimpleNamespace(quantile=q, i=i) for q, n in enumerate(sizes) for i in range(n))


def counts(shown, n_quantiles):
    return np.bincount([e.quantile for e in shown], minlength=n_quantiles)


def test_subset_is_even_over_quantiles():
    test = examples([5] * 10)
    for seed in range(20):
        for n in (1, 7, 10, 25, 49):
            shown = _test_subset(test, n, seed)
            assert len(set(map(id, shown))) == n and set(map(id, shown)) <= set(map(id, test))
            c = counts(shown, 10)
            assert c.max() - c.min() <= 1 and c.sum() == n
            assert [test.index(e) for e in shown] == sorted(test.index(e) for e in shown)
        assert _test_subset(test, 10, seed) == _test_subset(test, 10, seed)
    # a rare latent's small quantile gives what it has; the others share the rest evenly
    c = counts(_test_subset(examples([1, 5, 5, 5]), 13, 0), 4)
    assert c[0] == 1 and sorted(c[1:]) == [4, 4, 4]
    # which examples of a quantile: not always the same ones
    firsts = {_test_subset(test, 10, seed)[0].i for seed in range(20)}
    assert len(firsts) > 1
