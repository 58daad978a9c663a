"""The differentiable market: SoftSort, the soft price's hard limit and the market hinge's
gradient (torch.autograd.gradcheck in double precision)."""

import numpy as np
import pytest
import torch

from trustlab.strategic import market_price, soft_market_price
from trustlab.strategic._market_torch import market_hinge, soft_price, soft_sort_matrix

torch.set_num_threads(1)


def population(seed, m=60):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, 2))
    w = np.array([1.0, rng.uniform(-0.5, 1.0)])
    return w, -0.3, X, rng.lognormal(sigma=0.7, size=m)


def test_soft_sort_tends_to_the_sorting_permutation():
    values = torch.tensor([0.3, 2.0, -1.0, 0.7, 1.1], dtype=torch.float64)
    perm = soft_sort_matrix(values, 1e-4)
    assert torch.allclose(perm.sum(dim=1), torch.ones(5, dtype=torch.float64))
    assert torch.allclose(perm @ values, torch.sort(values, descending=True).values, atol=1e-12)
    smooth = soft_sort_matrix(values, 1.0)
    assert (smooth > 1e-3).sum() > 5  # a real blend at a high temperature


@pytest.mark.parametrize("seed", range(5))
def test_soft_price_converges_to_the_hard_price(seed):
    w, b0, X, budgets = population(seed)
    hard = market_price(w, b0, X, budgets)
    # the limit is the arg-max only when the best revenue is unique: check it clearly is
    runner_up = np.sort(hard.curve_revenues)[-2]
    assert hard.optimal_revenue - runner_up > 1e-3
    errors = []
    for tau_ss, tau_sm in ((0.1, 2.0), (1e-2, 1e2), (1e-4, 1e4)):
        soft = soft_market_price(w, b0, X, budgets, sort_temperature=tau_ss, softmax_scale=tau_sm)
        errors.append(abs(soft - hard.price) / hard.price)
    assert errors[-1] <= 1e-3
    assert errors[-1] <= errors[0]


def test_soft_price_of_a_tie_group_tends_to_its_price():
    # the spec's worked example plus a tie group (beta = 1 twice); hard price 1, revenue 5.5
    X = -np.array([[1.0], [2.0], [0.5], [-1.0], [2.0]])
    budgets = [2.0, 2.0, 2.0, 1.0, 2.0]
    assert market_price([1.0], 0.0, X, budgets).price == 1.0
    soft = soft_market_price([1.0], 0.0, X, budgets, sort_temperature=1e-4, softmax_scale=1e4)
    assert soft == pytest.approx(1.0, rel=1e-3)


def test_soft_price_without_buyers_is_infinite():
    X = np.array([[1.0], [2.0]])
    assert soft_market_price([1.0], 0.0, X, [1.0, 1.0]) == np.inf


@pytest.mark.parametrize("seed", range(3))
def test_market_hinge_gradient_matches_finite_differences(seed):
    w, b0, X, budgets = population(seed, m=24)
    signs = torch.as_tensor(np.where(X[:, 0] > 0, 1.0, -1.0))
    features = torch.as_tensor(X)
    money = torch.as_tensor(budgets)

    def loss(coef, intercept):
        distances = -(features @ coef + intercept) / torch.linalg.vector_norm(coef)
        price = soft_price(distances, money, 0.1, 2.0)
        return market_hinge(coef, intercept, features, signs, money, price, 1.0)

    coef = torch.tensor(w, dtype=torch.float64, requires_grad=True)
    intercept = torch.tensor(b0, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(loss, (coef, intercept), eps=1e-6, atol=1e-6, rtol=1e-5)
    # and the price itself responds to the weights (the gradient flows through the market)
    distances = -(features @ coef + intercept) / torch.linalg.vector_norm(coef)
    (grad,) = torch.autograd.grad(soft_price(distances, money, 0.1, 2.0), coef)
    assert torch.linalg.vector_norm(grad) > 0


def test_market_hinge_at_infinite_price_is_the_plain_hinge():
    features = torch.tensor([[1.0, 0.0], [0.0, -2.0]], dtype=torch.float64)
    signs = torch.tensor([1.0, -1.0], dtype=torch.float64)
    coef = torch.tensor([0.5, 0.5], dtype=torch.float64)
    intercept = torch.tensor(0.1, dtype=torch.float64)
    money = torch.tensor([3.0, 3.0], dtype=torch.float64)
    value = market_hinge(coef, intercept, features, signs, money, torch.tensor(np.inf), 0.0)
    margins = features @ coef + intercept
    assert value == pytest.approx(float(torch.clamp_min(1 - signs * margins, 0).mean()))
