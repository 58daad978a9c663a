"""``trustlab fairness dcp-aggregate`` on a table saved with pandas' row index: the 'Unnamed: 0'
column is skipped, as the other table readers do (it was refused as an unexpected column)."""

import json

import pytest
from typer.testing import CliRunner

from trustlab.cli import fairness
from trustlab.fairness import aggregates_from_table, dcp_from_aggregates

FRAME = {
    "group": ["north", "south"],
    "weight": [0.4, 0.6],
    "label:yes": [0.30, 0.50],
    "label:no": [0.70, 0.50],
    "pred:yes": [0.20, 0.55],
    "pred:no": [0.80, 0.45],
}


def test_an_index_column_written_by_to_csv_is_skipped(tmp_path):
    import pandas as pd

    frame = pd.DataFrame(FRAME)
    path = tmp_path / "agg.csv"
    frame.to_csv(path)  # with the index
    result = CliRunner().invoke(
        fairness.app, ["dcp-aggregate", "--data", str(path), "--n-restarts", "2", "--json"]
    )
    assert result.exit_code == 0, result.output
    table = aggregates_from_table(frame)
    expected = dcp_from_aggregates(
        table.group_weights, table.label_dist, table.pred_dist, n_restarts=2, random_state=0,
        labels=table.labels, groups=table.groups,
    )  # fmt: skip
    assert json.loads(result.stdout)["estimate"] == pytest.approx(expected.estimate, abs=1e-12)
