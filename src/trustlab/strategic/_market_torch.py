"""The torch side of the feature-market learners: SoftSort, the soft price, the market hinge and
the minibatch training loop.

Imported only from :mod:`trustlab.strategic.market` when a learner is fitted or a soft price is
asked for (torch is an optional extra). Everything runs in float64 on the caller's torch thread
setting; randomness comes from the numpy Generator the caller passes.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch

from trustlab.errors import InputError

__all__ = [
    "soft_sort_matrix",
    "soft_price",
    "soft_price_numpy",
    "market_hinge",
    "soft_price_fn",
    "fixed_price_fn",
    "train_linear",
    "TrainedLinear",
]

_DTYPE = torch.float64


def soft_sort_matrix(values: torch.Tensor, temperature: float) -> torch.Tensor:
    """SoftSort (Prillo & Eisenschlos, 2020), decreasing: ``P[i, j] = softmax_j(-|s_(i) - s_j|
    / temperature)`` where ``s_(i)`` is the i-th largest value; ``P @ s`` is the soft-sorted
    vector and tends to the sorting permutation as ``temperature -> 0``."""
    ranked = torch.sort(values, descending=True).values
    return torch.softmax(-(ranked[:, None] - values[None, :]).abs() / temperature, dim=1)


def soft_price(
    distances: torch.Tensor,
    budgets: torch.Tensor,
    sort_temperature: float,
    softmax_scale: float,
) -> torch.Tensor:
    """MASC's differentiable market price from distances ``u`` and budgets ``b``.

    Only users still rejected and with money take part (``u > 0``, ``b > 0``); their
    budget-per-distance ``beta = b / u`` is soft-sorted (on ``beta / min(beta)``, so the
    temperature is free of units), the soft revenues are ``R_k = beta~_k * cumsum(u~)_k`` and the
    price is ``sum_k softmax(softmax_scale * R)_k beta~_k``. ``inf`` when nobody takes part.
    """
    taking_part = (distances > 0) & (budgets > 0)
    gap = distances[taking_part]
    beta = budgets[taking_part] / gap
    # b / u may underflow to 0 (1e-320 / 1e10): that user too buys only at price 0
    gap, beta = gap[beta > 0], beta[beta > 0]
    if beta.numel() == 0:
        return torch.tensor(math.inf, dtype=distances.dtype)
    if beta.numel() == 1:
        return beta[0]
    perm = soft_sort_matrix(beta / beta.min(), sort_temperature)
    beta_sorted = perm @ beta
    revenue = beta_sorted * torch.cumsum(perm @ gap, dim=0)
    return torch.softmax(softmax_scale * revenue, dim=0) @ beta_sorted


def soft_price_numpy(distances, budgets, sort_temperature, softmax_scale):
    """:func:`soft_price` for numpy distances and budgets -> float. The caller computes the
    distances as the exact market does (``||w||`` at any scale of ``w``: torch's norm of
    ``w = [1e160]`` overflowed, which gave a soft price of inf, and of ``[1e-200]`` was 0)."""
    with torch.no_grad():
        u = torch.as_tensor(distances, dtype=_DTYPE)
        b = torch.as_tensor(budgets, dtype=_DTYPE)
        return float(soft_price(u, b, sort_temperature, softmax_scale))


def market_hinge(
    coef: torch.Tensor,
    intercept: torch.Tensor,
    features: torch.Tensor,
    signs: torch.Tensor,
    budgets: torch.Tensor,
    price: torch.Tensor,
    alpha: float,
) -> torch.Tensor:
    """``mean_i max(0, 1 - y_i (w'x_i + b0 + ||w|| b_i / price)) + alpha ||w||^2``.

    ``||w|| b_i / price`` is the score user ``i`` can buy, so the hinge scores each user where
    the market would put them (``signs`` are +1 / -1 labels). ``price = inf`` gives the plain
    hinge.
    """
    norm = torch.linalg.vector_norm(coef)
    reach = norm * budgets / price
    margin = features @ coef + intercept + reach
    return torch.clamp_min(1.0 - signs * margin, 0.0).mean() + alpha * norm**2


PriceFn = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]


def soft_price_fn(sort_temperature: float, softmax_scale: float) -> PriceFn:
    """The per-batch price of MASC: the soft price of the batch's own market."""

    def price(distances: torch.Tensor, budgets: torch.Tensor) -> torch.Tensor:
        return soft_price(distances, budgets, sort_temperature, softmax_scale)

    return price


def fixed_price_fn(value: float) -> PriceFn:
    """A price that does not respond to the classifier (the standard strategic setting)."""
    constant = torch.tensor(float(value), dtype=_DTYPE)

    def price(distances: torch.Tensor, budgets: torch.Tensor) -> torch.Tensor:
        return constant

    return price


@dataclass(frozen=True)
class TrainedLinear:
    coef: np.ndarray
    intercept: float
    n_epochs: int
    best_epoch: int
    best_accuracy: float
    losses: list[float]
    accuracies: list[float]


def _overflow(what: str) -> InputError:
    return InputError(
        "budgets: expected budgets whose market (budget per distance, revenues, reach) fits "
        f"in a float64 in training, got {what} (the budgets span too many orders of magnitude "
        "around their median; clip or rescale the extremes)",
        argument="budgets",
    )


def train_linear(
    features: np.ndarray,
    positive: np.ndarray,
    budgets: np.ndarray,
    coef0: np.ndarray,
    intercept0: float,
    *,
    price_fn: PriceFn,
    evaluate: Callable[[np.ndarray, float], float],
    alpha: float,
    learning_rate: float,
    batch_size: int,
    max_epochs: int,
    patience: int,
    rng: np.random.Generator,
) -> TrainedLinear:
    """Adam on the market hinge over shuffled minibatches, keeping the parameters with the best
    ``evaluate`` score (validation accuracy under the exact market; the start counts too)."""
    x = torch.as_tensor(features, dtype=_DTYPE)
    signs = torch.as_tensor(np.where(positive, 1.0, -1.0), dtype=_DTYPE)
    money = torch.as_tensor(budgets, dtype=_DTYPE)
    coef = torch.tensor(np.asarray(coef0, dtype=np.float64), requires_grad=True)
    intercept = torch.tensor(float(intercept0), dtype=_DTYPE, requires_grad=True)
    optimizer = torch.optim.Adam([coef, intercept], lr=learning_rate)

    def snapshot() -> tuple[np.ndarray, float]:
        return coef.detach().numpy().copy(), float(intercept.detach())

    best = snapshot()
    best_accuracy, best_epoch = evaluate(*best), 0
    losses: list[float] = []
    accuracies = [best_accuracy]
    n = x.shape[0]
    epoch = 0
    for epoch in range(1, max_epochs + 1):
        order = torch.as_tensor(rng.permutation(n))
        total = 0.0
        for start in range(0, n, batch_size):
            rows = order[start : start + batch_size]
            optimizer.zero_grad()
            xb, sb, bb = x[rows], signs[rows], money[rows]
            norm = torch.linalg.vector_norm(coef)
            if float(norm.detach()) == 0.0:  # the hinge has no direction to follow; nudge off zero
                with torch.no_grad():
                    coef.add_(torch.as_tensor(rng.normal(scale=1e-3, size=coef.shape)))
                norm = torch.linalg.vector_norm(coef)
            distances = -(xb @ coef + intercept) / norm
            if bool((coef.detach() > 0).any()):
                price = price_fn(distances, bb)
            else:  # users only add to features: with no positive weight nobody can move
                price = torch.tensor(math.inf, dtype=_DTYPE)
            loss = market_hinge(coef, intercept, xb, sb, bb, price, alpha)
            if not bool(torch.isfinite(loss)):
                raise _overflow(f"a training loss of {float(loss.detach())}")
            loss.backward()
            # A finite loss can still have a NaN/inf gradient (b_i / rho^2 overflowing); Adam
            # would turn it into NaN weights, refused later as a misleading 'w' overflow.
            if not all(bool(torch.isfinite(p.grad).all()) for p in (coef, intercept)):
                raise _overflow("a gradient of the training loss that overflowed")
            optimizer.step()
            total += float(loss.detach()) * rows.numel()
        losses.append(total / n)
        accuracy = evaluate(*snapshot())
        accuracies.append(accuracy)
        if accuracy > best_accuracy:
            best, best_accuracy, best_epoch = snapshot(), accuracy, epoch
        elif epoch - best_epoch >= patience:
            break
    coef_best, intercept_best = copy.deepcopy(best)
    return TrainedLinear(
        coef_best, intercept_best, epoch, best_epoch, best_accuracy, losses, accuracies
    )
