"""The results of :class:`~trustlab.explain.regions.estimator.RegionSparseClassifier`: its training
record and its predictions with the regions they were made from (overlays, PNGs)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from trustlab._checks import check_in_range, check_positive_int
from trustlab._results import Result, internal_field
from trustlab.errors import InputError
from trustlab.explain.regions.inputs import images_count

__all__ = ["RegionExplanation", "RegionTrainingHistory"]


@dataclass(frozen=True)
class RegionTrainingHistory(Result):
    """Per-epoch training record of :class:`RegionSparseClassifier`.

    Epochs of pretraining the classifier alone on whole images come first; they record an expected
    kept area of 1 and a temperature and sparsity weight of 0.
    """

    epochs: tuple[int, ...]
    loss: tuple[float, ...]
    cross_entropy: tuple[float, ...]
    sparsity: tuple[float, ...]
    accuracy: tuple[float, ...]
    expected_kept: tuple[float, ...]
    temperature: tuple[float, ...]
    lambda_sparsity: tuple[float, ...]
    seconds: float
    figure_name = "training.png"

    def summary(self) -> str:
        if not self.epochs:
            return "Region-sparse training: no epochs"
        return (
            f"Region-sparse training: {len(self.epochs)} epochs in {self.seconds:.0f} s; last epoch "
            f"loss {self.loss[-1]:.4f} (cross-entropy {self.cross_entropy[-1]:.4f}), training "
            f"accuracy {self.accuracy[-1]:.3f} on relaxed masks, expected kept area "
            f"{self.expected_kept[-1]:.3f}"
        )

    def plot(self, ax: Any = None) -> Any:
        """Cross-entropy, accuracy and expected kept area against the epoch."""
        if ax is None:
            import matplotlib.pyplot as plt

            _, ax = plt.subplots(figsize=(6.0, 3.5))
        ax.plot(self.epochs, self.cross_entropy, label="cross-entropy", color="tab:gray")
        ax.plot(self.epochs, self.accuracy, label="training accuracy", color="tab:blue")
        ax.plot(self.epochs, self.expected_kept, label="expected kept area", color="tab:orange")
        ax.set_xlabel("epoch")
        ax.legend(fontsize=8)
        return ax


@dataclass(frozen=True)
class RegionExplanation(Result):
    """Predictions of a region-sparse classifier with the regions they were made from.

    Attributes
    ----------
    prediction : (n,) predicted class index; ``labels`` are the class labels.
    confidence : (n,) max softmax on the masked image.
    tau : (n,) the sparsity level used (chosen per image when dynamic).
    certain : (n,) whether the confidence reached ``delta`` (always True for a fixed tau).
    kept_fraction : (n,) selected pixels / all pixels (exact).
    delta : the certainty threshold (None for a fixed tau).
    mode : ``"dynamic"`` or ``"fixed"``.
    probabilities : (n, n_classes) softmax on the masked images.
    group_mask : (n, K) bool, the selected segments; ``scores`` (n, K) their logits mu at ``tau``
        (padded groups -inf); ``mask`` (n, H, W) bool, the selected pixels; ``soft_map`` (n, H, W)
        sigmoid(mu) spread over the segments; ``segments`` (n, H, W), the maps whose labels the
        columns of ``group_mask`` and ``scores`` are (given maps renumbered 0..K-1 per image in
        their order); ``images`` (n, 3, H, W).
    """

    mode: str
    delta: float | None
    class_names: tuple[str, ...]
    prediction: np.ndarray
    confidence: np.ndarray
    tau: np.ndarray
    certain: np.ndarray
    kept_fraction: np.ndarray
    probabilities: np.ndarray = internal_field()
    group_mask: np.ndarray = internal_field()
    scores: np.ndarray = internal_field()
    mask: np.ndarray = internal_field()
    soft_map: np.ndarray = internal_field()
    segments: np.ndarray = internal_field()
    images: np.ndarray = internal_field()
    figure_name = "regions.png"
    _dict_extras = ("labels", "mean_kept_fraction")

    def __len__(self) -> int:
        return int(self.prediction.shape[0])

    @property
    def labels(self) -> list[str]:
        """Predicted class names."""
        return [self.class_names[int(i)] for i in self.prediction]

    @property
    def mean_kept_fraction(self) -> float:
        """Mean selected area."""
        return float(np.mean(self.kept_fraction))

    def summary(self) -> str:
        dynamic = self.mode == "dynamic"
        how = f"dynamic tau (delta {self.delta:g})" if dynamic else "fixed tau"
        # 'certain' (confidence reached delta) means nothing without a delta: left out then
        certain = f", certain {float(np.mean(self.certain)):.1%}" if dynamic else ""
        empty = int(np.sum(np.asarray(self.kept_fraction) == 0))
        # an image that kept nothing was classified from a blank image: the mean area hides it
        blank = f"; nothing kept on {empty} of {len(self)} (predicted from a blank image)"
        return (
            f"Region-sparse predictions of {images_count(len(self))} with {how}: mean kept area "
            f"{self.mean_kept_fraction:.3f}, mean tau {float(np.mean(self.tau)):.3f}, mean "
            f"confidence {float(np.mean(self.confidence)):.3f}{certain}{blank if empty else ''}"
        )

    def overlay(self, index: int, *, dim: float = 0.25) -> np.ndarray:
        """The image (H, W, 3) with the unselected pixels dimmed to ``dim`` in (0, 1] of their
        brightness and the borders of the selected segments."""
        if not isinstance(index, (int, np.integer)) or not -len(self) <= index < len(self):
            raise InputError.bad("index", f"an image position in [0, {len(self)})", index)
        dim = check_in_range(dim, "dim", 0.0, 1.0, low_open=True)  # > 1 brightens, not dims
        img = np.asarray(self.images[index]).transpose(1, 2, 0).astype(np.float64)
        keep = np.asarray(self.mask[index])[..., None]
        out = np.where(keep, img, img * dim)
        seg = np.asarray(self.segments[index])
        edge = np.zeros(seg.shape, dtype=bool)
        edge[:-1] |= seg[:-1] != seg[1:]
        edge[:, :-1] |= seg[:, :-1] != seg[:, 1:]
        border = edge & np.asarray(self.mask[index])
        out[border] = (1.0, 0.85, 0.0)
        return np.clip(out, 0.0, 1.0)

    def plot(self, ax: Any = None, *, n: int = 8) -> Any:
        """The first ``n`` images with their selected regions (one row of panels)."""
        import matplotlib.pyplot as plt

        k = min(check_positive_int(n, "n"), len(self))
        if ax is None:
            _, axes = plt.subplots(1, k, figsize=(1.8 * k, 2.2), squeeze=False)
            axes = axes[0]
        else:
            axes = [ax]
            k = 1
        for i, a in enumerate(axes[:k]):
            a.imshow(self.overlay(i))
            a.set_title(
                f"{self.labels[i]} {self.confidence[i]:.2f}\nkept {self.kept_fraction[i]:.0%}",
                fontsize=7,
            )
            a.axis("off")
        return axes[0]

    def save_overlays(self, folder: str | Path, *, scale: int = 4) -> list[Path]:
        """One PNG per image (``overlay_<i>.png``, upscaled ``scale`` times) into ``folder``."""
        import matplotlib.pyplot as plt

        scale = check_positive_int(scale, "scale")
        out = Path(folder)
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as exc:  # a file in the way (FileExistsError, NotADirectoryError)
            raise InputError.bad("folder", "a folder or one that can be created", f"{out} "
                                 f"({exc.strerror})") from None  # fmt: skip
        paths = []
        for i in range(len(self)):
            img = np.kron(self.overlay(i), np.ones((scale, scale, 1)))
            path = out / f"overlay_{i:04d}.png"
            plt.imsave(path, img)
            paths.append(path)
        return paths
