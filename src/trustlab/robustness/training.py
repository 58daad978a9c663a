"""Training base classifiers for smoothing: Margin-CS (Xin et al., 2025) and Gaussian noise.

Both replicate every input ``gauss_num`` times with fresh N(0, sigma^2) noise per step.

gaussian
    Cross-entropy on every noisy copy (Cohen et al.'s Gaussian augmentation, with ``gauss_num``
    copies so both methods see as much noise).

margin-cs
    MACER's soft smoothed cross-entropy, ``-log mean_copies softmax(logits)[y]``, plus hinge
    losses on certified-radius surrogates computed from ``p = mean_copies softmax(beta logits)``:

    - normal samples (a label without harmful targets), MACER's hinge: for correctly classified
      samples with ``0 < rho < gamma_normal``, ``gamma_normal - rho`` with
      ``rho = Phi^-1(p_y) - Phi^-1(max_{k != y} p_k)``;
    - sensitive samples (a label y with harmful targets Omega_y), for ``|rho| < gamma_sensitive``
      (misclassified samples included, the difference from MACER),
      ``gamma_sensitive - rho`` with ``rho = Phi^-1(p_y) - Phi^-1(max_{j in Omega_y} p_j)``
      (the true class against its most likely harmful target); with ``pairwise=True`` one hinge
      per harmful target j, ``rho_j = Phi^-1(p_y) - Phi^-1(p_j)``, weighted by
      ``C[y, j] / max C`` (the ICML objective's cost weights; the default for real-valued
      costs).

    Loss per batch: ``(CE + sigma / 2 * (lbd * sum normal hinges + lbd_sensitive * sum
    sensitive hinges)) / batch size``. Radii that are NaN or infinite are left out, and the
    inverse normal is evaluated only on the kept entries so no NaN gradient leaks.

    The reference class is the true class y (docs/robustness-smoothing.md), not the spec's top
    class: when the top class is harmful, a margin against the top class would be 0 and carry no
    gradient, while ``p_y`` against the harmful class still pushes the harmful class down.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from trustlab._checks import (
    as_1d,
    as_float_array,
    check_choice,
    check_class_indices,
    check_in_range,
    check_non_negative,
    check_positive,
    check_positive_int,
    check_random_state,
)
from trustlab._lazy import require
from trustlab._results import Result, internal_field, new_axes
from trustlab.errors import InputError
from trustlab.robustness._progress import progress_reporter
from trustlab.robustness._sampling import LabelFunction, check_sigma, is_torch_module
from trustlab.robustness.certificates import check_cost_matrix

__all__ = ["METHODS", "TrainingResult", "train_smoothed", "margin_cs_loss", "gaussian_loss"]

METHODS = ("margin-cs", "gaussian")
# Probabilities at or below this are left out of the hinge terms: Phi^-1's slope there,
# exp(Phi^-1(p)^2 / 2), would overflow even in float64.
_SMALLEST = 1e-300


@dataclass(frozen=True, eq=False)
class TrainingResult(Result):
    """A trained base classifier and its per-epoch training record.

    Attributes
    ----------
    model : torch.nn.Module
        The model passed in, trained in place (left in eval mode).
    method : str
    settings : dict
        Every hyperparameter used.
    history : list of dict
        Per epoch: ``loss``, ``classification_loss`` and ``robustness_loss`` (per sample) and
        ``noisy_accuracy`` (smoothed-softmax accuracy on the noisy training copies).
    validation : dict or None
        Accuracy on held-out data after training (None when none was given): ``source`` (what
        the data are, e.g. "the digits test split"), ``size``, ``accuracy`` (clean inputs) and
        ``noisy_accuracy`` (the mean softmax of ``gauss_num`` noisy copies, as in training).
    """

    model: Any = internal_field()  # the weights are saved with save_base_model, not as JSON
    method: str
    settings: dict[str, Any]
    history: list[dict[str, float]]
    validation: dict[str, Any] | None = None

    figure_name = "training.png"

    def summary(self) -> str:
        last = self.history[-1]
        text = (
            f"{self.method} training, sigma = {self.settings['sigma']:g}, "
            f"{len(self.history)} epochs: final loss {last['loss']:.4f} "
            f"(classification {last['classification_loss']:.4f}, robustness "
            f"{last['robustness_loss']:.4f}), noisy training accuracy "
            f"{last['noisy_accuracy']:.3f}"
        )
        if self.validation is not None:
            v = self.validation
            text += (
                f"\nheld-out accuracy on {v['source']} ({v['size']:,} points, never trained on): "
                f"{v['accuracy']:.3f} clean, {v['noisy_accuracy']:.3f} under noise"
            )
        return text

    def plot(self, ax=None):
        """Loss terms and noisy accuracy per epoch."""
        ax = new_axes(ax, figsize=(6.0, 4.0))
        epochs = np.arange(1, len(self.history) + 1)
        for key in ("loss", "classification_loss", "robustness_loss"):
            ax.plot(epochs, [h[key] for h in self.history], label=key.replace("_", " "))
        ax.set_xlabel("epoch")
        ax.set_ylabel("loss per sample")
        twin = ax.twinx()
        twin.plot(epochs, [h["noisy_accuracy"] for h in self.history], "k--", label="accuracy")
        twin.set_ylabel("noisy training accuracy")
        ax.legend(loc="upper right")
        ax.set_title(f"{self.method}, sigma = {self.settings['sigma']:g}")
        return ax


def train_smoothed(
    model: Any,
    X: Any,
    y: Any,
    cost_matrix: Any = None,
    method: str = "margin-cs",
    *,
    sigma: float = 0.25,
    max_epochs: int = 30,
    batch_size: int = 64,
    learning_rate: float = 0.1,
    momentum: float = 0.9,
    weight_decay: float = 5e-4,
    milestones: tuple[int, ...] | None = None,
    gauss_num: int = 16,
    beta: float = 16.0,
    lbd: float = 3.0,
    lbd_sensitive: float | None = None,
    gamma_sensitive: float = 16.0,
    gamma_normal: float = 4.0,
    pairwise: bool | None = None,
    max_grad_norm: float | None = 10.0,
    random_state: Any = None,
    progress: Any = False,
    validation_data: tuple[Any, Any] | None = None,
    validation_source: str = "held-out data",
) -> TrainingResult:
    """Train a torch base classifier for cost-sensitive randomized smoothing.

    Parameters
    ----------
    model : torch.nn.Module
        Maps a batch of inputs to ``(batch, K)`` logits; trained in place.
    X : array-like of shape (m, *input_shape)
    y : array-like of shape (m,)
        Class indices in ``[0, K)``.
    cost_matrix : (K, K) array-like, optional
        ``C[y, j] > 0``: reading ``y`` as ``j`` is harmful. Default: every mistake harmful.
        Unused by ``"gaussian"``.
    method : {"margin-cs", "gaussian"}
    sigma : float
        Noise level, the one the smoothed classifier will use.
    max_epochs, batch_size, learning_rate, momentum, weight_decay, milestones
        SGD with momentum for ``max_epochs`` epochs; the learning rate is divided by 10 at each
        milestone epoch (default: at 50 % and 90 % of the epochs, like the authors' 200 and 400
        of 440). The authors use a learning rate of 0.01 over 440 epochs; the default 0.1 was
        chosen on a validation split of the digits training data for a few epochs of a small
        CPU model (docs/robustness-smoothing.md, "How the settings were chosen").
    gauss_num : int
        Noisy copies per input and step (16 in the paper).
    beta : float
        Inverse temperature of the soft smoothed probabilities of the hinge terms (16).
    lbd, lbd_sensitive : float
        Weights of the normal and sensitive hinge terms (3; ``lbd_sensitive`` defaults to
        ``lbd``).
    gamma_sensitive, gamma_normal : float
        Hinge margins of the sensitive and normal terms (16 and 4, the authors' defaults).
    pairwise : bool, optional
        One cost-weighted hinge per harmful target instead of the group hinge. Default: True
        when the non-zero costs differ, False for a binary cost matrix.
    max_grad_norm : float or None
        Clip the gradient's norm to this (None: no clipping). The inverse normal in the hinge
        terms has an exploding slope near probabilities 0 and 1, which without clipping can
        wreck a small model in a few steps (the authors clip at 10 for MNIST).
    random_state : None, int or numpy Generator
        Seeds the shuffling and the noise (the weights' initialisation is the model's).
    progress : bool or callable
        A progress bar over epochs, or a callable receiving ``(epochs_done, max_epochs)``: first
        ``(0, max_epochs)`` once every input is checked and before any training, then after
        every epoch.
    validation_data : (X, y), optional
        Held-out inputs and labels, never trained on: their accuracy after training, clean and
        under noise, is reported in ``validation``.
    validation_source : str
        What the held-out data are, for the summary (e.g. "the digits test split").

    Returns
    -------
    TrainingResult

    Examples
    --------
    >>> from trustlab.robustness import digits_model, load_digits_split, make_cost_matrix
    >>> X, y = load_digits_split("train")
    >>> model = digits_model("mlp", hidden=32)
    >>> result = train_smoothed(model, X[:256], y[:256], make_cost_matrix(10, {3: [8]}),
    ...                         max_epochs=1, random_state=0)
    >>> len(result.history)
    1
    """
    torch = require("torch", "torch")
    if not is_torch_module(model):
        raise InputError.bad("model", "a torch.nn.Module", model)
    method = check_choice(method, "method", METHODS)
    X = as_float_array(X, "X")
    if X.ndim < 2:
        raise InputError.bad("X", "an array of inputs (m, *input_shape)", X)
    labels = as_1d(y, "y")
    if len(labels) != len(X):
        raise InputError.bad("y", f"{len(X)} labels (one per row of X)", labels)
    settings = _settings(locals())
    n_classes = _output_width(torch, model, X)
    labels = check_class_indices(labels, "y", n_classes)
    costs = check_cost_matrix(cost_matrix, n_classes)
    if settings["pairwise"] is None:
        nonzero = costs[costs > 0]
        settings["pairwise"] = bool(nonzero.size and nonzero.min() != nonzero.max())
    held_out = _check_validation(validation_data, X, n_classes)
    generator = torch.Generator().manual_seed(
        int(check_random_state(random_state).integers(0, 2**63))
    )
    history = _fit(torch, model, X, labels, costs, method, settings, generator, progress)
    model.eval()
    validation = None
    if held_out is not None:
        validation = {
            "source": str(validation_source),
            "size": len(held_out[1]),
            **_accuracy(torch, model, *held_out, settings, generator),
        }
    return TrainingResult(model, method, settings, history, validation)


def _check_validation(data: Any, X: np.ndarray, n_classes: int):
    if data is None:
        return None
    if not isinstance(data, (tuple, list)) or len(data) != 2:
        raise InputError.bad("validation_data", "a pair (X, y) of held-out data", data)
    X_val = as_float_array(data[0], "validation_data")
    if X_val.shape[1:] != X.shape[1:] or len(X_val) == 0:
        raise InputError.bad(
            "validation_data", f"inputs of shape (m, {', '.join(map(str, X.shape[1:]))})", X_val
        )
    y_val = check_class_indices(as_1d(data[1], "validation_data"), "validation_data", n_classes)
    if len(y_val) != len(X_val):
        raise InputError.bad("validation_data", f"{len(X_val)} labels", y_val)
    return X_val, y_val


def _accuracy(torch, model, X, y, settings, generator) -> dict[str, float]:
    """Clean accuracy, and that of the mean softmax over ``gauss_num`` noisy copies."""
    copies, sigma = settings["gauss_num"], settings["sigma"]
    size = max(1, settings["batch_size"])
    clean = noisy = 0
    with torch.no_grad():
        for start in range(0, len(X), size):
            inputs = torch.as_tensor(X[start : start + size], dtype=torch.float32)
            targets = torch.as_tensor(y[start : start + size])
            clean += int((model(inputs).argmax(dim=1) == targets).sum())
            repeated = inputs.repeat_interleave(copies, dim=0)
            repeated = repeated + sigma * torch.randn(repeated.shape, generator=generator)
            logits = model(repeated).reshape(len(inputs), copies, -1)
            noisy += _smoothed_correct(logits, targets)
    return {"accuracy": clean / len(X), "noisy_accuracy": noisy / len(X)}


def _settings(arguments: dict[str, Any]) -> dict[str, Any]:
    """Validated hyperparameters of :func:`train_smoothed`."""
    max_epochs = check_positive_int(arguments["max_epochs"], "max_epochs")
    milestones = arguments["milestones"]
    if milestones is None:
        milestones = (max(1, round(max_epochs * 0.5)), max(1, round(max_epochs * 0.9)))
    if (
        isinstance(milestones, (str, bytes))
        or not isinstance(milestones, Iterable)
        or getattr(milestones, "ndim", 1) == 0  # np.array(5): iterable, but raises when iterated
    ):
        # a bare epoch (milestones=5) was a raw TypeError, a string ("12") read digit by digit
        raise InputError.bad("milestones", "a list of epochs, e.g. [10, 20], or None", milestones)
    milestones = tuple(check_positive_int(m, "milestones") for m in milestones)
    lbd = check_non_negative(arguments["lbd"], "lbd")
    lbd_sensitive = arguments["lbd_sensitive"]
    lbd_sensitive = lbd if lbd_sensitive is None else lbd_sensitive
    pairwise = arguments["pairwise"]
    if pairwise is not None and not isinstance(pairwise, bool):
        raise InputError.bad("pairwise", "True, False or None", pairwise)
    max_grad_norm = arguments["max_grad_norm"]
    return {
        "method": arguments["method"],
        "sigma": check_sigma(arguments["sigma"]),
        "max_epochs": max_epochs,
        "batch_size": check_positive_int(arguments["batch_size"], "batch_size"),
        "learning_rate": check_positive(arguments["learning_rate"], "learning_rate"),
        "momentum": check_in_range(arguments["momentum"], "momentum", 0.0, 1.0, high_open=True),
        "weight_decay": check_non_negative(arguments["weight_decay"], "weight_decay"),
        "milestones": list(milestones),
        "gauss_num": check_positive_int(arguments["gauss_num"], "gauss_num"),
        "beta": check_positive(arguments["beta"], "beta"),
        "lbd": lbd,
        "lbd_sensitive": check_non_negative(lbd_sensitive, "lbd_sensitive"),
        "gamma_sensitive": check_positive(arguments["gamma_sensitive"], "gamma_sensitive"),
        "gamma_normal": check_positive(arguments["gamma_normal"], "gamma_normal"),
        "pairwise": pairwise,
        "max_grad_norm": None
        if max_grad_norm is None
        else check_positive(max_grad_norm, "max_grad_norm"),
    }


def _output_width(torch: Any, model: Any, X: np.ndarray) -> int:
    """K, from one forward pass of the first input (a shape error of it names X)."""
    with torch.no_grad():
        try:
            out = model(torch.as_tensor(X[:1], dtype=torch.float32))
        except RuntimeError as exc:
            error = LabelFunction(model, 2, "X")._refused_inputs(X.shape[1:], exc)
            if error is exc:  # not about the inputs' shape: the model's own error
                raise
            raise error from exc
    if out.ndim != 2 or out.shape[1] < 2:
        raise InputError.bad("model", "a module returning (batch, K) logits, K >= 2", out.numpy())
    return int(out.shape[1])


def _fit(torch, model, X, labels, costs, method, settings, generator, progress):
    # Copies: torch warns about read-only arrays (e.g. a pandas column's), and trains in place.
    X_t = torch.tensor(np.array(X, dtype=np.float32))
    y_t = torch.tensor(np.array(labels))
    harmful = torch.as_tensor(costs > 0)
    weights = torch.as_tensor(
        costs / costs.max() if costs.max() > 0 else costs, dtype=torch.float32
    )
    optimizer = torch.optim.SGD(
        model.parameters(),
        lr=settings["learning_rate"],
        momentum=settings["momentum"],
        weight_decay=settings["weight_decay"],
    )
    scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer, settings["milestones"], 0.1)
    copies, sigma, size = settings["gauss_num"], settings["sigma"], settings["batch_size"]
    report = progress_reporter(progress, settings["max_epochs"], "training")
    report(0)
    history = []
    try:
        for epoch in range(settings["max_epochs"]):
            model.train()
            totals = np.zeros(4)  # loss, classification, robustness, correct
            order = torch.randperm(len(X_t), generator=generator)
            for start in range(0, len(X_t), size):
                batch = order[start : start + size]
                inputs, targets = X_t[batch], y_t[batch]
                noisy = inputs.repeat_interleave(copies, dim=0)
                noisy = noisy + sigma * torch.randn(noisy.shape, generator=generator)
                logits = model(noisy).reshape(len(batch), copies, -1)
                if method == "gaussian":
                    loss, parts = gaussian_loss(logits, targets)
                else:
                    loss, parts = margin_cs_loss(logits, targets, harmful, weights, settings)
                optimizer.zero_grad()
                loss.backward()
                if settings["max_grad_norm"] is not None:
                    # The inverse normal's slope explodes as a probability nears 0 or 1.
                    torch.nn.utils.clip_grad_norm_(model.parameters(), settings["max_grad_norm"])
                optimizer.step()
                totals += parts
            scheduler.step()
            m = len(X_t)
            history.append(
                {
                    "loss": float(totals[0] / m),
                    "classification_loss": float(totals[1] / m),
                    "robustness_loss": float(totals[2] / m),
                    "noisy_accuracy": float(totals[3] / m),
                }
            )
            report(epoch + 1)
    finally:
        report(None)
    return history


def gaussian_loss(logits, targets):
    """Mean cross-entropy over every noisy copy; returns the loss and per-batch sums."""
    torch = require("torch", "torch")
    size, copies, n_classes = logits.shape
    ce = (
        torch.nn.functional.cross_entropy(
            logits.reshape(size * copies, n_classes),
            targets.repeat_interleave(copies),
            reduction="sum",
        )
        / copies
    )
    correct = _smoothed_correct(logits, targets)
    parts = np.array([ce.item(), ce.item(), 0.0, correct])
    return ce / size, parts


def _smoothed_correct(logits, targets) -> float:
    probs = logits.detach().softmax(dim=2).mean(dim=1)
    return float((probs.argmax(dim=1) == targets).sum())


def margin_cs_loss(logits, targets, harmful, weights, settings):
    """The Margin-CS loss of one batch (see the module docstring).

    Parameters
    ----------
    logits : tensor (batch, copies, K)
    targets : tensor (batch,)
    harmful : bool tensor (K, K)
        ``harmful[y, j]``: j is a harmful target of y.
    weights : tensor (K, K)
        Costs scaled to at most 1 (the pairwise hinge weights).
    settings : dict
        ``sigma, beta, lbd, lbd_sensitive, gamma_sensitive, gamma_normal, pairwise``.

    Returns
    -------
    loss : scalar tensor
        ``(CE + sigma / 2 (lbd * normal + lbd_sensitive * sensitive)) / batch``.
    parts : ndarray
        Sums over the batch: total loss, CE, weighted robustness term, correct samples.
    """
    torch = require("torch", "torch")
    ndtri = torch.special.ndtri
    size = logits.shape[0]
    probs = logits.softmax(dim=2).mean(dim=1)
    ce = torch.nn.functional.nll_loss(torch.log(probs + 1e-10), targets, reduction="sum")
    # float64: the slope of Phi^-1 at a float32 probability can overflow float32 (NaN gradients).
    soft = (settings["beta"] * logits.double()).softmax(dim=2).mean(dim=1)
    rows = torch.arange(size)
    own = harmful[targets]  # (batch, K): the harmful targets of each sample's label
    sensitive = own.any(dim=1)
    usable = (soft > _SMALLEST) & (soft < 1.0)  # where Phi^-1 and its slope are finite

    # Normal samples: MACER's hinge on correctly classified samples.
    p_true = soft[rows, targets]
    true_ok = usable[rows, targets]
    is_target = torch.nn.functional.one_hot(targets, soft.shape[1]).bool()
    p_other, other = soft.masked_fill(is_target, -1.0).max(dim=1)
    gamma_n = settings["gamma_normal"]
    with torch.no_grad():
        rho = ndtri(p_true) - ndtri(p_other)
        keep = ~sensitive & true_ok & usable[rows, other] & (rho > 0) & (rho < gamma_n)
    normal = (gamma_n - (ndtri(p_true[keep]) - ndtri(p_other[keep]))).sum()

    # Sensitive samples: the true class against the harmful ones, misclassified included.
    gamma_s = settings["gamma_sensitive"]
    if settings["pairwise"]:
        with torch.no_grad():
            rho = ndtri(p_true)[:, None] - ndtri(soft)
            keep = own & usable & true_ok[:, None] & (rho.abs() < gamma_s)
        i, j = keep.nonzero(as_tuple=True)
        margin = ndtri(p_true[i]) - ndtri(soft[i, j])
        sensitive_term = ((gamma_s - margin) * weights[targets[i], j]).sum()
    else:
        p_worst, worst = soft.masked_fill(~own, -1.0).max(dim=1)
        with torch.no_grad():
            rho = ndtri(p_true) - ndtri(p_worst)
            keep = sensitive & true_ok & usable[rows, worst] & (rho.abs() < gamma_s)
        sensitive_term = (gamma_s - (ndtri(p_true[keep]) - ndtri(p_worst[keep]))).sum()

    half_sigma = settings["sigma"] / 2.0
    robustness = half_sigma * (
        settings["lbd"] * normal + settings["lbd_sensitive"] * sensitive_term
    )
    total = ce + robustness.float()
    correct = float((probs.detach().argmax(dim=1) == targets).sum())
    parts = np.array([total.item(), ce.item(), float(robustness.detach()), correct])
    return total / size, parts
