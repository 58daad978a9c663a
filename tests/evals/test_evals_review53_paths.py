"""Logs are named by their plain path everywhere (a resumed log, an unreadable one); a package
task's run with a dropped ``-T`` key leaves no log; the run's ``inspect view`` line is quoted for
a shell."""

from __future__ import annotations

import shlex

import pytest

pytest.importorskip("inspect_ai")

from inspect_ai import Task, task  # noqa: E402
from inspect_ai.dataset import Sample  # noqa: E402
from inspect_ai.scorer import includes  # noqa: E402
from inspect_ai.solver import generate  # noqa: E402

from trustlab.cli.main import main  # noqa: E402
from trustlab.errors import BackendError, InputError  # noqa: E402
from trustlab.evals import run_eval  # noqa: E402

MOCK = "trivial/model"


@task(name="review53pkg/echo")
def echo(n: int = 2):
    return Task(
        dataset=[Sample(input=f"q{i}", target="a") for i in range(n)],
        solver=generate(),
        scorer=includes(),
    )


def test_a_resumed_log_is_named_by_its_path(flaky_task, tmp_path):
    logs = tmp_path / "log folder"
    with pytest.raises(BackendError):
        run_eval(str(flaky_task), MOCK, log_dir=logs)
    (old,) = logs.glob("*.eval")
    (flaky_task.parent / "fail").unlink()
    said = []
    run = run_eval(str(flaky_task), MOCK, log_dir=logs, on_resume=said.append)
    # as 'path' gives a log (and eval report too): the file's path, not inspect's file:// URI
    assert run.logs[0]["resumed"] == str(old)
    assert said == [f"resuming {old} ({MOCK}) with inspect's eval_retry"]


def test_an_unreadable_log_is_named_by_its_path(tmp_path, capsys):
    logs = tmp_path / "logs"
    run_eval("demo", MOCK, log_dir=logs, limit=1)
    (good,) = logs.glob("*.eval")
    broken = logs / good.name.replace("_demo_", "_demo_cut")
    broken.write_bytes(good.read_bytes()[:300])
    said = []
    run_eval("demo", MOCK, log_dir=logs, limit=1, on_resume=said.append)
    assert said[0].startswith(f"not resuming {broken}: ")
    with pytest.raises(SystemExit):
        main(["eval", "report", str(logs)])
    assert f"LOG_DIR: {broken} is not a readable" in capsys.readouterr().err


def test_the_inspect_view_line_is_quoted_for_a_shell(tmp_path):
    logs = tmp_path / "log folder"
    line = run_eval("demo", MOCK, log_dir=logs, limit=1).summary().splitlines()[-1]
    command = line.split("open them with: ")[1]
    assert shlex.split(command) == ["inspect", "view", "--log-dir", str(logs)]


def test_a_dropped_task_argument_leaves_no_log(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # eval run's default --out: ./logs
    with pytest.raises(InputError, match=r"got 'nn': .*defaults; that run's log was removed"):
        run_eval("review53pkg/echo", [MOCK, "trivial/other"], log_dir="logs", task_args={"nn": 3})
    assert not (tmp_path / "logs").exists()
    # into a folder that holds other logs: those stay, the unasked run's goes
    run_eval("review53pkg/echo", MOCK, log_dir="logs", task_args={"n": 3})
    before = sorted((tmp_path / "logs").iterdir())
    with pytest.raises(InputError):
        run_eval("review53pkg/echo", MOCK, log_dir="logs", task_args={"nn": 3})
    assert sorted((tmp_path / "logs").iterdir()) == before


def test_a_cut_json_log_is_named_with_the_parsers_reason(tmp_path, capsys):
    from inspect_ai.log import read_eval_log, write_eval_log

    logs = tmp_path / "logs"
    run = run_eval("demo", MOCK, log_dir=logs, limit=1)
    good = logs / run.logs[0]["path"].rsplit("/", 1)[-1]
    cut = logs / good.name.replace("_demo_", "_demo_cut").replace(".eval", ".json")
    write_eval_log(read_eval_log(str(good)), str(cut), format="json")
    cut.write_text(cut.read_text()[:200])
    said = []
    run_eval("demo", MOCK, log_dir=logs, limit=1, on_resume=said.append)
    # inspect's "Unable to read log file: file://<the same file>" named the file twice, no reason
    assert said == [f"not resuming {cut}: not a readable inspect log (parse error: premature EOF)"]
    with pytest.raises(SystemExit):
        main(["eval", "report", str(logs)])
    assert "is not a readable inspect log (parse error: premature EOF)" in capsys.readouterr().err
