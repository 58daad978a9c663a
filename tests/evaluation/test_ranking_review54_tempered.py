"""After temperature scaling, the caveat claims the temperatures failed only when the labels say
the ranking is poor (review 54): a zoo ranked right (Spearman 1) whose strongest model reports
probability 1 on many items was told the temperatures "did not make up for it here"."""

import numpy as np

from trustlab.evaluation import rank_models

FAILED = "did not make up for it"


def zoo_with_a_certain_strong_model():
    rng = np.random.default_rng(4)
    n, k = 200, 4
    labels = rng.integers(0, k, n)

    def model(certain_share, skill):
        logits = rng.standard_normal((n, k))
        logits[np.arange(n), labels] += skill
        probs = np.exp(logits)
        probs /= probs.sum(axis=1, keepdims=True)
        easy = rng.random(n) < certain_share
        probs[easy] = np.eye(k)[labels[easy]]  # certain, and right, on the easy items
        return probs

    outputs = {"strong": model(0.4, 3.0), "mid": model(0.0, 1.5), "weak": model(0.0, 0.5)}
    return outputs, labels


def test_a_ranking_that_agrees_with_accuracy_is_not_called_a_failure_of_the_temperatures():
    outputs, labels = zoo_with_a_certain_strong_model()
    scaled = rank_models(outputs, labels=labels, calibration_size=50, n_bootstrap=0, random_state=0)
    assert scaled.temperatures is not None
    assert scaled.true_ranking == scaled.predicted_ranking == ("strong", "mid", "weak")
    assert scaled.spearman == 1.0
    assert any("probability 1 on many items: strong" in text for text in scaled.warnings)
    assert not any(FAILED in text for text in scaled.warnings)
    assert not any("fit temperatures" in text for text in scaled.warnings)  # they were fitted


def test_the_certain_model_warning_keeps_its_advice_before_temperatures():
    outputs, labels = zoo_with_a_certain_strong_model()
    plain = rank_models(outputs, labels=labels, n_bootstrap=0)
    assert any("probability 1 on many items: strong" in text for text in plain.warnings)
    assert any("fit temperatures on a small labelled slice" in text for text in plain.warnings)
