"""The spec's tables for region-sparse classifiers on images with ground-truth masks (spec 12).

:func:`evaluate_regions` runs a set of fitted models (:class:`~.estimator.RegionSparseClassifier`
and :class:`~.baselines.BlackBoxClassifier`) on the same labelled images and returns
:class:`RegionsEvaluation` with

- ``accuracy``: accuracy against the mean kept area, one row per model;
- ``localisation``: mask precision |m & m*| / |m|, IoU and PxAP of every masking model, with the
  control of a random superpixel mask of the same area per image (check 5) and the object-area
  fraction; ``empty_masks`` is the share of images whose mask is empty (left out of both
  precisions) and ``random_empty_masks`` the share whose random mask alone is empty (a kept area
  below half of the random first region: left out of the random precision only);
- ``fidelity``: deletion (most important area first) and insertion curves with the random-order
  control (check 6), from the region scores of each P2P model; the classifier of the model sees the
  image with the regions deleted (the selection is not re-run), and agreement is with its own
  prediction on the whole image;
- ``delta_ablation``: accuracy, mean kept area and mean tau of the dynamic models at each certainty
  threshold.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from trustlab._checks import check_random_state, repeated
from trustlab._progress import check_progress
from trustlab._results import Result, internal_field, new_axes
from trustlab.errors import InputError
from trustlab.explain.regions.baselines import BlackBoxClassifier
from trustlab.explain.regions.estimator import RegionSparseClassifier
from trustlab.explain.regions.inputs import check_images, images_count, is_number
from trustlab.explain.regions.metrics import _levels as _area_levels
from trustlab.explain.regions.metrics import (
    deletion_curve,
    insertion_curve,
    localisation_precision,
    mask_iou,
    pxap,
    random_area_masks,
)

__all__ = ["RegionsEvaluation", "evaluate_regions", "DELTAS"]

#: The certainty thresholds of the spec's delta ablation.
DELTAS = (0.8, 0.9, 0.95, 0.99)


def _nanmean(a: np.ndarray) -> float:
    a = np.asarray(a, dtype=np.float64)
    return float(np.nanmean(a)) if np.isfinite(a).any() else float("nan")


@dataclass(frozen=True)
class RegionsEvaluation(Result):
    """The spec's tables (lists of row dicts) for several models on one labelled image set."""

    dataset: str
    n_images: int
    object_fraction: float
    accuracy: tuple[dict, ...]
    localisation: tuple[dict, ...]
    fidelity: tuple[dict, ...]
    delta_ablation: tuple[dict, ...]
    explanations: dict = internal_field(default_factory=dict)
    figure_name = "regions_evaluation.png"

    def summary(self) -> str:
        lines = [
            f"Region-sparse evaluation on {self.dataset}: {images_count(self.n_images)}, object area "
            f"{self.object_fraction:.1%}",
            "  accuracy vs kept area:",
        ]
        for r in self.accuracy:
            lines.append(
                f"    {r['model']:<20} accuracy {r['accuracy']:.3f}  kept {r['mean_kept']:.3f}"
            )
        if self.localisation:
            lines.append("  localisation (precision / IoU / PxAP; random same-area precision):")
            for r in self.localisation:
                rnd, empty = r.get("random_precision"), r.get("empty_masks") or 0.0
                lost = round((r.get("random_empty_masks") or 0.0) * self.n_images)
                lines.append(
                    f"    {r['model']:<20} {_fmt(r['precision'])} / {_fmt(r['iou'])} / "
                    f"{_fmt(r.get('pxap'))}; random {_fmt(rnd)}"
                    + (f" (empty masks on {empty:.1%} of the images, left out of precision)"
                       if empty else "")
                    + (f" (random mask empty on {lost} of {self.n_images} images where the "
                       "model's is not, left out of random)" if lost else "")
                )  # fmt: skip
        for r in self.fidelity:
            lines.append(
                f"  {r['kind']} {r['model']}: "
                + ", ".join(
                    f"{t:g}: {a:.3f} (random {b:.3f})"
                    for t, a, b in zip(r["fractions"], r["importance"], r["random"], strict=True)
                )
            )
        for r in self.delta_ablation:
            lines.append(
                f"  {r['model']} delta {r['delta']:g}: accuracy {r['accuracy']:.3f}, kept "
                f"{r['mean_kept']:.3f}, tau {r['mean_tau']:.3f}"
            )
        return "\n".join(lines)

    def plot(self, ax: Any = None) -> Any:
        """Accuracy against mean kept area, one point per model (and per delta)."""
        ax = new_axes(ax, (5.5, 4.0))
        for r in self.accuracy:
            ax.scatter(r["mean_kept"], r["accuracy"], label=r["model"])
        by_model: dict[str, list] = {}
        for r in self.delta_ablation:
            by_model.setdefault(r["model"], []).append((r["mean_kept"], r["accuracy"]))
        for pts in by_model.values():
            xs, ys = zip(*pts, strict=True)
            ax.plot(xs, ys, ":", color="grey")
        ax.set_xlabel("mean kept area")
        ax.set_ylabel("accuracy")
        ax.set_xlim(0, 1.05)
        ax.legend(fontsize=7)
        return ax


def _fractions(levels: Any, name: str) -> tuple[float, ...]:
    """Area levels of a fidelity curve, checked and named; empty: the curve is skipped."""
    try:
        empty = np.size(levels) == 0
    except ValueError:  # a ragged list: refused below
        empty = False
    return () if empty else _area_levels(levels, name)


def _fmt(v: Any) -> str:
    return "-" if v is None or (isinstance(v, float) and np.isnan(v)) else f"{v:.3f}"


def evaluate_regions(
    models: Mapping[str, Any],
    images: Any,
    labels: Any,
    masks: Any,
    *,
    dataset: str = "images",
    deltas: Sequence[float] = DELTAS,
    deletion: Sequence[float] = (0.05, 0.1, 0.2),
    insertion: Sequence[float] = (0.8, 0.9, 0.95),
    random_state: Any = 0,
    progress: Any = None,
) -> RegionsEvaluation:
    """Evaluate fitted region-sparse models and baselines on labelled images with object masks.

    Parameters
    ----------
    models : mapping name -> fitted RegionSparseClassifier or BlackBoxClassifier
    images : (n, 3, H, W) in [0, 1]
    labels : (n,) true labels, in the models' label vocabulary
    masks : (n, H, W) bool ground truth (the object); PxAP is None when no image has an object
        pixel (undefined)
    deltas : certainty thresholds in (0, 1] of the delta ablation (dynamic models); empty to skip
    deletion, insertion : area levels of the fidelity curves
    random_state : seeds the random-area masks and the random deletion order
    progress : callable ``progress(step, n_steps, what)``, optional

    Returns
    -------
    RegionsEvaluation
        ``explanations`` holds each P2P model's :class:`~.estimator.RegionExplanation`.
    """
    check_progress(progress, "a callable (step, n_steps, what) or None")
    if not isinstance(models, Mapping) or not models:
        raise InputError.bad("models", "a non-empty mapping name -> fitted model", models)
    for name, m in models.items():
        if not isinstance(m, (RegionSparseClassifier, BlackBoxClassifier)):
            raise InputError.bad(
                f"models[{name!r}]", "a RegionSparseClassifier or BlackBoxClassifier", m
            )
        if not hasattr(m, "classes_"):
            raise InputError.bad(f"models[{name!r}]", "a fitted model", m)
    x = check_images(images, "images")
    try:
        y = np.asarray(labels)
    except ValueError:  # ragged nested lists
        y = np.empty(0)
    if y.shape != (x.shape[0],):
        raise InputError.bad("labels", f"{x.shape[0]} labels", labels)
    for name, m in models.items():  # checked here so that errors name images and labels
        if tuple(m.image_size_) != tuple(x.shape[2:]):
            h, w = m.image_size_
            raise InputError(
                f"images: expected images of {h}x{w} pixels (the size of model {name!r}), got "
                f"an array of shape {tuple(x.shape)}",
                argument="images",
            )
        unknown = y[~np.isin(y, m.classes_)]
        if len(unknown):  # never predicted: the accuracy would count them wrong without a word
            distinct = list(dict.fromkeys(unknown.tolist()))
            shown = ", ".join(map(repr, distinct[:3])) + (", ..." if len(distinct) > 3 else "")
            raise InputError(
                f"labels: expected labels among the classes of model {name!r} "
                f"({', '.join(map(str, m.classes_))}), got {len(unknown)} of {len(y)} outside "
                f"them ({shown})",
                argument="labels",
            )
    try:
        truth = np.asarray(masks)
    except ValueError:  # ragged nested lists
        truth = np.empty(0)
    if truth.dtype != bool or truth.shape != (x.shape[0], *x.shape[2:]):
        raise InputError.bad("masks", f"a bool array of shape {(x.shape[0], *x.shape[2:])}", masks)
    values = np.asarray(deltas, dtype=object).ravel()  # a number, a sequence or an array
    if not all(is_number(d) and 0 < d <= 1 for d in values):
        raise InputError.bad("deltas", "certainty thresholds in (0, 1]", deltas)
    deltas = tuple(float(d) for d in values)
    # the fidelity levels, checked here so that errors name these arguments (empty: skipped)
    deletion, insertion = _fractions(deletion, "deletion"), _fractions(insertion, "insertion")
    twice_deltas = repeated(deltas)
    if twice_deltas:  # each would repeat its ablation row
        twice = ", ".join(f"{d:g}" for d in twice_deltas)
        raise InputError.bad("deltas", f"distinct certainty thresholds ({twice} repeated)", deltas)
    rng = check_random_state(random_state)
    x_np = x.numpy()
    object_fraction = float(truth.mean())
    acc_rows, loc_rows, fid_rows, delta_rows = [], [], [], []
    explanations = {}
    n_steps, step = len(models), 0
    for name, model in models.items():
        if progress is not None:
            progress(step, n_steps, name)
        step += 1
        if isinstance(model, BlackBoxClassifier):
            pred = model.predict(x_np)
            kept = float(model.mask_.mean())
            acc_rows.append(
                {"model": name, "kind": "blackbox", "accuracy": float(np.mean(pred == y)),
                 "mean_kept": kept}
            )  # fmt: skip
            if not model.mask_.all():
                m = np.broadcast_to(model.mask_, truth.shape)
                loc_rows.append(
                    {"model": name, "precision": _nanmean(localisation_precision(m, truth)),
                     "iou": _nanmean(mask_iou(m, truth)), "pxap": None,
                     "random_precision": None, "empty_masks": 0.0}
                )  # fmt: skip
            continue
        r = model.explain(x_np)
        explanations[name] = r
        pred = model.classes_[r.prediction]
        acc_rows.append(
            {"model": name, "kind": r.mode, "accuracy": float(np.mean(pred == y)),
             "mean_kept": r.mean_kept_fraction, "mean_tau": float(np.mean(r.tau)),
             "certain": float(np.mean(r.certain)) if r.mode == "dynamic" else None}
        )  # fmt: skip
        rnd = random_area_masks(r.segments, r.kept_fraction, random_state=rng)
        empty = ~r.mask.any(axis=(1, 2))
        loc_rows.append(
            {"model": name, "precision": _nanmean(localisation_precision(r.mask, truth)),
             "iou": _nanmean(mask_iou(r.mask, truth)),
             "pxap": pxap(r.soft_map, truth) if truth.any() else None,  # undefined: no object
             "random_precision": _nanmean(localisation_precision(rnd, truth)),
             "empty_masks": float(empty.mean()),
             "random_empty_masks": float((~empty & ~rnd.any(axis=(1, 2))).mean())}
        )  # fmt: skip
        scores = np.where(np.isfinite(r.scores), r.scores, np.nan)
        for kind, fn, levels in (
            ("deletion", deletion_curve, deletion),
            ("insertion", insertion_curve, insertion),
        ):
            if not levels:
                continue
            a = fn(model.classifier_, x, r.segments, scores, levels, fill=float(model.fill))
            b = fn(
                model.classifier_, x, r.segments, None, levels,
                fill=float(model.fill), order="random", random_state=rng,
            )  # fmt: skip
            fid_rows.append(
                {"model": name, "kind": kind, "fractions": list(a.fractions),
                 "importance": [float(v) for v in a.agreement],
                 "random": [float(v) for v in b.agreement]}
            )  # fmt: skip
        if r.mode == "dynamic":
            for d in deltas:
                rd = r if d == r.delta else model.explain(x_np, segments=r.segments, delta=d)
                pd = model.classes_[rd.prediction]
                delta_rows.append(
                    {"model": name, "delta": d, "accuracy": float(np.mean(pd == y)),
                     "mean_kept": rd.mean_kept_fraction, "mean_tau": float(np.mean(rd.tau)),
                     "certain": float(np.mean(rd.certain)),
                     "precision": _nanmean(localisation_precision(rd.mask, truth))}
                )  # fmt: skip
    if progress is not None:
        progress(n_steps, n_steps, "done")
    return RegionsEvaluation(
        dataset=dataset,
        n_images=int(x.shape[0]),
        object_fraction=object_fraction,
        accuracy=tuple(acc_rows),
        localisation=tuple(loc_rows),
        fidelity=tuple(fid_rows),
        delta_ablation=tuple(delta_rows),
        explanations=explanations,
    )
