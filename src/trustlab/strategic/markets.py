"""Feature markets induced by a linear classifier (Sommer, Hikri, Amit & Rosenfeld, ICML 2025).

A deployed linear classifier ``h(x) = 1{w'x + b0 >= 0}`` creates demand for the features that
raise the score. Users with budgets buy the cheapest move to a positive prediction; a seller
prices the features to maximise revenue. This module computes that market exactly and learns
classifiers that stay accurate once it forms.

The market in one number
------------------------
Users can only buy features (``delta >= 0``) and pay ``p'delta`` for them. Under per-feature
prices ``p`` the cheapest way to gain ``g`` units of score is to buy only the feature with the
lowest price per unit of score, ``pi(p) = min_{j: w_j > 0} p_j / w_j``, and costs ``g * pi(p)``.
Who buys and what the seller earns therefore depend on ``p`` only through ``pi(p)``: the
revenue-maximising seller's problem is one-dimensional. We expose it as ``rho``, the price per
unit of Euclidean distance along ``w`` (``rho = pi * ||w||``): user ``i`` is at distance
``u_i = -(w'x_i + b0) / ||w||`` from the boundary (positive when still rejected), a move costs
``rho * u_i``, and the user buys iff ``b_i / u_i >= rho``. The per-feature vector we report,
``rho * w+ / ||w||``, is the representative in which every useful feature is equally
cost-effective (the "prices proportional to the weights" of the paper); any other vector with the
same ``pi`` gives the same market. We deliberately do not offer independent per-feature sellers:
features are perfect substitutes here, so each seller could take the whole market by
undercutting the others slightly (Bertrand competition) and no positive-price equilibrium of
separate sellers exists. :func:`best_response` evaluates any per-feature price vector you give
it, without claiming it is an equilibrium.

The revenue-maximising price (:func:`market_price`) is found in O(m log m): revenue
``R(rho) = rho * sum{u_i : 0 < u_i, b_i / u_i >= rho}`` increases between the budget-per-distance
values ``beta_i = b_i / u_i`` and drops at each, so its maximum sits at one of them. Sorting
``beta`` in decreasing order and taking prefix sums of ``u`` at the last index of each group of
equal ``beta`` (a whole tie group buys at its price) gives every candidate revenue at once.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from trustlab._checks import (
    as_1d,
    as_float_array,
    check_choice,
    check_in_range,
    check_positive_int,
    check_random_state,
)
from trustlab.errors import ConfigError, InputError

__all__ = [
    "MarketResult",
    "BestResponse",
    "market_price",
    "market_outcome",
    "best_response",
    "soft_market_price",
    "NaiveMarketClassifier",
    "FixedPriceStrategicClassifier",
    "MarketAwareClassifier",
]

# Plots draw the exact saw-tooth revenue curve up to this many price groups, then a sample.
_MAX_PLOTTED_GROUPS = 4000
_PLOT_PRICE_FACTOR = 4.0


# ----------------------------------------------------------------------------------------------
# validation


def _check_weights(w: Any) -> np.ndarray:
    weights = as_float_array(w, "w", ndim=1)
    if not np.any(weights != 0.0):
        raise InputError.bad("w", "a non-zero weight vector", weights)
    return weights


def _check_intercept(b0: Any) -> float:
    try:
        value = float(b0)
    except (TypeError, ValueError):
        raise InputError.bad("b0", "a finite number (the intercept)", b0) from None
    if not math.isfinite(value):
        raise InputError.bad("b0", "a finite number (the intercept)", b0)
    return value


def _check_features(X: Any, n_features: int) -> np.ndarray:
    if hasattr(X, "to_numpy"):
        X = X.to_numpy()
    features = as_float_array(X, "X", ndim=2)
    if features.shape[1] != n_features:
        raise InputError.bad(
            "X", f"{n_features} column(s), one per entry of w, in a 2-D array", features
        )
    return features


def _check_budgets(budgets: Any, n_users: int, name: str = "budgets") -> np.ndarray:
    if hasattr(budgets, "to_numpy"):
        budgets = budgets.to_numpy()
    values = as_float_array(budgets, name, ndim=1)
    if values.shape[0] != n_users:
        raise InputError.bad(name, f"{n_users} values (one per row of X)", values)
    if (values < 0).any():
        i = int(np.argmax(values < 0))
        raise InputError(
            f"{name}: expected non-negative budgets, got {values[i]:g} at index {i}",
            argument=name,
        )
    return values


def _check_positive_labels(y: Any, n_users: int) -> np.ndarray:
    """Binary labels (0/1, -1/+1 or bool) as a boolean 'positive' mask."""
    labels = as_1d(y, "y")
    if labels.shape[0] != n_users:
        raise InputError.bad("y", f"{n_users} labels (one per row of X)", labels)
    if labels.dtype.kind == "b":
        return labels.astype(bool)
    try:
        numeric = labels.astype(np.float64)
    except (TypeError, ValueError):
        raise InputError.bad("y", "binary labels in {0, 1} or {-1, +1}", labels) from None
    values = set(np.unique(numeric).tolist())
    if not (values <= {0.0, 1.0} or values <= {-1.0, 1.0}):
        raise InputError.bad("y", "binary labels in {0, 1} or {-1, +1}", sorted(values)[:5])
    return numeric == 1.0


def _check_price(price: Any, name: str = "price") -> float:
    try:
        value = float(price)
    except (TypeError, ValueError):
        raise InputError.bad(name, "a non-negative number (inf for no market)", price) from None
    if not value >= 0.0:  # also rejects NaN
        raise InputError.bad(name, "a non-negative number (inf for no market)", price)
    return value


def _validate(w, b0, X, budgets, y=None):
    weights = _check_weights(w)
    intercept = _check_intercept(b0)
    features = _check_features(X, weights.shape[0])
    money = _check_budgets(budgets, features.shape[0])
    positive = None if y is None else _check_positive_labels(y, features.shape[0])
    return weights, intercept, features, money, positive


# ----------------------------------------------------------------------------------------------
# the exact market


def _finite_or_none(value: float) -> float | None:
    return float(value) if math.isfinite(value) else None


@dataclass(frozen=True)
class _Curve:
    """Revenue at every candidate price: one entry per group of equal budget-per-distance."""

    prices: np.ndarray  # decreasing
    demand: np.ndarray  # total distance bought at each price (whole tie groups)
    revenues: np.ndarray  # prices * demand

    @property
    def best(self) -> int:
        """Index of the revenue-maximising group; ties go to the lowest price (most buyers)."""
        last = self.revenues.size - 1
        return last - int(np.argmax(self.revenues[::-1]))


def _revenue_curve(distances: np.ndarray, budgets: np.ndarray, rejected: np.ndarray) -> _Curve:
    # Only rejected users with money can pay a positive price; a user with no budget buys only
    # at price 0, which earns nothing.
    can_pay = rejected & (budgets > 0)
    gap = distances[can_pay]
    beta = budgets[can_pay] / gap
    order = np.argsort(-beta, kind="stable")
    beta_sorted = beta[order]
    demand = np.cumsum(gap[order])
    group_end = np.flatnonzero(np.append(beta_sorted[1:] != beta_sorted[:-1], True))
    if beta_sorted.size == 0:
        group_end = np.zeros(0, dtype=np.intp)
    prices = beta_sorted[group_end]
    return _Curve(prices, demand[group_end], prices * demand[group_end])


@dataclass(frozen=True)
class MarketResult:
    """The market a linear classifier induces on a population, at one price.

    Attributes
    ----------
    price : float
        The price ``rho`` per unit of distance along ``w`` that users face (``inf``: no market,
        nobody buys).
    optimal_price : float
        The revenue-maximising price (equal to ``price`` for :func:`market_price`).
    revenue, optimal_revenue : float
        Seller revenue at ``price`` and at ``optimal_price``.
    welfare : float
        ``sum_i b_i 1{yhat_i = 1} - sum_i cost_i``: what users with a positive decision are worth
        (their budget) minus what buyers paid (the definition in the authors' comment).
    social_burden : float or None
        ``price * sum u_i`` over positive-label users still rejected: what they would have to pay
        to be accepted (None without labels).
    accuracy, accuracy_without_market : float or None
        Accuracy of the post-market decisions, and of the classifier on the unmoved features
        (None without labels).
    predictions : ndarray of int, shape (m,)
        Decisions after the market: 1 (positive) or 0.
    buyers : ndarray of bool, shape (m,)
        Users who bought features to cross the boundary.
    distances : ndarray, shape (m,)
        ``u_i = -(w'x_i + b0) / ||w||``; ``u_i <= 0`` means already positive.
    costs : ndarray, shape (m,)
        What each user paid (``price * u_i`` for buyers, else 0).
    feature_prices : ndarray, shape (d,)
        The per-feature prices ``price * max(w, 0) / ||w||`` (see the module notes).
    budgets : ndarray, shape (m,)
    curve_prices, curve_revenues : ndarray
        Every candidate price (decreasing) and the revenue there, one per tie group.
    """

    price: float
    optimal_price: float
    revenue: float
    optimal_revenue: float
    welfare: float
    social_burden: float | None
    accuracy: float | None
    accuracy_without_market: float | None
    predictions: np.ndarray = field(repr=False)
    buyers: np.ndarray = field(repr=False)
    distances: np.ndarray = field(repr=False)
    costs: np.ndarray = field(repr=False)
    feature_prices: np.ndarray = field(repr=False)
    budgets: np.ndarray = field(repr=False)
    curve_prices: np.ndarray = field(repr=False)
    curve_revenues: np.ndarray = field(repr=False)

    @property
    def n_users(self) -> int:
        return int(self.distances.size)

    @property
    def n_already_positive(self) -> int:
        return int(np.count_nonzero(self.distances <= 0))

    @property
    def n_buyers(self) -> int:
        return int(np.count_nonzero(self.buyers))

    @property
    def n_rejected(self) -> int:
        """Users still predicted negative after the market."""
        return int(self.n_users - np.count_nonzero(self.predictions))

    @property
    def fraction_buying(self) -> float:
        return self.n_buyers / self.n_users

    @property
    def market_forms(self) -> bool:
        """True when somebody buys at a positive, finite price."""
        return math.isfinite(self.price) and self.n_buyers > 0

    def revenue_at(self, price: float) -> float:
        """Revenue the seller would earn at ``price`` (``rho * sum u_i`` over those who buy)."""
        rho = _check_price(price)
        if not math.isfinite(rho) or self.curve_prices.size == 0:
            return 0.0
        # curve_prices decrease; the groups with beta >= rho buy
        count = int(np.searchsorted(-self.curve_prices, -rho, side="right"))
        if count == 0:
            return 0.0
        demand = self.curve_revenues[count - 1] / self.curve_prices[count - 1]
        return float(rho * demand)

    def to_dict(self) -> dict[str, Any]:
        return {
            "price": _finite_or_none(self.price),
            "optimal_price": _finite_or_none(self.optimal_price),
            "revenue": float(self.revenue),
            "optimal_revenue": float(self.optimal_revenue),
            "welfare": float(self.welfare),
            "social_burden": None
            if self.social_burden is None
            else _finite_or_none(self.social_burden),
            "accuracy": None if self.accuracy is None else float(self.accuracy),
            "accuracy_without_market": None
            if self.accuracy_without_market is None
            else float(self.accuracy_without_market),
            "market_forms": self.market_forms,
            "n_users": self.n_users,
            "n_already_positive": self.n_already_positive,
            "n_buyers": self.n_buyers,
            "n_rejected": self.n_rejected,
            "fraction_buying": float(self.fraction_buying),
            "n_price_groups": int(self.curve_prices.size),
            "feature_prices": [_finite_or_none(float(p)) for p in self.feature_prices],
        }

    def summary(self) -> str:
        if self.market_forms:
            head = (
                f"Market price {self.price:.6g} per unit distance: {self.n_buyers} of "
                f"{self.n_users} users buy ({100 * self.fraction_buying:.1f}%), revenue "
                f"{self.revenue:.6g}"
            )
        else:
            head = f"No market forms: nobody of {self.n_users} users buys (revenue 0)"
        if self.price != self.optimal_price:
            head += f"\n  revenue-maximising price {self.optimal_price:.6g} (revenue "
            head += f"{self.optimal_revenue:.6g})"
        lines = [
            head,
            f"  already positive {self.n_already_positive}, still rejected {self.n_rejected}, "
            f"welfare {self.welfare:.6g}",
        ]
        if self.accuracy is not None:
            lines.append(
                f"  accuracy {self.accuracy:.4f} after the market "
                f"({self.accuracy_without_market:.4f} without it), social burden "
                f"{self.social_burden:.6g}"
            )
        return "\n".join(lines)

    def revenue_curve(self, max_price: float | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The exact saw-tooth ``R(rho)`` as (prices, revenues) polyline vertices, increasing in
        price, up to ``max_price`` (sampled at the breakpoints when there are more than a few
        thousand groups)."""
        prices, revenues = self.curve_prices[::-1], self.curve_revenues[::-1]
        if prices.size == 0:
            return np.zeros(2), np.zeros(2)
        demand = revenues / prices
        # On (p_{k-1}, p_k] the demand is demand[k]; just above p_k it falls to demand[k+1].
        after = np.append(demand[1:], 0.0)
        shown = (
            prices.size if max_price is None else int(np.searchsorted(prices, max_price, "right"))
        )
        prices, revenues, after = prices[:shown], revenues[:shown], after[:shown]
        if shown > _MAX_PLOTTED_GROUPS:
            keep = np.unique(np.linspace(0, shown - 1, _MAX_PLOTTED_GROUPS).astype(int))
            return np.concatenate([[0.0], prices[keep]]), np.concatenate([[0.0], revenues[keep]])
        xs = np.concatenate([[0.0], np.repeat(prices, 2)])
        ys = np.concatenate([[0.0], np.column_stack([revenues, prices * after]).ravel()])
        if shown == self.curve_prices.size:  # past the highest price nobody buys
            return np.append(xs, xs[-1] * 1.05 if xs[-1] > 0 else 1.0), np.append(ys, 0.0)
        return xs, ys

    def plot(self, ax=None, *, label: str | None = None):
        """Revenue against price, with the revenue-maximising price marked (drawn up to
        ``_PLOT_PRICE_FACTOR`` times that price: users just short of the boundary have huge
        budget-per-distance values that would flatten the interesting part)."""
        import matplotlib.pyplot as plt

        if ax is None:
            _, ax = plt.subplots(figsize=(6, 3.5))
        limit = None
        if math.isfinite(self.optimal_price):
            limit = _PLOT_PRICE_FACTOR * max(self.optimal_price, self.price)
            if not math.isfinite(limit):
                limit = _PLOT_PRICE_FACTOR * self.optimal_price
        xs, ys = self.revenue_curve(limit)
        (line,) = ax.plot(xs, ys, linewidth=1.2, label=label or "revenue R(rho)")
        if math.isfinite(self.optimal_price):
            ax.plot(
                [self.optimal_price],
                [self.optimal_revenue],
                marker="*",
                markersize=12,
                color=line.get_color(),
                linestyle="none",
                label=f"optimum rho*={self.optimal_price:.3g}",
            )
        if math.isfinite(self.price) and self.price != self.optimal_price:
            ax.axvline(self.price, color=line.get_color(), linestyle=":", linewidth=1)
        ax.set_xlabel("price per unit distance rho")
        ax.set_ylabel("seller revenue")
        ax.set_title("Revenue against price")
        ax.legend(fontsize="small")
        return ax


def _outcome(weights, intercept, features, budgets, positive, price) -> MarketResult:
    """The market at ``price`` (None: the revenue-maximising one)."""
    norm = float(np.linalg.norm(weights))
    distances = -(features @ weights + intercept) / norm
    rejected = distances > 0
    # Users add to features (delta >= 0), so only positive weights let anyone move.
    movable = rejected if np.any(weights > 0) else np.zeros_like(rejected)
    curve = _revenue_curve(distances, budgets, movable)
    if curve.prices.size:
        best = curve.best
        optimal_price, optimal_revenue = float(curve.prices[best]), float(curve.revenues[best])
    else:
        optimal_price, optimal_revenue = math.inf, 0.0
    rho = optimal_price if price is None else price
    buyers = np.zeros(distances.shape, dtype=bool)
    if math.isfinite(rho):
        # beta_i >= rho, computed exactly as the curve was built: a tie group buys whole
        buyers[movable] = budgets[movable] / distances[movable] >= rho
    costs = np.zeros(distances.shape)
    costs[buyers] = rho * distances[buyers]
    if price is None:
        revenue = optimal_revenue
    else:
        revenue = float(rho * distances[buyers].sum()) if buyers.any() else 0.0
    predictions = (~rejected | buyers).astype(np.int64)
    welfare = float(budgets[predictions == 1].sum() - costs.sum())
    if math.isfinite(rho):
        feature_prices = np.maximum(weights, 0.0) * (rho / norm)
    else:
        feature_prices = np.where(weights > 0, math.inf, 0.0)
    burden = accuracy = accuracy_plain = None
    if positive is not None:
        still_out = positive & (predictions == 0)
        burden = float(rho * distances[still_out].sum()) if still_out.any() else 0.0
        accuracy = float(np.mean((predictions == 1) == positive))
        accuracy_plain = float(np.mean(~rejected == positive))
    return MarketResult(
        price=float(rho),
        optimal_price=optimal_price,
        revenue=revenue,
        optimal_revenue=optimal_revenue,
        welfare=welfare,
        social_burden=burden,
        accuracy=accuracy,
        accuracy_without_market=accuracy_plain,
        predictions=predictions,
        buyers=buyers,
        distances=distances,
        costs=costs,
        feature_prices=feature_prices,
        budgets=budgets,
        curve_prices=curve.prices,
        curve_revenues=curve.revenues,
    )


def market_price(w: Any, b0: Any, X: Any, budgets: Any, *, y: Any = None) -> MarketResult:
    """The revenue-maximising feature price a linear classifier induces, and its market.

    Users ``x_i`` with budgets ``b_i`` face ``h(x) = 1{w'x + b0 >= 0}``. A rejected user at
    distance ``u_i = -(w'x_i + b0)/||w||`` buys the cheapest move across the boundary, which costs
    ``rho * u_i`` at price ``rho`` per unit distance, iff it is within budget. The seller picks
    ``rho`` to maximise revenue. O(m log m): one sort and prefix sums; users in a tie group
    (equal ``b_i / u_i``) are counted together.

    Parameters
    ----------
    w : array-like of shape (d,)
        Classifier weights (not all zero). Only features with positive weight are worth buying
        (users can add to features, not remove); if no weight is positive nobody can move.
    b0 : float
        Intercept.
    X : array-like of shape (m, d)
        The users' features (a pandas DataFrame is fine).
    budgets : array-like of shape (m,)
        Non-negative budgets.
    y : array-like of shape (m,), optional
        Binary labels (0/1, -1/+1 or bool; 1 = deserves the positive decision) for accuracy and
        social burden.

    Returns
    -------
    MarketResult
        ``price`` is ``inf`` when nobody needs to move or nobody rejected has a budget (no
        market: the classifier's own decisions stand). When several prices earn exactly the
        same maximal revenue, the lowest is taken (more users accepted, seller indifferent).

    Examples
    --------
    >>> import numpy as np
    >>> from trustlab.strategic import market_price
    >>> X = np.array([[-1.0], [-2.0], [-0.5], [1.0]])  # distances 1, 2, 0.5, -1 for w=1, b0=0
    >>> res = market_price([1.0], 0.0, X, budgets=[2, 2, 2, 1])
    >>> float(res.price), float(res.revenue), res.predictions.tolist()
    (1.0, 3.5, [1, 1, 1, 1])
    """
    weights, intercept, features, money, positive = _validate(w, b0, X, budgets, y)
    return _outcome(weights, intercept, features, money, positive, None)


def market_outcome(
    w: Any, b0: Any, X: Any, budgets: Any, price: float, *, y: Any = None
) -> MarketResult:
    """The market at a given price ``rho`` (per unit distance) instead of the optimal one.

    Users respond to ``price`` (a fixed, exogenous cost, as in standard strategic
    classification); the result still reports the revenue-maximising price for comparison.
    ``price=inf`` means no market. Arguments otherwise as :func:`market_price`.

    Examples
    --------
    >>> from trustlab.strategic import market_outcome
    >>> res = market_outcome([1.0], 0.0, [[-1.0], [-2.0], [-0.5], [1.0]], [2, 2, 2, 1], 1.5)
    >>> res.buyers.tolist(), float(res.revenue)
    ([True, False, True, False], 2.25)
    """
    weights, intercept, features, money, positive = _validate(w, b0, X, budgets, y)
    rho = _check_price(price)
    return _outcome(weights, intercept, features, money, positive, rho)


# ----------------------------------------------------------------------------------------------
# best response to arbitrary per-feature prices


@dataclass(frozen=True)
class BestResponse:
    """Each user's cheapest move to a positive decision under per-feature prices.

    Attributes
    ----------
    cost : ndarray, shape (m,)
        Cost of the cheapest move (0 if already positive, ``inf`` if no feature can help).
    buys : ndarray of bool, shape (m,)
        Users who need to move and can afford it.
    purchases : ndarray, shape (m, d)
        The amounts bought (zero rows for users who do not buy).
    X_after : ndarray, shape (m, d)
        Features after the purchases.
    predictions : ndarray of int, shape (m,)
        Decisions after the purchases (1 positive, 0 negative).
    """

    cost: np.ndarray = field(repr=False)
    buys: np.ndarray = field(repr=False)
    purchases: np.ndarray = field(repr=False)
    X_after: np.ndarray = field(repr=False)
    predictions: np.ndarray = field(repr=False)

    def to_dict(self) -> dict[str, Any]:
        finite = np.isfinite(self.cost)
        return {
            "n_users": int(self.cost.size),
            "n_buying": int(self.buys.sum()),
            "n_positive_after": int(self.predictions.sum()),
            "total_paid": float(self.cost[self.buys].sum()),
            "n_unable_to_move": int((~finite).sum()),
        }

    def summary(self) -> str:
        d = self.to_dict()
        return (
            f"Best response: {d['n_buying']} of {d['n_users']} users buy features "
            f"(paying {d['total_paid']:.6g} in all); {d['n_positive_after']} positive after"
        )


def best_response(w: Any, b0: Any, X: Any, budgets: Any, prices: Any) -> BestResponse:
    """Each user's cheapest purchase ``delta >= 0`` with ``w'(x + delta) + b0 >= 0``.

    ``prices`` is a scalar ``rho`` per unit distance along ``w`` (the market's price: per-feature
    prices ``rho * max(w, 0)/||w||``) or a per-feature price vector ``p >= 0`` of shape (d,). With
    linear costs ``p'delta`` the cheapest move buys only the feature with the lowest
    ``p_j / w_j`` among ``w_j > 0`` (the first such feature on ties); a user buys iff the cost is
    within budget (for a scalar price decided exactly as in :func:`market_outcome`).

    Examples
    --------
    >>> from trustlab.strategic import best_response
    >>> br = best_response([1.0, 2.0], -4.0, [[0.0, 1.0]], [5.0], prices=[1.0, 3.0])
    >>> br.purchases.tolist(), br.cost.tolist()
    ([[2.0, 0.0]], [2.0])
    """
    weights, intercept, features, money, _ = _validate(w, b0, X, budgets)
    gap = -(features @ weights + intercept)  # score still missing
    rejected = gap > 0
    useful = weights > 0
    norm = float(np.linalg.norm(weights))
    scalar = np.ndim(prices) == 0
    if scalar:
        rho = _check_price(prices, "prices")
        per_score = np.where(useful, rho / norm, np.inf)
    else:
        vector = as_float_array(prices, "prices", ndim=1)
        if vector.shape[0] != weights.shape[0]:
            raise InputError.bad("prices", f"{weights.shape[0]} per-feature prices", vector)
        if (vector < 0).any():
            raise InputError.bad("prices", "non-negative per-feature prices", vector)
        per_score = np.full(weights.shape, np.inf)
        per_score[useful] = vector[useful] / weights[useful]
    best = int(np.argmin(per_score))  # the cheapest feature per unit of score
    cost = np.zeros(gap.shape)
    cost[rejected] = gap[rejected] * per_score[best] if np.isfinite(per_score[best]) else np.inf
    if scalar and np.isfinite(per_score[best]):
        # decide as the market does: b_i / u_i >= rho, so tie groups behave identically
        distances = gap[rejected] / norm
        buys = np.zeros(gap.shape, dtype=bool)
        buys[rejected] = money[rejected] / distances >= rho
        cost[rejected] = rho * distances
    else:
        buys = rejected & (cost <= money)
    purchases = np.zeros_like(features)
    purchases[buys, best] = gap[buys] / weights[best]
    predictions = (~rejected | buys).astype(np.int64)
    return BestResponse(cost, buys, purchases, features + purchases, predictions)


# ----------------------------------------------------------------------------------------------
# the smooth price (torch)


def _require_torch():
    try:
        import torch  # noqa: F401
    except ImportError:
        raise ConfigError.missing_extra("torch", "torch") from None
    from trustlab.strategic import _market_torch

    return _market_torch


def soft_market_price(
    w: Any,
    b0: Any,
    X: Any,
    budgets: Any,
    *,
    sort_temperature: float = 0.1,
    softmax_scale: float = 2.0,
) -> float:
    """The differentiable surrogate of :func:`market_price`'s price (MASC's soft price).

    The budget-per-distance values ``beta`` are soft-sorted (SoftSort, temperature
    ``sort_temperature`` on ``beta / min(beta)``), giving soft revenues ``R_k``; the price is the
    ``softmax(softmax_scale * R)``-weighted mean of the soft-sorted ``beta``. It tends to the
    exact price as ``sort_temperature -> 0`` and ``softmax_scale -> inf`` (when the maximal
    revenue is unique). Needs torch; computed in float64; the caller's torch thread setting is
    used.

    Examples
    --------
    >>> from trustlab.strategic import soft_market_price
    >>> X = [[-1.0], [-2.0], [-0.5], [1.0]]
    >>> round(soft_market_price([1.0], 0.0, X, [2, 2, 2, 1], sort_temperature=1e-4,
    ...                         softmax_scale=1e3), 6)
    1.0
    """
    weights, intercept, features, money, _ = _validate(w, b0, X, budgets)
    tau = check_in_range(sort_temperature, "sort_temperature", 0.0, math.inf, low_open=True)
    scale = check_in_range(softmax_scale, "softmax_scale", 0.0, math.inf, low_open=True)
    backend = _require_torch()
    return backend.soft_price_numpy(weights, intercept, features, money, tau, scale)


# ----------------------------------------------------------------------------------------------
# learners


def _sklearn_base():
    from sklearn.base import BaseEstimator, ClassifierMixin

    return BaseEstimator, ClassifierMixin


_BaseEstimator, _ClassifierMixin = _sklearn_base()


class _MarketLinearClassifier(_ClassifierMixin, _BaseEstimator):
    """Shared prediction under the market; subclasses set ``coef_`` and ``intercept_``.

    ``classes_[1]`` (the larger label) is the positive decision users want.
    """

    def _check_fit_inputs(self, X, y, budgets):
        features = _check_fit_features(X)
        labels = as_1d(y, "y")
        if labels.shape[0] != features.shape[0]:
            raise InputError.bad("y", f"{features.shape[0]} labels (one per row of X)", labels)
        classes = np.unique(labels)
        if classes.size != 2:
            raise InputError.bad("y", "exactly two classes", classes.tolist())
        if budgets is None:
            raise InputError.bad("budgets", "the users' budgets (fit(X, y, budgets=...))", None)
        money = _check_budgets(budgets, features.shape[0])
        self.classes_ = classes
        self.n_features_in_ = features.shape[1]
        return features, labels == classes[1], money

    def _check_predict_X(self, X):
        from sklearn.utils.validation import check_is_fitted

        check_is_fitted(self, "coef_")
        return _check_features(X, self.n_features_in_)

    def market(self, X: Any, budgets: Any, y: Any = None, *, price: Any = None) -> MarketResult:
        """The market this classifier induces on the population ``X`` with ``budgets``
        (``price=None``: the revenue-maximising price; a number: users face that price)."""
        features = self._check_predict_X(X)
        positive = None
        if y is not None:
            labels = as_1d(y, "y")
            if labels.shape[0] != features.shape[0]:
                raise InputError.bad("y", f"{features.shape[0]} labels", labels)
            positive = labels == self.classes_[1]
        if price is None:
            return market_price(self.coef_, self.intercept_, features, budgets, y=positive)
        return market_outcome(self.coef_, self.intercept_, features, budgets, price, y=positive)

    def decision_function(self, X: Any, budgets: Any = None, *, price: Any = None) -> np.ndarray:
        """The margin after the market: ``w'x + b0 + ||w|| b_i / rho`` (the user's reach), with
        the sign of the decision; without ``budgets`` the plain score ``w'x + b0``."""
        features = self._check_predict_X(X)
        score = features @ self.coef_ + self.intercept_
        if budgets is None:
            return score
        res = self.market(features, budgets, price=price)
        rho = res.price
        norm = float(np.linalg.norm(self.coef_))
        if not math.isfinite(rho):
            return score
        if rho == 0.0:
            return np.where(res.predictions == 1, np.maximum(score, 0.0), score)
        reach = norm * res.budgets / rho
        margin = score + reach
        # The decision compares b_i/u_i with rho; keep the sign exactly consistent with it.
        return np.where(res.predictions == 1, np.maximum(margin, 0.0), np.minimum(margin, -1e-300))

    def predict(self, X: Any, budgets: Any = None, *, price: Any = None) -> np.ndarray:
        """Decisions after the market the population ``X`` induces (``budgets`` given), or the
        plain classifier's decisions (``budgets=None``: no strategic response)."""
        features = self._check_predict_X(X)
        if budgets is None:
            positive = features @ self.coef_ + self.intercept_ >= 0
        else:
            positive = self.market(features, budgets, price=price).predictions == 1
        return self.classes_[positive.astype(int)]

    def predict_proba(self, X: Any, budgets: Any = None, *, price: Any = None) -> np.ndarray:
        """``sigmoid(decision_function)`` as two columns in ``classes_`` order: a monotone
        squashing of the post-market margin, not a calibrated probability."""
        margin = self.decision_function(X, budgets, price=price)
        positive = 1.0 / (1.0 + np.exp(-np.clip(margin, -500, 500)))
        return np.column_stack([1.0 - positive, positive])

    def score(self, X: Any, y: Any, budgets: Any = None, *, price: Any = None) -> float:
        """Accuracy of :meth:`predict` (after the market when ``budgets`` are given)."""
        labels = as_1d(y, "y")
        return float(np.mean(self.predict(X, budgets, price=price) == labels))


def _check_fit_features(X: Any) -> np.ndarray:
    if hasattr(X, "to_numpy"):
        X = X.to_numpy()
    return as_float_array(X, "X", ndim=2)


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
    >>> from trustlab.strategic import NaiveMarketClassifier
    >>> from trustlab.strategic._simulation import make_market_population
    >>> X, y, b = make_market_population(400, random_state=0)
    >>> clf = NaiveMarketClassifier().fit(X, y, budgets=b)
    >>> clf.score(X, y) > clf.score(X, y, budgets=b)  # the market costs it accuracy
    True
    """

    def __init__(self, C: float = 0.01):
        self.C = C

    def fit(self, X: Any, y: Any, budgets: Any = None) -> NaiveMarketClassifier:
        """Fit on ``(X, y)``; ``budgets`` are accepted for a uniform call shape and ignored."""
        features = _check_fit_features(X)
        if budgets is None:
            budgets = np.zeros(features.shape[0])
        features, positive, _ = self._check_fit_inputs(features, y, budgets)
        C = check_in_range(self.C, "C", 0.0, math.inf, low_open=True)
        self.coef_, self.intercept_ = _fit_logistic(features, positive, C)
        return self


class _TrainedMarketClassifier(_MarketLinearClassifier):
    """Training shared by the fixed-price and market-aware learners (the market hinge, Adam)."""

    def _common_params(self):
        return dict(
            alpha=check_in_range(self.alpha, "alpha", 0.0, math.inf),
            learning_rate=check_in_range(
                self.learning_rate, "learning_rate", 0.0, math.inf, low_open=True
            ),
            batch_size=check_positive_int(self.batch_size, "batch_size", minimum=2),
            max_epochs=check_positive_int(self.max_epochs, "max_epochs"),
            patience=check_positive_int(self.n_iter_no_change, "n_iter_no_change"),
            validation_fraction=check_in_range(
                self.validation_fraction, "validation_fraction", 0.0, 0.9
            ),
            naive_C=check_in_range(self.naive_C, "naive_C", 0.0, math.inf, low_open=True),
        )

    def _prepare(self, X, y, budgets):
        features, positive, money = self._check_fit_inputs(X, y, budgets)
        params = self._common_params()
        rng = check_random_state(self.random_state)
        # Budgets enter the loss only as b_i / rho; scaling them to median 1 leaves the market
        # unchanged and makes the softmax scale mean the same thing whatever the currency.
        paid = money[money > 0]
        self.budget_scale_ = float(np.median(paid)) if paid.size else 1.0
        scaled = money / self.budget_scale_
        order = rng.permutation(features.shape[0])
        n_val = int(round(params["validation_fraction"] * features.shape[0]))
        if n_val and features.shape[0] - n_val < 2:
            raise InputError.bad("X", "enough rows for a training and a validation part", features)
        val, train = order[:n_val], order[n_val:]
        if n_val == 0:
            val = train
        data = _Split(features, positive, scaled, train, val)
        return data, params, rng

    def _train(self, data, params, rng, price_fn: Callable, coef0, intercept0):
        backend = _require_torch()

        def validation_accuracy(coef, intercept):
            rows = data.val
            if not np.any(coef != 0):  # a constant classifier: nobody can move
                return float(np.mean(data.positive[rows] == (intercept >= 0)))
            res = market_price(
                coef, intercept, data.X[rows], data.budgets[rows], y=data.positive[rows]
            )
            return float(res.accuracy)

        fit = backend.train_linear(
            data.X[data.train],
            data.positive[data.train],
            data.budgets[data.train],
            coef0,
            intercept0,
            price_fn=price_fn,
            evaluate=validation_accuracy,
            alpha=params["alpha"],
            learning_rate=params["learning_rate"],
            batch_size=params["batch_size"],
            max_epochs=params["max_epochs"],
            patience=params["patience"],
            rng=rng,
        )
        self.coef_ = fit.coef
        self.intercept_ = fit.intercept
        self.n_epochs_ = fit.n_epochs
        self.best_epoch_ = fit.best_epoch
        self.validation_accuracy_ = fit.best_accuracy
        self.loss_curve_ = fit.losses
        self.validation_curve_ = fit.accuracies
        return self


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
    alpha : float
        Weight ``lambda`` of ``||w||^2`` in the loss (the spec's 1).
    learning_rate : float
        Adam step size.
    batch_size : int
        Minibatch size; the soft price is computed per batch (O(batch^2)).
    max_epochs : int
    n_iter_no_change : int
        Stop after this many epochs without a better validation accuracy; the best parameters
        (the initial ones included) are kept.
    validation_fraction : float
        Share of the training rows held out for early stopping (0: validate on the training
        rows).
    naive_C : float
        ``C`` of the logistic regression that gives the initial weights.
    random_state : None, int or numpy Generator
        Validation split and minibatch order.

    Attributes
    ----------
    coef_, intercept_ : the weights and intercept.
    fixed_price_ : float
        The price trained against, in the units of the budgets.
    budget_scale_ : float
        Median positive training budget (budgets are divided by it inside training).
    n_epochs_, best_epoch_, validation_accuracy_, loss_curve_, validation_curve_
        Training record.
    """

    def __init__(
        self,
        *,
        alpha: float = 1.0,
        learning_rate: float = 0.05,
        batch_size: int = 128,
        max_epochs: int = 100,
        n_iter_no_change: int = 10,
        validation_fraction: float = 0.2,
        naive_C: float = 0.01,
        random_state: Any = None,
    ):
        self.alpha = alpha
        self.learning_rate = learning_rate
        self.batch_size = batch_size
        self.max_epochs = max_epochs
        self.n_iter_no_change = n_iter_no_change
        self.validation_fraction = validation_fraction
        self.naive_C = naive_C
        self.random_state = random_state

    def fit(self, X: Any, y: Any, budgets: Any = None) -> FixedPriceStrategicClassifier:
        data, params, rng = self._prepare(X, y, budgets)
        coef0, intercept0 = _fit_logistic(
            data.X[data.train], data.positive[data.train], params["naive_C"]
        )
        induced = market_price(coef0, intercept0, data.X[data.train], data.budgets[data.train])
        price = induced.price
        self.fixed_price_ = float(price * self.budget_scale_)
        backend = _require_torch()
        self._train(data, params, rng, backend.fixed_price_fn(price), coef0, intercept0)
        return self


class MarketAwareClassifier(_TrainedMarketClassifier):
    """MASC: a linear classifier trained through the market it induces.

    Each minibatch's market price is replaced by a differentiable soft price (SoftSort of the
    budget-per-distance values, softmax over the soft revenues); the market hinge
    ``mean_i max(0, 1 - y_i (w'x_i + b0 + ||w|| b_i / rho~)) + alpha ||w||^2`` then scores each
    user at the reach their budget buys, so no best-response solve is needed. Adam on
    minibatches, early stopping on the validation accuracy under the exact (hard) market.
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
    alpha : float
        Weight ``lambda`` of ``||w||^2`` in the loss (the spec's 1).
    learning_rate : float
        Adam step size.
    batch_size : int
        Minibatch size; the soft price is computed per batch (O(batch^2)).
    max_epochs : int
    n_iter_no_change : int
        Stop after this many epochs without a better validation accuracy; the best parameters
        (the initial ones included) are kept.
    validation_fraction : float
        Share of the training rows held out for early stopping (0: validate on the training
        rows).
    naive_C : float
        ``C`` of the logistic regression that gives the initial weights.
    random_state : None, int or numpy Generator
        Split, minibatch order and (``init="random"``) initial weights.

    Attributes
    ----------
    coef_, intercept_ : the weights and intercept.
    budget_scale_ : float
        Median positive training budget (budgets are divided by it inside training).
    n_epochs_, best_epoch_, validation_accuracy_, loss_curve_, validation_curve_
        Training record.

    Examples
    --------
    >>> from trustlab.strategic import MarketAwareClassifier
    >>> from trustlab.strategic._simulation import make_market_population
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
        learning_rate: float = 0.05,
        batch_size: int = 128,
        max_epochs: int = 100,
        n_iter_no_change: int = 10,
        validation_fraction: float = 0.2,
        naive_C: float = 0.01,
        random_state: Any = None,
    ):
        self.sort_temperature = sort_temperature
        self.softmax_scale = softmax_scale
        self.init = init
        self.alpha = alpha
        self.learning_rate = learning_rate
        self.batch_size = batch_size
        self.max_epochs = max_epochs
        self.n_iter_no_change = n_iter_no_change
        self.validation_fraction = validation_fraction
        self.naive_C = naive_C
        self.random_state = random_state

    def fit(self, X: Any, y: Any, budgets: Any = None) -> MarketAwareClassifier:
        tau = check_in_range(
            self.sort_temperature, "sort_temperature", 0.0, math.inf, low_open=True
        )
        scale = check_in_range(self.softmax_scale, "softmax_scale", 0.0, math.inf, low_open=True)
        init = check_choice(self.init, "init", ("naive", "random"))
        data, params, rng = self._prepare(X, y, budgets)
        if init == "naive":
            coef0, intercept0 = _fit_logistic(
                data.X[data.train], data.positive[data.train], params["naive_C"]
            )
        else:
            coef0 = rng.standard_normal(data.X.shape[1])
            intercept0 = float(rng.standard_normal())
        backend = _require_torch()
        self._train(data, params, rng, backend.soft_price_fn(tau, scale), coef0, intercept0)
        return self
