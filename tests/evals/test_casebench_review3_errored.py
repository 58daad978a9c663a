"""A successful casebench log that holds errored samples (inspect's fail_on_error lets a run
finish with some): the readers and the report leave those samples out, as the log's metrics do,
instead of refusing the log (which lost the whole trustlab eval report)."""

from __future__ import annotations

import pytest

pytest.importorskip("inspect_ai")

from inspect_ai import eval as inspect_eval  # noqa: E402
from inspect_ai.model import ModelAPI, ModelOutput, modelapi  # noqa: E402

from trustlab.evals import read_logs  # noqa: E402
from trustlab.evals.casebench import (  # noqa: E402
    casebench,
    casebench_outputs,
    casebench_report,
    casebench_scores,
)

BROKEN: set[str] = set()  # the prompts the brittle model fails on


@modelapi(name="casebench-brittle")
class Brittle(ModelAPI):
    """Answers "safe", but raises on the prompts in BROKEN."""

    async def generate(self, input, tools, tool_choice, config):
        if input[-1].text in BROKEN:
            raise RuntimeError("the model broke on purpose")
        return ModelOutput.from_content(self.model_name, '{"judgement": "safe"}')


@pytest.fixture(scope="module")
def partial_log(tmp_path_factory):
    folder = tmp_path_factory.mktemp("casebench-errored")
    task = casebench(mode="binary", retries=0)
    BROKEN.update(task.dataset[i].input for i in (0, 3, 4))
    (log,) = inspect_eval(
        task,
        model="casebench-brittle/x",
        limit=12,
        fail_on_error=0.9,
        log_dir=str(folder),
        display="none",
    )
    errored = [s for s in log.samples if s.error is not None]
    assert log.status == "success" and len(errored) == 3 and len(log.samples) == 12
    return folder, log, len(errored)


def test_errored_samples_are_left_out_as_the_logs_metrics_leave_them_out(partial_log):
    _, log, errored = partial_log
    answered = len(log.samples) - errored
    scores = casebench_scores(log, n_bootstrap=0)
    assert scores.n_items == answered
    metrics = log.results.scores[0].metrics
    assert scores.accuracy == pytest.approx(metrics["accuracy"].value)
    assert len(casebench_outputs(log)) == answered


def test_the_report_says_how_many_errored_samples_it_left_out(partial_log):
    folder, log, errored = partial_log
    blocks = casebench_report([log])
    assert f"{errored} errored sample(s) of finished logs left out" in blocks[0].text
    tables = {t["caption"]: t for t in read_logs(folder).extra_tables["casebench"]}
    (row,) = tables["Per-model metrics (95% bootstrap intervals)"]["rows"]
    assert row[3] == len(log.samples) - errored
