"""A scorer scored by several epoch reducers keeps one metric per reducer (review 64).
A task with ``epochs=Epochs(2, ["mean", "max", "mode"])`` whose scorer gives 1 in epoch 1 and 0
in epoch 2 has three results, mean 0.5, max 1 and mode 1, all named ``alt``; 'eval run',
'eval report', --json and report.json gave only ``alt/mean 1`` (the last reducer's value under
a key that reads as the mean). Now ``alt[mean]/mean 0.5, alt[max]/mean 1, alt[mode]/mean 1``,
as inspect names them; a scorer with one reducer keeps its plain ``scorer/metric`` key."""

from __future__ import annotations

import pytest

pytest.importorskip("inspect_ai")

from inspect_ai.log import EvalMetric, EvalResults, EvalScore  # noqa: E402

from trustlab.evals.run import metrics_of  # noqa: E402


def _log(*scores):
    class Log:
        results = EvalResults(total_samples=6, completed_samples=6, scores=list(scores))

    return Log()


def _score(name, reducer, **values):
    metrics = {k: EvalMetric(name=k, value=v) for k, v in values.items()}
    return EvalScore(name=name, scorer=name, reducer=reducer, metrics=metrics)


def test_each_reducer_has_its_own_key():
    log = _log(
        _score("alt", "mean", mean=0.5),
        _score("alt", "max", mean=1.0),
        _score("alt", "mode", mean=1.0),
    )
    assert metrics_of(log) == {"alt[mean]/mean": 0.5, "alt[max]/mean": 1.0, "alt[mode]/mean": 1.0}


def test_one_reducer_per_scorer_keeps_the_plain_keys():
    log = _log(_score("a", "mean", accuracy=0.25, stderr=0.1), _score("b", None, mean=2.0))
    assert metrics_of(log) == {"a/accuracy": 0.25, "a/stderr": 0.1, "b/mean": 2.0}
