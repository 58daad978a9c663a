"""Train a :class:`~trustlab.explain.equigx.model.TensorFieldNetwork` on a
:class:`~trustlab.explain.equigx.data.GraphDataset`.

:func:`train_tfn` runs mini-batch Adam on the cross-entropy of the graph logits, keeps the weights of
the epoch with the best validation accuracy (or the last epoch without validation data), and, given
``checkpoint_dir``, saves the model, the optimiser and the history after every epoch so an
interrupted run resumes where it stopped (``resume=True``). Graphs of a batch share one tensor with a
``batch`` vector; edges never cross graphs.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from trustlab._checks import check_positive, check_positive_int, check_random_state
from trustlab._lazy import require
from trustlab._results import Result
from trustlab.errors import InputError

torch = require("torch", "graph")

from trustlab.explain.equigx.data import GraphDataset  # noqa: E402
from trustlab.explain.equigx.model import TensorFieldNetwork  # noqa: E402

__all__ = ["TrainingHistory", "train_tfn", "batch_graphs", "predict_graphs"]


@dataclass(frozen=True)
class TrainingHistory(Result):
    """What :func:`train_tfn` did: per-epoch loss and accuracies, the epoch kept, the seconds."""

    dataset: str
    n_train: int
    n_validation: int
    epochs: tuple[int, ...]
    train_loss: tuple[float, ...]
    train_accuracy: tuple[float, ...]
    validation_accuracy: tuple[float, ...]
    best_epoch: int
    best_validation_accuracy: float
    seconds: float
    figure_name = "training.png"

    def summary(self) -> str:
        last = len(self.epochs) - 1
        lines = [
            f"TFN training on {self.dataset}: {self.n_train} graphs "
            f"({self.n_validation} for validation), {len(self.epochs)} epochs, "
            f"{self.seconds:.0f} s",
        ]
        if last >= 0:
            lines.append(
                f"  last epoch: loss {self.train_loss[last]:.4f}, train accuracy "
                f"{self.train_accuracy[last]:.3f}"
            )
        if self.n_validation:
            lines.append(
                f"  kept epoch {self.best_epoch}: validation accuracy "
                f"{self.best_validation_accuracy:.3f}"
            )
        return "\n".join(lines)

    def plot(self, ax: Any = None) -> Any:
        """Loss and accuracies against the epoch."""
        if ax is None:
            import matplotlib.pyplot as plt

            _, ax = plt.subplots(figsize=(6.4, 3.6))
        ax.plot(self.epochs, self.train_loss, label="train loss", color="tab:gray")
        ax.set_xlabel("epoch")
        ax.set_ylabel("loss")
        acc = ax.twinx()
        acc.plot(self.epochs, self.train_accuracy, label="train accuracy", color="tab:blue")
        if self.n_validation:
            acc.plot(
                self.epochs, self.validation_accuracy, label="validation accuracy", color="tab:red"
            )
        acc.set_ylim(0, 1.02)
        acc.set_ylabel("accuracy")
        acc.legend(loc="lower right")
        ax.set_title(f"TFN training on {self.dataset}")
        return ax


def batch_graphs(graphs: Any, dtype: Any) -> dict:
    """One batched ``{"pos", "x", "batch"}`` dict (tensors) from a sequence of graphs."""
    graphs = list(graphs)
    pos = torch.as_tensor(np.vstack([g.pos for g in graphs]), dtype=dtype)
    x = torch.as_tensor(np.vstack([g.x for g in graphs]), dtype=dtype)
    batch = torch.as_tensor(
        np.repeat(np.arange(len(graphs)), [g.n_nodes for g in graphs]), dtype=torch.long
    )
    return {"pos": pos, "x": x, "batch": batch}


def predict_graphs(
    model: Any, graphs: Any, *, batch_size: int = 64, mask_order: Any = None
) -> np.ndarray:
    """Logits ``(n_graphs, n_classes)`` of ``model`` on a sequence of graphs, in batches
    (``mask_order``: angular orders zeroed, as in the model's forward)."""
    graphs = list(graphs)
    dtype = next(model.parameters()).dtype
    out = []
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            for start in range(0, len(graphs), batch_size):
                batch = batch_graphs(graphs[start : start + batch_size], dtype)
                out.append(model(batch, mask_order=mask_order).numpy())
    finally:
        model.train(was_training)
    n_classes = model.config.n_classes
    return np.vstack(out) if out else np.zeros((0, n_classes))


def _check_dataset(data: Any, name: str, model: Any) -> GraphDataset:
    if not isinstance(data, GraphDataset):
        raise InputError.bad(name, "a GraphDataset (shapes_in_noise, qm9_carbonyl)", data)
    if len(data) == 0:
        raise InputError.bad(name, "at least one graph", 0)
    if data.n_classes != model.config.n_classes:
        raise InputError.bad(
            name, f"{model.config.n_classes} classes (the model's)", data.n_classes
        )
    if data[0].x.shape[1] != model.config.n_scalars:
        raise InputError.bad(
            name, f"{model.config.n_scalars} node features (the model's)", data[0].x.shape[1]
        )
    return data


def train_tfn(
    model: TensorFieldNetwork,
    train: GraphDataset,
    *,
    validation: GraphDataset | None = None,
    max_epochs: int = 30,
    learning_rate: float = 1e-2,
    batch_size: int = 32,
    weight_decay: float = 0.0,
    random_state: Any = None,
    checkpoint_dir: str | Path | None = None,
    resume: bool = True,
    progress: Any = None,
) -> TrainingHistory:
    """Train ``model`` in place with Adam on the cross-entropy of its graph logits.

    Parameters
    ----------
    model : TensorFieldNetwork
    train, validation : GraphDataset
        Training graphs and (optionally) graphs to choose the epoch by; their class count and
        feature count must match the model's.
    max_epochs, learning_rate, batch_size, weight_decay
        Adam settings; the learning rate decays by cosine to 5 % of its start.
    random_state : None or int
        Seeds the batch order (numpy) and torch.
    checkpoint_dir : path, optional
        Saved after every epoch (model, optimiser, history); with ``resume=True`` a folder left by
        an interrupted run is continued from its last epoch.
    progress : callable, optional
        Called as ``progress(epoch, max_epochs, loss, train_accuracy, validation_accuracy)``.

    Returns
    -------
    TrainingHistory
        The model ends holding the weights of the best validation epoch (or the last one).

    Examples
    --------
    >>> from trustlab.explain.equigx import TensorFieldNetwork, shapes_in_noise
    >>> data = shapes_in_noise(12, variant="same_count", n_nodes=8, random_state=0)
    >>> net = TensorFieldNetwork(n_classes=3, mul=2, l_max=1, k=4, radius=2.0)
    >>> history = train_tfn(net, data, max_epochs=2, batch_size=6, random_state=0)
    >>> history.epochs
    (1, 2)
    """
    if not isinstance(model, TensorFieldNetwork):
        raise InputError.bad("model", "a trustlab TensorFieldNetwork", model)
    train = _check_dataset(train, "train", model)
    if validation is not None:
        validation = _check_dataset(validation, "validation", model)
    max_epochs = check_positive_int(max_epochs, "max_epochs")
    batch_size = check_positive_int(batch_size, "batch_size")
    learning_rate = check_positive(learning_rate, "learning_rate")
    if not (isinstance(weight_decay, (int, float)) and weight_decay >= 0):
        raise InputError.bad("weight_decay", "a number >= 0", weight_decay)
    rng = check_random_state(random_state)
    if random_state is not None and not isinstance(random_state, np.random.Generator):
        torch.manual_seed(int(random_state))
    dtype = next(model.parameters()).dtype
    opt = torch.optim.Adam(model.parameters(), lr=learning_rate, weight_decay=weight_decay)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(
        opt, T_max=max_epochs, eta_min=0.05 * learning_rate
    )
    labels = torch.as_tensor(train.labels)
    hist: dict[str, list] = {"epochs": [], "loss": [], "train": [], "val": []}
    best = (-1.0, 0, None)
    start_epoch, seconds = 1, 0.0
    folder = Path(checkpoint_dir) if checkpoint_dir is not None else None
    if folder is not None and resume and (folder / "state.pt").is_file():
        state = torch.load(folder / "state.pt", weights_only=False)
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["optimizer"])
        sched.load_state_dict(state["scheduler"])
        hist, seconds = state["history"], state["seconds"]
        best = (state["best"][0], state["best"][1], state["best_weights"])
        start_epoch = state["epoch"] + 1
        rng.bit_generator.state = state["rng"]
        torch.set_rng_state(state["torch_rng"])
    for epoch in range(start_epoch, max_epochs + 1):
        t0 = time.perf_counter()
        model.train()
        order = rng.permutation(len(train))
        total, correct = 0.0, 0
        for s in range(0, len(order), batch_size):
            idx = order[s : s + batch_size]
            batch = batch_graphs([train[int(i)] for i in idx], dtype)
            logits = model(batch)
            loss = torch.nn.functional.cross_entropy(logits, labels[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += float(loss.detach()) * len(idx)
            correct += int((logits.argmax(1) == labels[idx]).sum())
        sched.step()
        train_acc = correct / len(train)
        if validation is not None:
            pred = predict_graphs(model, validation, batch_size=max(batch_size, 64)).argmax(1)
            val_acc = float(np.mean(pred == validation.labels))
        else:
            val_acc = train_acc
        hist["epochs"].append(epoch)
        hist["loss"].append(total / len(train))
        hist["train"].append(train_acc)
        hist["val"].append(val_acc if validation is not None else float("nan"))
        if val_acc >= best[0]:
            weights = {k: v.detach().clone() for k, v in model.state_dict().items()}
            best = (val_acc, epoch, weights)
        seconds += time.perf_counter() - t0
        if folder is not None:
            folder.mkdir(parents=True, exist_ok=True)
            tmp = folder / "state.pt.tmp"
            torch.save(
                {
                    "model": model.state_dict(),
                    "optimizer": opt.state_dict(),
                    "scheduler": sched.state_dict(),
                    "history": hist,
                    "seconds": seconds,
                    "best": (best[0], best[1]),
                    "best_weights": best[2],
                    "epoch": epoch,
                    "rng": rng.bit_generator.state,
                    "torch_rng": torch.get_rng_state(),
                },
                tmp,
            )
            tmp.replace(folder / "state.pt")
            (folder / "history.json").write_text(json.dumps(hist) + "\n")
        if progress is not None:
            progress(epoch, max_epochs, hist["loss"][-1], train_acc, hist["val"][-1])
    if best[2] is not None:
        model.load_state_dict(best[2])
    model.eval()
    return TrainingHistory(
        dataset=train.name,
        n_train=len(train),
        n_validation=len(validation) if validation is not None else 0,
        epochs=tuple(hist["epochs"]),
        train_loss=tuple(float(v) for v in hist["loss"]),
        train_accuracy=tuple(float(v) for v in hist["train"]),
        validation_accuracy=tuple(float(v) for v in hist["val"]),
        best_epoch=int(best[1]),
        best_validation_accuracy=float(best[0]) if validation is not None else float("nan"),
        seconds=float(seconds),
    )
