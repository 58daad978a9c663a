"""Feature markets induced by a linear classifier (Sommer, Hikri, Amit & Rosenfeld, ICML 2025).

A deployed linear classifier ``h(x) = 1{w'x + b0 >= 0}`` creates demand for the features that
raise the score. Users with budgets buy the cheapest move to a positive prediction; a seller
prices the features to maximise revenue. This module computes that market exactly; the learners
that stay accurate once it forms are in :mod:`~trustlab.strategic.learners`.

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
same ``pi`` gives the same market (docs/strategic-markets.md says why there is one seller).
:func:`best_response` evaluates any per-feature price vector you give it.

The revenue-maximising price (:func:`market_price`) is found in O(m log m): revenue
``R(rho) = rho * sum{u_i : 0 < u_i, b_i / u_i >= rho}`` increases between the budget-per-distance
values ``beta_i = b_i / u_i`` and drops at each, so its maximum sits at one of them. Sorting
``beta`` in decreasing order and taking prefix sums of ``u`` at the last index of each group of
equal ``beta`` (a whole tie group buys at its price) gives every candidate revenue at once.

Why this module is long: it is the whole mechanism -- the exact price, its result type with the
revenue curve and plot, the best response under any price vector and the soft price's public
entry point -- which share one convention for distances, prices and overflow; the input checks
are in ``_inputs`` and the torch code in ``_market_torch``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from trustlab._checks import check_positive
from trustlab._lazy import require
from trustlab._results import Result, internal_field, new_axes
from trustlab.strategic._inputs import (
    align_to_columns,
    check_price,
    check_price_vector,
    feature_names,
    market_distances,
    refuse_overflow,
    validate,
)

__all__ = [
    "MarketResult",
    "BestResponse",
    "market_price",
    "market_outcome",
    "best_response",
    "soft_market_price",
]

# Plots draw the exact saw-tooth revenue curve up to this many price groups, then a sample.
_MAX_PLOTTED_GROUPS = 4000
_PLOT_PRICE_FACTOR = 4.0
# best_response under a price vector: a cost this close (relative) to the budget is affordable.
_AFFORD_RTOL = 1e-12
# market price: a revenue this close (relative) to the maximal one ties with it.
_TIE_RTOL = 1e-12


# ----------------------------------------------------------------------------------------------
# the exact market


@dataclass(frozen=True)
class _Curve:
    """Revenue at every candidate price: one entry per group of equal budget-per-distance."""

    prices: np.ndarray  # decreasing
    demand: np.ndarray  # total distance bought at each price (whole tie groups)
    revenues: np.ndarray  # prices * demand

    @property
    def best(self) -> int:
        """Index of the revenue-maximising group; ties go to the lowest price (most buyers). A
        revenue within a relative ``_TIE_RTOL`` of the maximum is a tie: rounding splits equal
        revenues (2.5 * 0.3 and 1.5 * (0.3 + 0.2) are 0.75 and 0.7499999999999999)."""
        top = self.revenues.max()
        return int(np.flatnonzero(self.revenues >= top - _TIE_RTOL * top)[-1])


def _revenue_curve(distances: np.ndarray, budgets: np.ndarray, rejected: np.ndarray) -> _Curve:
    # Only rejected users with money can pay a positive price; a user with no budget buys only
    # at price 0, which earns nothing.
    can_pay = rejected & (budgets > 0)
    gap = distances[can_pay]
    beta = budgets[can_pay] / gap
    # b_i / u_i may underflow to 0 (1e-320 / 1e10): that user too buys only at price 0
    gap, beta = gap[beta > 0], beta[beta > 0]
    order = np.argsort(-beta, kind="stable")
    beta_sorted = beta[order]
    demand = np.cumsum(gap[order])
    group_end = np.flatnonzero(np.append(beta_sorted[1:] != beta_sorted[:-1], True))
    if beta_sorted.size == 0:
        group_end = np.zeros(0, dtype=np.intp)
    prices = beta_sorted[group_end]
    return _Curve(prices, demand[group_end], prices * demand[group_end])


@dataclass(frozen=True)
class MarketResult(Result):
    """The market a linear classifier induces on a population, at one price.

    Saved (``write_outputs``, the CLI's ``--out``) as ``result.json``, the revenue curve as
    ``revenue.png`` and one row per user in ``users.csv``.

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
        to be accepted (None without labels; ``inf`` when one is rejected and no market forms or
        no weight is positive: nobody can move).
        JSON writes infinity as null (``price`` null: no market).
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
    feature_names : list of str or None
        The features' names (the columns of a DataFrame ``X``), None for an array.
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
    predictions: np.ndarray = internal_field()
    buyers: np.ndarray = internal_field()
    distances: np.ndarray = internal_field()
    costs: np.ndarray = internal_field()
    feature_prices: np.ndarray = field(repr=False)
    budgets: np.ndarray = internal_field()
    curve_prices: np.ndarray = internal_field()
    curve_revenues: np.ndarray = internal_field()
    feature_names: list[str] | None = None

    _dict_extras = (
        "market_forms",
        "n_users",
        "n_already_positive",
        "n_buyers",
        "n_rejected",
        "fraction_buying",
        "n_price_groups",
    )
    figure_name = "revenue.png"
    figure_size = (6.0, 3.5)

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
        """True when somebody buys at a finite price (with :func:`market_outcome` the price may
        be 0: everybody who needs to move then buys)."""
        return math.isfinite(self.price) and self.n_buyers > 0

    @property
    def n_price_groups(self) -> int:
        """Candidate prices: groups of users with the same budget per distance."""
        return int(self.curve_prices.size)

    def revenue_at(self, price: float) -> float:
        """Revenue the seller would earn at ``price`` (``rho * sum u_i`` over those who buy)."""
        rho = check_price(price)
        if not math.isfinite(rho) or self.curve_prices.size == 0:
            return 0.0
        # curve_prices decrease; the groups with beta >= rho buy
        count = int(np.searchsorted(-self.curve_prices, -rho, side="right"))
        if count == 0:
            return 0.0
        demand = self.curve_revenues[count - 1] / self.curve_prices[count - 1]
        return float(rho * demand)

    def _dict_items(self) -> dict[str, Any]:
        items = super()._dict_items()
        if self.feature_names is None:  # unnamed features (an array X): no key
            del items["feature_names"]
        return items

    def files(self) -> dict[str, Any]:
        """``users.csv``: per user, the distance to the boundary, budget, purchase, payment and
        the decision after the market."""
        import pandas as pd

        users = {
            "row": np.arange(self.n_users),
            "distance": self.distances,
            "budget": self.budgets,
            "buys": self.buyers,
            "paid": self.costs,
            "decision": self.predictions,
        }
        return {"users.csv": pd.DataFrame(users)}

    def summary(self) -> str:
        if self.market_forms:
            head = (
                f"Market price {self.price:.6g} per unit distance: {self.n_buyers} of "
                f"{self.n_users} users buy ({100 * self.fraction_buying:.1f}%), revenue "
                f"{self.revenue:.6g}"
            )
        else:
            head = f"No market forms: nobody of {self.n_users} users buys (revenue 0)"
        if self.price != self.optimal_price and math.isfinite(self.optimal_price):
            head += f"\n  revenue-maximising price {self.optimal_price:.6g} (revenue "
            head += f"{self.optimal_revenue:.6g})"
        elif self.price != self.optimal_price:
            head += "\n  no price earns revenue: nobody rejected can buy (no market)"
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
        ax = new_axes(ax, figsize=(6.0, 3.5))
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


@np.errstate(over="ignore", invalid="ignore")
def outcome(weights, intercept, features, budgets, positive, price, names=None) -> MarketResult:
    """The market at ``price`` (None: the revenue-maximising one), for checked inputs. Numbers
    that overflow a float64 (budget per distance, total distance, revenue, welfare) are refused:
    an infinite ``b_i / u_i`` made the market vanish without a word."""
    smaller_budgets = "divide the budgets by a constant (prices and revenue scale with them)"
    norm, distances = market_distances(weights, intercept, features)
    rejected = distances > 0
    # Users add to features (delta >= 0), so only positive weights let anyone move.
    movable = rejected if np.any(weights > 0) else np.zeros_like(rejected)
    curve = _revenue_curve(distances, budgets, movable)
    for values, name, what, remedy in (
        (curve.prices, "budgets", "budget per distance b_i / u_i", smaller_budgets),
        (curve.demand, "X", "total distance to the boundary", "use smaller units for X"),
        (curve.revenues, "budgets", "revenues", smaller_budgets),
    ):
        if not np.isfinite(values).all():
            refuse_overflow(name, what, remedy)
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
    if not math.isfinite(welfare) or not math.isfinite(revenue):
        refuse_overflow("budgets", "sums (welfare, revenue)", smaller_budgets)
    if math.isfinite(rho):
        feature_prices = np.maximum(weights, 0.0) * (rho / norm)
    else:
        feature_prices = np.where(weights > 0, math.inf, 0.0)
    burden = accuracy = accuracy_plain = None
    if positive is not None:
        still_out = positive & (predictions == 0)
        # with no positive weight nobody can move at any price: the burden is infinite
        reach = rho if np.any(weights > 0) else math.inf
        burden = float(reach * distances[still_out].sum()) if still_out.any() else 0.0
        if math.isfinite(reach) and not math.isfinite(burden):
            refuse_overflow("price", "social burden (price times distance)", "use a lower price")
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
        feature_names=names,
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
        The users' features (a pandas DataFrame is fine: its columns name the features).
    budgets : array-like of shape (m,)
        Non-negative budgets.
    y : array-like of shape (m,), optional
        Binary labels (0/1, -1/+1 or bool; 1 = deserves the positive decision) for accuracy and
        social burden.

    Returns
    -------
    MarketResult
        ``price`` is ``inf`` when nobody needs to move or nobody rejected has a budget (no
        market: the classifier's own decisions stand). When several prices earn the same
        maximal revenue (to a relative 1e-12, so that rounding does not split a tie), the lowest
        is taken (more users accepted, seller indifferent).

    Examples
    --------
    >>> import numpy as np
    >>> from trustlab.strategic import market_price
    >>> X = np.array([[-1.0], [-2.0], [-0.5], [1.0]])  # distances 1, 2, 0.5, -1 for w=1, b0=0
    >>> res = market_price([1.0], 0.0, X, budgets=[2, 2, 2, 1])
    >>> float(res.price), float(res.revenue), res.predictions.tolist()
    (1.0, 3.5, [1, 1, 1, 1])
    """
    weights, intercept, features, money, positive = validate(w, b0, X, budgets, y)
    return outcome(weights, intercept, features, money, positive, None, feature_names(X))


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
    weights, intercept, features, money, positive = validate(w, b0, X, budgets, y)
    rho = check_price(price)
    return outcome(weights, intercept, features, money, positive, rho, feature_names(X))


# ----------------------------------------------------------------------------------------------
# best response to arbitrary per-feature prices


@dataclass(frozen=True)
class BestResponse(Result):
    """Each user's cheapest move to a positive decision under per-feature prices.

    Attributes
    ----------
    cost : ndarray, shape (m,)
        Cost of the cheapest move (0 if already positive, ``inf`` if no feature can help or the
        cost exceeds the float64 range, 1.8e308).
    buys : ndarray of bool, shape (m,)
        Users who need to move and can afford it.
    purchases : ndarray, shape (m, d)
        The amounts bought (zero rows for users who do not buy; ``inf`` where the amount
        exceeds the float64 range: 1e10 of score through a weight of 1e-320 is 1e330 units).
    X_after : ndarray, shape (m, d)
        Features after the purchases.
    predictions : ndarray of int, shape (m,)
        Decisions after the purchases (1 positive, 0 negative).
    """

    cost: np.ndarray = internal_field()
    buys: np.ndarray = internal_field()
    purchases: np.ndarray = internal_field()
    X_after: np.ndarray = internal_field()
    predictions: np.ndarray = internal_field()

    _dict_extras = ("n_users", "n_buying", "n_positive_after", "total_paid", "n_unable_to_move")

    @property
    def n_users(self) -> int:
        return int(self.cost.size)

    @property
    def n_buying(self) -> int:
        return int(self.buys.sum())

    @property
    def n_positive_after(self) -> int:
        return int(self.predictions.sum())

    @property
    def total_paid(self) -> float:
        return float(self.cost[self.buys].sum())

    @property
    def n_unable_to_move(self) -> int:
        """Users with an infinite cost: no feature can help (no positive weight at a finite
        price), or the cost of the move exceeds the float64 range (nobody can afford it)."""
        return int((~np.isfinite(self.cost)).sum())

    def summary(self) -> str:
        return (
            f"Best response: {self.n_buying} of {self.n_users} users buy features "
            f"(paying {self.total_paid:.6g} in all); {self.n_positive_after} positive after"
        )


def best_response(w: Any, b0: Any, X: Any, budgets: Any, prices: Any) -> BestResponse:
    """Each user's cheapest purchase ``delta >= 0`` with ``w'(x + delta) + b0 >= 0``.

    ``prices`` is a scalar ``rho`` per unit distance along ``w`` (the market's price: per-feature
    prices ``rho * max(w, 0)/||w||``) or a per-feature price vector ``p >= 0`` of shape (d,),
    ``p_j = inf`` for a feature that is not for sale (as ``MarketResult.feature_prices`` reports
    when no market forms; NaN is refused). With
    linear costs ``p'delta`` the cheapest move buys only the feature with the lowest
    ``p_j / w_j`` among ``w_j > 0`` (the first such feature on ties); a user buys iff the cost is
    within budget (for a scalar price decided exactly as in :func:`market_outcome`; for a vector,
    a cost within a relative 1e-12 of the budget counts as within it, so the vector
    ``MarketResult.feature_prices`` gives the market's own buyers, the price-setting user
    included, whatever the rounding of ``p_j / w_j``).

    Examples
    --------
    >>> from trustlab.strategic import best_response
    >>> br = best_response([1.0, 2.0], -4.0, [[0.0, 1.0]], [5.0], prices=[1.0, 3.0])
    >>> br.purchases.tolist(), br.cost.tolist()
    ([[2.0, 0.0]], [2.0])
    """
    weights, intercept, features, money, _ = validate(w, b0, X, budgets)
    prices = align_to_columns(prices, X, "prices")
    scalar = np.ndim(prices) == 0
    vector = None if scalar else check_price_vector(prices, weights.shape[0])
    norm, distances = market_distances(weights, intercept, features)
    gap = -(features @ weights + intercept)  # score still missing (finite: distances are)
    rejected = gap > 0
    useful = weights > 0
    if scalar:
        rho = check_price(prices, "prices")
        per_score = np.where(useful, rho / norm, np.inf)
    else:
        per_score = np.full(weights.shape, np.inf)
        with np.errstate(over="ignore"):  # an inf price: that feature is not for sale
            per_score[useful] = vector[useful] / weights[useful]
    best = int(np.argmin(per_score))  # the cheapest feature per unit of score
    cost = np.zeros(gap.shape)
    with np.errstate(over="ignore"):  # a cost past 1.8e308 is inf, as documented
        cost[rejected] = gap[rejected] * per_score[best] if np.isfinite(per_score[best]) else np.inf
    if not scalar and not np.isfinite(per_score[best]):
        sale = useful & np.isfinite(vector)
        if sale.any():  # for sale, but every p_j / w_j overflowed: compare them as logarithms
            log_ratio = np.where(
                sale,
                np.log(np.where(sale, vector, 1.0)) - np.log(np.where(sale, weights, 1.0)),
                np.inf,
            )
            best = int(np.argmin(log_ratio))
            with np.errstate(over="ignore"):  # the amount bought times its price
                cost[rejected] = gap[rejected] / weights[best] * vector[best]
    if scalar and math.isfinite(rho) and useful.any():  # rho / ||w|| may overflow, rho * u not
        best = int(np.argmax(useful))
        # decide as the market does: b_i / u_i >= rho, so tie groups behave identically
        buys = np.zeros(gap.shape, dtype=bool)
        with np.errstate(over="ignore"):  # b_i / u_i overflowing is above any finite price
            buys[rejected] = money[rejected] / distances[rejected] >= rho
        with np.errstate(over="ignore"):  # a cost past 1.8e308 is inf, as documented
            cost[rejected] = rho * distances[rejected]
    else:
        # A cost within _AFFORD_RTOL of the budget is a tie in floats: the market's own
        # price-setting user pays exactly their budget, and p_j / w_j may round one ulp above.
        buys = rejected & (cost <= money * (1.0 + _AFFORD_RTOL))
    purchases = np.zeros_like(features)
    with np.errstate(over="ignore"):  # an amount past 1.8e308 is inf, as documented
        purchases[buys, best] = gap[buys] / weights[best]
    predictions = (~rejected | buys).astype(np.int64)
    return BestResponse(cost, buys, purchases, features + purchases, predictions)


# ----------------------------------------------------------------------------------------------
# the smooth price (torch)


def torch_backend():
    """The torch side of the market (soft price, market hinge, training loop), or ConfigError
    naming the extra when torch is missing."""
    require("torch", "torch")
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

    ``softmax_scale`` multiplies revenues in the units of ``budgets``, so unlike the exact price
    the soft price depends on the currency: on ``make_market_population(300, random_state=0)``
    with ``w = (1, 1)`` it is 0.263 (exact 0.257), but 2.28 per unit with the budgets given in
    units 100 times larger (every budget divided by 100). MASC divides the budgets by their
    median positive value before training; for the price it trains with, pass ``budgets / m``
    and multiply the result by ``m``.

    Examples
    --------
    >>> from trustlab.strategic import soft_market_price
    >>> X = [[-1.0], [-2.0], [-0.5], [1.0]]
    >>> round(soft_market_price([1.0], 0.0, X, [2, 2, 2, 1], sort_temperature=1e-4,
    ...                         softmax_scale=1e3), 6)
    1.0
    """
    weights, intercept, features, money, _ = validate(w, b0, X, budgets)
    tau = check_positive(sort_temperature, "sort_temperature")
    scale = check_positive(softmax_scale, "softmax_scale")
    outcome(weights, intercept, features, money, None, None)  # refuses what overflows float64
    if not np.any(weights > 0):  # users only add to features: nobody can move, no market
        return math.inf
    _, distances = market_distances(weights, intercept, features)
    price = torch_backend().soft_price_numpy(distances, money, tau, scale)
    if math.isnan(price):  # softmax_scale * revenue overflowed (it gave NaN)
        refuse_overflow(
            "budgets",
            "revenues times softmax_scale",
            "divide the budgets by a constant (the soft price scales with them; the learners "
            "divide them by their median)",
        )
    return price
