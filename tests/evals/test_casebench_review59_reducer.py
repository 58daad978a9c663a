"""Review 59 (evals): an eval-level epochs reducer whose item values casebench cannot read
(``Epochs(2, "mean")``: inspect's reducers read an unparsed answer "" or a verdict as 0) fails
the eval with an InputError naming ``epochs`` and casebench's own reducer; before, the error was
context_scores' "predictions: expected score values in [1, 10] (item 1), got 0.0", which names
no epochs and reads as the judge's fault."""

from __future__ import annotations

import warnings

import pytest

pytest.importorskip("inspect_ai")

from trustlab.errors import InputError  # noqa: E402

EPOCHS_ERROR = r"epochs: expected casebench's own reducer casebench_answers \(epochs as an int"


def _scores(mode: str, value):
    from inspect_ai.scorer import SampleScore, Score

    meta = {"mode": mode, "safe_rate": 0.9, "category": "c", "context_intended_to_be_safe": True}
    return [SampleScore(score=Score(value=value, metadata=meta), sample_id=1)]


@pytest.mark.parametrize(("mode", "value"), [("score", 0.0), ("binary", 0.0)])
def test_an_unreadable_reduced_value_names_the_reducer(mode, value):
    from trustlab.evals.casebench import _METRIC_FACTORIES

    compute = _METRIC_FACTORIES["accuracy"]()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the other reducer's warning (review 58)
        with pytest.raises(InputError, match=EPOCHS_ERROR) as caught:
            compute(_scores(mode, value))
    assert caught.value.argument == "epochs"
    assert "got 0.0" in str(caught.value)  # the value context_scores refused


def test_casebench_own_reducer_still_raises_the_scores_own_error():
    from trustlab.evals.casebench import _METRIC_FACTORIES

    scores = _scores("score", 0.0)
    scores[0].score.metadata |= {"answers": 1, "answer_failures": 0}  # casebench_answers' score
    with pytest.raises(InputError, match=r"predictions: expected score values in \[1, 10\]"):
        _METRIC_FACTORIES["accuracy"]()(scores)


def test_an_eval_with_epochs_mean_fails_naming_epochs(tmp_path):
    import inspect_ai
    from inspect_ai import Epochs

    from trustlab.evals.casebench import casebench

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (log,) = inspect_ai.eval(
            casebench(mode="score"), model="casebench-scripted/review59", limit=6,
            epochs=Epochs(2, "mean"), log_dir=str(tmp_path), display="none",
        )  # fmt: skip
    assert log.status == "error"
    assert "epochs: expected casebench's own reducer casebench_answers" in log.error.message
