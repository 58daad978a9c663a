"""Review 59: the market hinge at a finite price, and the soft price's users with no money.

Only the hinge's value at price inf (no reach) and its gradient were tested, so subtracting the
reach ``||w|| b_i / rho`` instead of adding it, or dropping ``||w||`` from it, passed every fast
market test (only the 20-population background claim could notice). A rejected user with budget
0 takes no part in the soft price (``beta = 0`` would divide ``beta / min(beta)`` by zero)."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from trustlab.strategic._market_torch import market_hinge, soft_price  # noqa: E402

torch.set_num_threads(1)


def test_market_hinge_at_a_finite_price_scores_users_at_their_reach():
    coef = np.array([1.2, -1.6])  # ||w|| = 2
    intercept, price, alpha = -0.5, 4.0, 0.3
    X = np.array([[0.5, 0.5], [-1.0, 0.0], [1.0, 1.0], [0.0, 1.0]])
    signs = np.array([1.0, 1.0, -1.0, -1.0])
    budgets = np.array([2.0, 0.5, 1.0, 2.0])
    # by hand: reach 2 * b / 4 = (1, 0.25, 0.5, 1); margins w'x + b0 + reach
    margins = X @ coef + intercept + np.array([1.0, 0.25, 0.5, 1.0])
    expected = np.maximum(0.0, 1.0 - signs * margins).mean() + alpha * 4.0
    t = lambda a: torch.as_tensor(a, dtype=torch.float64)  # noqa: E731
    value = market_hinge(t(coef), t(intercept), t(X), t(signs), t(budgets), t(price), alpha)
    assert float(value) == pytest.approx(expected, rel=1e-14)


def test_soft_price_ignores_rejected_users_without_money():
    distances = torch.tensor([1.0, 2.0, 0.5, -1.0, 0.7], dtype=torch.float64)
    budgets = torch.tensor([2.0, 2.0, 2.0, 1.0, 0.0], dtype=torch.float64)
    price = soft_price(distances, budgets, 0.1, 2.0)
    without = soft_price(distances[:4], budgets[:4], 0.1, 2.0)
    assert torch.isfinite(price) and float(price) == float(without)
