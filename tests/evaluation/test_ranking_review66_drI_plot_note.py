"""RankingResult.plot says which models it cannot draw (review 66 I, second reading of 77b4f8d8).

77b4f8d8 made plot() draw an infinite score's bars as 0 without warnings, but a model whose
score is infinite (a summed token NLL that overflowed) has no point to draw: measured on 3 models
x 10 items, model 'a' with 3 overflowed items, the score-against-accuracy plot showed b and c
only, with nothing to say that 'a' (ranked 3rd in the summary) was left out; without labels its
row had a tick label and no marker. Now the axes carry the note
'not drawn (score not finite): a'; a plot of finite scores has no note and is unchanged.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from trustlab.evaluation import TokenLogProbs, rank_models


def _result(overflowed: int, labelled: bool):
    rng = np.random.default_rng(18)
    outputs = {
        "a": TokenLogProbs(
            [[-1e308, -1e308]] * overflowed + [[-x] for x in rng.uniform(0.1, 2, 10 - overflowed)]
        ),
        "b": TokenLogProbs(rng.uniform(-2, 0, (10, 1))),
        "c": TokenLogProbs(rng.uniform(-2, 0, (10, 1))),
    }
    correct = {k: rng.integers(0, 2, 10) for k in outputs} if labelled else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the sums' own overflow
        return rank_models(
            outputs, token_position="sum", correct=correct, n_bootstrap=100, random_state=0
        )


def _notes(ax):
    return [t.get_text() for t in ax.texts if t.get_text().startswith("not drawn")]


@pytest.mark.parametrize("labelled", [True, False])
def test_an_infinite_score_is_named_on_the_plot(labelled):
    result = _result(3, labelled)
    assert np.isinf(result.scores[0]) and np.isfinite(result.scores[1:]).all()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ax = result.plot()
    assert _notes(ax) == ["not drawn (score not finite): a"]


@pytest.mark.parametrize("labelled", [True, False])
def test_finite_scores_have_no_note(labelled):
    result = _result(0, labelled)
    assert np.isfinite(result.scores).all()
    assert _notes(result.plot()) == []
