"""Populations, the bundled tables as market tasks, and the side-by-side simulation."""

import json
import math

import numpy as np
import pytest
import torch

from trustlab.data import load_dataset
from trustlab.strategic import load_market_data, make_market_population, simulate_market

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def result():
    return simulate_market(n_samples=600, max_epochs=8, random_state=4)


def test_simulation_reports_every_learner_consistently(result):
    data = json.loads(json.dumps(result.to_dict(), allow_nan=False))  # strict JSON
    assert list(data["learners"]) == [
        "naive",
        "fixed_cost_short",
        "fixed_cost_long",
        "market_aware",
    ]
    assert result.n_train + result.n_test == 600 and result.n_test == 180
    for key, entry in data["learners"].items():
        market = result.markets[key]
        assert entry["accuracy"] == market.accuracy
        assert entry["n_users"] == result.n_test
        prices, revenues = entry["revenue_curve"]["price"], entry["revenue_curve"]["revenue"]
        assert prices == sorted(prices)
        # 180 test users: the curve is stored whole, so its maximum is the optimum
        assert max(revenues, default=0.0) == market.optimal_revenue
        if math.isfinite(market.optimal_price):
            assert prices[int(np.argmax(revenues))] == market.optimal_price
    # short and long run share the classifier, so the same revenue-maximising price
    short, long = result.markets["fixed_cost_short"], result.markets["fixed_cost_long"]
    assert short.optimal_price == long.price
    naive = result.markets["naive"]
    assert data["benchmark_accuracy"] == naive.accuracy_without_market
    assert data["margin_over_naive"] == pytest.approx(
        result.markets["market_aware"].accuracy - naive.accuracy
    )


def test_simulation_summary_and_plots(result):
    text = result.summary()
    assert "market-aware (MASC)" in text and "benchmark" in text
    ax = result.plot()
    assert len(ax.get_lines()) >= 3
    bars = result.plot_accuracy()
    assert len(bars.patches) == 5


def test_population_budget_ratio_and_kinds():
    X, y, b = make_market_population(20_000, budget_ratio=4.0, random_state=0)
    ratio = np.median(b[y == 1]) / np.median(b[y == 0])
    assert ratio == pytest.approx(4.0, rel=0.05)
    assert abs(y.mean() - 0.5) < 0.02
    gap = X[y == 1].mean(axis=0) - X[y == 0].mean(axis=0)
    assert np.linalg.norm(gap) == pytest.approx(2.0, rel=0.05)
    Xb, _, flat = make_market_population(
        500, kind="beta", budget_ratio=1.0, budget_spread=0.0, random_state=1
    )
    assert ((Xb >= 0) & (Xb <= 1)).all() and np.allclose(flat, 1.0)


def test_chile_task_uses_income_as_budget_and_vote_yes_as_positive():
    data = load_market_data("chile")
    frame = load_dataset("chile").frame.dropna(
        subset=["statusquo", "age", "education", "sex", "population", "income", "vote"]
    )
    assert data.X.shape == (len(frame), 5)
    assert np.array_equal(data.budgets, frame["income"].to_numpy(float))
    assert np.array_equal(data.y, (frame["vote"] == "Y").to_numpy().astype(int))
    assert np.isfinite(data.X).all()


def test_logan_budgets_double_with_fathers_status():
    first = load_market_data("logan", random_state=0)
    again = load_market_data("logan", random_state=0)
    assert np.array_equal(first.budgets, again.budgets)
    frame = load_dataset("logan").frame
    status = frame["focc"].map(
        {"farm": 0, "operatives": 1, "craftsmen": 2, "sales": 3, "professional": 4}
    )
    slope = np.polyfit(status.to_numpy(float), np.log(first.budgets), 1)[0]
    assert slope == pytest.approx(math.log(2.0), abs=0.1)
    assert first.y.mean() == pytest.approx((frame["occupation"] == "professional").mean())
