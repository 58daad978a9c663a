"""Train a :class:`~trustlab.explain.equigx.model.TensorFieldNetwork` on a
:class:`~trustlab.explain.equigx.data.GraphDataset`.

:func:`train_tfn` runs mini-batch Adam on the cross-entropy of the graph logits, keeps the weights of
the epoch with the best validation accuracy (or the last epoch without validation data), and, given
``checkpoint_dir``, saves the model, the optimiser, the history and the run's settings (the
model's config, the training settings, a fingerprint of the data) after every epoch so an
interrupted run resumes where it stopped (``resume=True``); a resume with other settings, or from a
checkpoint that does not record them, is refused (:class:`ResumeMismatch`; :func:`check_resume`
asks first). Graphs of a batch share one tensor with a ``batch`` vector; edges never cross graphs.
"""

from __future__ import annotations

import contextlib
import hashlib
import inspect
import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from trustlab._checks import (
    check_non_negative,
    check_positive,
    check_positive_int,
    check_random_state,
)
from trustlab._lazy import require
from trustlab._numerics import seeded_torch
from trustlab._progress import check_progress
from trustlab._results import Result, check_output_dir
from trustlab.errors import InputError

torch = require("torch", "graph")

from trustlab.explain.equigx.data import GraphDataset  # noqa: E402
from trustlab.explain.equigx.model import (  # noqa: E402
    TensorFieldNetwork,
    as_graph_tensors,
)

__all__ = [
    "ResumeMismatch",
    "TrainingHistory",
    "batch_graphs",
    "check_resume",
    "describe_differences",
    "predict_graphs",
    "train_tfn",
]


class ResumeMismatch(InputError):
    """The interrupted run in ``path`` cannot be resumed: ``reason`` says why, ``differences``
    maps each setting that differs to ``(saved, now)`` (empty when the checkpoint cannot be read
    or does not record its settings)."""

    def __init__(
        self, path: Path, reason: str, differences: dict[str, tuple[Any, Any]] | None = None
    ):
        super().__init__(
            f"checkpoint_dir: {path} {reason}; pass resume=False or another checkpoint_dir to "
            "start afresh",
            argument="checkpoint_dir",
        )
        self.path, self.reason, self.differences = path, reason, dict(differences or {})


def _fingerprint(data: GraphDataset | None) -> str | None:
    """``"name, n graphs, sha256 …"`` of the graphs, their features and labels."""
    if data is None:
        return None
    digest = hashlib.sha256(np.ascontiguousarray(data.labels, dtype=np.int64).tobytes())
    for g in data:
        digest.update(np.ascontiguousarray(g.pos, dtype=np.float64).tobytes())
        digest.update(np.ascontiguousarray(g.x, dtype=np.float64).tobytes())
    return f"{data.name}, {len(data)} graphs, sha256 {digest.hexdigest()[:16]}"


def _run_settings(config: Any, train: Any, validation: Any, **training: Any) -> dict[str, Any]:
    """Every setting that changes what a run trains: the model's config, the training settings
    (a numpy Generator as seed is recorded as such) and the data's fingerprints."""
    seed = training.get("random_state")
    if seed is not None and not isinstance(seed, np.random.Generator):
        training["random_state"] = int(seed)
    elif seed is not None:
        training["random_state"] = "a numpy Generator"
    return {**asdict(config), **training, "train": _fingerprint(train),
            "validation": _fingerprint(validation)}  # fmt: skip


def _load_state(folder: Path) -> dict[str, Any]:
    """The state of the interrupted run in ``folder``, refused when unreadable or when it does
    not record its settings."""
    try:
        state = torch.load(folder / "state.pt", weights_only=False)
    except Exception as exc:  # noqa: BLE001 - any unreadable file is the same refusal
        reason = f"cannot be read ({type(exc).__name__}: {exc})"
        raise ResumeMismatch(folder / "state.pt", reason) from exc
    if not (isinstance(state, dict) and isinstance(state.get("settings"), dict)):
        reason = (
            "does not record the settings of its run (written by an older trustlab), so a "
            "resume cannot be checked against them"
        )
        raise ResumeMismatch(folder / "state.pt", reason)
    return state


def describe_differences(
    differences: dict[str, tuple[Any, Any]], names: dict[str, str] | None = None
) -> str:
    """``"learning_rate 0.01 (now 0.5), batch_size 32 (now 8)"`` (``names`` renames settings)."""
    names = names or {}
    return ", ".join(
        f"{names.get(key, key)} {old} (now {new})" for key, (old, new) in differences.items()
    )


def _resume_state(folder: Path, settings: dict[str, Any]) -> dict[str, Any]:
    """The state of the interrupted run in ``folder``, refused unless it was run with
    ``settings``."""
    state = _load_state(folder)
    saved = state["settings"]
    differences = {key: (saved.get(key), settings.get(key))
                   for key in dict.fromkeys([*settings, *saved])
                   if saved.get(key) != settings.get(key)}  # fmt: skip
    if differences:
        reason = (
            "holds an interrupted run with other settings "
            f"({describe_differences(differences)}); pass the same settings to resume it"
        )
        raise ResumeMismatch(folder, reason, differences)
    return state


#: The arguments of :func:`train_tfn` that a resumed run must share (with the model's config).
_TRAINING = ("max_epochs", "learning_rate", "batch_size", "weight_decay", "random_state")


def check_resume(
    checkpoint_dir: str | Path,
    config: Any,
    train: GraphDataset,
    validation: GraphDataset | None = None,
    **training: Any,
) -> bool:
    """Whether :func:`train_tfn` with these arguments (``config``: the model's
    :class:`~trustlab.explain.equigx.model.TFNConfig`; ``training``: its ``max_epochs``,
    ``learning_rate``, ``batch_size``, ``weight_decay`` and ``random_state``, train_tfn's defaults
    for those left out) would resume an interrupted run in ``checkpoint_dir``; raises
    :class:`ResumeMismatch` when that run had other settings, so a caller can refuse (or start
    afresh) before any work."""
    unknown = sorted(set(training) - set(_TRAINING))
    if unknown:
        raise InputError.bad("training", f"arguments among {', '.join(_TRAINING)}", unknown)
    folder = Path(checkpoint_dir)
    if not (folder / "state.pt").is_file():
        return False
    defaults = inspect.signature(train_tfn).parameters
    training = {name: training.get(name, defaults[name].default) for name in _TRAINING}
    _resume_state(folder, _run_settings(config, train, validation, **training))
    return True


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
            f"TFN training on {self.dataset}: {self.n_train} training and "
            f"{self.n_validation} validation graphs, {len(self.epochs)} epochs, "
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
    """One batched ``{"pos", "x", "batch"}`` dict (tensors of the floating ``dtype``) from a
    sequence of graphs (:class:`~trustlab.explain.equigx.data.Graph`, ``PointGraph`` or dicts
    with ``pos`` and ``x``); a bad graph raises InputError naming it (``graphs[i]``)."""
    return _batch(graphs, dtype, "graphs")


def _batch(graphs: Any, dtype: Any, name: str) -> dict:
    # unchecked, an empty list, one graph not in a list, a PointGraph, a str dtype or graphs of
    # other widths (positions (n, 2), other feature counts) were bare numpy/torch errors
    if isinstance(graphs, dict) or hasattr(graphs, "pos"):
        raise InputError.bad(name, "a sequence of graphs (one graph: in a list)", graphs)
    if not (isinstance(dtype, torch.dtype) and dtype.is_floating_point):
        raise InputError.bad("dtype", "a torch floating dtype (torch.float32)", dtype)
    pos, x = [], []
    for i, graph in enumerate(graphs):
        try:
            p, h, b = as_graph_tensors(graph, dtype)
        except InputError as exc:
            raise InputError(f"{name}[{i}]: {exc}", argument=f"{name}[{i}]") from exc
        if int(b.max()) != int(b.min()):
            raise InputError.bad(f"{name}[{i}]", "one graph (one batch index)", "several")
        if x and h.shape[1] != x[0].shape[1]:
            raise InputError.bad(
                f"{name}[{i}].x", f"{x[0].shape[1]} node features (as {name}[0])", h.shape[1]
            )
        pos.append(p)
        x.append(h)
    if not pos:
        raise InputError.bad(name, "at least one graph", 0)
    sizes = torch.tensor([len(p) for p in pos])
    return {
        "pos": torch.cat(pos),
        "x": torch.cat(x),
        "batch": torch.repeat_interleave(torch.arange(len(pos)), sizes),
    }


def predict_graphs(
    model: Any, graphs: Any, *, batch_size: int = 64, mask_order: Any = None
) -> np.ndarray:
    """Logits ``(n_graphs, n_classes)`` of ``model`` on a sequence of graphs, in batches
    (``mask_order``: angular orders zeroed, as in the model's forward).

    ``graphs``: :class:`~trustlab.explain.equigx.data.Graph`, ``PointGraph`` or dicts with
    ``pos`` and ``x``, each checked as :meth:`TensorFieldNetwork.forward` checks one."""
    if not isinstance(model, TensorFieldNetwork):
        raise InputError.bad("model", "a trustlab TensorFieldNetwork", model)
    if isinstance(graphs, dict) or hasattr(graphs, "pos"):  # one graph, not a sequence
        raise InputError.bad("graphs", "a sequence of graphs (one graph: in a list)", graphs)
    # a batch size below 1 returned no logits at all (-1) or a bare ValueError (0)
    batch_size = check_positive_int(batch_size, "batch_size")
    dtype = next(model.parameters()).dtype
    graphs = [_one_graph(g, dtype, model.config.n_scalars) for g in graphs]
    out = []
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            for start in range(0, len(graphs), batch_size):
                chunk = graphs[start : start + batch_size]
                sizes = torch.tensor([len(p) for p, _ in chunk])
                batch = {
                    "pos": torch.cat([p for p, _ in chunk]),
                    "x": torch.cat([x for _, x in chunk]),
                    "batch": torch.repeat_interleave(torch.arange(len(chunk)), sizes),
                }
                out.append(model(batch, mask_order=mask_order).numpy())
    finally:
        model.train(was_training)
    n_classes = model.config.n_classes
    return np.vstack(out) if out else np.zeros((0, n_classes))


def _one_graph(graph: Any, dtype: Any, n_scalars: int) -> tuple[Any, Any]:
    """``(pos, x)`` tensors of one graph of a sequence; bad ones raise InputError."""
    pos, x, batch = as_graph_tensors(graph, dtype)
    if x.shape[1] != n_scalars:
        raise InputError.bad(
            "graphs", f"graphs with {n_scalars} scalar features per node (the model's)",
            f"a graph with {x.shape[1]}",
        )  # fmt: skip
    if int(batch.max()) != int(batch.min()):
        raise InputError.bad("graphs", "one graph per item (one batch index)", "several")
    return pos, x


def _check_dataset(data: Any, name: str, model: Any) -> GraphDataset:
    if not isinstance(data, GraphDataset):
        raise InputError.bad(name, "a GraphDataset (shapes_in_noise, qm9_carbonyl)", data)
    if len(data) == 0:
        raise InputError.bad(name, "at least one graph", 0)
    if data.n_classes != model.config.n_classes:
        raise InputError.bad(
            name, f"{model.config.n_classes} classes (the model's)", data.n_classes
        )
    # every graph, not the first only: a later one of other widths stopped training mid-epoch
    # with a bare numpy ValueError
    width = _batch(data.graphs, next(model.parameters()).dtype, name)["x"].shape[1]
    if width != model.config.n_scalars:
        raise InputError.bad(name, f"{model.config.n_scalars} node features (the model's)", width)
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
        Seeds the batch order (numpy) and torch; the caller's torch random stream is left as it
        was (None: no seed; torch draws, if any, come from the caller's stream).
    checkpoint_dir : path, optional
        Saved after every epoch (model, optimiser, history, settings); with ``resume=True`` a
        folder left by an interrupted run is continued from its last epoch. The run must have the
        same model config, training settings and data, else :class:`ResumeMismatch` (an
        :class:`~trustlab.errors.InputError`) is raised before any training; ``resume=False``
        starts afresh.
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
    check_progress(
        progress,
        "a callable (epoch, max_epochs, loss, train_accuracy, validation_accuracy) or None",
    )
    if not isinstance(model, TensorFieldNetwork):
        raise InputError.bad("model", "a trustlab TensorFieldNetwork", model)
    train = _check_dataset(train, "train", model)
    if validation is not None:
        validation = _check_dataset(validation, "validation", model)
    max_epochs = check_positive_int(max_epochs, "max_epochs")
    batch_size = check_positive_int(batch_size, "batch_size")
    learning_rate = check_positive(learning_rate, "learning_rate")
    weight_decay = check_non_negative(weight_decay, "weight_decay")  # inf: NaN weights
    settings = _run_settings(
        model.config, train, validation, max_epochs=max_epochs, learning_rate=learning_rate,
        batch_size=batch_size, weight_decay=weight_decay, random_state=random_state,
    )  # fmt: skip
    # a file in the way is refused before any training (was: a raw error once an epoch ran)
    folder = None if checkpoint_dir is None else check_output_dir(checkpoint_dir, "checkpoint_dir")
    state = None
    if folder is not None and resume and (folder / "state.pt").is_file():
        state = _resume_state(folder, settings)
    rng = check_random_state(random_state)
    seeded = random_state is not None and not isinstance(random_state, np.random.Generator)
    # an int seed (2**64 and more too) seeds torch; the caller's torch stream is restored after
    with seeded_torch(random_state) if seeded else contextlib.nullcontext():
        dtype = next(model.parameters()).dtype
        opt = torch.optim.Adam(model.parameters(), lr=learning_rate, weight_decay=weight_decay)
        sched = torch.optim.lr_scheduler.CosineAnnealingLR(
            opt, T_max=max_epochs, eta_min=0.05 * learning_rate
        )
        labels = torch.as_tensor(train.labels)
        hist: dict[str, list] = {"epochs": [], "loss": [], "train": [], "val": []}
        best = (-1.0, 0, None)
        start_epoch, seconds = 1, 0.0
        if state is not None:
            model.load_state_dict(state["model"])
            opt.load_state_dict(state["optimizer"])
            sched.load_state_dict(state["scheduler"])
            hist, seconds = state["history"], state["seconds"]
            best = (state["best"][0], state["best"][1], state["best_weights"])
            start_epoch = state["epoch"] + 1
            rng.bit_generator.state = state["rng"]
            if seeded:  # None / a Generator: the caller's torch stream stays the caller's
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
            if validation is None or val_acc >= best[0]:  # without validation: the last epoch
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
                        "settings": settings,
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
