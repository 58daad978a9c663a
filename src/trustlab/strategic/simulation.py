"""Populations for feature markets and the side-by-side simulation of the three learners.

Public names (re-exported by :mod:`trustlab.strategic`): :func:`make_market_population` (the
spec's synthetic populations), :func:`load_market_data` (the bundled tables turned into a binary
task with budgets) and :func:`simulate_market` (naive, fixed-cost and market-aware learners under
the market they induce on held-out users, as a :class:`MarketSimulation`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from trustlab._checks import (
    check_choice,
    check_in_range,
    check_non_negative,
    check_positive,
    check_positive_int,
    check_random_state,
)
from trustlab._results import Result, internal_field, new_axes
from trustlab.errors import InputError
from trustlab.strategic.learners import (
    FixedPriceStrategicClassifier,
    MarketAwareClassifier,
    NaiveMarketClassifier,
)
from trustlab.strategic.market import MarketResult

__all__ = [
    "make_market_population",
    "MarketData",
    "load_market_data",
    "MarketSimulation",
    "simulate_market",
]

DATA_CHOICES = ("synthetic", "chile", "logan")
_KINDS = ("mixture", "beta")
# Learners in the order they are reported and plotted.
LEARNERS = ("naive", "fixed_cost_short", "fixed_cost_long", "market_aware")
_LABELS = {
    "naive": "naive (market-unaware)",
    "fixed_cost_short": "fixed-cost strategic, short run",
    "fixed_cost_long": "fixed-cost strategic, long run",
    "market_aware": "market-aware (MASC)",
}
_SHORT_LABELS = {
    "naive": "naive",
    "fixed_cost_short": "fixed-cost\nshort run",
    "fixed_cost_long": "fixed-cost\nlong run",
    "market_aware": "market-aware\n(MASC)",
}
_CURVE_POINTS = 400
_MAX_SEED = 2**32 - 1
# Duncan-style socio-economic order of the father's occupation in `logan` (low to high).
_LOGAN_STATUS = {"farm": 0, "operatives": 1, "craftsmen": 2, "sales": 3, "professional": 4}


def make_market_population(
    n_samples: int = 1000,
    *,
    kind: str = "mixture",
    separation: float = 2.0,
    budget_ratio: float = 4.0,
    budget_spread: float = 0.5,
    random_state: Any = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A synthetic population for feature markets: features, binary labels and budgets.

    Labels are balanced 0/1 draws. ``kind="mixture"``: two unit-variance Gaussians in 2-D whose
    means are ``separation`` apart along the diagonal. ``kind="beta"``: non-negative features,
    each coordinate Beta(4, 2) for positives and Beta(2, 4) for negatives (``separation``
    unused). Budgets are log-normal with spread ``budget_spread`` (sd of the log) and a scale
    tied to the label: the median budget of positives is ``budget_ratio`` times that of
    negatives (geometric mean 1). ``budget_ratio=1, budget_spread=0`` gives uniform budgets.

    Returns
    -------
    X : ndarray (n_samples, 2), y : ndarray of int (n_samples,), budgets : ndarray (n_samples,)

    Examples
    --------
    >>> from trustlab.strategic import make_market_population
    >>> X, y, b = make_market_population(6, random_state=0)
    >>> X.shape, sorted(set(y.tolist())) <= [0, 1], bool((b > 0).all())
    ((6, 2), True, True)
    """
    n = check_positive_int(n_samples, "n_samples", minimum=2)
    kind = check_choice(kind, "kind", _KINDS)
    gap = check_non_negative(separation, "separation")
    ratio = check_positive(budget_ratio, "budget_ratio")
    spread = check_non_negative(budget_spread, "budget_spread")
    rng = check_random_state(random_state)
    y = rng.integers(0, 2, size=n)
    sign = np.where(y == 1, 1.0, -1.0)
    if kind == "mixture":
        X = rng.standard_normal((n, 2)) + (sign * gap / (2 * math.sqrt(2)))[:, None]
    else:
        a = np.where(y == 1, 4.0, 2.0)[:, None]
        X = rng.beta(a, 6.0 - a, size=(n, 2))
    log_budget = sign * math.log(ratio) / 2 + spread * rng.standard_normal(n)
    with np.errstate(over="ignore"):
        budgets = np.exp(log_budget)
    if not np.isfinite(budgets).all():
        raise InputError(
            f"budget_spread: expected a spread whose log-normal budgets fit in a float64 (at "
            f"most 1.8e308), got {spread:g} (with budget_ratio {ratio:g}): a budget overflowed "
            "to infinity",
            argument="budget_spread",
        )
    return X, y.astype(np.int64), budgets


@dataclass(frozen=True)
class MarketData:
    """A binary task with budgets built from a bundled table.

    Attributes
    ----------
    name : str
    X : ndarray (n, d)
        Numeric features (not standardised).
    y : ndarray of int (n,)
        1 = the positive decision users want.
    budgets : ndarray (n,)
    feature_names : list of str
    positive_label : str
        What ``y = 1`` means.
    budget_note : str
        Where the budgets come from.
    """

    name: str
    X: np.ndarray = field(repr=False)
    y: np.ndarray = field(repr=False)
    budgets: np.ndarray = field(repr=False)
    feature_names: list[str]
    positive_label: str
    budget_note: str


def load_market_data(name: str, *, random_state: Any = None) -> MarketData:
    """The bundled ``chile`` or ``logan`` table as a market task (binary label, budgets).

    - ``chile``: positive = votes "Y" (against the other three answers); budget = the
      respondent's income (pesos, a real budget proxy, not used as a feature); features
      statusquo, age, education (0 primary, 1 secondary, 2 post-secondary: the table's codes P,
      S, PS in their real order), male
      and log population. Rows with a missing value are dropped.
    - ``logan``: positive = occupation "professional" (vs the other four); the table has no
      money column, so budgets are simulated (seeded by ``random_state``): log-normal with sd 0.5
      and a median that doubles with each step of the father's occupational status (farm <
      operatives < craftsmen < sales < professional). Features: education and one indicator per
      father's occupation other than farm.

    Examples
    --------
    >>> from trustlab.strategic import load_market_data
    >>> data = load_market_data("chile")
    >>> data.X.shape[1], data.positive_label
    (5, "vote == 'Y'")
    """
    from trustlab.data import load_dataset

    name = check_choice(name, "name", ("chile", "logan"))
    frame = load_dataset(name).frame
    if name == "chile":
        used = ["statusquo", "age", "education", "sex", "population", "income", "vote"]
        frame = frame.dropna(subset=used)
        # P primary < S secondary < PS post-secondary (carData's codes; not alphabetical)
        education = frame["education"].map({"P": 0.0, "S": 1.0, "PS": 2.0}).to_numpy()
        X = np.column_stack(
            [
                frame["statusquo"].to_numpy(float),
                frame["age"].to_numpy(float),
                education,
                (frame["sex"] == "M").to_numpy(float),
                np.log(frame["population"].to_numpy(float)),
            ]
        )
        return MarketData(
            "chile",
            X,
            (frame["vote"] == "Y").to_numpy().astype(np.int64),
            frame["income"].to_numpy(float),
            ["statusquo", "age", "education", "male", "log_population"],
            "vote == 'Y'",
            "income (pesos), as reported in the survey",
        )
    frame = frame.dropna(subset=["occupation", "focc", "education"])
    rng = check_random_state(random_state)
    status = frame["focc"].map(_LOGAN_STATUS).to_numpy(float)
    budgets = np.exp(status * math.log(2.0) + 0.5 * rng.standard_normal(status.size))
    levels = [level for level in _LOGAN_STATUS if level != "farm"]
    X = np.column_stack(
        [frame["education"].to_numpy(float)]
        + [(frame["focc"] == level).to_numpy(float) for level in levels]
    )
    return MarketData(
        "logan",
        X,
        (frame["occupation"] == "professional").to_numpy().astype(np.int64),
        budgets,
        ["education"] + [f"father_{level}" for level in levels],
        "occupation == 'professional'",
        "simulated: log-normal, median doubling with each step of the father's occupational "
        "status (sd of the log 0.5)",
    )


@dataclass(frozen=True)
class MarketSimulation(Result):
    """Naive, fixed-cost and market-aware learners under the market they induce on test users.

    Saved (``write_outputs``, the CLI's ``--out``) as ``result.json`` (every number, the revenue
    curves included), ``revenue.png`` (:meth:`plot`) and ``accuracy.png``
    (:meth:`plot_accuracy`).

    Attributes
    ----------
    data : str
    positive_label, budget_note : str
    n_train, n_test : int
    markets : dict of str to MarketResult
        On the test users: ``naive``, ``fixed_cost_short`` (users face the price the fixed-cost
        learner was trained for), ``fixed_cost_long`` (after the market re-prices) and
        ``market_aware``.
    coefficients : dict of str to (list of float, float)
        Weights and intercept of each learner (on standardised features).
    feature_names : list of str
    random_state : int
        The seed of the data, the split and the training.
    """

    data: str
    positive_label: str
    budget_note: str
    n_train: int
    n_test: int
    markets: dict[str, MarketResult] = internal_field()
    coefficients: dict[str, tuple[list[float], float]] = internal_field()
    feature_names: list[str]
    random_state: int

    figure_name = "revenue.png"
    figure_size = (7.0, 4.2)

    @property
    def benchmark_accuracy(self) -> float:
        """The naive learner's accuracy when nobody can buy features (non-strategic data)."""
        return float(self.markets["naive"].accuracy_without_market)

    def accuracy(self, learner: str) -> float:
        """Accuracy of ``learner`` after the market forms."""
        return float(self.markets[check_choice(learner, "learner", LEARNERS)].accuracy)

    @property
    def margin_over_naive(self) -> float:
        """Market-aware minus naive accuracy after the market (positive: MASC is better)."""
        return self.accuracy("market_aware") - self.accuracy("naive")

    def _dict_items(self) -> dict[str, Any]:
        learners = {}
        for key in LEARNERS:
            market = self.markets[key]
            coef, intercept = self.coefficients["fixed_cost" if key.startswith("fixed") else key]
            curve_x, curve_y = _sampled_curve(market)
            learners[key] = {
                "label": _LABELS[key],
                **market.to_dict(),
                "coef": coef,
                "intercept": intercept,
                "revenue_curve": {"price": curve_x, "revenue": curve_y},
            }
        return {
            "data": self.data,
            "positive_label": self.positive_label,
            "budget_note": self.budget_note,
            "feature_names": self.feature_names,
            "n_train": self.n_train,
            "n_test": self.n_test,
            "random_state": self.random_state,
            "benchmark_accuracy": self.benchmark_accuracy,
            "margin_over_naive": self.margin_over_naive,
            "learners": learners,
        }

    def files(self) -> dict[str, Any]:
        """``accuracy.png``: :meth:`plot_accuracy`."""
        return {"accuracy.png": self.plot_accuracy}

    def summary(self) -> str:
        lines = [
            f"Feature-market simulation on {self.data} ({self.n_train} train / {self.n_test} "
            f"test users; positive: {self.positive_label}; budgets: {self.budget_note})",
            f"  benchmark (no market, naive): accuracy {self.benchmark_accuracy:.4f}",
        ]
        for key in LEARNERS:
            m = self.markets[key]
            price = f"{m.price:.4g}" if math.isfinite(m.price) else "none"
            lines.append(
                f"  {_LABELS[key]:<34} accuracy {m.accuracy:.4f}  price {price:>9}  "
                f"buying {100 * m.fraction_buying:5.1f}%  welfare {m.welfare:.4g}"
            )
        lines.append(f"  market-aware - naive: {100 * self.margin_over_naive:+.1f} points")
        return "\n".join(lines)

    def plot(self, ax=None):
        """Revenue against price on the test users for each deployed learner, optima marked."""
        ax = new_axes(ax, figsize=(6.5, 4.0))
        for key in ("naive", "fixed_cost_long", "market_aware"):
            self.markets[key].plot(ax=ax, label=_LABELS[key])
        ax.set_title(f"Revenue against price ({self.data}, test users)")
        return ax

    def plot_accuracy(self, ax=None):
        """Accuracy under the induced market for each learner, with the no-market benchmark."""
        ax = new_axes(ax, figsize=(6.5, 4.0))
        names = ["benchmark\n(no market)"] + [_SHORT_LABELS[k] for k in LEARNERS]
        values = [self.benchmark_accuracy] + [self.accuracy(k) for k in LEARNERS]
        colors = ["tab:gray", "tab:red", "tab:orange", "tab:olive", "tab:green"]
        bars = ax.bar(range(len(values)), values, color=colors)
        for bar, value in zip(bars, values, strict=True):
            ax.annotate(
                f"{value:.3f}",
                (bar.get_x() + bar.get_width() / 2, value),
                ha="center",
                va="bottom",
                fontsize="small",
            )
        ax.set_xticks(range(len(values)), names, fontsize="small")
        ax.set_ylim(0, 1.05)
        ax.set_ylabel("accuracy on test users")
        ax.set_title(f"Accuracy under the induced market ({self.data})")
        return ax


def _sampled_curve(market: MarketResult) -> tuple[list[float], list[float]]:
    """Revenue at (at most ``_CURVE_POINTS``) candidate prices, increasing in price."""
    prices, revenues = market.curve_prices[::-1], market.curve_revenues[::-1]
    if prices.size > _CURVE_POINTS:
        keep = np.unique(np.linspace(0, prices.size - 1, _CURVE_POINTS).astype(int))
        prices, revenues = prices[keep], revenues[keep]
    return [float(p) for p in prices], [float(r) for r in revenues]


def _population(data, n_samples, budget_ratio, seed):
    if data == "synthetic":
        X, y, budgets = make_market_population(
            n_samples, budget_ratio=budget_ratio, random_state=seed
        )
        note = f"log-normal, positives' median {budget_ratio:g}x negatives' (sd of the log 0.5)"
        return X, y, budgets, ["x1", "x2"], "y == 1 (2-D Gaussian mixture)", note
    table = load_market_data(data, random_state=seed)
    return (
        table.X,
        table.y,
        table.budgets,
        table.feature_names,
        table.positive_label,
        (table.budget_note),
    )


def _check_split(y: np.ndarray, share: float, seed: int) -> None:
    """The stratified split needs 2 users of each label and 2 test users (scikit-learn raised a
    bare ValueError: 'The least populated classes in y have only 1 member', or 'The test_size =
    1 should be greater or equal to the number of classes = 2')."""
    counts = np.bincount(y, minlength=2)
    if counts.min() < 2:
        raise InputError(
            f"n_samples: expected a population with at least 2 users of each label to split, "
            f"got {counts.min()} with label {counts.argmin()} among {y.size} users (drawn with "
            f"seed {seed}); draw more users or use another seed",
            argument="n_samples",
        )
    if math.ceil(share * y.size) < 2:  # scikit-learn's size of the test part
        raise InputError(
            f"test_size: expected a share that puts at least 2 of the {y.size} users (one per "
            f"label) in the test part, got {share:g} ({math.ceil(share * y.size)} user)",
            argument="test_size",
        )


def simulate_market(
    data: str = "synthetic",
    *,
    n_samples: int = 2000,
    budget_ratio: float = 4.0,
    test_size: float = 0.3,
    max_epochs: int = 60,
    random_state: int = 0,
    callback: Callable[[str], None] | None = None,
) -> MarketSimulation:
    """Train the naive, fixed-cost and market-aware learners and deploy them on test users.

    The rows are split (stratified) into train and test; features are standardised on the
    training part. Each learner is fitted on the training users; the market each induces is then
    formed on the test users (exact revenue-maximising price) and its accuracy measured there.
    The fixed-cost learner is reported twice: short run (test users face the price it was
    trained for) and long run (the market re-prices).

    Parameters
    ----------
    data : {"synthetic", "chile", "logan"}
        ``synthetic``: :func:`make_market_population` (Gaussian mixture) with ``n_samples`` rows
        and ``budget_ratio``; the tables: :func:`load_market_data` (``n_samples`` and
        ``budget_ratio`` unused).
    test_size : float
        Share of rows for the test users. The split is stratified: a population with fewer
        than 2 users of a label, or a share giving fewer than 2 test users (``n_samples=20``
        with ``test_size=0.05``), is refused (InputError naming ``n_samples`` or ``test_size``).
    max_epochs : int
        Epoch cap of the two trained learners (early stopping usually ends sooner).
    random_state : int
        Seed of the data (synthetic, simulated budgets), split and training: 0 to 2**32 - 1.
    callback : callable, optional
        Called with a short description before each stage (the CLI drives a progress bar).

    Examples
    --------
    >>> from trustlab.strategic import simulate_market
    >>> res = simulate_market(n_samples=600, max_epochs=5, random_state=0)
    >>> sorted(res.markets) == sorted(["naive", "fixed_cost_short", "fixed_cost_long",
    ...                                "market_aware"])
    True
    """
    data = check_choice(data, "data", DATA_CHOICES)
    n = check_positive_int(n_samples, "n_samples", minimum=20)
    share = check_in_range(test_size, "test_size", 0.05, 0.8)
    max_epochs = check_positive_int(max_epochs, "max_epochs")
    seed = check_positive_int(random_state, "random_state", minimum=0)
    if seed > _MAX_SEED:  # scikit-learn's split takes seeds below 2**32
        raise InputError.bad("random_state", f"an integer seed in [0, {_MAX_SEED}]", seed)
    step = callback or (lambda _text: None)

    from sklearn.model_selection import train_test_split

    step("preparing the data")
    X, y, budgets, names, positive_label, budget_note = _population(data, n, budget_ratio, seed)
    _check_split(y, share, seed)
    train, test = train_test_split(
        np.arange(y.size), test_size=share, stratify=y, random_state=seed
    )
    mean, std = X[train].mean(axis=0), X[train].std(axis=0)
    X = (X - mean) / np.where(std > 0, std, 1.0)
    fit_args = (X[train], y[train])

    step("fitting the naive learner")
    naive = NaiveMarketClassifier().fit(*fit_args, budgets=budgets[train])
    step("fitting the fixed-cost strategic learner")
    fixed = FixedPriceStrategicClassifier(max_epochs=max_epochs, random_state=seed)
    fixed.fit(*fit_args, budgets=budgets[train])
    step("fitting the market-aware learner (MASC)")
    masc = MarketAwareClassifier(max_epochs=max_epochs, random_state=seed)
    masc.fit(*fit_args, budgets=budgets[train])

    step("forming the markets on the test users")
    X_test, y_test, b_test = X[test], y[test], budgets[test]
    markets = {
        "naive": naive.market(X_test, b_test, y_test),
        "fixed_cost_short": fixed.market(X_test, b_test, y_test, price=fixed.fixed_price_),
        "fixed_cost_long": fixed.market(X_test, b_test, y_test),
        "market_aware": masc.market(X_test, b_test, y_test),
    }
    coefficients = {
        key: ([float(c) for c in model.coef_], float(model.intercept_))
        for key, model in (("naive", naive), ("fixed_cost", fixed), ("market_aware", masc))
    }
    return MarketSimulation(
        data=data,
        positive_label=positive_label,
        budget_note=budget_note,
        n_train=int(train.size),
        n_test=int(test.size),
        markets=markets,
        coefficients=coefficients,
        feature_names=list(names),
        random_state=seed,
    )
