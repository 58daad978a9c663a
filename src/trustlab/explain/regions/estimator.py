"""The region-sparse classifier of P2P as a scikit-learn-style estimator (spec 12).

:class:`RegionSparseClassifier` trains a tau-conditioned :class:`~.models.Selector` and a
:class:`~.models.Classifier` end to end with the spec's loss

    L = CE(y, classifier(x masked by a relaxed group sample))
        + lambda_1(epoch) * R_KL(p_bar, tau) + lambda_2 * mean |Sigma|

(correlated logit-normal group logits, a relaxed Bernoulli mask at an annealed temperature, the
thresholded KL sparsity term on the size-weighted *mean* probabilities) and predicts from hard masks:
with ``tau="dynamic"`` the sparsity level of every image is the smallest on the 0.05 grid that makes
the classifier certain (max softmax >= ``delta``), with a number ``tau`` it is that fixed level.
Pixels outside the selection are replaced by ``fill`` before the classifier sees them, so they
cannot change the prediction (faithfulness by construction).

Images are channels-first floats in [0, 1] (n, 3, H, W) with sides that are multiples of 8;
superpixels are computed with :func:`~.segments.superpixels` unless given.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

from trustlab._checks import (
    check_bool,
    check_choice,
    check_non_negative,
    check_positive,
    check_positive_int,
    check_random_state,
)
from trustlab._lazy import require
from trustlab._model_files import (
    checkpoint_folder,
    load_training_state,
    read_model_folder,
    save_training_state,
    write_model_folder,
)
from trustlab._numerics import seeded_torch
from trustlab._progress import check_progress
from trustlab.errors import InputError

torch = require("torch", "image")

from trustlab.explain.regions.dynamic import _deltas, dynamic_tau_sequential  # noqa: E402
from trustlab.explain.regions.inputs import (  # noqa: E402
    check_images,
    check_known_labels,
    check_segment_maps,
    check_training_data,
    is_number,
)
from trustlab.explain.regions.losses import (  # noqa: E402
    colour_jitter,
    pretraining_loss,
    training_loss,
)
from trustlab.explain.regions.models import Classifier, Selector, _widths  # noqa: E402
from trustlab.explain.regions.results import RegionExplanation, RegionTrainingHistory  # noqa: E402
from trustlab.explain.regions.segments import superpixels  # noqa: E402
from trustlab.explain.regions.selection import (  # noqa: E402
    TAU_GRID,
    apply_mask,
    hard_selection,
    lambda_schedule,
    pixel_mask,
    temperature_schedule,
)

__all__ = ["RegionSparseClassifier", "RegionExplanation", "RegionTrainingHistory", "TAU_MIN"]

#: The smallest sparsity level drawn in training (spec: tau ~ U[0.05, 1]).
TAU_MIN = 0.05
_FORMAT = "trustlab.regions/1"


class RegionSparseClassifier(ClassifierMixin, BaseEstimator):
    """An image classifier that decides from a few superpixels it selects (P2P, ICML 2025).

    Parameters
    ----------
    tau : "dynamic" or float in (0, 1]
        ``"dynamic"``: train with ``tau ~ U[0.05, 1]`` given to the selector and choose tau per
        image at inference (the smallest level whose masked input gives max softmax >= ``delta``);
        a number: train and predict at that fixed kept-area threshold (the spec's 0.2).
    delta : float in (0, 1]
        Certainty threshold of the dynamic mode (the spec's default 0.99).
    segmentation : {"slic", "watershed"}
    n_segments, compactness
        Superpixel settings (:func:`~.segments.superpixels`).
    covariance : bool
        Correlated logit-normal group logits (True) or independent relaxed Bernoulli only.
    sparsity : {"kl", "l1"}
        The sparsity term.
    lambda_sparsity, lambda_covariance : float
        ``lambda_1`` (annealed: /100 before a tenth of the epochs, linear up to the full value at
        half) and ``lambda_2``.
    n_samples : int
        Monte-Carlo masks per image in training (softmax probabilities averaged).
    pretrain_epochs : int >= 0
        Epochs of training the classifier alone on whole images first: the stand-in for the
        paper's pretrained classifier. Trained jointly from scratch, the two networks stayed at
        chance on BAM-lite shapes for the first epochs while the selector shrank the masks.
    max_epochs, batch_size, learning_rate, weight_decay
        Adam settings (cosine decay of the learning rate to 5 %).
    selector_widths, classifier_widths
        Channels of the two networks.
    fill : float
        Value of removed pixels (0 = black for images in [0, 1]).
    colour_jitter : float in [0, 1)
        Random brightness and contrast changes of up to this fraction in training (0: none).
    random_state : None or int
    checkpoint_dir : path, optional
        Training state after every epoch; an interrupted ``fit`` resumes from it (a folder left
        by a fit of other images, labels, segments or settings is refused).
    cache_dir : path, optional
        Where superpixel maps are cached.

    Attributes
    ----------
    selector_, classifier_ : the trained networks.
    classes_ : class labels; ``class_names_`` their names.
    image_size_ : (H, W) of the training images.
    history_ : :class:`RegionTrainingHistory`.

    Examples
    --------
    >>> from trustlab.explain.regions import bam_lite
    >>> data = bam_lite(16, size=32, random_state=0)
    >>> model = RegionSparseClassifier(tau=0.3, n_segments=16, max_epochs=1, random_state=0)
    >>> model.fit(data.images, data.labels).predict(data.images[:2]).shape
    (2,)
    """

    def __init__(
        self,
        *,
        tau: str | float = "dynamic",
        delta: float = 0.99,
        segmentation: str = "slic",
        n_segments: int = 64,
        compactness: float = 20.0,
        covariance: bool = True,
        sparsity: str = "kl",
        lambda_sparsity: float = 10.0,
        lambda_covariance: float = 0.01,
        n_samples: int = 1,
        pretrain_epochs: int = 5,
        max_epochs: int = 20,
        batch_size: int = 64,
        learning_rate: float = 2e-3,
        weight_decay: float = 0.0,
        selector_widths: tuple[int, int] = (16, 32),
        classifier_widths: tuple[int, int, int] = (16, 32, 64),
        fill: float = 0.0,
        colour_jitter: float = 0.0,
        random_state: Any = None,
        checkpoint_dir: str | Path | None = None,
        cache_dir: str | Path | None = None,
    ):
        self.tau = tau
        self.delta = delta
        self.segmentation = segmentation
        self.n_segments = n_segments
        self.compactness = compactness
        self.covariance = covariance
        self.sparsity = sparsity
        self.lambda_sparsity = lambda_sparsity
        self.lambda_covariance = lambda_covariance
        self.n_samples = n_samples
        self.pretrain_epochs = pretrain_epochs
        self.max_epochs = max_epochs
        self.batch_size = batch_size
        self.learning_rate = learning_rate
        self.weight_decay = weight_decay
        self.selector_widths = selector_widths
        self.classifier_widths = classifier_widths
        self.fill = fill
        self.colour_jitter = colour_jitter
        self.random_state = random_state
        self.checkpoint_dir = checkpoint_dir
        self.cache_dir = cache_dir

    def _model_params(self) -> dict[str, Any]:
        """The parameters that define the model (not where it keeps files), JSON-ready: tuples
        as lists, numpy numbers as Python ones."""
        out = {}
        for k, v in self.get_params().items():
            if k not in ("checkpoint_dir", "cache_dir"):
                out[k] = [_plain(i) for i in v] if isinstance(v, tuple) else _plain(v)
        return out

    # ------------------------------------------------------------------ validation
    def _check_params(self) -> dict[str, Any]:
        if isinstance(self.tau, str):
            check_choice(self.tau, "tau", ("dynamic",))
            tau = None
        else:
            tau = _check_level(self.tau, "tau")
        p = {"tau": tau}
        p["delta"] = _check_delta(self.delta)
        p["segmentation"] = check_choice(self.segmentation, "segmentation", ("slic", "watershed"))
        p["n_segments"] = check_positive_int(self.n_segments, "n_segments")
        p["compactness"] = check_positive(self.compactness, "compactness")
        p["covariance"] = check_bool(self.covariance, "covariance")
        p["sparsity"] = check_choice(self.sparsity, "sparsity", ("kl", "l1"))
        p["lambda_sparsity"] = check_positive(self.lambda_sparsity, "lambda_sparsity")
        p["lambda_covariance"] = check_non_negative(self.lambda_covariance, "lambda_covariance")
        p["n_samples"] = check_positive_int(self.n_samples, "n_samples")
        p["pretrain_epochs"] = check_positive_int(
            self.pretrain_epochs, "pretrain_epochs", minimum=0
        )
        p["max_epochs"] = check_positive_int(self.max_epochs, "max_epochs")
        p["batch_size"] = check_positive_int(self.batch_size, "batch_size")
        p["learning_rate"] = check_positive(self.learning_rate, "learning_rate")
        p["weight_decay"] = check_non_negative(self.weight_decay, "weight_decay")  # inf: NaN
        _widths(self.selector_widths, 2, "selector_widths")
        _widths(self.classifier_widths, 3, "classifier_widths")
        if not is_number(self.fill) or not -np.inf < self.fill < np.inf:
            raise InputError.bad("fill", "a finite number", self.fill)
        if not is_number(self.colour_jitter) or not 0 <= self.colour_jitter < 1:
            raise InputError.bad("colour_jitter", "a number in [0, 1)", self.colour_jitter)
        return {**p, "folder": checkpoint_folder(self.checkpoint_dir)}  # before the superpixels

    def _segments(self, x: Any, segments: Any, compact: bool = True) -> Any:
        if segments is None:
            seg = superpixels(
                x.numpy(),
                method=self.segmentation,
                n_segments=self.n_segments,
                compactness=self.compactness,
                cache_dir=self.cache_dir,
            )
            return torch.as_tensor(seg.astype(np.int64))
        return check_segment_maps(segments, x, compact=compact)  # as given for a group_mask

    def _check_fitted(self) -> None:
        if not hasattr(self, "selector_"):
            from sklearn.exceptions import NotFittedError

            raise NotFittedError(
                "this RegionSparseClassifier is not fitted yet; call fit(images, labels) first"
            )

    # ------------------------------------------------------------------ training
    def fit(
        self, X: Any, y: Any, *, segments: Any = None, progress: Any = None
    ) -> RegionSparseClassifier:
        """Train selector and classifier on images ``X`` (n, 3, H, W) in [0, 1] and labels ``y``.

        ``segments`` (n, H, W): superpixel maps (computed when None), any labels >= 0, renumbered
        0..K-1 per map in their order. ``progress``, if given, is called after every epoch as
        ``progress(epoch, max_epochs, history_so_far)``.
        """
        p = self._check_params()
        x, classes, y_idx = check_training_data(X, y)
        seg = self._segments(x, segments)
        check_progress(progress, "a callable or None")
        rng = check_random_state(self.random_state)
        with seeded_torch(int(rng.integers(2**31))):  # the caller's torch stream is restored
            selector = Selector(self.selector_widths)
            classifier = Classifier(len(classes), self.classifier_widths)
            params = list(selector.parameters()) + list(classifier.parameters())
            opt = torch.optim.Adam(params, lr=p["learning_rate"], weight_decay=self.weight_decay)
            total = p["pretrain_epochs"] + p["max_epochs"]
            sched = torch.optim.lr_scheduler.CosineAnnealingLR(
                opt, T_max=total, eta_min=0.05 * p["learning_rate"]
            )
            gen = torch.Generator().manual_seed(int(rng.integers(2**31)))
            n_groups = int(seg.max()) + 1
            labels = torch.as_tensor(y_idx.astype(np.int64))
            hist: dict[str, list] = {
                k: [] for k in ("epochs", "loss", "ce", "sparsity", "acc", "kept", "temp", "lam")
            }
            start, seconds = 0, 0.0
            folder = p["folder"]
            fingerprint = self._fingerprint(x, y_idx, seg)
            state = load_training_state(folder, fingerprint)
            if state is not None:
                selector.load_state_dict(state["selector"])
                classifier.load_state_dict(state["classifier"])
                opt.load_state_dict(state["optimizer"])
                sched.load_state_dict(state["scheduler"])
                hist, seconds, start = state["history"], state["seconds"], state["epoch"] + 1
                rng.bit_generator.state = state["rng"]
                gen.set_state(state["generator"])
                torch.set_rng_state(state["torch_rng"])
            fill = float(self.fill)
            for epoch in range(start, total):
                t0 = time.perf_counter()
                joint = epoch - p["pretrain_epochs"]  # < 0 while pretraining the classifier
                temp = temperature_schedule(max(joint, 0), p["max_epochs"])
                lam = lambda_schedule(max(joint, 0), p["max_epochs"], p["lambda_sparsity"])
                selector.train()
                classifier.train()
                order = rng.permutation(x.shape[0])
                sums = np.zeros(5)
                for s in range(0, len(order), p["batch_size"]):
                    idx = torch.as_tensor(order[s : s + p["batch_size"]])
                    xb, sb, yb = x[idx], seg[idx], labels[idx]
                    if self.colour_jitter:
                        xb = colour_jitter(xb, float(self.colour_jitter), gen)
                    if p["tau"] is None:
                        tau = TAU_MIN + (1 - TAU_MIN) * torch.rand(len(idx), generator=gen)
                    else:
                        tau = torch.full((len(idx),), p["tau"])
                    if joint < 0:
                        out = pretraining_loss(classifier, xb, yb)
                    else:
                        out = training_loss(
                            selector, classifier, xb, sb, yb, tau, n_groups, p, temp, lam, fill, gen
                        )
                    opt.zero_grad()
                    out["loss"].backward()
                    opt.step()
                    sums += np.array(
                        [float(out[k].detach()) for k in ("loss", "ce", "sparsity", "acc", "kept")]
                    ) * len(idx)
                sched.step()
                means = sums / x.shape[0]
                hist["epochs"].append(epoch + 1)
                for key, v in zip(("loss", "ce", "sparsity", "acc", "kept"), means, strict=True):
                    hist[key].append(float(v))
                hist["temp"].append(temp if joint >= 0 else 0.0)  # 0: no selection yet
                hist["lam"].append(lam if joint >= 0 else 0.0)
                seconds += time.perf_counter() - t0
                save_training_state(
                    folder,
                    fingerprint,
                    {
                        "selector": selector.state_dict(),
                        "classifier": classifier.state_dict(),
                        "optimizer": opt.state_dict(),
                        "scheduler": sched.state_dict(),
                        "history": hist,
                        "seconds": seconds,
                        "epoch": epoch,
                        "rng": rng.bit_generator.state,
                        "generator": gen.get_state(),
                        "torch_rng": torch.get_rng_state(),
                    },
                )
                if progress is not None:
                    progress(epoch + 1, total, _history(hist, seconds))
        self.selector_ = selector.eval()
        self.classifier_ = classifier.eval()
        self.classes_ = classes
        self.class_names_ = tuple(str(c) for c in classes)
        self.image_size_ = (int(x.shape[2]), int(x.shape[3]))
        self.history_ = _history(hist, seconds)
        return self

    def _fingerprint(self, x: Any, y_idx: np.ndarray, seg: Any) -> dict[str, Any]:
        import hashlib

        h = hashlib.sha256(x.numpy().tobytes())
        h.update(np.ascontiguousarray(y_idx).tobytes())
        h.update(seg.numpy().tobytes())  # the superpixels define the groups: part of the data
        params = self._model_params()
        return {"data": h.hexdigest(), "params": json.dumps(params, sort_keys=True, default=str)}

    # ------------------------------------------------------------------ inference
    def _classify(self, images: Any) -> Any:
        return self.classifier_(images)

    def explain(
        self,
        X: Any,
        *,
        segments: Any = None,
        delta: float | None = None,
        tau: float | None = None,
        batch_size: int = 256,
    ) -> RegionExplanation:
        """Predict from hard masks and return the selected regions.

        Parameters
        ----------
        X : images (n, 3, H, W) of the model's size, values in [0, 1]
        segments : (n, H, W) superpixel maps, optional (computed as in training when None);
            labels renumbered 0..K-1 per map in their order (the result's ``segments``)
        delta : float in (0, 1], optional
            Certainty threshold of dynamic tau (default: the model's ``delta``).
        tau : float in (0, 1], optional
            Use this fixed level instead (default: the model's mode).
        batch_size : int
            Images per forward pass.
        """
        self._check_fitted()
        x = check_images(X, "X", self.image_size_)
        seg = self._segments(x, segments)
        batch_size = check_positive_int(batch_size, "batch_size")
        if tau is not None:
            level = _check_level(tau, "tau")
        elif not isinstance(self.tau, str):
            level = float(self.tau)
        else:
            level = None
        if level is not None and delta is not None:  # it would be ignored
            raise InputError.bad(
                "delta",
                f"no certainty threshold with a fixed level (tau = {level:g}): delta sets "
                "dynamic tau only",
                delta,
            )
        d = _check_delta(self.delta if delta is None else delta) if level is None else None
        fill = float(self.fill)
        parts: dict[str, list] = {k: [] for k in ("tau", "certain", "mu", "gm", "logits")}
        with torch.no_grad():
            for s in range(0, x.shape[0], batch_size):
                xb, sb = x[s : s + batch_size], seg[s : s + batch_size]
                k = int(sb.max()) + 1
                if level is None:
                    # the selector's backbone once for every level; the loop runs the classifier
                    # only where the selection changed (3-4x the spec's loop, bench_regions); the
                    # certified level's logits, mask and scores are kept, not recomputed
                    mu_all = self.selector_.select_levels(xb, sb, TAU_GRID, k)  # (b, L, K)
                    r = dynamic_tau_sequential(
                        lambda a, b, t, k=k: self.selector_.select(a, b, t, k)[0],
                        self._classify,
                        xb,
                        sb,
                        d,
                        fill=fill,
                        levels_fn=lambda a, b, t, m=mu_all: m,
                    )
                    tau64 = np.asarray(r.tau, dtype=np.float64)
                    certain = np.asarray(r.certain)
                    at = torch.as_tensor([_LEVEL_INDEX[float(t)] for t in tau64])
                    mu = mu_all[torch.arange(len(xb)), at]
                    valid = torch.zeros(mu.shape, dtype=torch.bool)
                    valid.scatter_(1, sb.reshape(len(xb), -1), True)
                    gm, logits = r.group_mask, r.logits
                else:
                    tau64 = np.full(len(xb), level)
                    certain = np.ones(len(xb), dtype=bool)
                    taus = torch.as_tensor(tau64, dtype=xb.dtype)
                    mu, _, sizes = self.selector_.select(xb, sb, taus, k)
                    valid = sizes > 0
                    gm = hard_selection(mu, valid)
                    logits = self.classifier_(apply_mask(xb, pixel_mask(gm, sb), fill))
                parts["tau"].append(tau64)
                parts["certain"].append(certain)
                parts["mu"].append(torch.where(valid, mu, -torch.inf).numpy())
                parts["gm"].append(gm.numpy())
                parts["logits"].append(logits.numpy())
        k_max = max(a.shape[1] for a in parts["mu"])
        mu = np.concatenate(
            [
                np.pad(a, ((0, 0), (0, k_max - a.shape[1])), constant_values=-np.inf)
                for a in parts["mu"]
            ]
        )
        gm = np.concatenate([np.pad(a, ((0, 0), (0, k_max - a.shape[1]))) for a in parts["gm"]])
        logits = np.concatenate(parts["logits"]).astype(np.float64)
        prob = np.exp(logits - logits.max(1, keepdims=True))
        prob /= prob.sum(1, keepdims=True)
        seg_np = seg.numpy()
        rows = np.arange(len(seg_np))[:, None, None]
        mask = gm[rows, seg_np]
        with np.errstate(over="ignore"):
            soft = (1.0 / (1.0 + np.exp(-mu)))[rows, seg_np]
        return RegionExplanation(
            mode="dynamic" if level is None else "fixed",
            delta=d,
            class_names=self.class_names_,
            prediction=prob.argmax(1),
            confidence=prob.max(1),
            tau=np.concatenate(parts["tau"]),
            certain=np.concatenate(parts["certain"]),
            kept_fraction=mask.reshape(len(mask), -1).mean(1),
            probabilities=prob,
            group_mask=gm,
            scores=mu,
            mask=mask,
            soft_map=soft,
            segments=seg_np,
            images=x.numpy(),
        )

    def classify_selection(self, X: Any, group_mask: Any, *, segments: Any = None) -> np.ndarray:
        """Class probabilities of images whose selection is fixed to ``group_mask`` (n, K) bool.

        The classifier sees ``X`` with every pixel outside the selected segments set to ``fill``:
        what lies outside cannot change the result (check 1 of the spec, with the selection held
        fixed). Columns are the labels of ``segments`` as given: with an explanation's
        ``group_mask`` pass its ``segments`` (renumbered 0..K-1), not maps with gaps in their labels.
        """
        self._check_fitted()
        x = check_images(X, "X", self.image_size_)
        seg = self._segments(x, segments, compact=False)
        gm = np.asarray(group_mask)
        if gm.dtype != bool or gm.ndim != 2 or gm.shape[0] != x.shape[0]:
            raise InputError.bad("group_mask", f"a bool array of shape ({x.shape[0]}, K)", gm)
        if gm.shape[1] <= int(seg.max()):
            raise InputError.bad("group_mask", f"at least {int(seg.max()) + 1} columns", gm)
        with torch.no_grad():
            pm = pixel_mask(torch.as_tensor(gm), seg)
            logits = self.classifier_(apply_mask(x, pm, float(self.fill))).double()
        return torch.softmax(logits, 1).numpy()

    def predict_proba(self, X: Any, *, segments: Any = None, delta: float | None = None) -> Any:
        """Class probabilities (n, n_classes) from the masked images."""
        return self.explain(X, segments=segments, delta=delta).probabilities

    def predict(self, X: Any, *, segments: Any = None, delta: float | None = None) -> np.ndarray:
        """Predicted class labels (n,)."""
        r = self.explain(X, segments=segments, delta=delta)
        return self.classes_[r.prediction]

    def score(self, X: Any, y: Any, *, segments: Any = None) -> float:
        """Accuracy on ``(X, y)``; labels outside ``classes_`` are refused (never predicted)."""
        pred = self.predict(X, segments=segments)
        return float(np.mean(pred == check_known_labels(y, len(pred), self.classes_)))

    # ------------------------------------------------------------------ persistence
    def save(self, path: str | Path) -> Path:
        """Save into the folder ``path``: ``model.json`` and ``weights.safetensors``."""
        self._check_fitted()
        params = self._model_params()
        if not isinstance(params["random_state"], (int, type(None))):
            params["random_state"] = None
        meta = {
            "format": _FORMAT,
            "params": params,
            "classes": self.classes_.tolist(),
            "image_size": list(self.image_size_),
            "history": self.history_.to_dict(),
        }
        return write_model_folder(
            path, meta, {"selector": self.selector_, "classifier": self.classifier_}
        )

    @classmethod
    def load(cls, path: str | Path) -> RegionSparseClassifier:
        """Load a model saved by :meth:`save`."""
        meta, states = read_model_folder(path, _FORMAT, "RegionSparseClassifier.save")
        params = dict(meta["params"])
        for k in ("selector_widths", "classifier_widths"):
            params[k] = tuple(params[k])
        model = cls(**params)
        classes = np.asarray(meta["classes"])
        model.selector_ = Selector(params["selector_widths"])
        model.classifier_ = Classifier(len(classes), params["classifier_widths"])
        model.selector_.load_state_dict(states["selector"])
        model.classifier_.load_state_dict(states["classifier"])
        model.selector_.eval()
        model.classifier_.eval()
        model.classes_ = classes
        model.class_names_ = tuple(str(c) for c in classes)
        model.image_size_ = tuple(meta["image_size"])
        h = meta["history"]
        model.history_ = RegionTrainingHistory(
            **{k: tuple(v) if isinstance(v, list) else v for k, v in h.items()}
        )
        return model


#: TAU_GRID value -> its position.
_LEVEL_INDEX = {t: i for i, t in enumerate(TAU_GRID)}


def _plain(value: Any) -> Any:
    zero_d = isinstance(value, (np.generic, np.ndarray, torch.Tensor)) and value.ndim == 0
    return value.item() if zero_d else value


def _check_level(value: Any, name: str) -> float:
    value = _plain(value)  # np.array(0.3), torch.tensor(0.3), np.int64(1): numbers (as delta)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= 1:
        raise InputError.bad(name, "a sparsity level in (0, 1]", value)
    return float(value)


def _check_delta(value: Any) -> float:
    deltas, scalar = _deltas(value)
    if not scalar:
        raise InputError.bad("delta", "one certainty threshold in (0, 1]", value)
    return deltas[0]


def _history(hist: dict, seconds: float) -> RegionTrainingHistory:
    return RegionTrainingHistory(
        epochs=tuple(hist["epochs"]),
        loss=tuple(hist["loss"]),
        cross_entropy=tuple(hist["ce"]),
        sparsity=tuple(hist["sparsity"]),
        accuracy=tuple(hist["acc"]),
        expected_kept=tuple(hist["kept"]),
        temperature=tuple(hist["temp"]),
        lambda_sparsity=tuple(hist["lam"]),
        seconds=float(seconds),
    )
