"""A tolerant task (``fail_on_error=False``) whose every sample errored finishes "success" with
no results: run_eval, read_logs and ``eval report`` still count its errored samples (review 58:
they said 0, so "success, 0 samples; no metrics" read as an empty run)."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("inspect_ai")

from trustlab.cli.main import main  # noqa: E402
from trustlab.evals import read_logs, run_eval  # noqa: E402


def test_a_finished_log_whose_samples_all_errored_counts_them(all_break_task, tmp_path, capsys):
    task = all_break_task  # 3 samples
    logs = tmp_path / "logs"
    run = run_eval(str(task), "trivial/model", log_dir=logs)
    (entry,) = run.logs
    assert (entry["status"], entry["samples"], entry["metrics"]) == ("success", 0, {})
    assert entry["errored_samples"] == 3
    assert "3 more errored, left out of the metrics" in run.summary()
    (log,) = read_logs(logs).logs  # read from the log's header and sample summaries
    assert (log["samples"], log["completed"], log["errored_samples"]) == (3, 0, 3)
    with pytest.raises(SystemExit) as exit_info:
        main(["eval", "report", str(logs), "--out", str(tmp_path / "report"), "--json"])
    out, err = capsys.readouterr()
    assert exit_info.value.code == 0
    assert "3 of 3 samples errored" in err
    assert json.loads(out)["logs"][0]["errored_samples"] == 3
