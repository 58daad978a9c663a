"""Another package's task (``pkg/task``, found in inspect's registry) takes its ``-T`` keys
unchecked before the run (inspect has no public way to read its parameters): a key it dropped
is refused once the log shows it (``task_args_passed``), instead of a success with the
defaults."""

from __future__ import annotations

import pytest

pytest.importorskip("inspect_ai")

from inspect_ai import Task, task  # noqa: E402
from inspect_ai.dataset import Sample  # noqa: E402
from inspect_ai.scorer import includes  # noqa: E402
from inspect_ai.solver import generate  # noqa: E402

from trustlab.cli.main import main  # noqa: E402
from trustlab.errors import InputError  # noqa: E402
from trustlab.evals import run_eval  # noqa: E402

MOCK = "trivial/model"


@task(name="review52pkg/echo")
def echo(n: int = 2):
    return Task(
        dataset=[Sample(input=f"q{i}", target="a") for i in range(n)],
        solver=generate(),
        scorer=includes(),
    )


def test_a_package_tasks_dropped_argument_is_refused(tmp_path):
    with pytest.raises(InputError, match=r"task_args: .*review52pkg/echo, got 'nn'.*defaults"):
        run_eval("review52pkg/echo", MOCK, log_dir=tmp_path / "logs", task_args={"nn": 3})


def test_a_package_tasks_own_argument_runs(tmp_path):
    run = run_eval("review52pkg/echo", MOCK, log_dir=tmp_path / "logs", task_args={"n": 3})
    assert run.logs[0]["status"] == "success" and run.logs[0]["samples"] == 3


def test_the_cli_names_the_dropped_key_as_a_task_argument(tmp_path, capsys):
    argv = ["eval", "run", "review52pkg/echo", "-T", "nn=3", "--model", MOCK]
    with pytest.raises(SystemExit) as exit_info:
        main([*argv, "--out", str(tmp_path / "logs")])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2
    assert "-T: expected arguments of the task review52pkg/echo, got 'nn'" in err
