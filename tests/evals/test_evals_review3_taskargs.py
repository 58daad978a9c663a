"""eval run: a misspelt -T on a task file (review 3 of the inspect runner).

inspect drops a task argument its task function does not take, with a warning that trustlab's
runs do not show: the run used the default and reported success."""

from __future__ import annotations

import pytest

pytest.importorskip("inspect_ai")

from trustlab.cli.main import main  # noqa: E402
from trustlab.errors import InputError  # noqa: E402
from trustlab.evals import run_eval  # noqa: E402

MOCK = "trivial/model"

TWO_TASKS = """
from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import includes
from inspect_ai.solver import generate


@task
def counted(n: int = 4):
    return Task(dataset=[Sample(input=f"q{i}", target="a") for i in range(n)],
                solver=generate(), scorer=includes())


@task(name="renamed")
def other(size: int = 2, *, tag: str = "x"):
    return Task(dataset=[Sample(input=f"{tag}{i}", target="a") for i in range(size)],
                solver=generate(), scorer=includes())
"""

OPEN_ENDED = """
from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import includes
from inspect_ai.solver import generate


@task
def open_ended(**kwargs):
    return Task(dataset=[Sample(input="q", target="a")], solver=generate(), scorer=includes())
"""


@pytest.mark.parametrize("suffix", ["", "@flaky_task"])
def test_a_misspelt_task_argument_of_a_task_file_is_refused(suffix, flaky_task, tmp_path, capsys):
    """`eval run flaky.py -T nn=2` reported 'success, 4 samples' (n stayed 4)."""
    logs = tmp_path / "logs"
    spec = f"{flaky_task}{suffix}"
    with pytest.raises(SystemExit) as exit_info:
        main(["eval", "run", spec, "-T", "nn=2", "--model", MOCK, "--out", str(logs)])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and len(err.strip().splitlines()) == 1, err
    assert err.startswith("trustlab: error: -T: expected arguments of the task in flaky.py")
    assert "flaky_task (n)" in err and err.rstrip().endswith("got 'nn'"), err
    assert not logs.exists()


def test_task_arguments_of_a_file_with_several_tasks(tmp_path):
    file = tmp_path / "two.py"
    file.write_text(TWO_TASKS)
    logs = tmp_path / "logs"
    # the whole file: a key that no task takes; file.py@task: a key that task does not take
    expected = (
        r"task_args: expected arguments of a task in two.py: counted \(n\); renamed \(size, tag\)"
    )
    with pytest.raises(InputError, match=expected + ", got 'nn'"):
        run_eval(str(file), MOCK, log_dir=logs, task_args={"nn": 2})
    with pytest.raises(InputError, match=r"of the task in two.py: renamed \(size, tag\), got 'n'"):
        run_eval(f"{file}@renamed", MOCK, log_dir=logs, task_args={"n": 2})
    assert not logs.exists()
    # a key one of the tasks takes (inspect gives it to that one); the registered name
    # (@task(name=...)) and a keyword-only argument
    run = run_eval(str(file), MOCK, log_dir=logs, task_args={"n": 3})
    assert sorted(log["samples"] for log in run.logs) == [2, 3]
    run = run_eval(f"{file}@renamed", MOCK, log_dir=logs, task_args={"size": 3, "tag": "t"})
    assert run.logs[0]["samples"] == 3
    # a task taking **kwargs takes any key
    other = tmp_path / "open.py"
    other.write_text(OPEN_ENDED)
    run = run_eval(str(other), MOCK, log_dir=logs, task_args={"anything": 1})
    assert run.logs[0]["status"] == "success"


def test_the_inspect_registry_name_of_a_builtin_task_is_checked_as_its_name(tmp_path):
    """`eval run trustlab/demo -T nn=2` (inspect's name of the demo task) ran with the default."""
    logs = tmp_path / "logs"
    with pytest.raises(InputError, match=r"expected arguments of the demo task \(max_tokens\)"):
        run_eval("trustlab/demo", MOCK, log_dir=logs, task_args={"nn": 2})
    with pytest.raises(InputError, match="the demo task takes no judge"):
        run_eval("trustlab/demo", MOCK, log_dir=logs, model_roles={"grader": MOCK})
    assert not logs.exists()
    run = run_eval("trustlab/demo", MOCK, log_dir=logs, limit=1, task_args={"max_tokens": 8})
    assert run.logs[0]["task"] == "trustlab/demo" and run.logs[0]["status"] == "success"
