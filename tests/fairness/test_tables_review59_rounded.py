"""Rounded weights and prediction shares are renormalised too (review 59). Only rounded label:
shares were tested: with the renormalisation of the weight column (or of the pred: shares)
deleted from aggregates_from_table every test still passed, while a weight column summing to
1.0006 then reached dcp_from_aggregates, which refuses a sum off 1 by more than 1e-6."""

import numpy as np
import pandas as pd
import pytest

from trustlab.fairness import aggregates_from_table, dcp_from_aggregates

TABLE = pd.DataFrame(
    {
        "group": ["north", "south", "east"],
        "weight": [0.4002, 0.3002, 0.3002],  # published to 4 decimals: sum 1.0006
        "label:yes": [0.30, 0.50, 0.45],
        "label:no": [0.70, 0.50, 0.55],
        "pred:yes": [0.2504, 0.55, 0.40],  # sum 1.0004 in the first row
        "pred:no": [0.75, 0.45, 0.60],
    }
)


def test_rounded_weights_and_predictions_are_renormalised_and_accepted():
    table = aggregates_from_table(TABLE)
    assert table.group_weights.sum() == pytest.approx(1.0, abs=1e-15)
    assert table.group_weights[0] == pytest.approx(0.4002 / 1.0006, abs=1e-15)
    np.testing.assert_allclose(table.pred_dist.sum(axis=1), 1.0, atol=1e-15)
    assert table.pred_dist[0, 0] == pytest.approx(0.2504 / 1.0004, abs=1e-15)
    result = dcp_from_aggregates(
        table.group_weights, table.label_dist, table.pred_dist, n_restarts=1, random_state=0
    )
    assert 0.0 <= result.estimate <= 1.0
