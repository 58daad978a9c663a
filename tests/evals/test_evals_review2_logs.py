"""eval report: logs of another package's task that shares a built-in task's name, and the
sample counts of unfinished logs (review 2 of the inspect provider and CLI)."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("inspect_ai")

from inspect_ai.log import read_eval_log  # noqa: E402

from trustlab.cli.main import main  # noqa: E402
from trustlab.errors import BackendError  # noqa: E402
from trustlab.evals import read_logs, run_eval  # noqa: E402

MOCK = "trivial/model"

# generic tasks named as trustlab's built-in tasks (another package's, or a user's task file)
OTHER_TASKS = """
from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import includes
from inspect_ai.solver import generate


def _generic():
    return Task(dataset=[Sample(input="q", target="a")], solver=generate(), scorer=includes())


@task
def casebench():
    return _generic()


@task
def neutrality():
    return _generic()


@task
def neutrality_pairs():
    return _generic()


@task
def misuse():
    return _generic()
"""


@pytest.mark.parametrize("name", ["casebench", "neutrality", "neutrality_pairs", "misuse"])
def test_report_of_another_tasks_logs_with_a_builtin_name(name, tmp_path, capsys):
    """trustlab's report hook of casebench read any 'x/casebench' log: an unexpected failure
    (TypeError, KeyError) or exit 2 on a foreign task's logs."""
    file = tmp_path / "other.py"
    file.write_text(OTHER_TASKS)
    logs = tmp_path / "logs"
    run_eval(f"{file}@{name}", MOCK, log_dir=logs)
    with pytest.raises(SystemExit) as exit_info:
        main(["eval", "report", str(logs), "--out", str(tmp_path / "r"), "--json"])
    out, err = capsys.readouterr()
    assert exit_info.value.code in (0, None), err
    result = json.loads(out)
    assert [log["task"] for log in result["logs"]] == [name]
    assert result["logs"][0]["metrics"]["includes/accuracy"] == 1.0
    assert result["extra_tables"] == {}


PARTLY_TASK = """
import asyncio

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import Score, accuracy, scorer
from inspect_ai.solver import generate


@scorer(metrics=[accuracy()])
def fails_on_q5():
    async def score(state, target):
        if state.input_text == "q5":
            await asyncio.sleep(0.5)  # let the other samples finish first
            raise RuntimeError("the scorer broke on purpose")
        return Score(value=1.0)
    return score


@task
def partly(n: int = 8):
    return Task(dataset=[Sample(input=f"q{i}", target="a") for i in range(n)],
                solver=generate(), scorer=fails_on_q5())
"""


def test_an_unfinished_log_counts_the_samples_it_holds(tmp_path):
    """An errored (or interrupted) log has no results: it showed '0/None samples' though it held
    the samples that finished (which a rerun keeps)."""
    file = tmp_path / "partly.py"
    file.write_text(PARTLY_TASK)
    logs = tmp_path / "logs"
    with pytest.raises(BackendError, match="broke on purpose"):
        run_eval(str(file), MOCK, log_dir=logs, limit=6)
    result = read_logs(logs)
    (log,) = result.logs
    assert log["status"] == "error"
    # the samples the log holds scored (q0..q4 once they finished before q5 failed)
    held = read_eval_log(log["path"]).samples
    scored = sum(1 for s in held if s.scores and s.error is None)
    assert scored >= 1 and log["completed"] == scored and log["samples"] == 6
    assert f"error, {scored}/6 samples" in result.summary()


def test_an_unreadable_log_is_named_by_report_and_skipped_by_run(tmp_path, capsys):
    """A log file truncated when its process was killed was an unexpected failure (ValueError:
    EOCD not found) of both 'eval report' and every later 'eval run' into the folder."""
    logs = tmp_path / "logs"
    run_eval("demo", MOCK, log_dir=logs, limit=2)
    (good,) = logs.glob("*.eval")
    broken = logs / good.name.replace("_demo_", "_demo_cut")
    broken.write_bytes(good.read_bytes()[:300])
    with pytest.raises(SystemExit) as exit_info:
        main(["eval", "report", str(logs)])
    _, err = capsys.readouterr()
    assert exit_info.value.code == 2 and len(err.strip().splitlines()) == 1, err
    assert broken.name in err and "not a readable inspect log" in err
    said = []
    result = run_eval("demo", MOCK, log_dir=logs, limit=2, on_resume=said.append)
    assert result.logs[0]["status"] == "success" and result.logs[0]["resumed"] is None
    assert len(said) == 1 and broken.name in said[0] and "not a readable" in said[0]


def test_a_later_successful_run_supersedes_an_unfinished_log(flaky_task, tmp_path):
    """An errored run, then a --fresh run that succeeded: the next plain rerun resumed the old
    errored log (from before the successful run) instead of starting afresh."""
    logs = tmp_path / "logs"
    with pytest.raises(BackendError):
        run_eval(str(flaky_task), MOCK, log_dir=logs)
    (flaky_task.parent / "fail").unlink()
    fresh = run_eval(str(flaky_task), MOCK, log_dir=logs, resume=False)
    assert fresh.logs[0]["status"] == "success"
    said = []
    again = run_eval(str(flaky_task), MOCK, log_dir=logs, on_resume=said.append)
    assert again.logs[0]["resumed"] is None and said == []
    assert len(list(logs.glob("*.eval"))) == 3
    # a later success with other settings does not: the errored log is still resumed
    (flaky_task.parent / "fail").write_text("")
    with pytest.raises(BackendError):
        run_eval(str(flaky_task), MOCK, log_dir=logs, limit=2)
    (flaky_task.parent / "fail").unlink()
    run_eval(str(flaky_task), MOCK, log_dir=logs, limit=3)
    resumed = run_eval(str(flaky_task), MOCK, log_dir=logs, limit=2)
    assert resumed.logs[0]["resumed"] is not None


@pytest.mark.parametrize("spec", ["nosuch.py", "{flaky}@nosuch", "nosuch/thing"])
def test_a_task_inspect_cannot_find_is_bad_input(spec, flaky_task, tmp_path, capsys):
    """A missing task file, or no such task in a file, was 'unexpected failure:
    PrerequisiteError' (exit 1)."""
    logs = tmp_path / "logs"
    spec = spec.format(flaky=flaky_task)
    with pytest.raises(SystemExit) as exit_info:
        main(["eval", "run", spec, "--model", MOCK, "--out", str(logs)])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and len(err.strip().splitlines()) == 1, err
    assert err.startswith("trustlab: error: task: expected a trustlab task, a task file"), err
    assert repr(spec) in err and not logs.exists()
