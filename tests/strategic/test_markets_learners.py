"""The learners: MASC beats the naive classifier once the market forms (fixed seeds), the
fixed-cost baseline trains against the naive model's price, and the scikit-learn contract."""

import numpy as np
import pytest
import torch
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression

from trustlab.strategic import (
    FixedPriceStrategicClassifier,
    MarketAwareClassifier,
    NaiveMarketClassifier,
    make_market_population,
    market_outcome,
    market_price,
)

torch.set_num_threads(1)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_market_aware_beats_naive_after_the_market_forms(seed):
    # positives' median budget is 4x negatives': the budget carries signal a market-aware
    # classifier can use, while the naive boundary is priced so that most negatives cross
    X, y, b = make_market_population(1500, budget_ratio=4.0, random_state=seed)
    X_test, y_test, b_test = make_market_population(1000, budget_ratio=4.0, random_state=seed + 100)
    naive = NaiveMarketClassifier().fit(X, y, budgets=b)
    masc = MarketAwareClassifier(max_epochs=40, random_state=seed).fit(X, y, budgets=b)
    naive_accuracy = naive.score(X_test, y_test, budgets=b_test)
    masc_accuracy = masc.score(X_test, y_test, budgets=b_test)
    print(f"seed {seed}: naive {naive_accuracy:.3f}, MASC {masc_accuracy:.3f}")
    # measured: naive 0.640 / 0.634 / 0.647, MASC 0.907 / 0.893 / 0.911
    assert masc_accuracy - naive_accuracy >= 0.15
    # and the naive model loses accuracy to the market it creates
    assert naive.score(X_test, y_test) - naive_accuracy >= 0.1


@pytest.fixture(scope="module")
def population():
    return make_market_population(500, budget_ratio=4.0, random_state=3)


def test_fixed_cost_learner_trains_against_the_naive_price(population):
    X, y, b = population
    fixed = FixedPriceStrategicClassifier(
        validation_fraction=0.0, max_epochs=5, random_state=0
    ).fit(X, y, budgets=b)
    logistic = LogisticRegression(C=0.01, max_iter=1000).fit(X, y)
    naive_price = market_price(logistic.coef_[0], logistic.intercept_[0], X, b).price
    assert fixed.fixed_price_ == pytest.approx(naive_price, rel=1e-6)
    short = fixed.market(X, b, y, price=fixed.fixed_price_)
    direct = market_outcome(fixed.coef_, fixed.intercept_, X, b, fixed.fixed_price_, y=y)
    assert np.array_equal(short.predictions, direct.predictions)
    assert np.array_equal(
        fixed.predict(X, b, price=fixed.fixed_price_), direct.predictions.astype(y.dtype)
    )


def test_training_keeps_the_best_validation_accuracy(population):
    X, y, b = population
    masc = MarketAwareClassifier(max_epochs=15, n_iter_no_change=5, random_state=1)
    masc.fit(X, y, budgets=b)
    assert masc.validation_accuracy_ == max(masc.validation_curve_)
    assert masc.validation_curve_[masc.best_epoch_] == masc.validation_accuracy_
    assert len(masc.loss_curve_) == masc.n_epochs_ == len(masc.validation_curve_) - 1
    assert masc.budget_scale_ == pytest.approx(np.median(b))


def test_same_seed_same_model_and_random_init(population):
    X, y, b = population
    params = dict(init="random", max_epochs=6, random_state=5)
    first = MarketAwareClassifier(**params).fit(X, y, budgets=b)
    second = MarketAwareClassifier(**params).fit(X, y, budgets=b)
    assert np.array_equal(first.coef_, second.coef_) and first.intercept_ == second.intercept_


def test_scikit_learn_contract(population):
    X, y, b = population
    labels = np.where(y == 1, "approve", "deny")  # classes_[1] = "deny" is the wanted decision
    masc = MarketAwareClassifier(max_epochs=4, random_state=0, softmax_scale=3.0)
    assert clone(masc).get_params()["softmax_scale"] == 3.0
    assert masc.fit(X, labels, budgets=b) is masc
    assert list(masc.classes_) == ["approve", "deny"] and masc.n_features_in_ == 2
    margin = masc.decision_function(X, b)
    predicted = masc.predict(X, b)
    assert np.array_equal(predicted == "deny", margin >= 0)
    proba = masc.predict_proba(X, b)
    assert np.allclose(proba.sum(axis=1), 1.0)
    assert np.array_equal(masc.classes_[(proba[:, 1] >= 0.5).astype(int)], predicted)
    assert masc.score(X, labels, b) == np.mean(predicted == labels)
    market = masc.market(X, b)
    assert np.array_equal(predicted == "deny", market.predictions == 1)
    # without budgets: the plain linear rule (nobody buys)
    plain = X @ masc.coef_ + masc.intercept_ >= 0
    assert np.array_equal(masc.predict(X) == "deny", plain)
    assert np.allclose(masc.decision_function(X), X @ masc.coef_ + masc.intercept_)


def test_decision_function_is_the_post_market_margin(population):
    X, y, b = population
    naive = NaiveMarketClassifier().fit(X, y)
    res = naive.market(X, b)
    margin = naive.decision_function(X, b)
    reach = np.linalg.norm(naive.coef_) * b / res.price
    expected = X @ naive.coef_ + naive.intercept_ + reach
    assert np.allclose(margin, expected, atol=1e-12)
