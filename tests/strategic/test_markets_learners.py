"""The learners: MASC beats the naive and the fixed-cost classifiers once the market forms (a
distribution over fresh seeds), the fixed-cost baseline trains against the naive model's price,
restarts and resampled validation, and the scikit-learn contract."""

import numpy as np
import pytest
import torch
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression

from trustlab.errors import InputError
from trustlab.strategic import (
    FixedPriceStrategicClassifier,
    MarketAwareClassifier,
    NaiveMarketClassifier,
    make_market_population,
    market_outcome,
    market_price,
)
from trustlab.strategic.learners import _Split, _validation_scorer

torch.set_num_threads(1)


# Seeds: the settings of the learners (learning rate 0.02, 5 restarts, 20 validation resamples)
# were chosen on populations 0-29 (test users 100-129); the test seeds below were run only after
# the settings and the thresholds were fixed (docs/strategic-markets.md, "How it was measured").
TEST_SEEDS = range(1000, 1020)


@pytest.mark.slow
def _market_seed(seed: int) -> tuple[float, float, float, float, str]:
    """One population of the claim below (a background job: tests/background_jobs.py): MASC -
    naive and MASC - fixed-cost (long run) under the market, MASC - fixed-cost selected under the
    market, the naive model's loss to the market, and a line to print."""
    X, y, b = make_market_population(1500, budget_ratio=4.0, random_state=seed)
    X_test, y_test, b_test = make_market_population(1000, budget_ratio=4.0, random_state=seed + 100)
    naive = NaiveMarketClassifier().fit(X, y, budgets=b)
    masc = MarketAwareClassifier(max_epochs=40, random_state=seed).fit(X, y, budgets=b)
    fixed = FixedPriceStrategicClassifier(max_epochs=40, random_state=seed)
    fixed.fit(X, y, budgets=b)
    selected = FixedPriceStrategicClassifier(
        validate_under="market", max_epochs=40, random_state=seed
    ).fit(X, y, budgets=b)
    naive_market = naive.score(X_test, y_test, budgets=b_test)
    masc_market = masc.score(X_test, y_test, budgets=b_test)
    fixed_long = fixed.score(X_test, y_test, budgets=b_test)
    line = (
        f"naive {naive_market:.3f}, fixed-cost (long run) {fixed_long:.3f}, MASC {masc_market:.3f}"
    )
    return (
        masc_market - naive_market,
        masc_market - fixed_long,
        masc_market - selected.score(X_test, y_test, budgets=b_test),
        naive.score(X_test, y_test) - naive_market,
        line,
    )


BACKGROUND_JOBS = {f"markets-claim/{seed}": (_market_seed, {"seed": seed}) for seed in TEST_SEEDS}


def test_market_aware_beats_naive_and_fixed_cost_after_the_market_forms(background):
    """Positives' median budget is 4x negatives': the budget carries signal a market-aware
    classifier can use, while the naive boundary is priced so that most negatives cross.

    Over 20 fresh populations (1,500 training users, 1,000 test users each), asserted as a
    distribution (median and worst seed). The thresholds come from the 30 choosing seeds, whose
    per-seed spread they are stated against. Also the negative result of the docs: a fixed-cost
    learner selected under the market (not at its own price) ties MASC.
    """
    results = list(background.results(BACKGROUND_JOBS).values())
    for seed, (*_, line) in zip(TEST_SEEDS, results, strict=True):
        print(f"seed {seed}: {line}")
    gains, over_fixed, over_selected, naive_losses = np.array([r[:4] for r in results]).T
    # MASC - naive on the choosing seeds: mean 0.268, sd 0.049 per seed, min 0.148 (0.112 with
    # the training features moved by 1e-12; the same seed moves by up to 0.06 between float
    # paths). The median of 20 seeds has sd ~0.014: 0.20 is 5 sd below the choosing median 0.273.
    assert np.median(gains) >= 0.20
    # Worst seed: 0.05 is 4 per-seed sd below the choosing mean and below all 60 choosing runs
    # (two float paths; lowest 0.112).
    assert gains.min() >= 0.05
    # MASC - fixed-cost strategic learner in the long run (the market re-priced for it, the
    # control without the soft market price): choosing seeds mean 0.042, sd 0.025, median
    # 0.045, min 0.000. Median of 20 seeds: sd ~0.007, so 0.01 is 5 sd below; worst seed -0.05
    # is 3.7 per-seed sd below the mean.
    assert np.median(over_fixed) >= 0.01
    assert over_fixed.min() >= -0.05
    # The documented negative result: a fixed-cost learner whose checkpoints are selected under
    # the market ties MASC. Choosing seeds: median +0.002 (mean 0.012, sd 0.053, skewed by one
    # +0.263); the bootstrap median of 20 seeds has sd 0.005 and 99.9 % within [-0.006, 0.019].
    print(f"MASC - fixed-cost selected under the market: median {np.median(over_selected):+.3f}")
    assert abs(np.median(over_selected)) <= 0.03
    # The naive model loses accuracy to the market it creates: choosing seeds median 0.206, sd
    # 0.039, min 0.109.
    assert np.median(naive_losses) >= 0.10
    assert naive_losses.min() >= 0.05


@pytest.mark.slow
@pytest.mark.parametrize("seed", [2000, 2001, 2002])
def test_with_uniform_budgets_no_learner_keeps_its_accuracy(seed):
    """docs/strategic-markets.md, Limits: with the same budget for everyone nothing separates the
    buyers, and accuracy after the market falls towards the base rate for naive and MASC alike.
    Choosing seeds 0-4: accuracy after the market at most 0.085 above the base rate (naive and
    MASC), without a market at least 0.31 above it; 0.15 and 0.25 leave room for the spread."""
    X, y, b = make_market_population(1500, budget_ratio=1.0, budget_spread=0.0, random_state=seed)
    X_test, y_test, b_test = make_market_population(
        1000, budget_ratio=1.0, budget_spread=0.0, random_state=seed + 100
    )
    base_rate = max(y_test.mean(), 1 - y_test.mean())
    naive = NaiveMarketClassifier().fit(X, y, budgets=b)
    masc = MarketAwareClassifier(max_epochs=40, random_state=seed).fit(X, y, budgets=b)
    assert naive.score(X_test, y_test) >= base_rate + 0.25
    assert naive.score(X_test, y_test, budgets=b_test) <= base_rate + 0.15
    assert masc.score(X_test, y_test, budgets=b_test) <= base_rate + 0.15


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


def test_restarts_keep_the_run_with_the_best_validation_score(population):
    X, y, b = population
    masc = MarketAwareClassifier(max_epochs=6, n_restarts=3, random_state=2).fit(X, y, budgets=b)
    assert len(masc.restart_scores_) == 3
    assert masc.validation_accuracy_ == max(masc.restart_scores_)
    assert masc.validation_accuracy_ == max(masc.validation_curve_)
    # one restart is the first run of three (the same streams, in the same order)
    single = MarketAwareClassifier(max_epochs=6, n_restarts=1, random_state=2)
    assert single.fit(X, y, budgets=b).restart_scores_ == masc.restart_scores_[:1]


@pytest.mark.parametrize("validate_under", ["fixed_price", "market"])
def test_validation_score_is_accuracy_at_the_fixed_price_or_under_the_market(
    population, validate_under
):
    """Validated on the training rows once (no resamples): the kept score is the accuracy that
    market_outcome (at the fixed price) or market_price (the induced market) gives."""
    X, y, b = population
    fixed = FixedPriceStrategicClassifier(
        validate_under=validate_under, validation_fraction=0.0, validation_resamples=0,
        n_restarts=2, max_epochs=6, random_state=0,
    ).fit(X, y, budgets=b)  # fmt: skip
    if validate_under == "fixed_price":
        res = market_outcome(fixed.coef_, fixed.intercept_, X, b, fixed.fixed_price_, y=y)
    else:
        res = market_price(fixed.coef_, fixed.intercept_, X, b, y=y)
    assert fixed.validation_accuracy_ == pytest.approx(res.accuracy, abs=1e-12)


def test_resampled_validation_score_is_the_mean_over_bootstrap_markets(population):
    X, y, b = population
    data = _Split(X, y == 1, b, np.arange(300), np.arange(300, 500))
    coef, intercept = np.array([0.8, 0.6]), -0.3
    score = _validation_scorer(data, 7, np.random.default_rng(4))(coef, intercept)
    rng = np.random.default_rng(4)
    expected = []
    for _ in range(7):
        rows = rng.choice(data.val, data.val.size)
        expected.append(market_price(coef, intercept, X[rows], b[rows], y=y[rows]).accuracy)
    assert score == pytest.approx(np.mean(expected), abs=1e-12)
    once = _validation_scorer(data, 0, np.random.default_rng(4))(coef, intercept)
    val = data.val
    assert once == market_price(coef, intercept, X[val], b[val], y=y[val]).accuracy


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


def test_without_budgets_no_market_fits_as_if_nobody_could_pay(population):
    """The default refuses fit(X, y) without budgets (tests/strategic/test_markets_inputs.py);
    ``without_budgets="no_market"`` is the fit with every budget 0: no market forms."""
    X, y, b = population
    params = dict(max_epochs=4, n_restarts=2, random_state=0)
    for learner in (MarketAwareClassifier, FixedPriceStrategicClassifier):
        free = learner(without_budgets="no_market", **params).fit(X, y)
        broke = learner(**params).fit(X, y, budgets=np.zeros(len(y)))
        assert np.array_equal(free.coef_, broke.coef_) and free.intercept_ == broke.intercept_
        given = learner(without_budgets="no_market", **params).fit(X, y, budgets=b)
        assert np.array_equal(given.coef_, learner(**params).fit(X, y, budgets=b).coef_)
    assert FixedPriceStrategicClassifier(without_budgets="no_market", **params).fit(
        X, y
    ).fixed_price_ == float("inf")  # no market: no price


def test_small_data_validates_on_the_training_users():
    """Fewer than 10 users on either side of the split (below 48 rows at 0.2): nothing is held
    out, so the kept score is the accuracy on every training user's market."""
    X, y, b = make_market_population(40, budget_ratio=4.0, random_state=5)
    fixed = FixedPriceStrategicClassifier(
        validation_resamples=0, n_restarts=1, max_epochs=5, random_state=0
    ).fit(X, y, budgets=b)
    res = market_outcome(fixed.coef_, fixed.intercept_, X, b, fixed.fixed_price_, y=y)
    assert fixed.validation_accuracy_ == pytest.approx(res.accuracy, abs=1e-12)


def test_budgets_are_routed_through_scikit_learn_tools(population):
    """With metadata routing on, set_fit_request / set_score_request pass each fold its users'
    budgets, so cross_validate scores accuracy after each test fold's own market."""
    import sklearn
    from sklearn.model_selection import KFold, cross_validate

    X, y, b = population
    masc = MarketAwareClassifier(max_epochs=3, n_restarts=1, random_state=0)
    folds = KFold(3, shuffle=True, random_state=0)
    with sklearn.config_context(enable_metadata_routing=True):
        routed = masc.set_fit_request(budgets=True).set_score_request(budgets=True)
        scores = cross_validate(routed, X, y, cv=folds, params={"budgets": b})["test_score"]
    for (train, test), score in zip(folds.split(X), scores, strict=True):
        fitted = clone(masc).fit(X[train], y[train], budgets=b[train])
        assert score == fitted.score(X[test], y[test], budgets=b[test])


def test_learner_refusals_are_input_errors_naming_the_argument(population):
    """The words scikit-learn's checks look for (tests/test_estimator_checks.py), in trustlab's
    InputError that names the argument."""
    from scipy import sparse

    X, y, b = population
    masc = MarketAwareClassifier(max_epochs=1, n_restarts=1)
    cases = [
        (X, np.arange(len(y)) % 3, "y", "3 classes.*Only binary classification is supported"),
        (X, X[:, 0], "y", "Unknown label type: continuous"),
        (X, None, "y", "requires y to be passed, but the target y is None"),
        (sparse.csr_matrix(X), y, "X", "[Ss]parse"),
        (np.where(X > 2.5, np.nan, X), y, "X", "NaN"),
        (X[:, :0], y, "X", r"0 feature\(s\)"),
    ]
    for features, labels, argument, message in cases:
        with pytest.raises(InputError, match=message) as info:
            masc.fit(features, labels, budgets=b)
        assert info.value.argument == argument
    fitted = NaiveMarketClassifier().fit(X, y)
    with pytest.raises(InputError, match="X has 1 features, but NaiveMarketClassifier is") as info:
        fitted.predict(X[:, :1])
    assert info.value.argument == "X"
    assert fitted.__sklearn_tags__().classifier_tags.multi_class is False


def test_docs_scikit_learn_example_runs(capsys):
    """docs/strategic-markets.md, "In scikit-learn": the routed cross-validation example."""
    import re
    from pathlib import Path

    page = Path(__file__).resolve().parents[2] / "docs" / "strategic-markets.md"
    blocks = re.findall(r"```python\n(.*?)```", page.read_text(), re.S)
    (code,) = [block for block in blocks if "set_fit_request" in block]
    exec(compile(code, str(page), "exec"), {})
    line = capsys.readouterr().out.strip()
    assert line.startswith("accuracy after each fold's market: [")
    scores = [float(v) for v in line.split("[")[1].rstrip("]").split()]
    assert len(scores) == 3 and all(0.5 < s <= 1.0 for s in scores)


@pytest.mark.parametrize("price", [None, 0.0, 0.7])
def test_predict_proba_argmax_is_the_prediction(population, price):
    """Users on the boundary after the market (the price-setting user, every buyer at price 0)
    are predicted positive; predict_proba must not tie them at 0.5/0.5, where the argmax is
    classes_[0]."""
    X, y, b = population
    naive = NaiveMarketClassifier().fit(X, y)
    predicted = naive.predict(X, b, price=price)
    proba = naive.predict_proba(X, b, price=price)
    assert np.array_equal(naive.classes_[proba.argmax(axis=1)], predicted)
    assert np.allclose(proba.sum(axis=1), 1.0)
    if price != 0.7:  # a tie is there to be broken: the price-setter, or buyers at price 0
        assert (naive.decision_function(X, b, price=price)[predicted == 1] == 0.0).any()


def test_fixed_cost_learner_fits_when_the_naive_model_is_constant():
    """A constant feature gives the naive model zero weights: it induces no market (price inf);
    fit used to refuse with an error about a weight vector ``w`` nobody passed."""
    X, y = np.ones((30, 1)), np.arange(30) % 2
    fixed = FixedPriceStrategicClassifier(max_epochs=2, n_restarts=1, random_state=0)
    fixed.fit(X, y, budgets=np.ones(30))
    assert fixed.fixed_price_ == float("inf")
    assert fixed.predict(X).shape == (30,)
    # no checkpoint beats the constant start, which is kept: its market is refused clearly
    assert not np.any(fixed.coef_ != 0)
    with pytest.raises(InputError, match="constant model") as error:
        fixed.predict(X, np.ones(30))
    assert error.value.argument == "budgets"
