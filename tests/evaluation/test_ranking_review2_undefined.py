"""A rank correlation that is not defined on the data (the models' accuracies all equal) has no
interval: the resamples where it happens to be defined said "rho = nan [-1.000, 1.000]"."""

import json

import numpy as np

from trustlab.evaluation import rank_models


def outputs_with_equal_accuracy(seed):
    rng = np.random.default_rng(seed)
    n = 40
    labels = rng.integers(3, size=n)
    outputs = {}
    for name in ("a", "b", "c"):
        probs = rng.dirichlet(np.ones(3), size=n)
        predicted = np.where(np.arange(n) < 20, labels, (labels + 1) % 3)  # 20 of 40 right
        probs[np.arange(n), predicted] += 3.0  # the argmax is the planned prediction
        outputs[name] = probs / probs.sum(axis=1, keepdims=True)
    return outputs, labels


def test_an_undefined_correlation_has_no_interval_and_says_why():
    outputs, labels = outputs_with_equal_accuracy(11)
    result = rank_models(outputs, labels=labels, n_bootstrap=200, random_state=0)
    assert np.all(result.accuracy == 0.5)
    assert np.isnan(result.spearman) and np.isnan(result.kendall)
    assert np.isnan(result.spearman_interval).all() and np.isnan(result.kendall_interval).all()
    text = result.summary()
    assert "not defined (the models' accuracies, or their scores, are all equal)" in text
    assert "nan" not in text.lower()
    data = json.loads(json.dumps(result.to_dict()))
    assert data["spearman"] == {"value": None, "interval": [None, None]}


def test_a_defined_correlation_keeps_its_interval():
    outputs, labels = outputs_with_equal_accuracy(12)
    right = np.full(3, 0.1)
    right[labels[25]] = 0.8
    outputs["a"][25] = right  # model a right on one more item: 21 of 40, b and c 20
    result = rank_models(outputs, labels=labels, n_bootstrap=200, random_state=0)
    assert result.accuracy.tolist() == [21 / 40, 0.5, 0.5]
    low, high = result.spearman_interval
    assert not np.isnan(result.spearman) and -1.0 <= low <= high <= 1.0
    assert "Spearman rho = " in result.summary()
