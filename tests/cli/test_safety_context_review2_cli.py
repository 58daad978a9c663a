"""``trustlab safety context``: second review (ablation output files in stats, reruns)."""

from __future__ import annotations

import json

import pytest

from cli_helpers import one_line, run_main
from trustlab.safety.context import (
    ablate_context,
    human_statistics,
    make_synthetic_outputs,
    synthetic_casebench,
)


@pytest.fixture
def run(capsys):
    return lambda *args: run_main(args, capsys)


def ablated_outputs(tmp_path, remove="sender"):
    """An output file as the authors' ablation files hold it: contexts without ``remove``."""
    records = make_synthetic_outputs(synthetic_casebench(), "score")
    for record in records:
        record["context"] = ablate_context(record["context"], remove)
    path = tmp_path / f"output_score_{remove}.json"
    path.write_text(json.dumps(records))
    return path


def test_stats_reads_an_ablation_output_file_as_its_data(run, tmp_path):
    path = ablated_outputs(tmp_path)
    code, out, err = run("safety", "context", "stats", path, "--json", "--n-bootstrap", "50")
    assert code == 0, err
    expected = human_statistics(synthetic_casebench(), n_bootstrap=50)
    result = json.loads(out)
    assert result["n_queries"] == expected.n_queries == 30
    assert result["pooled"]["statistic"] == pytest.approx(expected.pooled.statistic, abs=1e-12)
    assert human_statistics(str(path), n_bootstrap=50).n_significant == expected.n_significant


def test_stats_still_refuses_a_data_file_missing_a_ci_field(run, tmp_path):
    records = synthetic_casebench().records()
    del records[2]["context"]["sender"]
    path = tmp_path / "data.json"
    path.write_text(json.dumps(records))
    code, _, err = run("safety", "context", "stats", path)
    assert code == 2 and "record 2: field context.sender" in one_line(err)


def test_a_rerun_with_overwrite_leaves_no_file_of_another_command(run, tmp_path):
    data = tmp_path / "output_binary.json"
    data.write_text(json.dumps(make_synthetic_outputs(synthetic_casebench(), "binary")))
    out = tmp_path / "out"
    code, _, err = run("safety", "context", "score", data, "--mode", "binary", "--out", out,
                       "--n-bootstrap", "20")  # fmt: skip
    assert code == 0, err
    assert {"metrics.png", "by_category.json"} <= {p.name for p in out.iterdir()}
    code, _, err = run("safety", "context", "stats", "--synthetic", "--n-bootstrap", "20",
                       "--out", out, "--overwrite")  # fmt: skip
    assert code == 0, err
    assert {p.name for p in out.iterdir()} == {"result.json", "context_effect.png"}
    code, _, err = run("safety", "context", "power", "--p1", ".6", "--p2", ".2",
                       "--out", out, "--overwrite")  # fmt: skip
    assert code == 0, err
    assert {p.name for p in out.iterdir()} == {"result.json", "result.png"}
