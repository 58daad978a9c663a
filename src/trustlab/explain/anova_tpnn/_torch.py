"""The torch side of ANOVA-TPNN: the network and its training loop.

This module imports torch at the top, so the estimator imports it only inside ``fit`` (torch is
an optional extra). Everything after training (the sum-to-zero constants on the full training
data, predictions, components) runs in numpy float64 (:mod:`._components`); torch only learns the
parameters. ``train_network`` trains any network with the same interface (``benchmarks/`` trains
a neural additive baseline with it).

Shapes used throughout: ``B`` rows, ``C`` components of one group (one order ``m`` and one
pattern of numeric/categorical positions: e.g. all numeric main effects, all numeric pairs),
``K`` basis neurons per component, ``L`` the largest number of levels of a categorical feature,
``O`` outputs (1, or the number of classes).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from trustlab._model_files import save_training_state
from trustlab.errors import BackendError

__all__ = [
    "TPNNNetwork",
    "TrainingData",
    "make_training_data",
    "train_network",
    "torch_threads",
]

# A numeric neuron divides by the mean of its sigmoid over the data; the guard only matters for
# a threshold far outside the data, where that mean underflows.
_TINY = 1e-30
_CONSTANT_CHUNK_ELEMENTS = 2**22
_RELATIVE_IMPROVEMENT = 1e-4
# Initial temperatures are the authors' spread max|x - b| times a factor drawn log-uniformly in
# [_SHARPEST, 1]: with the authors' factor 1 every neuron starts almost linear on the data and
# training spends its first hundreds of epochs sharpening them.
_SHARPEST = 0.3


@contextmanager
def torch_threads(n_threads: int | None) -> Iterator[None]:
    """Run torch with ``n_threads`` intra-op threads (None: its own setting, capped at the cores
    this process may use), restoring the previous setting afterwards."""
    previous = torch.get_num_threads()
    if n_threads is None:
        available = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else previous
        n_threads = min(previous, available)
    torch.set_num_threads(max(1, n_threads))
    try:
        yield
    finally:
        torch.set_num_threads(previous)


class _SumToZeroNeuron(torch.autograd.Function):
    """Numeric basis neurons ``phi = 1 - sigma(z) / mean_rows(sigma(z))``, ``z = (x - b) / gamma``,
    with the mean taken over the rows of the batch and differentiated through.

    Written out by hand because autograd spends about three times as many passes over the
    (rows x components x bases) tensors; the tests check the gradients against autograd.
    Inputs: ``x`` (B, C), ``threshold`` and ``log_temperature`` (C, K); output (B, C, K).
    """

    @staticmethod
    def forward(ctx, x, threshold, log_temperature):
        inverse = torch.exp(-log_temperature)
        z = torch.addcmul(-threshold * inverse, x[:, :, None], inverse)
        s = torch.sigmoid(z)
        mean = s.mean(dim=0).clamp_min(_TINY)
        ctx.save_for_backward(z, s, mean, inverse)
        return torch.addcdiv(torch.ones((), dtype=s.dtype), s, mean, value=-1.0)

    @staticmethod
    def backward(ctx, grad):
        z, s, mean, inverse = ctx.saved_tensors
        # phi_i = 1 - s_i / mean: dL/ds_i = (mean_j(g_j s_j) / mean - g_i) / mean
        shift = (grad * s).mean(dim=0) / (mean * mean)
        grad_s = torch.addcdiv(shift, grad, mean, value=-1.0)
        grad_z = torch.ops.aten.sigmoid_backward(grad_s, s)
        grad_threshold = -grad_z.sum(dim=0) * inverse
        grad_log_temperature = -(grad_z * z).sum(dim=0)
        return None, grad_threshold, grad_log_temperature


def sum_to_zero_neurons(x, threshold, log_temperature, mean_sigmoid=None):
    """Numeric neurons (B, C, K): centred on the batch (training) or with given means (eval)."""
    if mean_sigmoid is None:
        return _SumToZeroNeuron.apply(x, threshold, log_temperature)
    inverse = torch.exp(-log_temperature)
    s = torch.sigmoid(torch.addcmul(-threshold * inverse, x[:, :, None], inverse))
    return torch.addcdiv(
        torch.ones((), dtype=s.dtype), s, mean_sigmoid.clamp_min(_TINY), value=-1.0
    )


def reference_neurons(x, threshold, log_temperature):
    """The same neurons through plain autograd (the oracle for the hand-written gradients)."""
    s = torch.sigmoid((x[:, :, None] - threshold) * torch.exp(-log_temperature))
    return 1.0 - s / s.mean(dim=0)


class _TPNNGroup(nn.Module):
    """All components of one order and one pattern of numeric/categorical positions.

    A numeric basis neuron is ``phi(x) = sigma(-z) + c sigma(z) = 1 - sigma(z) / mean(sigma(z))``
    with ``z = (x - b) / gamma`` and ``c = -sum sigma(-z_i) / sum sigma(z_i)``, so it sums to zero
    over the rows the mean is taken on. A categorical neuron is a value per level minus its mean
    over the rows: ``phi(x) = w[x] - mean(w[x_i])``. A component is
    ``g_S(x_S) = sum_k beta_k prod_{j in S} phi_kj(x_j)``, which then sums to zero over those
    rows in each of its variables, whatever the other variables are.

    In training mode the means are taken on the minibatch (and differentiated through, as the
    authors do); in evaluation mode the buffers ``mean_sigmoid`` and ``mean_level`` set by
    :meth:`refresh_constants` on all training rows are used. Parameters are laid out per
    position: ``threshold[p]`` is (C, K) for the p-th feature of every component.
    """

    def __init__(
        self,
        features: np.ndarray,
        pattern: tuple[bool, ...],
        n_levels: int,
        n_basis: int,
        n_outputs: int,
    ):
        super().__init__()
        n_components, order = features.shape
        shape = (order, n_components, n_basis)
        self.pattern = tuple(bool(p) for p in pattern)
        self.register_buffer("features", torch.as_tensor(features, dtype=torch.long))
        self.threshold = nn.Parameter(torch.zeros(shape))
        self.log_temperature = nn.Parameter(torch.zeros(shape))
        self.beta = nn.Parameter(torch.zeros(n_components, n_basis, n_outputs))
        levels = n_levels if any(self.pattern) else 0
        self.level_weights = nn.Parameter(torch.zeros(order, n_components, levels, n_basis))
        self.register_buffer("mean_sigmoid", torch.ones(shape))
        self.register_buffer("mean_level", torch.zeros(shape))

    def initialize(self, x_num: np.ndarray, rng: np.random.Generator, beta_scale: float) -> None:
        """The authors' data-aware start: thresholds at random percentiles of each feature
        (uniform percentile), temperatures so that ``(x - b) / gamma`` spans [-1, 1]."""
        features = self.features.numpy()
        order, n_components, n_basis = self.threshold.shape
        threshold = np.zeros(self.threshold.shape)
        spread = np.ones(self.threshold.shape)
        for p in range(order):
            if self.pattern[p]:
                continue
            for c in range(n_components):
                values = x_num[:, features[c, p]]
                threshold[p, c] = np.percentile(values, rng.uniform(0.0, 100.0, size=n_basis))
                spread[p, c] = np.abs(values[:, None] - threshold[p, c]).max(axis=0)
                spread[p, c] *= np.exp(rng.uniform(math.log(_SHARPEST), 0.0, size=n_basis))
        with torch.no_grad():
            self.threshold.copy_(torch.as_tensor(threshold))
            self.log_temperature.copy_(torch.as_tensor(np.log(spread + 1e-6)))
            self.beta.copy_(torch.as_tensor(rng.normal(0.0, beta_scale, size=self.beta.shape)))
            if any(self.pattern):
                weights = rng.normal(0.0, 1.0, size=self.level_weights.shape)
                self.level_weights.copy_(torch.as_tensor(weights))

    def _level_values(self, p: int, x_cat: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        codes = x_cat[:, self.features[:, p]]  # (B, C); -1 marks a level unseen in training
        component = torch.arange(codes.shape[1])[None, :]
        values = self.level_weights[p][component, codes.clamp_min(0)]  # (B, C, K)
        return values, (codes >= 0)[:, :, None]

    def neuron(self, p: int, x_num: torch.Tensor, x_cat: torch.Tensor) -> torch.Tensor:
        if self.pattern[p]:
            values, known = self._level_values(p, x_cat)
            if self.training:
                return values - values.mean(dim=0)
            return torch.where(known, values - self.mean_level[p], torch.zeros_like(values))
        x = x_num[:, self.features[:, p]]
        means = None if self.training else self.mean_sigmoid[p]
        return sum_to_zero_neurons(x, self.threshold[p], self.log_temperature[p], means)

    def forward(self, x_num: torch.Tensor, x_cat: torch.Tensor) -> torch.Tensor:
        product = self.neuron(0, x_num, x_cat)
        for p in range(1, len(self.pattern)):
            product = product * self.neuron(p, x_num, x_cat)
        if self.beta.shape[-1] == 1:  # a product and a sum beat a batched matmul with one column
            return (product * self.beta[..., 0]).sum(dim=-1, keepdim=True)
        return torch.einsum("bck,cko->bco", product, self.beta)

    @torch.no_grad()
    def refresh_constants(self, x_num: torch.Tensor, x_cat: torch.Tensor) -> None:
        """The evaluation-mode constants: means over all of the given rows (in chunks)."""
        n = x_num.shape[0]
        chunk = max(1, _CONSTANT_CHUNK_ELEMENTS // max(1, self.beta.shape[0] * self.beta.shape[1]))
        for p, is_categorical in enumerate(self.pattern):
            total = torch.zeros_like(self.mean_sigmoid[p])
            for start in range(0, n, chunk):
                rows = slice(start, start + chunk)
                if is_categorical:
                    total += self._level_values(p, x_cat[rows])[0].sum(dim=0)
                else:
                    x = x_num[rows][:, self.features[:, p]]
                    inverse = torch.exp(-self.log_temperature[p])
                    z = torch.addcmul(-self.threshold[p] * inverse, x[:, :, None], inverse)
                    total += torch.sigmoid(z).sum(dim=0)
            (self.mean_level if is_categorical else self.mean_sigmoid)[p].copy_(total / n)

    def export(self) -> dict[str, np.ndarray]:
        """The parameters as float64 numpy arrays (constants are recomputed in numpy)."""
        return {
            "features": self.features.numpy().copy(),
            "pattern": np.asarray(self.pattern, dtype=bool),
            "threshold": self.threshold.detach().double().numpy().copy(),
            "log_temperature": self.log_temperature.detach().double().numpy().copy(),
            "level_weights": self.level_weights.detach().double().numpy().copy(),
            "beta": self.beta.detach().double().numpy().copy(),
        }


class TPNNNetwork(nn.Module):
    """The ANOVA-TPNN: an intercept plus one :class:`_TPNNGroup` per order and pattern; the
    groups' outputs are put back in the order of the terms by ``order``."""

    def __init__(
        self,
        groups: list[tuple[np.ndarray, tuple[bool, ...]]],
        order: np.ndarray,
        n_levels: int,
        n_basis: int,
        n_outputs: int,
    ):
        super().__init__()
        self.groups = nn.ModuleList(
            _TPNNGroup(features, pattern, n_levels, n_basis, n_outputs)
            for features, pattern in groups
        )
        self.register_buffer("order", torch.as_tensor(order, dtype=torch.long))
        self.intercept = nn.Parameter(torch.zeros(n_outputs))

    def initialize(
        self, x_num: np.ndarray, rng: np.random.Generator, intercept: np.ndarray
    ) -> None:
        # beta ~ N(0, 1 / C) rather than the authors' N(0, 1): with many components the sum
        # then starts near the (standardised) target's scale; it also converges faster.
        for group in self.groups:
            group.initialize(x_num, rng, beta_scale=1.0 / math.sqrt(len(self.order)))
        with torch.no_grad():
            self.intercept.copy_(torch.as_tensor(intercept))

    def forward(self, x_num: torch.Tensor, x_cat: torch.Tensor) -> torch.Tensor:
        """Component values, (B, C, O), in the order of the terms."""
        values = torch.cat([group(x_num, x_cat) for group in self.groups], dim=1)
        return values if len(self.groups) == 1 else values[:, self.order]

    def bias(self) -> torch.Tensor:
        return self.intercept

    def refresh_constants(self, x_num: torch.Tensor, x_cat: torch.Tensor) -> None:
        for group in self.groups:
            group.refresh_constants(x_num, x_cat)

    def export(self) -> dict:
        return {
            "groups": [group.export() for group in self.groups],
            "intercept": self.intercept.detach().double().numpy().copy(),
        }


@dataclass
class TrainingData:
    """Model inputs as tensors: the training part, the validation part and all fitted rows
    (on which the evaluation-mode constants are computed)."""

    x_num_train: torch.Tensor
    x_cat_train: torch.Tensor
    y_train: torch.Tensor
    x_num_valid: torch.Tensor
    x_cat_valid: torch.Tensor
    y_valid: torch.Tensor
    x_num_all: torch.Tensor
    x_cat_all: torch.Tensor


def make_training_data(x_num, x_cat, y, train_idx, valid_idx, loss: str) -> TrainingData:
    """Tensors for :func:`train_network` (float32 inputs; integer targets for multiclass)."""
    num = torch.as_tensor(x_num, dtype=torch.float32)
    cat = torch.as_tensor(x_cat, dtype=torch.long)
    target = torch.as_tensor(y, dtype=torch.long if loss == "multiclass" else torch.float32)
    train = torch.as_tensor(train_idx, dtype=torch.long)
    valid = torch.as_tensor(valid_idx, dtype=torch.long)
    return TrainingData(
        num[train], cat[train], target[train], num[valid], cat[valid], target[valid], num, cat
    )


def _loss_function(kind: str) -> Callable[[torch.Tensor, torch.Tensor], torch.Tensor]:
    if kind == "mse":
        return lambda out, y: F.mse_loss(out[:, 0], y)
    if kind == "binary":
        return lambda out, y: F.binary_cross_entropy_with_logits(out[:, 0], y)
    return F.cross_entropy


def train_network(
    network: nn.Module,
    data: TrainingData,
    *,
    loss: str,
    learning_rate: float,
    batch_size: int,
    max_epochs: int,
    patience: int,
    penalty: float,
    rng: np.random.Generator,
    lr_decay: float = 1.0,
    n_decays: int = 0,
    progress: Callable[[int, int, float], None] | None = None,
    checkpoint: tuple[Path, Any] | None = None,
    resume: dict | None = None,
) -> dict:
    """Adam with the authors' betas (0.95, 0.998) on shuffled minibatches; after each epoch the
    evaluation-mode constants are recomputed on all rows and the validation loss is measured.
    An improvement is a relative one of 1e-4. After ``patience`` epochs without one, the
    learning rate is multiplied by ``lr_decay`` and training goes on from where it is, at most
    ``n_decays`` times; the next such plateau ends training. Until the first plateau the run is
    the same as without cuts. The network is left at its best validation checkpoint.

    Returns the history: per-epoch training and validation losses (for regression, on the
    standardised target) and learning rates, the best epoch (counted from 1) and its loss.
    Raises BackendError when no epoch gives a finite validation loss.

    ``checkpoint`` = ``(folder, fingerprint)``: the whole training state (weights, optimiser,
    best weights and loss, plateau counters, history, ``rng``) is saved into the folder after
    every epoch (:func:`~trustlab._model_files.save_training_state`). ``resume``: such a state
    (:func:`~trustlab._model_files.load_training_state`), from which training goes on with its
    ``rng`` state restored, so a fit interrupted after any epoch ends as an uninterrupted one.
    """
    loss_fn = _loss_function(loss)
    optimizer = torch.optim.Adam(
        network.parameters(), lr=learning_rate, betas=(0.95, 0.998), fused=True
    )
    n = data.x_num_train.shape[0]
    n_batches = max(1, math.ceil(n / batch_size))
    best_loss, best_epoch, waited = math.inf, -1, 0
    decays = 0 if lr_decay != 1.0 else n_decays
    best_state = _snapshot(network)
    train_losses: list[float] = []
    valid_losses: list[float] = []
    rates: list[float] = []
    start, finished = 0, False
    folder, fingerprint = checkpoint if checkpoint is not None else (None, None)
    if resume is not None:  # an interrupted (or finished) fit of the same data and settings
        state = resume
        network.load_state_dict(state["network"])
        optimizer.load_state_dict(state["optimizer"])
        best_state, best_loss, best_epoch = state["best_state"], state["best"], state["best_epoch"]
        waited, decays, finished = state["waited"], state["decays"], state["finished"]
        train_losses, valid_losses = state["train_loss"], state["validation_loss"]
        rates = state["rates"]
        rng.bit_generator.state = state["rng"]
        start = state["epoch"] + 1
    for epoch in range(start, max_epochs if not finished else start):
        rates.append(float(optimizer.param_groups[0]["lr"]))
        network.train()
        total = 0.0
        for batch in np.array_split(rng.permutation(n), n_batches):
            index = torch.as_tensor(batch)
            components = network(data.x_num_train[index], data.x_cat_train[index])
            output = network.bias() + components.sum(dim=1)
            batch_loss = loss_fn(output, data.y_train[index])
            objective = batch_loss + penalty * components.pow(2).mean() if penalty else batch_loss
            optimizer.zero_grad(set_to_none=True)
            objective.backward()
            optimizer.step()
            total += float(batch_loss.detach()) * len(batch)
        valid_loss = _validation_loss(network, data, loss_fn)
        train_losses.append(total / n)
        valid_losses.append(valid_loss)
        significant = not math.isfinite(best_loss) or (
            valid_loss < best_loss - _RELATIVE_IMPROVEMENT * abs(best_loss)
        )
        if valid_loss < best_loss:
            best_loss, best_epoch = valid_loss, epoch
            best_state = _snapshot(network)
        waited = 0 if significant and best_epoch == epoch else waited + 1
        finished = not math.isfinite(valid_loss)
        if not finished and waited >= patience:  # a plateau: a smaller step while cuts remain
            finished = decays >= n_decays  # else stop
            if not finished:
                decays, waited = decays + 1, 0
                for group in optimizer.param_groups:
                    group["lr"] *= lr_decay
        if folder is not None:  # before progress: a Ctrl-C there loses nothing
            state = {
                "network": network.state_dict(), "optimizer": optimizer.state_dict(),
                "best_state": best_state, "best": best_loss, "best_epoch": best_epoch,
                "waited": waited, "decays": decays, "finished": finished, "epoch": epoch,
                "train_loss": train_losses, "validation_loss": valid_losses, "rates": rates,
                "rng": rng.bit_generator.state,
            }  # fmt: skip
            save_training_state(folder, fingerprint, state)
        if progress is not None:
            progress(epoch + 1, max_epochs, valid_loss)
        if finished:
            break
    if best_epoch < 0:
        raise BackendError(
            "ANOVA-TPNN training diverged: no epoch gave a finite validation loss; try a smaller "
            "learning_rate"
        )
    network.load_state_dict(best_state)
    network.eval()
    network.refresh_constants(data.x_num_all, data.x_cat_all)
    return {
        "train_loss": train_losses,
        "validation_loss": valid_losses,
        "learning_rate": rates,
        "best_epoch": best_epoch + 1,
        "best_validation_loss": best_loss,
        "n_epochs": len(train_losses),
    }


@torch.no_grad()
def _validation_loss(network: nn.Module, data: TrainingData, loss_fn) -> float:
    network.eval()
    network.refresh_constants(data.x_num_all, data.x_cat_all)
    output = network.bias() + network(data.x_num_valid, data.x_cat_valid).sum(dim=1)
    return float(loss_fn(output, data.y_valid))


def _snapshot(network: nn.Module) -> dict[str, torch.Tensor]:
    return {key: value.detach().clone() for key, value in network.state_dict().items()}
