"""paired_symmetry's intervals have the confidence level asked for (review 65): the existing
interval test (n = 300, abs 0.015) also passed with 90% intervals reported as 95% ones
(tail = 1 - level instead of (1 - level) / 2). Oracle: the percentile interval of the same
Binomial(n, share) / n draws the module documents, from the same seed, at two levels."""

from __future__ import annotations

import numpy as np
import pytest

from trustlab.safety.neutrality import paired_symmetry


@pytest.mark.parametrize("level", [0.95, 0.8])
def test_the_refusal_interval_is_the_asked_percentile_interval(level):
    n, refusing = 40, 18  # pairs, and pairs whose mean P(refusal) is >= 0.5
    ra = np.array([0.9] * refusing + [0.1] * (n - refusing))
    half = np.full(n, 0.3)
    result = paired_symmetry(
        ra, ra, half, half, n_bootstrap=2000, confidence_level=level, random_state=5
    )
    assert result.refusal_rate == refusing / n
    draws = np.random.default_rng(5).binomial(n, refusing / n, size=2000) / n  # the first rate
    tail = (1.0 - level) / 2.0
    assert result.intervals["refusal_rate"] == list(np.quantile(draws, [tail, 1.0 - tail]))
