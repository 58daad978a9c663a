"""rank_models checks its inputs before it warns about too few resamples (review 60).

``trustlab evaluate rank -p a.npy --n-bootstrap 10`` printed the warning "n_bootstrap=10: a 95%
percentile interval needs at least 40 resamples ..." and then the error "--predictions: expected
at least 2 models to rank": two lines for one bad input, the first about a run that never ran."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.evaluation import rank_models

PROBS = np.array([[0.7, 0.3], [0.2, 0.8], [0.6, 0.4], [0.1, 0.9]])


@pytest.mark.parametrize(
    ("outputs", "labels"),
    [({"a": PROBS}, None), ({"a": PROBS, "b": PROBS[::-1]}, [0, 1, 1])],
    ids=["one model", "labels short"],
)
def test_bad_input_is_refused_without_the_resamples_warning(outputs, labels):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(InputError):
            rank_models(outputs, labels=labels, n_bootstrap=10)
    assert [str(w.message) for w in caught] == []


def test_a_run_with_too_few_resamples_still_warns():
    with pytest.warns(UserWarning, match=r"^n_bootstrap=10: a 95% percentile interval needs"):
        rank_models({"a": PROBS, "b": PROBS[::-1]}, n_bootstrap=10, random_state=0)
