"""Linear classifiers for feature markets: MASC (market-aware) and the two baselines.

All three are scikit-learn classifiers that take the users' budgets in ``fit`` and predict under
the market the population they are applied to induces (:mod:`~trustlab.strategic.market`):

- :class:`NaiveMarketClassifier`: logistic regression, market-unaware;
- :class:`FixedPriceStrategicClassifier`: trained against the fixed price the naive model
  induces (the standard strategic setting);
- :class:`MarketAwareClassifier` (MASC): trained through a differentiable soft price of the
  market it induces.

torch is imported only when a trained learner is fitted.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from trustlab._checks import (
    as_1d,
    check_choice,
    check_in_range,
    check_non_negative,
    check_positive,
    check_positive_int,
    check_random_state,
)
from trustlab.errors import InputError
from trustlab.strategic._inputs import (
    MIN_HELD_OUT,
    check_binary_target,
    check_budgets,
    check_feature_names,
    check_learner_features,
    check_price,
    check_weights,
    feature_names,
    weight_norm,
)
from trustlab.strategic.market import MarketResult, outcome, torch_backend

__all__ = ["NaiveMarketClassifier", "FixedPriceStrategicClassifier", "MarketAwareClassifier"]


def _sklearn_base():
    from sklearn.base import BaseEstimator, ClassifierMixin

    return BaseEstimator, ClassifierMixin


_BaseEstimator, _ClassifierMixin = _sklearn_base()


class _MarketLinearClassifier(_ClassifierMixin, _BaseEstimator):
    """Shared prediction under the market; subclasses set ``coef_`` and ``intercept_``.

    ``classes_[1]`` (the larger label) is the positive decision users want.
    """

    def __sklearn_tags__(self):
        """Binary classifiers of dense, finite numeric features (no sparse input, no missing
        values, no strings). ``budgets`` is a fit argument: scikit-learn has no tag for a required
        one (see ``without_budgets`` of the trained learners)."""
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        tags.input_tags.sparse = tags.input_tags.allow_nan = False
        tags.input_tags.string = tags.input_tags.categorical = False
        return tags

    def _check_fit_inputs(self, X, y, budgets, *, need_budgets=True):
        """Features, the positive-class mask and budgets (zeros, nobody can pay, when not needed
        and not given); sets ``classes_``, ``n_features_in_`` (and ``feature_names_in_``)."""
        name = type(self).__name__
        features = check_learner_features(X, name)
        labels, classes = check_binary_target(y, features.shape[0], name)
        if budgets is None and not need_budgets:
            budgets = np.zeros(features.shape[0])
        if budgets is None:
            raise InputError(
                "budgets: expected the users' budgets, fit(X, y, budgets=...) (in a Pipeline or "
                "a search, route them with set_fit_request(budgets=True); "
                "without_budgets='no_market' fits as if nobody could pay), got None",
                argument="budgets",
            )
        money = check_budgets(budgets, features.shape[0])
        self.classes_ = classes
        self.n_features_in_ = features.shape[1]
        check_feature_names(self, X, reset=True)
        return features, labels == classes[1], money

    def _check_predict_X(self, X):
        from sklearn.utils.validation import check_is_fitted

        check_is_fitted(self, "coef_")
        check_feature_names(self, X, reset=False)
        return check_learner_features(X, type(self).__name__, self.n_features_in_)

    def _market(self, features, budgets, positive=None, price=None, names=None) -> MarketResult:
        """The market of checked inputs (``budgets`` as given, checked here; ``price`` None:
        the revenue-maximising one; ``names``: the features' names)."""
        money = check_budgets(budgets, features.shape[0])
        rho = None if price is None else check_price(price)
        if not np.any(self.coef_ != 0):  # a constant model moves nobody: say so
            raise InputError(
                "budgets: expected a classifier with a non-zero weight for users to move, got "
                "a fitted constant model (every weight 0): no market forms; predict(X) without "
                "budgets gives its decisions",
                argument="budgets",
            )
        weights = check_weights(self.coef_)
        return outcome(weights, float(self.intercept_), features, money, positive, rho, names)

    def market(self, X: Any, budgets: Any, y: Any = None, *, price: Any = None) -> MarketResult:
        """The market this classifier induces on the population ``X`` with ``budgets``
        (``price=None``: the revenue-maximising price; a number: users face that price). A
        DataFrame ``X`` names the features (``MarketResult.feature_names``), as in
        :func:`~trustlab.strategic.market_price`."""
        features = self._check_predict_X(X)
        positive = None if y is None else self._positive(y, features.shape[0])
        return self._market(features, budgets, positive, price, feature_names(X))

    def _positive(self, y: Any, n_rows: int) -> np.ndarray:
        """Which of the ``n_rows`` labels ``y`` are ``classes_[1]``; a label that is not one of
        ``classes_`` is refused (it would count as the negative class without a word)."""
        labels = as_1d(y, "y")
        if labels.shape[0] != n_rows:
            raise InputError.bad("y", f"{n_rows} labels (one per row of X)", labels)
        unknown = labels[~np.isin(labels, self.classes_)]
        if unknown.size:
            shown = ", ".join(repr(v) for v in np.unique(unknown)[:5].tolist())
            raise InputError(
                f"y: expected labels among classes_={self.classes_.tolist()!r} (the labels fit "
                f"saw), got {shown}",
                argument="y",
            )
        return labels == self.classes_[1]

    def decision_function(self, X: Any, budgets: Any = None, *, price: Any = None) -> np.ndarray:
        """The margin after the market: ``w'x + b0 + ||w|| b_i / rho`` (the user's reach), with
        the sign of the decision; without ``budgets``, with no market or with no positive weight
        (nobody can buy a move) the plain score ``w'x + b0``."""
        features = self._check_predict_X(X)
        score = features @ self.coef_ + self.intercept_
        if budgets is None:
            _no_price_without_budgets(price)
            return score
        res = self._market(features, budgets, price=price)
        rho = res.price
        norm = weight_norm(self.coef_)  # exact for tiny or huge weights, as the market's
        if not math.isfinite(rho) or not np.any(self.coef_ > 0):  # no weight to buy: nobody moves
            return score
        if rho == 0.0:
            return np.where(res.predictions == 1, np.maximum(score, 0.0), score)
        with np.errstate(over="ignore"):  # a reach beyond 1.8e308 is an infinite margin
            reach = norm * res.budgets / rho
        margin = score + reach
        # The decision compares b_i/u_i with rho; keep the sign exactly consistent with it.
        return np.where(res.predictions == 1, np.maximum(margin, 0.0), np.minimum(margin, -1e-300))

    def predict(self, X: Any, budgets: Any = None, *, price: Any = None) -> np.ndarray:
        """Decisions after the market the population ``X`` induces (``budgets`` given), or the
        plain classifier's decisions (``budgets=None``: no strategic response)."""
        features = self._check_predict_X(X)
        if budgets is None:
            _no_price_without_budgets(price)
            positive = features @ self.coef_ + self.intercept_ >= 0
        else:
            positive = self._market(features, budgets, price=price).predictions == 1
        return self.classes_[positive.astype(int)]

    def predict_proba(self, X: Any, budgets: Any = None, *, price: Any = None) -> np.ndarray:
        """``sigmoid(decision_function)`` as two columns in ``classes_`` order: a monotone
        squashing of the post-market margin, not a calibrated probability. A margin of 0 (a
        user on the boundary after the market, as the price-setting user and every buyer at
        price 0 are) is a positive decision, so its positive column is the float just above
        0.5: the argmax is :meth:`predict`."""
        margin = self.decision_function(X, budgets, price=price)
        positive = 1.0 / (1.0 + np.exp(-np.clip(margin, -500, 500)))
        positive = np.where(
            margin >= 0,
            np.maximum(positive, np.nextafter(0.5, 1.0)),
            np.minimum(positive, np.nextafter(0.5, 0.0)),
        )
        return np.column_stack([1.0 - positive, positive])

    def score(self, X: Any, y: Any, budgets: Any = None, *, price: Any = None) -> float:
        """Accuracy of :meth:`predict` (after the market when ``budgets`` are given)."""
        predictions = self.predict(X, budgets, price=price)
        positive = self._positive(y, predictions.shape[0])
        return float(np.mean((predictions == self.classes_[1]) == positive))


def _no_price_without_budgets(price: Any) -> None:
    """A price without budgets would be ignored (nobody can pay it): refuse it instead."""
    if price is not None:
        raise InputError(
            f"price: expected budgets with it (users face a price only through their budgets: "
            f"predict(X, budgets, price=...)), got price={price!r} and budgets=None",
            argument="price",
        )


def _fit_logistic(features, positive, C):
    from sklearn.linear_model import LogisticRegression

    model = LogisticRegression(C=C, max_iter=1000)
    model.fit(features, positive.astype(int))
    return model.coef_[0].astype(np.float64), float(model.intercept_[0])


class NaiveMarketClassifier(_MarketLinearClassifier):
    """The market-unaware baseline: logistic regression that ignores budgets and the market.

    Prices are formed only after it is deployed (``predict(X, budgets)``).

    Parameters
    ----------
    C : float
        Inverse regularisation strength of the logistic regression (the spec's 0.01).

    Examples
    --------
    >>> from trustlab.strategic import NaiveMarketClassifier, make_market_population
    >>> X, y, b = make_market_population(400, random_state=0)
    >>> clf = NaiveMarketClassifier().fit(X, y, budgets=b)
    >>> clf.score(X, y) > clf.score(X, y, budgets=b)  # the market costs it accuracy
    True
    """

    def __init__(self, C: float = 0.01):
        self.C = C

    def fit(self, X: Any, y: Any, budgets: Any = None) -> NaiveMarketClassifier:
        """Fit on ``(X, y)``; ``budgets`` are accepted for a uniform call shape and ignored."""
        features, positive, _ = self._check_fit_inputs(X, y, budgets, need_budgets=False)
        C = check_positive(self.C, "C")
        self.coef_, self.intercept_ = _fit_logistic(features, positive, C)
        return self


class _TrainedMarketClassifier(_MarketLinearClassifier):
    """Training shared by the fixed-price and market-aware learners (the market hinge, Adam):
    their common parameters, their checks and the training loop."""

    def __init__(
        self,
        *,
        alpha: float = 1.0,
        learning_rate: float = 0.02,
        batch_size: int = 128,
        max_epochs: int = 100,
        n_iter_no_change: int = 10,
        validation_fraction: float = 0.2,
        n_restarts: int = 5,
        validation_resamples: int = 20,
        naive_C: float = 0.01,
        without_budgets: str = "raise",
        random_state: Any = None,
    ):
        self.alpha = alpha
        self.learning_rate = learning_rate
        self.batch_size = batch_size
        self.max_epochs = max_epochs
        self.n_iter_no_change = n_iter_no_change
        self.validation_fraction = validation_fraction
        self.n_restarts = n_restarts
        self.validation_resamples = validation_resamples
        self.naive_C = naive_C
        self.without_budgets = without_budgets
        self.random_state = random_state

    def _common_params(self):
        return dict(
            alpha=check_non_negative(self.alpha, "alpha"),
            learning_rate=check_positive(self.learning_rate, "learning_rate"),
            batch_size=check_positive_int(self.batch_size, "batch_size", minimum=2),
            max_epochs=check_positive_int(self.max_epochs, "max_epochs"),
            patience=check_positive_int(self.n_iter_no_change, "n_iter_no_change"),
            validation_fraction=check_in_range(
                self.validation_fraction, "validation_fraction", 0.0, 0.9
            ),
            n_restarts=check_positive_int(self.n_restarts, "n_restarts"),
            validation_resamples=check_positive_int(
                self.validation_resamples, "validation_resamples", minimum=0
            ),
            naive_C=check_positive(self.naive_C, "naive_C"),
        )

    def _prepare(self, X, y, budgets):
        without = check_choice(self.without_budgets, "without_budgets", ("raise", "no_market"))
        features, positive, money = self._check_fit_inputs(
            X, y, budgets, need_budgets=without == "raise"
        )
        params = self._common_params()
        rng = check_random_state(self.random_state)
        # Budgets enter the loss only as b_i / rho; scaling them to median 1 leaves the market
        # unchanged and makes the softmax scale mean the same thing whatever the currency.
        paid = money[money > 0]
        with np.errstate(over="ignore"):
            self.budget_scale_ = float(np.median(paid)) if paid.size else 1.0
        if not math.isfinite(self.budget_scale_):  # the middle two's sum overflowed: halve first
            self.budget_scale_ = 2.0 * float(np.median(paid / 2.0))
        scaled = money / self.budget_scale_
        order = rng.permutation(features.shape[0])
        n_val = int(round(params["validation_fraction"] * features.shape[0]))
        if min(n_val, features.shape[0] - n_val) < MIN_HELD_OUT:  # small data: no held-out part
            n_val = 0
        val, train = order[:n_val], order[n_val:]
        if n_val == 0:
            val = train
        data = _Split(features, positive, scaled, train, val)
        return data, params, rng

    def _train(self, data, params, rng, price_fn: Callable, start: Callable, price=None):
        """Train ``n_restarts`` times, each from ``start(rng)`` (initial weights and intercept)
        with its own random stream for the minibatch order, and keep the run with the best
        validation score (the first on ties). ``price``: the validation users face that price
        (None: the price each candidate induces on them)."""
        score = _validation_scorer(data, params["validation_resamples"], rng, price)
        seeds = rng.integers(0, 2**63, size=params["n_restarts"])
        best, scores = None, []
        for seed in seeds:
            stream = np.random.default_rng(int(seed))
            coef0, intercept0 = start(stream)
            fit = torch_backend().train_linear(
                data.X[data.train],
                data.positive[data.train],
                data.budgets[data.train],
                coef0,
                intercept0,
                price_fn=price_fn,
                evaluate=score,
                alpha=params["alpha"],
                learning_rate=params["learning_rate"],
                batch_size=params["batch_size"],
                max_epochs=params["max_epochs"],
                patience=params["patience"],
                rng=stream,
            )
            scores.append(fit.best_accuracy)
            if best is None or fit.best_accuracy > best.best_accuracy:
                best = fit
        self.coef_ = best.coef
        self.intercept_ = best.intercept
        self.n_epochs_ = best.n_epochs
        self.best_epoch_ = best.best_epoch
        self.validation_accuracy_ = best.best_accuracy
        self.loss_curve_ = best.losses
        self.validation_curve_ = best.accuracies
        self.restart_scores_ = scores
        return self


def _validation_scorer(data, resamples: int, rng: np.random.Generator, price=None) -> Callable:
    """Accuracy of ``(coef, intercept)`` under the market its validation users form (``price``
    None) or at a fixed ``price``; with ``resamples > 0`` the mean over that many bootstrap
    resamples of the validation users, each forming its own market (a fresh population prices the
    classifier anew: this rewards markets whose price does not hinge on a few users)."""
    rows = data.val
    draws = [rows] if resamples == 0 else [rng.choice(rows, rows.size) for _ in range(resamples)]

    def accuracy(coef, intercept):
        if not np.any(coef != 0):  # a constant classifier: nobody can move
            return float(np.mean(data.positive[rows] == (intercept >= 0)))
        total = 0.0
        for sample in draws:
            res = outcome(
                coef, intercept, data.X[sample], data.budgets[sample], data.positive[sample], price
            )
            total += res.accuracy
        return float(total / len(draws))

    return accuracy


def _shared_params(arguments: dict[str, Any]) -> dict[str, Any]:
    """The arguments of a subclass's ``__init__`` that :class:`_TrainedMarketClassifier` stores."""
    names = inspect.signature(_TrainedMarketClassifier.__init__).parameters
    return {name: arguments[name] for name in names if name != "self"}


@dataclass(frozen=True)
class _Split:
    X: np.ndarray
    positive: np.ndarray
    budgets: np.ndarray
    train: np.ndarray
    val: np.ndarray


class FixedPriceStrategicClassifier(_TrainedMarketClassifier):
    """The standard strategic baseline ("Strat"): trained against a fixed, exogenous price.

    The price is the one the naive (logistic) model induces on the training population; the
    classifier is then trained with the market hinge at that fixed price, as if users' costs did
    not respond to the classifier. ``predict(X, budgets, price=clf.fixed_price_)`` is its
    short-run accuracy (users face the price it was trained for); ``predict(X, budgets)`` is the
    long run, after the market re-prices for the new classifier.

    Parameters
    ----------
    validate_under : {"fixed_price", "market"}
        What the validation users face when a checkpoint is scored: the fixed price (default:
        the learner believes costs do not move) or the market each candidate induces on them
        (a partly market-aware selection; docs/strategic-markets.md measures both).
    alpha : float
        Weight ``lambda`` of ``||w||^2`` in the loss (the spec's 1).
    learning_rate : float
        Adam step size (0.02, chosen with MASC's on the choosing seeds of the docs).
    batch_size : int
        Minibatch size; the soft price is computed per batch (O(batch^2)).
    max_epochs : int
    n_iter_no_change : int
        Stop after this many epochs without a better validation score; the best parameters
        (the initial ones included) are kept.
    validation_fraction : float
        Share of the training rows held out for early stopping (0: validate on the training
        rows). Small data: when either part would have fewer than 10 users (``round(fraction *
        n)`` held out; below 48 rows at 0.2), nothing is held out and the validation users are
        the training users.
    n_restarts : int
        Independent training runs from the same start, each with its own minibatch order; the
        one with the best validation score is kept (5).
    validation_resamples : int
        Score a checkpoint by its mean accuracy over this many bootstrap resamples of the
        validation users, each forming its own market (20); 0: the validation users once.
        A market priced by a handful of users flips between prices from one population to the
        next; averaging over resamples prefers classifiers whose market does not.
    naive_C : float
        ``C`` of the logistic regression that gives the initial weights.
    without_budgets : {"raise", "no_market"}
        What ``fit(X, y)`` without ``budgets`` does: "raise" (default: the learner is about the
        market budgets create, so they are required) or "no_market": fit as if nobody could pay
        (every budget 0), so no market forms and the market hinge is the plain hinge; for
        tools that cannot pass budgets (scikit-learn's estimator checks, a search without
        metadata routing). With routing on (``sklearn.set_config(enable_metadata_routing=True)``)
        ``set_fit_request(budgets=True)`` passes them through a Pipeline, ``GridSearchCV`` or
        ``cross_validate`` instead.
    random_state : None, int or numpy Generator
        Validation split, resamples and minibatch orders.

    Attributes
    ----------
    coef_, intercept_ : the weights and intercept.
    fixed_price_ : float
        The price trained against, in the units of the budgets.
    budget_scale_ : float
        Median positive training budget (budgets are divided by it inside training).
    n_epochs_, best_epoch_, validation_accuracy_, loss_curve_, validation_curve_
        Training record of the kept run (``validation_accuracy_``: its best validation score).
    restart_scores_ : list of float
        The best validation score of every run.
    """

    def __init__(
        self,
        *,
        validate_under: str = "fixed_price",
        alpha: float = 1.0,
        learning_rate: float = 0.02,
        batch_size: int = 128,
        max_epochs: int = 100,
        n_iter_no_change: int = 10,
        validation_fraction: float = 0.2,
        n_restarts: int = 5,
        validation_resamples: int = 20,
        naive_C: float = 0.01,
        without_budgets: str = "raise",
        random_state: Any = None,
    ):
        super().__init__(**_shared_params(locals()))
        self.validate_under = validate_under

    def fit(self, X: Any, y: Any, budgets: Any = None) -> FixedPriceStrategicClassifier:
        validate_under = check_choice(
            self.validate_under, "validate_under", ("fixed_price", "market")
        )
        data, params, rng = self._prepare(X, y, budgets)
        train_X, train_positive = data.X[data.train], data.positive[data.train]
        coef0, intercept0 = _fit_logistic(train_X, train_positive, params["naive_C"])
        if np.any(coef0 != 0):
            price = outcome(coef0, intercept0, train_X, data.budgets[data.train], None, None).price
        else:  # a constant naive model (a constant feature, say) moves nobody: no market
            price = math.inf
        self.fixed_price_ = float(price * self.budget_scale_)
        price_fn = torch_backend().fixed_price_fn(price)
        # By default validated at the fixed price too: the learner believes its users' costs do
        # not move ("market": selected by accuracy under the market each candidate induces,
        # which makes the baseline partly market-aware).
        validation_price = price if validate_under == "fixed_price" else None
        start = lambda _stream: (coef0, intercept0)  # noqa: E731
        self._train(data, params, rng, price_fn, start, price=validation_price)
        return self


class MarketAwareClassifier(_TrainedMarketClassifier):
    """MASC: a linear classifier trained through the market it induces.

    Each minibatch's market price is replaced by a differentiable soft price (SoftSort of the
    budget-per-distance values, softmax over the soft revenues); the market hinge
    ``mean_i max(0, 1 - y_i (w'x_i + b0 + ||w|| b_i / rho~)) + alpha ||w||^2`` then scores each
    user at the reach their budget buys, so no best-response solve is needed. Adam on
    minibatches, early stopping on the validation accuracy under the exact (hard) market (the
    mean over bootstrap resamples of the validation users), the best of ``n_restarts`` runs.
    Predictions (``predict(X, budgets)``) use the exact price the population ``X`` induces.

    Parameters
    ----------
    sort_temperature : float
        SoftSort temperature ``tau_ss`` (0.1; smaller is closer to a hard sort).
    softmax_scale : float
        ``tau_sm`` in ``softmax(tau_sm * R)`` over the soft revenues (2; larger is closer to the
        arg-max). Revenues are in units of the median training budget.
    init : {"naive", "random"}
        Start from the naive logistic model or from N(0, 1) weights.
    alpha, learning_rate, batch_size, max_epochs, n_iter_no_change, validation_fraction
        As in :class:`FixedPriceStrategicClassifier`: the weight of ``||w||^2`` (1), Adam's
        step size (0.02), the minibatch size (the soft price is O(batch^2)), the epoch cap,
        early stopping after ``n_iter_no_change`` epochs without a better score on the held-out
        ``validation_fraction``.
    without_budgets : {"raise", "no_market"}
        As in :class:`FixedPriceStrategicClassifier`: budgets are required by default;
        "no_market" fits without them as if nobody could pay.
    n_restarts, validation_resamples, naive_C
        As in :class:`FixedPriceStrategicClassifier`: the best of 5 runs (``init="random"``:
        each from its own N(0, 1) draw), each checkpoint scored over 20 bootstrap markets of
        the validation users, and ``C`` of the initial logistic model. Chosen, with the
        learning rate, on seeds apart from the tested ones: without them 15 of 120 runs (30
        populations, 4 float paths) gained under 15 points over the naive model, some nothing,
        and a 1e-12 change of the inputs moved a result by up to 0.27 (docs/strategic-markets.md).
    random_state : None, int or numpy Generator
        Split, resamples, minibatch orders and (``init="random"``) initial weights.

    Attributes
    ----------
    coef_, intercept_ : the weights and intercept.
    budget_scale_ : float
        Median positive training budget (budgets are divided by it inside training).
    n_epochs_, best_epoch_, validation_accuracy_, loss_curve_, validation_curve_
        Training record of the kept run (``validation_accuracy_``: its best validation score).
    restart_scores_ : list of float
        The best validation score of every run.

    Examples
    --------
    >>> from trustlab.strategic import MarketAwareClassifier, make_market_population
    >>> X, y, b = make_market_population(600, random_state=0)
    >>> clf = MarketAwareClassifier(max_epochs=5, random_state=0).fit(X, y, budgets=b)
    >>> 0.5 < clf.score(X, y, budgets=b) <= 1.0
    True
    """

    def __init__(
        self,
        *,
        sort_temperature: float = 0.1,
        softmax_scale: float = 2.0,
        init: str = "naive",
        alpha: float = 1.0,
        learning_rate: float = 0.02,
        batch_size: int = 128,
        max_epochs: int = 100,
        n_iter_no_change: int = 10,
        validation_fraction: float = 0.2,
        n_restarts: int = 5,
        validation_resamples: int = 20,
        naive_C: float = 0.01,
        without_budgets: str = "raise",
        random_state: Any = None,
    ):
        super().__init__(**_shared_params(locals()))
        self.sort_temperature = sort_temperature
        self.softmax_scale = softmax_scale
        self.init = init

    def fit(self, X: Any, y: Any, budgets: Any = None) -> MarketAwareClassifier:
        tau = check_positive(self.sort_temperature, "sort_temperature")
        scale = check_positive(self.softmax_scale, "softmax_scale")
        init = check_choice(self.init, "init", ("naive", "random"))
        data, params, rng = self._prepare(X, y, budgets)
        if init == "naive":
            naive = _fit_logistic(data.X[data.train], data.positive[data.train], params["naive_C"])

            def start(_stream):
                return naive
        else:

            def start(stream):
                return stream.standard_normal(data.X.shape[1]), float(stream.standard_normal())

        price_fn = torch_backend().soft_price_fn(tau, scale)
        self._train(data, params, rng, price_fn, start)
        return self
