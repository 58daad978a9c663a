"""eval report: an unfinished log that a retry or a later run finished (review 3 of the inspect
runner). The report warned that it was unfinished (or errored) without saying so."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("inspect_ai")

from trustlab.cli.main import main  # noqa: E402
from trustlab.errors import BackendError  # noqa: E402
from trustlab.evals import read_logs, run_eval  # noqa: E402

MOCK = "trivial/model"


def _report(logs, out, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["eval", "report", str(logs), "--out", str(out)])
    captured = capsys.readouterr()
    assert exit_info.value.code in (0, None), captured.err
    return captured.err


def test_a_resumed_log_names_the_retry_that_finished_it(flaky_task, tmp_path, capsys):
    logs = tmp_path / "logs"
    with pytest.raises(BackendError):
        run_eval(str(flaky_task), MOCK, log_dir=logs)
    (flaky_task.parent / "fail").unlink()
    retry = run_eval(str(flaky_task), MOCK, log_dir=logs)
    assert retry.logs[0]["resumed"] is not None and retry.logs[0]["status"] == "success"
    retried = Path(retry.logs[0]["path"]).name
    result = read_logs(logs)
    ((old,), (new,)) = result.errored, [log for log in result.logs if log["status"] == "success"]
    assert old["finished_by"] == f"{retried} (its retry)" and new["finished_by"] is None
    err = _report(logs, tmp_path / "r", capsys)
    (warning,) = [line for line in err.splitlines() if line.startswith("warning:")]
    assert warning.endswith(f"; since finished by {retried} (its retry)"), err
    assert f"since finished by {retried} (its retry)" in read_logs(logs).summary()
    page = next((tmp_path / "r").glob("*.html")).read_text()  # the page says so too
    assert f"its numbers are not results; since finished by {retried} (its retry)." in page


def test_a_later_run_with_the_same_settings_finishes_an_unfinished_log(
    flaky_task, tmp_path, capsys
):
    logs = tmp_path / "logs"
    with pytest.raises(BackendError):
        run_eval(str(flaky_task), MOCK, log_dir=logs, limit=2)
    (flaky_task.parent / "fail").unlink()
    # a later success with other settings did not finish it
    run_eval(str(flaky_task), MOCK, log_dir=logs, limit=3)
    # (logs are sorted by their start in whole seconds: pick them by status)
    assert [log["finished_by"] for log in read_logs(logs).logs] == [None, None]
    err = _report(logs, tmp_path / "r1", capsys)
    assert "since finished" not in err and "warning:" in err
    fresh = run_eval(str(flaky_task), MOCK, log_dir=logs, limit=2, resume=False)
    name = Path(fresh.logs[0]["path"]).name
    (errored,) = read_logs(logs).errored
    assert errored["finished_by"] == f"{name} (a later run, same settings)"
    err = _report(logs, tmp_path / "r2", capsys)
    assert f"since finished by {name} (a later run, same settings)" in err
