"""Ctrl-C during ``run_eval`` / ``trustlab eval run``: inspect catches the interrupt, writes its
log as "cancelled" and returns no log, so the run passed for a success (exit 0, "logs in ...");
it is now an interruption (``KeyboardInterrupt``; the CLI says "trustlab: interrupted", exit 130),
and the next run resumes the cancelled log."""

from __future__ import annotations

import os
import signal

import pytest

pytest.importorskip("inspect_ai")
import anyio  # noqa: E402
from inspect_ai.log import read_eval_log  # noqa: E402
from inspect_ai.model import ModelAPI, ModelOutput, modelapi  # noqa: E402

from trustlab.cli.main import main  # noqa: E402
from trustlab.evals import run_eval  # noqa: E402

PRESSED: list[str] = []  # the model names that already had their Ctrl-C


@modelapi(name="ctrlc-once")
class CtrlCOnce(ModelAPI):
    """Presses Ctrl-C (SIGINT to this process) on its first call, then answers "a"."""

    async def generate(self, input, tools, tool_choice, config):
        if self.model_name not in PRESSED:
            PRESSED.append(self.model_name)
            os.kill(os.getpid(), signal.SIGINT)
            await anyio.sleep(30)  # cancelled by the interrupt
        return ModelOutput.from_content(self.model_name, "a")


TASK = """
from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import includes
from inspect_ai.solver import generate


@task
def one():
    return Task(dataset=[Sample(input="Say a.", target="a", id=1)], solver=generate(),
                scorer=includes())
"""


def test_ctrl_c_is_an_interruption_and_the_next_run_resumes(tmp_path, capsys, ctrl_c_raises):
    task = tmp_path / "one.py"
    task.write_text(TASK)
    logs = tmp_path / "logs"
    model = "ctrlc-once/cli"
    with pytest.raises(SystemExit) as exit_info:
        main(["eval", "run", str(task), "--model", model, "--out", str(logs)])
    _, err = capsys.readouterr()
    assert exit_info.value.code == 130 and "trustlab: interrupted" in err
    (written,) = logs.iterdir()
    assert read_eval_log(str(written), header_only=True).status == "cancelled"
    said = []
    run = run_eval(str(task), model, log_dir=logs, on_resume=said.append)
    (log,) = run.logs
    assert log["status"] == "success" and log["samples"] == 1
    assert log["resumed"] == str(written) and "eval_retry" in said[0]
