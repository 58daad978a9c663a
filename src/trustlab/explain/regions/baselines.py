"""Baselines of region-sparse classification (spec 12): the black box and Blackbox-Pixel.

:class:`BlackBoxClassifier` is the same CNN as the region-sparse model's classifier trained on whole
images. With ``kept_pixels=q`` it is the paper's *Blackbox-Pixel*: it sees only an evenly spaced pixel
lattice keeping a fraction ``q`` of the pixels (:func:`~.metrics.pixel_grid_mask`), in training and
at prediction. Such a mask keeps accuracy high while it says nothing about where the object is, the
paper's argument that pixel-level selection is degenerate (check 7).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

from trustlab._checks import (
    check_non_negative,
    check_positive,
    check_positive_int,
    check_random_state,
)
from trustlab._lazy import require
from trustlab._model_files import read_model_folder, write_model_folder
from trustlab._numerics import seeded_torch
from trustlab._progress import check_progress
from trustlab.errors import InputError

torch = require("torch", "image")

from trustlab.explain.regions.inputs import (  # noqa: E402
    check_images,
    check_known_labels,
    check_training_data,
    is_number,
)
from trustlab.explain.regions.metrics import pixel_grid_mask  # noqa: E402
from trustlab.explain.regions.models import Classifier, _widths  # noqa: E402

__all__ = ["BlackBoxClassifier"]

_FORMAT = "trustlab.regions.blackbox/1"


class BlackBoxClassifier(ClassifierMixin, BaseEstimator):
    """The unmasked CNN baseline, or Blackbox-Pixel with ``kept_pixels``.

    Parameters
    ----------
    kept_pixels : float in (0, 1], optional
        Blackbox-Pixel: keep only this fraction of pixels, on a fixed evenly spaced lattice
        (the rest set to ``fill``). None: the whole image (the black box).
    max_epochs, batch_size, learning_rate, weight_decay
        Adam settings (cosine decay of the learning rate to 5 %).
    classifier_widths : (int, int, int)
    fill : float
    random_state : None or int

    Attributes
    ----------
    classifier_, classes_, class_names_, image_size_, mask_ (the pixel mask, (H, W) bool, all True
    for the black box), history_ (per-epoch ``loss`` and ``accuracy``, ``seconds``).

    Examples
    --------
    >>> from trustlab.explain.regions import bam_lite
    >>> data = bam_lite(16, size=32, random_state=0)
    >>> bb = BlackBoxClassifier(kept_pixels=0.2, max_epochs=1, random_state=0)
    >>> bb.fit(data.images, data.labels).predict(data.images[:3]).shape
    (3,)
    """

    def __init__(
        self,
        *,
        kept_pixels: float | None = None,
        max_epochs: int = 20,
        batch_size: int = 64,
        learning_rate: float = 2e-3,
        weight_decay: float = 0.0,
        classifier_widths: tuple[int, int, int] = (16, 32, 64),
        fill: float = 0.0,
        random_state: Any = None,
    ):
        self.kept_pixels = kept_pixels
        self.max_epochs = max_epochs
        self.batch_size = batch_size
        self.learning_rate = learning_rate
        self.weight_decay = weight_decay
        self.classifier_widths = classifier_widths
        self.fill = fill
        self.random_state = random_state

    def _mask(self, size: tuple[int, int]) -> Any:
        if self.kept_pixels is None:
            return torch.ones(size, dtype=torch.bool)
        return torch.as_tensor(pixel_grid_mask(size, self.kept_pixels))

    def _inputs(self, x: Any) -> Any:
        m = self.mask_t_.to(x.dtype)
        return x * m + float(self.fill) * (1 - m)

    def fit(self, X: Any, y: Any, *, progress: Any = None) -> BlackBoxClassifier:
        """Train on images ``X`` (n, 3, H, W) in [0, 1] with labels ``y``."""
        if self.kept_pixels is not None:
            k = self.kept_pixels
            if not is_number(k) or not 0 < k <= 1:
                raise InputError.bad("kept_pixels", "None or a fraction in (0, 1]", k)
        check_non_negative(self.weight_decay, "weight_decay")  # inf: NaN weights
        _widths(self.classifier_widths, 3, "classifier_widths")
        max_epochs = check_positive_int(self.max_epochs, "max_epochs")
        batch_size = check_positive_int(self.batch_size, "batch_size")
        lr = check_positive(self.learning_rate, "learning_rate")
        if not is_number(self.fill) or not -np.inf < self.fill < np.inf:
            raise InputError.bad("fill", "a finite number", self.fill)
        x, classes, y_idx = check_training_data(X, y)
        check_progress(progress, "a callable or None")
        rng = check_random_state(self.random_state)
        with seeded_torch(int(rng.integers(2**31))):  # the caller's torch stream is restored
            self.mask_t_ = self._mask((int(x.shape[2]), int(x.shape[3])))
            net = Classifier(len(classes), self.classifier_widths)
            opt = torch.optim.Adam(net.parameters(), lr=lr, weight_decay=self.weight_decay)
            sched = torch.optim.lr_scheduler.CosineAnnealingLR(
                opt, T_max=max_epochs, eta_min=0.05 * lr
            )
            labels = torch.as_tensor(y_idx.astype(np.int64))
            hist: dict[str, list] = {"epochs": [], "loss": [], "accuracy": []}
            seconds = 0.0
            for epoch in range(max_epochs):
                t0 = time.perf_counter()
                net.train()
                order = rng.permutation(x.shape[0])
                tot, correct = 0.0, 0
                for s in range(0, len(order), batch_size):
                    idx = torch.as_tensor(order[s : s + batch_size])
                    logits = net(self._inputs(x[idx]))
                    loss = torch.nn.functional.cross_entropy(logits, labels[idx])
                    opt.zero_grad()
                    loss.backward()
                    opt.step()
                    tot += float(loss.detach()) * len(idx)
                    correct += int((logits.argmax(1) == labels[idx]).sum())
                sched.step()
                seconds += time.perf_counter() - t0
                hist["epochs"].append(epoch + 1)
                hist["loss"].append(tot / x.shape[0])
                hist["accuracy"].append(correct / x.shape[0])
                if progress is not None:
                    progress(epoch + 1, max_epochs, dict(hist, seconds=seconds))
        self.classifier_ = net.eval()
        self.classes_ = classes
        self.class_names_ = tuple(str(c) for c in classes)
        self.image_size_ = (int(x.shape[2]), int(x.shape[3]))
        self.mask_ = self.mask_t_.numpy()
        self.history_ = dict(hist, seconds=seconds)
        return self

    def _check_fitted(self) -> None:
        if not hasattr(self, "classifier_"):
            from sklearn.exceptions import NotFittedError

            raise NotFittedError(
                "this BlackBoxClassifier is not fitted yet; call fit(images, labels) first"
            )

    def predict_proba(self, X: Any, *, batch_size: int = 256) -> np.ndarray:
        """Softmax probabilities (n, n_classes) on the (lattice-masked) images."""
        self._check_fitted()
        x = check_images(X, "X", self.image_size_)
        batch_size = check_positive_int(batch_size, "batch_size")
        out = []
        with torch.no_grad():
            for s in range(0, x.shape[0], batch_size):
                logits = self.classifier_(self._inputs(x[s : s + batch_size]))
                out.append(torch.softmax(logits.double(), 1).numpy())
        return np.concatenate(out)

    def predict(self, X: Any) -> np.ndarray:
        """Predicted class labels (n,)."""
        return self.classes_[self.predict_proba(X).argmax(1)]

    def score(self, X: Any, y: Any, sample_weight: Any = None) -> float:
        """Accuracy on ``(X, y)`` (weighted as scikit-learn's); labels outside ``classes_`` are
        refused (never predicted)."""
        from sklearn.metrics import accuracy_score

        pred = self.predict(X)
        y = check_known_labels(y, len(pred), self.classes_)
        return float(accuracy_score(y, pred, sample_weight=sample_weight))

    def save(self, path: str | Path) -> Path:
        """Save into the folder ``path``: ``model.json`` and ``weights.safetensors``."""
        self._check_fitted()
        params = self.get_params()
        params["classifier_widths"] = list(params["classifier_widths"])
        if isinstance(params["random_state"], np.integer):  # np.int64(3) is the seed 3
            params["random_state"] = int(params["random_state"])
        if not isinstance(params["random_state"], (int, type(None))):
            params["random_state"] = None
        meta = {
            "format": _FORMAT,
            "params": params,
            "classes": self.classes_.tolist(),
            "image_size": list(self.image_size_),
            "history": self.history_,
        }
        return write_model_folder(path, meta, {"classifier": self.classifier_})

    @classmethod
    def load(cls, path: str | Path) -> BlackBoxClassifier:
        """Load a model saved by :meth:`save`."""
        meta, states = read_model_folder(path, _FORMAT, "BlackBoxClassifier.save")
        params = dict(meta["params"])
        params["classifier_widths"] = tuple(params["classifier_widths"])
        model = cls(**params)
        classes = np.asarray(meta["classes"])
        model.classifier_ = Classifier(len(classes), params["classifier_widths"])
        model.classifier_.load_state_dict(states["classifier"])
        model.classifier_.eval()
        model.classes_ = classes
        model.class_names_ = tuple(str(c) for c in classes)
        model.image_size_ = tuple(meta["image_size"])
        model.mask_t_ = model._mask(model.image_size_)
        model.mask_ = model.mask_t_.numpy()
        model.history_ = meta["history"]
        return model
