"""Rob_cs of a dataset without seed points (no label with a harmful target) is undefined: the
summary says n/a, not nan, and the other columns are as before."""

import numpy as np

from trustlab.robustness import DatasetCertificate, make_cost_matrix


def test_summary_says_n_a_for_rob_cs_without_seed_points():
    costs = make_cost_matrix(3, {2: [1]})  # no point has label 2
    result = DatasetCertificate.from_counts(
        [0, 1], [[950, 50, 0], [20, 980, 0]], [0, 1], sigma=0.5, alpha=0.001, cost_matrix=costs
    )
    assert np.isnan(result.certified_accuracy(0.0, "cs")).all()
    rows = result.summary().splitlines()[3:]
    assert len(rows) == 5 and all(row.split()[2] == "n/a" for row in rows)
    assert "nan" not in result.summary()
    assert rows[0].split() == ["0.000", "1.000", "n/a", "0.000"]
