"""BaselineJudge: n_neighbors raised above the training responses after fit is refused
(review 65). fit refuses it, but set_params(n_neighbors=5) on a judge fitted with 2 responses
predicted with the 2 votes divided by 5: predict_proba rows summing to 0.4 (documented: rows
sum to 1), and "bb" (nearest: the bias response) labelled no_approximation by the tie.
scikit-learn's KNeighborsClassifier refuses the same ("Expected n_neighbors <= n_samples_fit")."""

from __future__ import annotations

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.safety.neutrality import BaselineJudge


class Letters:  # a toy embedder: counts of a, b, c (no model load)
    def encode(self, texts):
        return np.array([[t.count(c) + 0.1 for c in "abc"] for t in texts])


def _fitted():
    return BaselineJudge(n_neighbors=1, embedder=Letters()).fit(
        ["aaa", "bbb"], ["no_approximation", "bias"]
    )


def test_more_neighbours_than_training_responses_after_fit_is_refused():
    judge = _fitted().set_params(n_neighbors=5)
    for method in (judge.predict_proba, judge.predict, judge.answers):
        with pytest.raises(InputError, match=r"^n_neighbors: expected at most the 2 training"):
            method(["bb"])


def test_a_valid_count_set_after_fit_still_predicts():
    judge = _fitted().set_params(n_neighbors=2)
    proba = judge.predict_proba(["bb"])
    assert proba.sum(axis=1) == pytest.approx([1.0])
    assert _fitted().predict(["bb"]).tolist() == ["bias"]
