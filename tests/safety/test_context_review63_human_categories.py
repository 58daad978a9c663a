"""HumanStatistics.by_category and power_at_votes against statsmodels (review 63).

No test read the per-category rows: the sign of ``difference`` or ``z`` flipped, or ``items``
counting one context only, passed every human-statistics test; nor one that ``power_at_votes``
uses the given ``alpha`` (0.05 in every test). Oracle: statsmodels' pooled
``proportions_ztest`` on each category's safe votes (safe-intended vs unsafe-intended, 21 votes
an item) and ``NormalIndPower`` at Cohen's h of the pooled rates.
"""

from __future__ import annotations

import numpy as np
import pytest
from statsmodels.stats.power import NormalIndPower
from statsmodels.stats.proportion import proportion_effectsize, proportions_ztest

from casebench_records import MINIMAL_CONTEXT
from trustlab.safety.context import human_statistics

CONTEXT = MINIMAL_CONTEXT
# category -> per query (safe votes in the safe-intended context, in the unsafe-intended one)
VOTES = {
    "alpha crimes": [(18, 4), (15, 9), (20, 2)],
    "beta advice": [(6, 12), (9, 11)],  # the context lowers the safe votes here
    "gamma topics": [(14, 3), (11, 11), (21, 0), (8, 5)],
}


def _records():
    records = []
    for category, pairs in VOTES.items():
        for q, (k_safe, k_unsafe) in enumerate(pairs):
            for intended, k in ((True, k_safe), (False, k_unsafe)):
                records.append(
                    {
                        "query": f"{category} {q}",
                        "category": category,
                        "context": CONTEXT,
                        "context_intended_to_be_safe": intended,
                        "safe_rate": k / 21,
                        "scores": [1] * k + [2] * (21 - k),
                    }
                )
    return records


def test_category_rows_match_statsmodels():
    result = human_statistics(_records(), n_bootstrap=10)
    rows = {row["category"]: row for row in result.by_category}
    assert list(rows) == sorted(VOTES)
    for category, pairs in VOTES.items():
        k = np.array(pairs).sum(axis=0)
        n = 21 * len(pairs)
        z, p = proportions_ztest(k, [n, n])
        row = rows[category]
        assert row["items"] == 2 * len(pairs)
        assert row["difference"] == pytest.approx((k[0] - k[1]) / n, abs=1e-12)
        assert row["z"] == pytest.approx(z, abs=1e-9)
        assert row["p_value"] == pytest.approx(p, rel=1e-9)
    assert rows["beta advice"]["z"] < 0 < rows["alpha crimes"]["z"]


@pytest.mark.parametrize("alpha", [0.01, 0.2])
def test_power_at_votes_uses_alpha(alpha):
    result = human_statistics(_records(), alpha=alpha, n_bootstrap=10)
    h = proportion_effectsize(result.safe_rate_safe_context, result.safe_rate_unsafe_context)
    expected = NormalIndPower().power(h, 21, alpha, ratio=1.0)
    assert result.power_at_votes == pytest.approx(expected, rel=1e-9)
