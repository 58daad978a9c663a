"""Two task files of one name in two folders are two tasks: a run of the second neither resumes
the first's unfinished log (eval_retry replayed the first file, review 60) nor counts as
finishing it in ``eval report``."""

from __future__ import annotations

import pytest

pytest.importorskip("inspect_ai")

from trustlab.errors import BackendError  # noqa: E402
from trustlab.evals import read_logs, run_eval  # noqa: E402


def test_a_task_file_of_the_same_name_elsewhere_is_not_resumed(flaky_task, tmp_path):
    other = tmp_path / "other" / flaky_task.name  # same name, a scorer that gives 0 and never fails
    other.parent.mkdir()
    other.write_text(
        flaky_task.read_text()
        .replace('Path(__file__).with_name("fail")', 'Path(__file__).with_name("never")')
        .replace("Score(value=1.0)", "Score(value=0.0)")
    )
    logs = tmp_path / "logs"
    with pytest.raises(BackendError):  # the first file's scorer breaks: an unfinished log
        run_eval(str(flaky_task), "trivial/model", log_dir=logs)
    said = []
    (entry,) = run_eval(str(other), "trivial/model", log_dir=logs, on_resume=said.append).logs
    assert said == [] and entry["resumed"] is None
    assert (entry["status"], entry["metrics"]) == ("success", {"flaky/accuracy": 0.0})
    by_status = {log["status"]: log for log in read_logs(logs).logs}
    assert sorted(by_status) == ["error", "success"]
    assert by_status["error"]["finished_by"] is None  # the other file's run finished nothing
