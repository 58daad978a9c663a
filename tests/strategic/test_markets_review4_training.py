"""Review 4. Training of the market learners: no phantom market when no weight is positive, and
a training loss that overflows float64 refused naming budgets (it surfaced as an error about
``w``, an argument the caller never passed); the JSON nulls of a market that does not form."""

import json
from pathlib import Path

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from trustlab.errors import InputError
from trustlab.strategic import (
    MarketAwareClassifier,
    make_market_population,
    market_price,
    soft_market_price,
)


def test_no_positive_weight_trains_on_the_plain_hinge():
    X, y, b = make_market_population(200, random_state=0)
    X = -X  # the naive start has only negative weights: users, who only add to features,
    # cannot move, so there is no market (soft_market_price says inf) and no reach in the loss
    naive = LogisticRegression(C=0.01, max_iter=1000).fit(X, y)
    w, c = naive.coef_[0], float(naive.intercept_[0])
    assert (w < 0).all()
    assert soft_market_price(w, c, X, b) == np.inf
    clf = MarketAwareClassifier(
        max_epochs=1,
        n_restarts=1,
        validation_fraction=0.0,
        validation_resamples=0,
        batch_size=200,  # one batch: the first loss is the loss at the start
        random_state=0,
    ).fit(X, y, budgets=b)
    signs = np.where(y == 1, 1.0, -1.0)
    plain = np.maximum(0.0, 1.0 - signs * (X @ w + c)).mean() + w @ w
    assert clf.loss_curve_[0] == pytest.approx(plain, rel=1e-6)


def test_a_training_loss_beyond_float64_is_refused_naming_budgets():
    X, y, b = make_market_population(600, budget_ratio=1e300, random_state=0)
    clf = MarketAwareClassifier(max_epochs=2, n_restarts=1, random_state=0)
    with pytest.raises(InputError, match="budgets: expected") as caught:
        clf.fit(X, y, budgets=b)
    assert caught.value.argument == "budgets"


def test_json_nulls_of_a_market_that_does_not_form_are_documented():
    res = market_price([1.0], 0.0, [[-1.0], [2.0]], [0.0, 1.0], y=[1, 1])  # nobody can pay
    assert res.price == np.inf and res.social_burden == np.inf
    data = json.loads(json.dumps(res.to_dict()))
    assert data["price"] is None and data["social_burden"] is None
    assert data["market_forms"] is False
    page = Path(__file__).resolve().parents[2] / "docs" / "strategic-markets.md"
    text = " ".join(page.read_text().split())
    assert "`social_burden` null with labels means `inf`" in text
