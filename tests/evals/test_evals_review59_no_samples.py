"""A tolerant task (``fail_on_error=False``) whose every sample errored, logged without its
samples (inspect's ``log_samples=False``, ``inspect eval --no-log-samples``): ``eval report``
counts them from the log's header (review 59: read_logs said 0 errored, "success, 0/3 samples;
no metrics", and the report gave no warning)."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("inspect_ai")

from trustlab.cli.main import main  # noqa: E402
from trustlab.evals import read_logs  # noqa: E402


def test_a_log_without_samples_whose_samples_all_errored_counts_them(
    all_break_task, tmp_path, capsys, monkeypatch
):
    import inspect_ai

    monkeypatch.chdir(tmp_path)  # inspect's loader globs a task file relative to here
    task = all_break_task
    logs = tmp_path / "logs"
    # 5 samples, limit 3 and 2 epochs: 6 planned samples, all errored, none kept in the log
    (log,) = inspect_ai.eval(
        task.name, model="trivial/model", log_dir=str(logs), display="none", limit=3,
        epochs=2, log_samples=False, task_args={"n": 5},
    )  # fmt: skip
    assert (log.status, log.results, log.samples) == ("success", None, [])
    (entry,) = read_logs(logs).logs
    assert (entry["samples"], entry["completed"], entry["errored_samples"]) == (6, 0, 6)
    assert "6 sample(s) errored, left out of the metrics" in read_logs(logs).summary()
    with pytest.raises(SystemExit) as exit_info:
        main(["eval", "report", str(logs), "--out", str(tmp_path / "report"), "--json"])
    out, err = capsys.readouterr()
    assert exit_info.value.code == 0
    assert "6 of 6 samples errored" in err
    assert json.loads(out)["logs"][0]["errored_samples"] == 6


def test_a_log_without_samples_that_scored_them_all_has_none_errored(
    all_break_task, tmp_path, monkeypatch
):
    import inspect_ai

    monkeypatch.chdir(tmp_path)  # inspect's loader globs a task file relative to here
    task = tmp_path / "fine.py"
    task.write_text(all_break_task.read_text().replace(
        'raise RuntimeError("the scorer broke on purpose")', "return Score(value=1.0)"))  # fmt: skip
    logs = tmp_path / "logs"
    inspect_ai.eval(task.name, model="trivial/model", log_dir=str(logs), display="none",
                    limit=3, log_samples=False, task_args={"n": 5})  # fmt: skip
    (entry,) = read_logs(logs).logs
    assert (entry["samples"], entry["completed"], entry["errored_samples"]) == (3, 3, 0)
    assert entry["metrics"]["breaks/accuracy"] == 1.0
