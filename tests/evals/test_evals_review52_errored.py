"""A task that tolerates errored samples (inspect's ``fail_on_error=False``) finishes with
status success: run_eval, read_logs and ``eval report`` say how many samples errored (its
metrics leave them out) instead of showing the rest as the whole run."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("inspect_ai")

from trustlab.cli.main import main  # noqa: E402
from trustlab.evals import read_logs, run_eval  # noqa: E402

MOCK = "trivial/model"

TOLERANT = """
from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import Score, accuracy, scorer
from inspect_ai.solver import generate


@scorer(metrics=[accuracy()])
def breaks_on_q1():
    async def score(state, target):
        if state.input_text == "q1":
            raise RuntimeError("the scorer broke on purpose")
        return Score(value=1.0)
    return score


@task
def tolerant(n: int = 3):
    return Task(dataset=[Sample(input=f"q{i}", target="a") for i in range(n)],
                solver=generate(), scorer=breaks_on_q1(), fail_on_error=False)
"""


def test_errored_samples_of_a_tolerant_task_are_counted_and_said(tmp_path, capsys):
    task = tmp_path / "tolerant.py"
    task.write_text(TOLERANT)
    logs = tmp_path / "logs"
    run = run_eval(str(task), MOCK, log_dir=logs)
    (entry,) = run.logs
    assert entry["status"] == "success" and entry["samples"] == 2
    assert entry["errored_samples"] == 1
    assert "1 more errored, left out of the metrics" in run.summary()
    (log,) = read_logs(logs).logs
    assert (log["samples"], log["completed"], log["errored_samples"]) == (3, 2, 1)
    with pytest.raises(SystemExit) as exit_info:
        main(["eval", "report", str(logs), "--out", str(tmp_path / "report"), "--json"])
    out, err = capsys.readouterr()
    assert exit_info.value.code == 0
    assert "1 of 3 samples errored; its metrics leave them out" in err
    assert json.loads(out)["logs"][0]["errored_samples"] == 1
    # the page says it too: a warning naming the log and an "errored" column
    page = (tmp_path / "report" / "report.html").read_text()
    assert "1 sample(s) errored and are left out of its metrics" in page
    assert ">errored</th>" in page


def test_a_task_without_errored_samples_reports_none(tmp_path):
    task = tmp_path / "tolerant.py"
    task.write_text(TOLERANT.replace('== "q1"', '== "never"'))
    run = run_eval(str(task), MOCK, log_dir=tmp_path / "logs")
    assert run.logs[0]["errored_samples"] == 0 and "more errored" not in run.summary()
    assert read_logs(tmp_path / "logs").logs[0]["errored_samples"] == 0
