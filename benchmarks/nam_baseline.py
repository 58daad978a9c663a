"""A neural additive model with pairwise components (NA2M-like), for comparisons with ANOVA-TPNN.

Not part of trustlab: ``bench_anova_tpnn.py`` and ``tests/explain/test_anova_tpnn_claims.py``
compare ANOVA-TPNN against it. It reuses ANOVA-TPNN's preprocessing, validation split, training
loop and early stopping (so the comparison isolates the components), but each component is a
small ReLU network centred by its mean afterwards, as NAM does. Nothing stops a pair from
carrying part of the main effects, which is why its components are not identifiable.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn

from trustlab.explain.anova_tpnn import ANOVATPNN

__all__ = ["AdditiveMLPNetwork", "NeuralAdditiveBaseline"]


class _MLPGroup(nn.Module):
    """One small ReLU network per component of one order, run as batched matrix products."""

    def __init__(self, features: np.ndarray, hidden_units: tuple[int, ...], n_outputs: int):
        super().__init__()
        n_components, order = features.shape
        self.register_buffer("features", torch.as_tensor(features, dtype=torch.long))
        widths = (order, *hidden_units, n_outputs)
        self.weights = nn.ParameterList(
            nn.Parameter(torch.zeros(n_components, a, b))
            for a, b in zip(widths[:-1], widths[1:], strict=True)
        )
        self.biases = nn.ParameterList(
            nn.Parameter(torch.zeros(n_components, b)) for b in widths[1:]
        )
        self.register_buffer("offset", torch.zeros(n_components, n_outputs))

    def initialize(self, rng: np.random.Generator) -> None:
        # He initialisation for the ReLU layers, small last layer (the sum starts near zero).
        with torch.no_grad():
            last = len(self.weights) - 1
            for i, weight in enumerate(self.weights):
                scale = (
                    math.sqrt(2.0 / weight.shape[1])
                    if i < last
                    else 0.1 / math.sqrt(weight.shape[1])
                )
                weight.copy_(torch.as_tensor(rng.normal(0.0, scale, size=weight.shape)))

    def raw(self, x_num: torch.Tensor) -> torch.Tensor:
        h = x_num[:, self.features]  # (B, C, m)
        last = len(self.weights) - 1
        for i, (weight, bias) in enumerate(zip(self.weights, self.biases, strict=True)):
            h = torch.einsum("bci,cio->bco", h, weight) + bias
            if i < last:
                h = torch.relu(h)
        return h

    def forward(self, x_num: torch.Tensor, x_cat: torch.Tensor) -> torch.Tensor:
        values = self.raw(x_num)
        return values if self.training else values - self.offset

    @torch.no_grad()
    def refresh_constants(self, x_num: torch.Tensor, x_cat: torch.Tensor) -> None:
        self.offset.copy_(self.raw(x_num).mean(dim=0))


class AdditiveMLPNetwork(nn.Module):
    """A neural additive model with pairs (NA2M-like): each component is a free ReLU network,
    centred afterwards by its mean only, as NAM does. Nothing stops a pair from carrying part of
    the main effects, which is why its components are not identifiable."""

    def __init__(
        self,
        groups: list[tuple[np.ndarray, tuple[bool, ...]]],
        order: np.ndarray,
        hidden_units: tuple[int, ...],
        n_outputs: int,
    ):
        super().__init__()
        self.groups = nn.ModuleList(
            _MLPGroup(features, hidden_units, n_outputs) for features, _ in groups
        )
        self.register_buffer("order", torch.as_tensor(order, dtype=torch.long))
        self.intercept = nn.Parameter(torch.zeros(n_outputs))

    def initialize(
        self, x_num: np.ndarray, rng: np.random.Generator, intercept: np.ndarray
    ) -> None:
        for group in self.groups:
            group.initialize(rng)
        with torch.no_grad():
            self.intercept.copy_(torch.as_tensor(intercept))

    def forward(self, x_num: torch.Tensor, x_cat: torch.Tensor) -> torch.Tensor:
        values = torch.cat([group(x_num, x_cat) for group in self.groups], dim=1)
        return values if len(self.groups) == 1 else values[:, self.order]

    def bias(self) -> torch.Tensor:
        if self.training:
            return self.intercept
        return self.intercept + sum(group.offset.sum(dim=0) for group in self.groups)

    def refresh_constants(self, x_num: torch.Tensor, x_cat: torch.Tensor) -> None:
        for group in self.groups:
            group.refresh_constants(x_num, x_cat)


class NeuralAdditiveBaseline(ANOVATPNN):
    """A neural additive model with pairwise components (NA2M-like), for comparisons only.

    The same preprocessing, validation split, optimiser and early stopping as
    :class:`~trustlab.explain.ANOVATPNN`, but each component is a small ReLU network
    (``hidden_units``) centred by its mean afterwards, as NAM does, instead of a sum-to-zero
    tensor-product network. Numeric features only. Inference runs in torch (float64).
    """

    def __init__(
        self,
        order=2,
        hidden_units=(32, 16),
        interactions="all",
        *,
        max_interactions=10,
        task="auto",
        categorical_features="auto",
        penalty=0.0,
        learning_rate=1e-2,
        batch_size=256,
        max_epochs=300,
        patience=20,
        lr_decay=0.3,
        n_decays=2,
        validation_fraction=0.15,
        n_quantiles=1000,
        random_state=None,
        n_jobs=None,
    ):
        super().__init__(
            order=order,
            n_basis=1,
            interactions=interactions,
            max_interactions=max_interactions,
            task=task,
            categorical_features=categorical_features,
            penalty=penalty,
            learning_rate=learning_rate,
            batch_size=batch_size,
            max_epochs=max_epochs,
            patience=patience,
            lr_decay=lr_decay,
            n_decays=n_decays,
            validation_fraction=validation_fraction,
            n_quantiles=n_quantiles,
            random_state=random_state,
            n_jobs=n_jobs,
        )
        self.hidden_units = hidden_units

    def _make_network(self, groups, order, n_levels, n_outputs):
        if any(any(pattern) for _, pattern in groups):
            raise ValueError("NeuralAdditiveBaseline handles numeric features only")
        return AdditiveMLPNetwork(groups, order, tuple(self.hidden_units), n_outputs)

    def _finalise_network(self, network, x_num, x_cat, train_idx=None) -> None:
        # numeric features only: no level is left untrained by the held-out rows (train_idx)
        self.network_ = network.double().eval()
        self.network_.refresh_constants(
            torch.as_tensor(x_num, dtype=torch.float64), torch.as_tensor(x_cat)
        )

    @torch.no_grad()
    def _component_array(self, x_num: np.ndarray, x_cat: np.ndarray) -> np.ndarray:
        values = self.network_(torch.as_tensor(x_num, dtype=torch.float64), torch.as_tensor(x_cat))
        return self._output_scale_ * values.numpy()

    def _intercept_array(self) -> np.ndarray:
        with torch.no_grad():
            bias = self.network_.bias().numpy()
        return self._output_shift_ + self._output_scale_ * bias
