"""run_eval resumes only a log of the task it was asked for (a task file's ``demo`` is not
trustlab's ``demo``), and lists the logs in the order of its models, resumed or not."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

pytest.importorskip("inspect_ai")

from trustlab.errors import BackendError, InputError  # noqa: E402
from trustlab.evals import read_logs, run_eval  # noqa: E402
from trustlab.evals.registry import resolve_task  # noqa: E402
from trustlab.evals.run import _task_matcher  # noqa: E402

MOCK = "trivial/model"


def test_a_task_files_demo_is_not_resumed_as_trustlabs_demo(flaky_task, tmp_path):
    # a task file whose task is also named demo, and breaks: an errored "demo" log
    other = tmp_path / "other.py"
    other.write_text(flaky_task.read_text().replace("def flaky_task(", "def demo("))
    logs = tmp_path / "logs"
    with pytest.raises(BackendError, match="broke on purpose"):
        run_eval(str(other), MOCK, log_dir=logs, limit=2)
    said = []
    run = run_eval("demo", MOCK, log_dir=logs, limit=2, on_resume=said.append)
    (entry,) = run.logs
    # trustlab's demo ran afresh; it did not replay the file's task with eval_retry
    assert entry["task"] == "trustlab/demo" and entry["resumed"] is None and not said
    assert {log["task"] for log in read_logs(logs).logs} == {"demo", "trustlab/demo"}


def test_another_packages_task_of_the_same_short_name_is_another_task():
    spec = SimpleNamespace(task="trustlab/demo", task_file=None)
    assert _task_matcher("demo", resolve_task("demo"))(spec)
    assert not _task_matcher("otherpkg/demo", "otherpkg/demo")(spec)
    assert not _task_matcher("demo", resolve_task("demo"))(
        SimpleNamespace(task="demo", task_file="other.py")
    )


def test_run_lists_the_logs_in_the_order_of_its_models(flaky_task, tmp_path):
    logs = tmp_path / "logs"
    with pytest.raises(BackendError):
        run_eval(str(flaky_task), "trivial/b", log_dir=logs)
    (flaky_task.parent / "fail").unlink()
    run = run_eval(str(flaky_task), ["trivial/a", "trivial/b", "trivial/c"], log_dir=logs)
    assert [log["model"] for log in run.logs] == ["trivial/a", "trivial/b", "trivial/c"]
    assert [log["resumed"] is not None for log in run.logs] == [False, True, False]


def test_report_and_run_give_a_log_the_same_local_path(tmp_path):
    logs = tmp_path / "log folder"
    run = run_eval("demo", MOCK, log_dir=logs, limit=1)
    (entry,) = read_logs(logs).logs
    # inspect's listing gives file:// locations; the report gives the path eval run gave
    assert entry["path"] == run.logs[0]["path"]
    assert (logs / entry["path"].rsplit("/", 1)[-1]).is_file()


def test_a_model_given_twice_is_refused_before_anything_runs(tmp_path):
    logs = tmp_path / "logs"
    with pytest.raises(
        InputError, match=r"model: expected each model once, got 'trivial/a more than once'"
    ):
        run_eval("demo", ["trivial/a", "trivial/b", "trivial/a"], log_dir=logs, limit=1)
    assert not logs.exists()
