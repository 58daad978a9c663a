"""Review 58 (evals minor): an eval-level epochs reducer (``Epochs(2, "max")``) that replaces
casebench's own ``casebench_answers`` is warned about, not taken silently: the log's metrics then
differ from casebench_scores and the report, and parse_failure_rate counts items."""

from __future__ import annotations

import warnings

import pytest

pytest.importorskip("inspect_ai")


def _scores(with_answers: bool):
    from inspect_ai.scorer import SampleScore, Score

    meta = {
        "mode": "binary",
        "safe_rate": 1.0,
        "category": "c",
        "context_intended_to_be_safe": True,
    }
    if with_answers:
        meta |= {"answers": 2, "answer_failures": 0}
    return [SampleScore(score=Score(value="safe", metadata=meta), sample_id=1)]


def test_an_other_reducer_is_warned_about_and_ours_is_not():
    from trustlab.evals.casebench import _METRIC_FACTORIES

    for key in ("parse_failure_rate", "accuracy"):
        compute = _METRIC_FACTORIES[key]()
        with pytest.warns(
            UserWarning, match="eval-level epochs reducer replaced casebench_answers"
        ):
            compute(_scores(with_answers=False))
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            compute(_scores(with_answers=True))
