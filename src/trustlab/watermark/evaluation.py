"""How well a no-reference predictor reads watermarks: the spec's check-3 numbers and controls.

:func:`evaluate_predictions` compares :class:`~trustlab.watermark.nr.WatermarkPredictions` with
a generated :class:`~trustlab.watermark.synth.WatermarkDataset`:

- visibility: SRCC and PLCC of the predicted score against the ground-truth score, exact 5-level
  accuracy and within-one-level accuracy (over the visible marks: logo, text, pattern);
- location, for visible marks with opacity ``w >= min_opacity``: 3x3 cell accuracy of the
  predicted box centre (beside the share of the commonest cell, the accuracy of always answering
  it), and the IoU of the thresholded heatmap with the watermark region at the
  heatmap's resolution (a cell of 8 x 8 pixels belongs to the region when any of its pixels is
  watermarked, see :func:`~trustlab.watermark.nr.block_mask`);
- content type accuracy;
- invisible marks: detection AUROC (watermarked against clean images, the statistic being
  ``5 - predicted score``) per method and strength, reported without a gate (weak invisible marks
  are meant to be hard to see);
- controls on the same images: a constant "invisible" answer, a random answer drawn from the
  training levels' prior, and :class:`GlobalStatisticsBaseline` (a linear model on whole-image
  statistics, fitted on the training set), which ties with the predictor if the predictor learnt
  nothing beyond global statistics.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils import metadata_routing

from trustlab._checks import (
    as_float_array,
    check_bool,
    check_in_range,
    check_int_seed,
    check_non_negative,
    check_positive_int,
    check_random_state,
)
from trustlab._progress import check_progress
from trustlab._results import Result, internal_field, new_axes
from trustlab.errors import InputError
from trustlab.watermark.vocabulary import level_index, level_of_score

__all__ = [
    "PredictorEvaluation",
    "BackendEvaluation",
    "evaluate_backend",
    "reference_paragraphs",
    "GlobalStatisticsBaseline",
    "evaluate_predictions",
    "visibility_numbers",
    "VISIBLE",
]

#: The kinds whose score follows WMarkGPT's opacity recipe.
VISIBLE: tuple[str, ...] = ("logo", "text", "pattern")


def _level_idx(levels: Sequence[str]) -> np.ndarray:
    return np.array([level_index(lv) for lv in levels], dtype=np.int64)


def visibility_numbers(predicted: Any, truth: Any) -> dict[str, float]:
    """SRCC, PLCC, exact and within-one level accuracy of predicted scores against true scores.

    >>> visibility_numbers([0.5, 1.5, 2.5, 4.5], [0.2, 1.1, 2.9, 4.0])["exact_level_accuracy"]
    1.0
    """
    from trustlab.watermark.metrics import srcc_plcc

    p = as_float_array(predicted, "predicted", min_size=0)  # numbers, finite
    t = as_float_array(truth, "truth", min_size=0)
    if p.ndim != 1 or p.shape != t.shape or len(p) < 2:
        raise InputError.bad(
            "predicted", "two 1-D score arrays of one length >= 2", (p.shape, t.shape)
        )
    pl = _level_idx([level_of_score(s) for s in p])
    tl = _level_idx([level_of_score(s) for s in t])
    srcc, plcc = srcc_plcc(p, t)  # NaN when either side is constant
    return {
        "srcc": float(srcc),
        "plcc": float(plcc),
        "exact_level_accuracy": float(np.mean(pl == tl)),
        "within_one_level_accuracy": float(np.mean(np.abs(pl - tl) <= 1)),
        "n": int(len(p)),
    }


def _check_images(images: Any, name: str = "images") -> np.ndarray:
    """``images`` as an (n, H, W, 3) array of pixel values 0-255 (H, W >= 2)."""
    expected = "an (n, H, W, 3) array of RGB images with pixel values 0-255 (n >= 1, H, W >= 2)"
    try:
        arr = np.asarray(images)
    except ValueError:  # images of different sizes
        raise InputError.bad(name, expected, images) from None
    if arr.ndim != 4 or arr.shape[3] != 3 or arr.shape[0] < 1 or min(arr.shape[1:3]) < 2:
        raise InputError.bad(name, expected, images)
    if arr.dtype == bool or not (
        np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)
    ):
        raise InputError.bad(name, "pixel values 0-255", arr.dtype)
    if not np.isfinite(arr).all():
        raise InputError.bad(name, "finite pixel values", "NaN or infinity")
    low, high = arr.min(), arr.max()
    if low < 0 or high > 255:
        raise InputError.bad(name, "pixel values 0-255", f"values from {low:g} to {high:g}")
    return arr


class GlobalStatisticsBaseline(BaseEstimator):
    """A control: the visibility score regressed (least squares) on whole-image statistics.

    Features per image: mean and standard deviation of each colour channel, mean absolute
    high-pass residual (image minus a 3 x 3 box blur), the share of saturated pixels and the
    mean gradient magnitude. It sees no location, so a predictor that beats it has learnt where
    and what the watermark is, not only how busy the image is.

    A scikit-learn estimator (``get_params``, ``set_params``, ``clone``): ``alpha`` is the ridge
    penalty (>= 0); ``fit(images, scores)`` takes (n, H, W, 3) images and n finite scores;
    ``predict`` before ``fit`` raises scikit-learn's ``NotFittedError``.
    """

    # images, not X: no scikit-learn metadata routing (no set_fit_request/set_predict_request)
    __metadata_request__fit = {
        "images": metadata_routing.UNUSED,
        "scores": metadata_routing.UNUSED,
    }
    __metadata_request__predict = {"images": metadata_routing.UNUSED}

    def __init__(self, *, alpha: float = 1e-3) -> None:
        self.alpha = alpha

    @staticmethod
    def features(images: np.ndarray) -> np.ndarray:
        """(n, 9) features, computed 32 images at a time (in float64 a whole training set of
        256 x 256 images at once took over 15 GB)."""
        images = np.asarray(images)
        parts = [
            GlobalStatisticsBaseline._features(images[s : s + 32])
            for s in range(0, len(images), 32)
        ]
        return np.concatenate(parts) if parts else np.zeros((0, 9))

    @staticmethod
    def _features(images: np.ndarray) -> np.ndarray:
        from scipy import ndimage

        x = np.asarray(images, dtype=np.float64) / 255.0
        grey = x.mean(-1)
        smooth = ndimage.uniform_filter(grey, size=(1, 3, 3), mode="reflect")
        gy, gx = np.gradient(grey, axis=(1, 2))
        feats = [
            x.mean((1, 2)),
            x.std((1, 2)),
            np.abs(grey - smooth).mean((1, 2))[:, None],
            ((x < 0.02) | (x > 0.98)).mean((1, 2, 3))[:, None],
            np.hypot(gx, gy).mean((1, 2))[:, None],
        ]
        return np.concatenate(feats, axis=1)

    def fit(self, images: np.ndarray, scores: Any) -> GlobalStatisticsBaseline:
        alpha = check_non_negative(self.alpha, "alpha")
        arr = _check_images(images)
        y = as_float_array(scores, "scores", shape=(len(arr),))
        return self._fit_features(self.features(arr), y, alpha)

    def _fit_features(
        self, feats: np.ndarray, y: np.ndarray, alpha: float
    ) -> GlobalStatisticsBaseline:
        from sklearn.linear_model import Ridge

        self.model_ = Ridge(alpha=alpha).fit(feats, y)
        return self

    def predict(self, images: np.ndarray) -> np.ndarray:
        if not hasattr(self, "model_"):
            from sklearn.exceptions import NotFittedError

            raise NotFittedError(
                "this GlobalStatisticsBaseline is not fitted yet; call fit() first"
            )
        return self._predict_features(self.features(_check_images(images)))

    def _predict_features(self, feats: np.ndarray) -> np.ndarray:
        return np.clip(self.model_.predict(feats), 0.0, 5.0)


@dataclass(frozen=True)
class PredictorEvaluation(Result):
    """Check-3 numbers of a predictor on a generated test set, with the controls beside them."""

    visibility: dict[str, float]
    location: dict[str, float]
    content_type_accuracy: float
    controls: dict[str, dict[str, float]]
    per_kind: dict[str, dict[str, float]]
    invisible_auroc: dict[str, float]
    min_opacity: float
    n_images: int
    #: per key of ``invisible_auroc``: (marked images, clean images) the AUROC compared
    invisible_counts: dict[str, tuple[int, int]] = field(default_factory=dict)
    figure_name = "watermark_predictor.png"

    def summary(self) -> str:
        v, loc = self.visibility, self.location
        lines = [
            f"{self.n_images} test images; visible marks: SRCC {v['srcc']:.3f}, "
            f"PLCC {v['plcc']:.3f}, exact level {v['exact_level_accuracy']:.3f}, within one "
            f"{v['within_one_level_accuracy']:.3f}",
            f"location (w >= {self.min_opacity:g}): 3x3 cell {loc['cell_accuracy']:.3f} "
            f"(commonest cell {loc['commonest_cell_share']:.3f}), "
            f"heatmap IoU {loc['heatmap_iou']:.3f}; content type {self.content_type_accuracy:.3f}",
        ]
        for name, c in self.controls.items():
            lines.append(
                f"control {name}: SRCC {c['srcc']:.3f}, exact level {c['exact_level_accuracy']:.3f}"
            )
        for key, auc in self.invisible_auroc.items():
            counts = self.invisible_counts.get(key)
            n = f" ({counts[0]} marked vs {counts[1]} clean)" if counts else ""
            lines.append(f"invisible {key}: detection AUROC {auc:.3f}{n}")
        return "\n".join(lines)

    def plot(self, ax: Any = None) -> Any:
        ax = new_axes(ax)
        names = ["predictor", *self.controls]
        srcc = [self.visibility["srcc"], *(c["srcc"] for c in self.controls.values())]
        srcc = [float(np.nan_to_num(v)) for v in srcc]  # undefined (constant answers): 0
        exact = [
            self.visibility["exact_level_accuracy"],
            *(c["exact_level_accuracy"] for c in self.controls.values()),
        ]
        pos = np.arange(len(names))
        ax.bar(pos - 0.2, srcc, 0.4, label="SRCC")
        ax.bar(pos + 0.2, exact, 0.4, label="exact level accuracy")
        ax.set_xticks(pos, names, rotation=15, fontsize=8)
        ax.set_ylim(min(0.0, *srcc) - 0.05, 1.0)
        ax.legend(fontsize=8)
        return ax


def _auroc(pos: np.ndarray, neg: np.ndarray) -> float:
    from sklearn.metrics import roc_auc_score

    y = np.r_[np.ones(len(pos)), np.zeros(len(neg))]
    return float(roc_auc_score(y, np.r_[pos, neg]))


def evaluate_predictions(
    predictions: Any,
    dataset: Any,
    *,
    min_opacity: float = 0.1,
    train: Any = None,
    random_state: int = 0,
) -> PredictorEvaluation:
    """Check-3 numbers of ``predictions`` (of ``dataset.images``) against the dataset's truth.

    ``train`` (a dataset, optional) fits the global-statistics control and gives the level prior of
    the random control; without it those controls are fitted on the test set itself by 5-fold
    cross-fitting (each image predicted by a model that did not see it).
    """
    n = len(dataset)
    if len(predictions) != n:
        raise InputError.bad(
            "predictions", f"predictions of the dataset's {n} images", len(predictions)
        )
    from trustlab.watermark.synth import WatermarkDataset

    min_opacity = check_in_range(min_opacity, "min_opacity", 0.0, 0.25)
    rng = check_random_state(random_state)  # an int: numpy's default_rng(random_state)
    if train is not None:  # its visible marks' levels are the random control's prior
        if not isinstance(train, WatermarkDataset):
            raise InputError.bad("train", "None or a WatermarkDataset", train)
        if not np.isin(train.kinds, VISIBLE).any():  # was numpy's 'a cannot be empty'
            raise InputError.bad("train", "a dataset with visible marks (the level prior)", 0)
    kinds = np.asarray(dataset.kinds)
    visible = np.isin(kinds, VISIBLE)
    if visible.sum() < 2:
        raise InputError.bad(
            "dataset", "at least two images with visible marks", int(visible.sum())
        )
    truth = np.asarray(dataset.scores, dtype=np.float64)
    pred = np.asarray(predictions.scores, dtype=np.float64)
    vis = visibility_numbers(pred[visible], truth[visible])

    # location on clearly visible marks, at the heatmap's resolution
    from trustlab.watermark.nr import block_mask

    strong = visible & (np.nan_to_num(np.asarray(dataset.opacity), nan=0.0) >= min_opacity)
    cells = np.array([a == b for a, b in zip(predictions.cells, dataset.cells, strict=True)])
    ious = []
    for i in np.nonzero(strong)[0]:
        heat = predictions.heatmaps[i].astype(np.float32) >= predictions.threshold
        side = heat.shape[0]
        region = block_mask(dataset.masks[i][None, None], side)[0].numpy() > 0.5
        union = (heat | region).sum()
        ious.append((heat & region).sum() / union if union else 1.0)
    true_cells = [c for c, k in zip(dataset.cells, strong, strict=True) if k]
    commonest = max(true_cells.count(c) for c in set(true_cells)) if true_cells else 0
    location = {
        "cell_accuracy": float(cells[strong].mean()) if strong.any() else float("nan"),
        "heatmap_iou": float(np.mean(ious)) if ious else float("nan"),
        # the control: always answering the most frequent cell of these images
        "commonest_cell_share": commonest / len(true_cells) if true_cells else float("nan"),
        "n": int(strong.sum()),
    }
    present = np.asarray(dataset.present, dtype=bool)
    types = np.array(
        [a == b for a, b in zip(predictions.content_types, dataset.content_types, strict=True)]
    )
    type_acc = float(types[present].mean()) if present.any() else float("nan")

    # controls
    controls = {
        "constant invisible": visibility_numbers(np.full(visible.sum(), 5.0), truth[visible])
    }
    if train is not None:
        prior_scores = np.asarray(train.scores, dtype=np.float64)[np.isin(train.kinds, VISIBLE)]
        base = GlobalStatisticsBaseline().fit(train.images, train.scores)
        glob = base.predict(dataset.images[visible])
    else:
        prior_scores = truth[visible]
        glob = np.empty(visible.sum())
        idx = np.nonzero(visible)[0]
        folds = rng.permutation(len(idx)) % 5
        # each image's features once, not once per fold (they are per image: the same numbers)
        feats = GlobalStatisticsBaseline.features(_check_images(dataset.images[idx]))
        y = as_float_array(truth[idx], "scores", shape=(len(idx),))  # what fit checked
        for f in range(5):
            fit_on, out = folds != f, folds == f
            if fit_on.sum() < 2 or not out.any():
                glob[out] = y[fit_on].mean() if fit_on.any() else 2.5
                continue
            base = GlobalStatisticsBaseline()
            base._fit_features(feats[fit_on], y[fit_on], base.alpha)
            glob[out] = base._predict_features(feats[out])
    controls["random from the level prior"] = visibility_numbers(
        rng.choice(prior_scores, size=visible.sum()), truth[visible]
    )
    controls["global image statistics"] = visibility_numbers(glob, truth[visible])

    per_kind = {}
    for kind in sorted(set(kinds[visible])):
        sel = kinds == kind
        if sel.sum() >= 2:
            per_kind[kind] = visibility_numbers(pred[sel], truth[sel])
            per_kind[kind]["cell_accuracy"] = (
                float(cells[sel & strong].mean()) if (sel & strong).any() else float("nan")
            )

    aurocs: dict[str, float] = {}
    counts: dict[str, tuple[int, int]] = {}
    clean = kinds == "clean"
    strength = np.asarray(dataset.strength, dtype=np.float64)
    if clean.any():
        stat = 5.0 - pred
        for kind in sorted(set(kinds[~visible & ~clean])):
            sel = kinds == kind
            for s in sorted(set(strength[sel][~np.isnan(strength[sel])])):
                pos = stat[sel & (strength == s)]
                aurocs[f"{kind} strength {s:g}"] = _auroc(pos, stat[clean])
                counts[f"{kind} strength {s:g}"] = (len(pos), int(clean.sum()))
    return PredictorEvaluation(
        visibility=vis,
        location=location,
        content_type_accuracy=type_acc,
        controls=controls,
        per_kind=per_kind,
        invisible_auroc=aurocs,
        invisible_counts=counts,
        min_opacity=float(min_opacity),
        n_images=n,
    )


# ---------------------------------------------------------------------------------- backends
def reference_paragraphs(dataset: Any, *, random_state: int = 0) -> list[str]:
    """The ground-truth paragraph of each image: the describer on the dataset's own facts, with
    one wording seed per image drawn from ``SeedSequence(random_state)``."""
    from trustlab.watermark.describer import describe

    seeds = np.random.SeedSequence(check_int_seed(random_state)).generate_state(len(dataset))
    return [describe(dataset.facts(i), random_state=int(s)) for i, s in enumerate(seeds)]


@dataclass(frozen=True)
class BackendEvaluation(Result):
    """WMarkGPT's numbers for a backend on a generated test set.

    ``descriptions``: BLEU-1, ROUGE-L and level accuracy of the backend's answers to ``question``
    against the ground-truth paragraphs (:func:`reference_paragraphs`). ``readout``: SRCC, PLCC,
    exact and within-one level accuracy of the Q-Align expected score
    (:func:`~trustlab.watermark.backends.expected_score` of ``level_logits``) against the true
    score, over the visible marks; None when the readout was not asked for, or when the set has
    fewer than two visible marks (the summary then says so).
    """

    backend: str
    question: str
    descriptions: Any
    readout: dict[str, float] | None
    n_images: int
    answers: tuple[str, ...] = internal_field()
    expected_scores: np.ndarray | None = internal_field()
    true_scores: np.ndarray = internal_field()
    figure_name = "watermark_backend.png"

    def summary(self) -> str:
        d = self.descriptions
        lines = [
            f"{self.backend} on {self.n_images} images: BLEU-1 {d.bleu1_mean:.4f}, "
            f"ROUGE-L {d.rouge_l_mean:.4f}, exact level accuracy "
            + ("n/a" if d.accuracy_exact is None else f"{d.accuracy_exact:.3f}")
        ]
        if self.readout is not None:
            r = self.readout
            lines.append(
                f"level readout (visible marks): SRCC {r['srcc']:.3f}, PLCC {r['plcc']:.3f}, "
                f"exact level {r['exact_level_accuracy']:.3f}, within one "
                f"{r['within_one_level_accuracy']:.3f}"
            )
        elif self.expected_scores is not None:  # read, but nothing to correlate it with
            lines.append("level readout: no SRCC/PLCC (fewer than two images with visible marks)")
        return "\n".join(lines)

    def plot(self, ax: Any = None) -> Any:
        """The readout's expected score against the true score (or the BLEU-1 histogram)."""
        ax = new_axes(ax)
        if self.expected_scores is None:
            ax.hist(self.descriptions.bleu1, bins=20)
            ax.set_xlabel("BLEU-1 per answer")
            ax.set_ylabel("answers")
            return ax
        ax.scatter(self.true_scores, self.expected_scores, s=8, alpha=0.6)
        ax.plot([0, 5], [0, 5], color="grey", lw=0.8)
        ax.set_xlabel("true visibility score")
        ax.set_ylabel("expected score of the level readout")
        ax.set_title(self.backend, fontsize=9)
        return ax


def evaluate_backend(
    backend: Any,
    dataset: Any,
    *,
    question: str | None = None,
    readout: bool = True,
    random_state: int = 0,
    progress: Any = None,
) -> BackendEvaluation:
    """Score a backend (the template, a vision-language model, ...) with WMarkGPT's metrics.

    Each image of ``dataset`` is asked ``question`` (default: the first of WMarkGPT's questions)
    through ``backend.answer_batch`` when the backend has it, else ``backend.answer``; with
    ``readout``, ``backend.level_logits`` gives the Q-Align expected score of each image.
    ``progress(done, total)`` is called after each image's answer.
    """
    check_progress(progress)
    from trustlab.watermark.describer import QUESTIONS
    from trustlab.watermark.metrics import expected_score, score_descriptions

    if not all(callable(getattr(backend, k, None)) for k in ("answer", "level_logits")):
        raise InputError.bad(
            "backend", "an object with answer(image, question) and level_logits(image)", backend
        )
    q = QUESTIONS[0] if question is None else question
    if not isinstance(q, str) or not q.strip():
        raise InputError.bad("question", "a non-empty string", question)
    readout = check_bool(readout, "readout")  # "no" would read as true
    n = len(dataset)
    if n < 2:
        raise InputError.bad("dataset", "at least two images", n)
    # before the answers, not after them (a model's answers take hours)
    check_int_seed(random_state)
    images = list(dataset.images)
    answers: list[str] = []
    size = getattr(backend, "batch_size", None)  # None or 0: 8; a negative size answered nothing
    chunk = 8 if size is None or size == 0 else check_positive_int(size, "backend.batch_size")
    for s in range(0, n, chunk):
        part = images[s : s + chunk]
        if hasattr(backend, "answer_batch"):
            given = backend.answer_batch(part, [q] * len(part))
            # checked per batch: a string was read as one answer per character, and a wrong count
            # was only refused after every image had been answered (hours with a model)
            got = None if isinstance(given, str) or not hasattr(given, "__iter__") else list(given)
            if got is None or len(got) != len(part):
                raise InputError.bad(
                    "backend", f"answer_batch giving a list of {len(part)} answers", given
                )
            answers.extend(got)
        else:
            answers.extend(backend.answer(img, q) for img in part)
        if progress is not None:
            progress(len(answers), n)
    refs = reference_paragraphs(dataset, random_state=random_state)
    scores = score_descriptions(refs, answers, reference_levels=list(dataset.levels))
    truth = np.asarray(dataset.scores, dtype=np.float64)
    expected = numbers = None
    if readout:
        expected = np.array([expected_score(backend.level_logits(img)) for img in images])
        visible = np.isin(np.asarray(dataset.kinds), VISIBLE)
        if visible.sum() >= 2:
            numbers = visibility_numbers(expected[visible], truth[visible])
    return BackendEvaluation(
        backend=type(backend).__name__,
        question=q,
        descriptions=scores,
        readout=numbers,
        n_images=n,
        answers=tuple(answers),
        expected_scores=expected,
        true_scores=truth,
    )
