"""The no-reference watermark predictor: visibility, location and content type from the image alone.

:class:`WatermarkPredictor` is a small CNN (spec 05, design B). Its input is the RGB image plus
three fixed high-pass residual channels (the image minus a Gaussian-blurred copy, amplified), which
expose faint overlays and embedding noise. One shared encoder feeds three heads:

- visibility: a score regressed onto [0, 5] and 5-way level logits (WMarkGPT's levels); the
  Q-Align-style expected score ``sum softmax x [5, 4, 3, 2, 1]`` is reported beside the regressed
  one for comparability with WMarkGPT;
- a watermark heatmap at 1/8 of the input side (one cell per 8 x 8 pixels), supervised by the
  generator's masks pooled onto those cells (a cell is watermarked when any of its pixels is; BCE +
  Dice), from which the box, its 3x3 cell and the orientation are read;
- the content type (logo, text, pattern, invisible).

Images of any size are resized to the model's input side (256 by default) for the network; the
heatmap and the box are mapped back onto the original image. ``fit`` is checkpointed like every
long trustlab run: an interrupted fit resumes from its last finished epoch with the same result.

Why this module is long: the network, its training loop and the read-out of its outputs (boxes,
cells, orientations, facts) share one set of input conventions (resizing, residual channels,
heatmap stride); kept together, they cannot drift apart.

>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> images = rng.integers(0, 256, size=(4, 64, 64, 3), dtype=np.uint8)
>>> masks = np.zeros((4, 64, 64), bool); masks[:, 8:24, 8:40] = True
>>> model = WatermarkPredictor(input_size=64, widths=(4, 8, 8, 8), max_epochs=1, random_state=0)
>>> model = model.fit(images, scores=[1.0, 2.0, 4.5, 3.0], masks=masks,
...                   content_types=["logo", "text", "pattern", "logo"])
>>> model.predict(images).scores.shape
(4,)
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import inspect
import json
import math
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils import metadata_routing

from trustlab._checks import (
    check_bool,
    check_in_range,
    check_non_negative,
    check_positive,
    check_positive_int,
    check_random_state,
    resolve_device,
)
from trustlab._lazy import require
from trustlab._model_files import (
    checkpoint_folder,
    load_training_state,
    read_model_folder,
    save_training_state,
    write_model_folder,
)
from trustlab._numerics import flush_denormals, seeded_torch, zero_denormals
from trustlab._progress import check_progress
from trustlab._results import Result, internal_field, new_axes
from trustlab.errors import InputError
from trustlab.watermark.marks import trimmed_box
from trustlab.watermark.vocabulary import (
    CONTENT_TYPES,
    LEVEL_SCORES,
    LEVELS,
    WatermarkFacts,
    cell_of_box,
    level_index,
    level_of_score,
    orientation_of_mask,
)

__all__ = [
    "WatermarkPredictor",
    "WatermarkPredictions",
    "WatermarkTrainingHistory",
    "as_image",
    "as_images",
    "block_mask",
]

_FORMAT = "trustlab.watermark.WatermarkPredictor/1"
_LEVEL_READOUTS = ("score", "level_head")
#: The heatmap is 1/STRIDE of the network input's side.
STRIDE = 8


def _torch() -> Any:
    return require("torch", "watermark")


# ---------------------------------------------------------------------------------- inputs
def as_images(images: Any, name: str = "images") -> list[np.ndarray]:
    """``images`` as a list of (H, W, 3) uint8 arrays: an (n, H, W, 3) uint8 array, one (H, W, 3)
    image, or a sequence of (H, W, 3) uint8 images of any sizes (at least 8 pixels a side)."""
    if isinstance(images, np.ndarray) and images.ndim == 4 and len(images) > 0:
        items = list(images)
    elif isinstance(images, np.ndarray) and images.ndim == 3:
        items = [images]
    elif isinstance(images, (list, tuple)) and len(images) > 0:
        items = list(images)
    else:
        raise InputError.bad(
            name, "an (n, H, W, 3) uint8 array (n >= 1) or a list of (H, W, 3) images", images
        )
    return [as_image(img, f"{name}[{i}]") for i, img in enumerate(items)]


def as_image(image: Any, name: str = "image") -> np.ndarray:
    """One (H, W, 3) uint8 image (a PIL RGB image too) of at least 8 pixels a side."""
    arr = np.asarray(image)
    if arr.ndim != 3 or arr.shape[2] != 3 or min(arr.shape[:2]) < 8:
        raise InputError.bad(name, "an RGB image of shape (H, W, 3), H, W >= 8", arr)
    if arr.dtype != np.uint8:
        raise InputError.bad(name, "uint8 pixel values 0-255", arr.dtype)
    return arr


def block_mask(masks: Any, side: int) -> Any:
    """The watermark region at heatmap resolution: a cell is in it when any of its pixels is
    watermarked (max pooling of the (n, 1, H, W) masks onto side x side cells)."""
    torch = _torch()
    return torch.nn.functional.adaptive_max_pool2d(torch.as_tensor(masks).float(), side)[:, 0]


def _stack(images: list[np.ndarray], size: int, device: str = "cpu") -> Any:
    """(n, 3, size, size) float32 tensor in [0, 1] on ``device``; images of another side are
    resized (bilinear with antialiasing) on the CPU. Images of the network's side travel as
    bytes and become floats there: on a GPU, converting them on the CPU took three times as long
    as the network (0.34 ms an image on an H200's host, against 0.1 for both views)."""
    torch = _torch()
    if all(img.shape[0] == size and img.shape[1] == size for img in images):
        x = torch.from_numpy(np.stack(images)).to(device)
        return x.permute(0, 3, 1, 2).float().div_(255.0).contiguous()
    F = torch.nn.functional
    tensors = []
    for img in images:
        x = torch.from_numpy(np.array(img, copy=True)).permute(2, 0, 1).float().div_(255.0)
        if x.shape[1] != size or x.shape[2] != size:
            x = F.interpolate(
                x[None], size=(size, size), mode="bilinear", antialias=True, align_corners=False
            )[0].clamp_(0, 1)
        tensors.append(x)
    return torch.stack(tensors).to(device)


@contextlib.contextmanager
def _ieee_float32(torch: Any, where: str) -> Iterator[None]:
    """On a GPU, convolutions and matrix products in float32 proper, not TF32 (cuDNN's default
    for convolutions): with TF32 the shipped predictor's scores moved by up to 2.4e-3 from the
    CPU's and one level in 64 changed; without it, 1.5e-5 (an H200, docs/watermark.md). The
    flags are restored afterwards."""
    if where == "cpu":
        yield
        return
    conv, matmul = torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32
    torch.backends.cudnn.allow_tf32 = torch.backends.cuda.matmul.allow_tf32 = False
    try:
        yield
    finally:
        torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32 = conv, matmul


# ---------------------------------------------------------------------------------- network
def _network(widths: tuple[int, ...], residual_gain: float) -> Any:
    torch = _torch()
    nn = torch.nn
    F = torch.nn.functional

    def block(c_in: int, c_out: int) -> Any:
        return nn.Sequential(
            nn.Conv2d(c_in, c_out, 3, stride=2, padding=1),
            nn.GroupNorm(math.gcd(c_out, 8), c_out),
            nn.ReLU(),
            nn.Conv2d(c_out, c_out, 3, padding=1),
            nn.GroupNorm(math.gcd(c_out, 8), c_out),
            nn.ReLU(),
        )

    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            k = torch.arange(7, dtype=torch.float32) - 3
            g = torch.exp(-(k**2) / (2 * 1.5**2))
            g = g / g.sum()
            self.register_buffer("blur", g, persistent=False)
            self.gain = float(residual_gain)
            chans = (6, *widths)
            self.down = nn.ModuleList(
                block(a, b) for a, b in zip(chans[:-1], chans[1:], strict=True)
            )
            # heatmap at stride 8: the stride-8 features plus the upsampled deeper ones
            deep = sum(widths[3:])
            self.heat = nn.Sequential(
                nn.Conv2d(widths[2] + deep, widths[2], 1),
                nn.ReLU(),
                nn.Conv2d(widths[2], widths[2], 3, padding=1),
                nn.ReLU(),
                nn.Conv2d(widths[2], 1, 1),
            )
            feat = 2 * widths[-1] + 2 * widths[2]
            self.head = nn.Sequential(nn.Linear(feat, 64), nn.ReLU(), nn.Linear(64, 1 + 5 + 4))

        def residual(self, x: Any) -> Any:
            """``gain * (x - blur(x))``, the 7-tap Gaussian applied along the width, then the
            height, with reflected borders: seven shifted multiply-adds per axis (a grouped 1-D
            convolution takes torch's slow path, and reflect padding of a channels-last tensor
            cost as much again)."""
            taps = self.blur.tolist()
            smooth = x
            for dim in (3, 2):
                n = smooth.shape[dim]
                pad = torch.cat(
                    [
                        smooth.narrow(dim, 1, 3).flip(dim),
                        smooth,
                        smooth.narrow(dim, n - 4, 3).flip(dim),
                    ],
                    dim=dim,
                )
                out = pad.narrow(dim, 0, n) * taps[0]
                for k in range(1, len(taps)):
                    out = out.add_(pad.narrow(dim, k, n), alpha=taps[k])
                smooth = out
            return (x - smooth) * self.gain

        def forward(self, x: Any) -> tuple[Any, Any, Any, Any]:
            h = torch.cat([x - 0.5, self.residual(x)], dim=1)
            feats = []
            for layer in self.down:
                h = layer(h)
                feats.append(h)
            mid = feats[2]
            ups = [F.interpolate(f, size=mid.shape[2:], mode="nearest") for f in feats[3:]]
            heat = self.heat(torch.cat([mid, *ups], dim=1))[:, 0]
            # pooled features: global average/max of the deepest map and heat-weighted pooling
            # of the stride-8 map (where the watermark is)
            w = torch.sigmoid(heat).unsqueeze(1)
            attn = (mid * w).sum((2, 3)) / (w.sum((2, 3)) + 1e-3)
            deep = feats[-1]
            pooled = torch.cat([deep.mean((2, 3)), deep.amax((2, 3)), attn, mid.amax((2, 3))], 1)
            out = self.head(pooled)
            score = 5.0 * torch.sigmoid(out[:, 0])
            return score, out[:, 1:6], out[:, 6:10], heat

    return Net()


# ---------------------------------------------------------------------------------- results
@dataclass(frozen=True)
class WatermarkTrainingHistory(Result):
    """Per-epoch training losses of :class:`WatermarkPredictor` (``epoch``: the epoch numbers)."""

    epoch: tuple[int, ...]
    loss: tuple[float, ...]
    score_mse: tuple[float, ...]
    level_ce: tuple[float, ...]
    heatmap_loss: tuple[float, ...]
    content_ce: tuple[float, ...]
    seconds: float

    def summary(self) -> str:
        if not self.epoch:
            return "no epoch trained"
        return (
            f"{len(self.epoch)} epochs in {self.seconds:.0f} s; last loss {self.loss[-1]:.3f} "
            f"(score MSE {self.score_mse[-1]:.3f}, heatmap {self.heatmap_loss[-1]:.3f})"
        )

    def plot(self, ax: Any = None) -> Any:
        ax = new_axes(ax)
        for key in ("loss", "score_mse", "level_ce", "heatmap_loss", "content_ce"):
            ax.plot(self.epoch, getattr(self, key), label=key)
        ax.set_xlabel("epoch")
        ax.set_ylabel("training loss")
        ax.legend(fontsize=8)
        return ax


@dataclass(frozen=True)
class WatermarkPredictions(Result):
    """What the predictor estimates for each image, with no reference image.

    ``scores``: the visibility score in [0, 5], the mean of the two heads' estimates:
    ``regressed_scores`` (the score head) and ``expected_scores`` (the Q-Align-style readout of
    the level head's probabilities), clipped into the level head's most probable level when
    ``level_readout`` is ``"level_head"``; ``levels``: the level of ``scores``;
    ``present``: a watermark is estimated to be seen (the level is not *invisible*);
    ``located``: the heatmap has a region at ``threshold``. ``boxes``: (x0, y0, x1, y1) in the
    original image's pixels of the heatmap region (all cells at ``threshold`` or above), by
    WMarkGPT's box rule (:func:`~trustlab.watermark.marks.trimmed_box`, as the generator boxes the
    true mask); ``cells`` and ``orientations`` are read from the same region and box. When the
    image has a watermark but no heatmap cell reaches ``threshold``, the region is the cells
    within half of the heatmap's maximum (the most likely place, with ``located`` False); all -1
    when there is no region.
    """

    scores: np.ndarray
    expected_scores: np.ndarray
    levels: tuple[str, ...]
    level_probabilities: np.ndarray
    content_types: tuple[str, ...]
    content_probabilities: np.ndarray
    boxes: np.ndarray
    cells: tuple[str, ...]
    orientations: tuple[str, ...]
    present: np.ndarray
    located: np.ndarray
    image_sizes: tuple[tuple[int, int], ...]
    heatmaps: np.ndarray = internal_field()
    threshold: float = 0.5
    flip_average: bool = False
    regressed_scores: np.ndarray | None = None
    level_readout: str = "score"

    def __len__(self) -> int:
        return len(self.scores)

    def _index(self, i: Any) -> int:
        ok = isinstance(i, (int, np.integer)) and not isinstance(i, bool) and 0 <= i < len(self)
        if not ok:  # -1 is no image of its own here; "a", 1.5 or True no index
            raise InputError.bad("i", f"an image index in [0, {len(self) - 1}]", i)
        return int(i)

    def heatmap(self, i: int) -> np.ndarray:
        """The heatmap of image ``i`` resized to that image's pixels (nearest)."""
        i = self._index(i)
        h, w = self.image_sizes[i]
        hm = self.heatmaps[i].astype(np.float32)
        rows = np.minimum((np.arange(h) * hm.shape[0]) // h, hm.shape[0] - 1)
        cols = np.minimum((np.arange(w) * hm.shape[1]) // w, hm.shape[1] - 1)
        return hm[np.ix_(rows, cols)]

    def facts(self, i: int) -> WatermarkFacts:
        """The structured facts of image ``i`` (objects unknown: relations are left empty)."""
        i = self._index(i)
        s = float(np.clip(self.scores[i], 0, 5))
        return WatermarkFacts(
            present=bool(self.present[i]),
            score=s,
            level=self.levels[i],
            cell=self.cells[i],
            orientation=self.orientations[i],
            content_type=self.content_types[i],
            opacity=(5.0 - s) / 20.0,
            relations=(),
            objects_known=False,
            coverage=0.0,
        )

    def faint_region(self, i: int) -> str | None:
        """The cell of image ``i``'s heatmap region when it is predicted at the invisible level
        (``present`` False) but the heatmap still located a region; None otherwise. What
        :func:`~trustlab.watermark.describer.describe` takes as ``faint_region``."""
        i = self._index(i)
        return self.cells[i] if not self.present[i] and self.located[i] else None

    def summary(self) -> str:
        counts = {lv: self.levels.count(lv) for lv in LEVELS if lv in self.levels}
        text = ", ".join(f"{k} {v}" for k, v in counts.items())
        return (
            f"{len(self)} image(s); mean visibility score {float(np.mean(self.scores)):.2f}; "
            f"levels: {text}"
        )

    def plot(self, ax: Any = None) -> Any:
        ax = new_axes(ax)
        ax.hist(self.scores, bins=np.linspace(0, 5, 21), color="#4c72b0")
        ax.set_xlabel("predicted visibility score (0 obvious - 5 invisible)")
        ax.set_ylabel("images")
        return ax


# ---------------------------------------------------------------------------------- model
class WatermarkPredictor(BaseEstimator):
    """No-reference watermark visibility, location and content-type predictor (a small CNN).

    A scikit-learn estimator: ``get_params`` and ``clone`` work (``set_params`` refuses names
    that are not parameters); ``predict`` before ``fit`` raises scikit-learn's
    ``NotFittedError``.

    Parameters
    ----------
    input_size : int
        Side of the square network input; images are resized to it (a multiple of 16).
    widths : tuple of int
        Channels of the encoder's stride-2 stages (at least 4 stages).
    max_epochs, learning_rate, batch_size, weight_decay : training settings (Adam, cosine decay).
    residual_gain : float
        Amplification of the high-pass residual channels.
    score_weight, heatmap_weight, level_weight, content_weight : float
        Weights of the score's mean squared error, the heatmap's BCE + Dice loss and the level
        and content cross-entropies. A term of weight 0 is left out of the loss, so what only it
        trains is not updated (and not decayed): with the score, level and content weights all
        0, only the heatmap and the encoder learn (pretraining the location head), and the
        labels of the other terms are ignored.
    heatmap_max_score : float or None
        Marked images whose true score is above this (4: the "invisible" level, opacity under
        0.05) do not train the heatmap: their marks can hardly be seen, and asking the heatmap to
        find them may teach it where marks usually are instead of what they look like. Clean
        images always train it (towards an empty map). None (the default) trains it on every
        image.
    level_readout : {"score", "level_head"}
        How ``predict`` reads the level. ``"score"`` (the default): the level is the bin of the
        reported score. ``"level_head"``: the level head's most probable level, with the reported
        score clipped into that level's bin (``[4 - k, 4.99 - k]`` for the k-th level below
        *invisible*, ``[4, 5]`` for *invisible*: shown with two decimals, the score still has
        its level), so that score and level still agree. The shipped
        model uses ``"level_head"`` (chosen on seeds 11-16; docs/watermark.md). Only ``predict``
        reads it: it can be changed on a fitted model.
    random_state : int, optional
        Seeds the initial weights (torch, the caller's torch random stream is left as it was),
        the batch order and the flips.
    warm_start : bool
        When True and the model is fitted, ``fit`` starts from the current network's weights
        (with a fresh optimiser and learning-rate schedule) instead of a new initialisation:
        fine-tuning after pretraining. The architecture settings must not have changed.
    checkpoint_dir : path, optional
        Where ``fit`` saves its state after every epoch and resumes from.

    Examples
    --------
    Pretrain the location head on images with object masks, then train everything on
    watermarks from there::

        model = WatermarkPredictor(score_weight=0, level_weight=0, content_weight=0)
        model.fit(scenes, scores=np.zeros(n), masks=object_masks, content_types=["logo"] * n)
        model.set_params(score_weight=1, level_weight=0.5, content_weight=0.5, warm_start=True)
        model.fit(images, scores=scores, masks=masks, content_types=types)
    """

    # images, not X: no scikit-learn metadata routing (no set_fit_request/set_predict_request)
    __metadata_request__fit = {
        name: metadata_routing.UNUSED
        for name in ("images", "scores", "masks", "content_types", "progress", "device")
    }
    __metadata_request__predict = {
        name: metadata_routing.UNUSED
        for name in ("images", "threshold", "batch_size", "flip_average", "device")
    }

    def __init__(
        self,
        *,
        input_size: int = 256,
        widths: Sequence[int] = (16, 32, 48, 64, 96),
        max_epochs: int = 12,
        learning_rate: float = 2e-3,
        batch_size: int = 32,
        weight_decay: float = 1e-4,
        residual_gain: float = 4.0,
        score_weight: float = 1.0,
        heatmap_weight: float = 1.0,
        level_weight: float = 0.5,
        content_weight: float = 0.5,
        heatmap_max_score: float | None = None,
        level_readout: str = "score",
        random_state: int | None = 0,
        warm_start: bool = False,
        checkpoint_dir: str | Path | None = None,
    ) -> None:
        self.input_size = input_size
        self.widths = widths
        self.max_epochs = max_epochs
        self.learning_rate = learning_rate
        self.batch_size = batch_size
        self.weight_decay = weight_decay
        self.residual_gain = residual_gain
        self.score_weight = score_weight
        self.heatmap_weight = heatmap_weight
        self.level_weight = level_weight
        self.content_weight = content_weight
        self.heatmap_max_score = heatmap_max_score
        self.level_readout = level_readout
        self.random_state = random_state
        self.warm_start = warm_start
        self.checkpoint_dir = checkpoint_dir

    # -------------------------------------------------------------- parameters
    def set_params(self, **params: Any) -> WatermarkPredictor:
        """Set constructor parameters (validated when ``fit`` runs); returns self."""
        known = set(inspect.signature(type(self).__init__).parameters) - {"self"}
        for key, value in params.items():
            if key not in known:
                raise InputError.bad("params", f"names among {', '.join(sorted(known))}", key)
            setattr(self, key, value)
        return self

    def _params(self) -> dict[str, Any]:
        return {
            k: (list(v) if k == "widths" else v)
            for k, v in vars(self).items()
            if not k.endswith("_") and k != "checkpoint_dir"
        }

    def check_params(self) -> None:
        """Check every parameter now, as ``fit`` does first: for a caller with slow work to do
        before ``fit`` (generating or reading the training images)."""
        self._check_params()
        check_random_state(self.random_state)

    def _check_level_readout(self) -> str:
        if self.level_readout not in _LEVEL_READOUTS:
            raise InputError.bad(
                "level_readout", " or ".join(repr(r) for r in _LEVEL_READOUTS), self.level_readout
            )
        return str(self.level_readout)

    def _check_params(self) -> dict[str, Any]:
        size = check_positive_int(self.input_size, "input_size", minimum=16)
        if size % 16:
            raise InputError.bad("input_size", "a multiple of 16", self.input_size)
        try:
            widths = tuple(check_positive_int(w, "widths") for w in self.widths)
        except TypeError:
            raise InputError.bad("widths", "a sequence of positive ints", self.widths) from None
        if len(widths) < 4:
            raise InputError.bad("widths", "at least 4 stages", self.widths)
        if size // 2 ** len(widths) < 1:
            raise InputError.bad("widths", f"at most {int(math.log2(size))} stages", self.widths)
        if size == 2 ** len(widths) and widths[-1] == math.gcd(widths[-1], 8):
            # a 1 x 1 last stage normalises groups of one channel: one value each, which
            # GroupNorm refuses for a batch of one image (a raw ValueError in fit or predict);
            # the stride-2 convolutions round up, so 48 with 5 stages ends at 2 x 2, not 1 x 1
            raise InputError.bad(
                "widths", f"a last stage of other than 1, 2, 4 or 8 channels at input_size {size}",
                self.widths,
            )  # fmt: skip
        checkpoint_folder(self.checkpoint_dir)  # a file in the way: refused before any training
        return {
            "size": size,
            "widths": widths,
            "max_epochs": check_positive_int(self.max_epochs, "max_epochs"),
            "learning_rate": check_positive(self.learning_rate, "learning_rate"),
            "batch_size": check_positive_int(self.batch_size, "batch_size"),
            "weight_decay": float(self.weight_decay),
            "residual_gain": check_positive(self.residual_gain, "residual_gain"),
            "warm_start": check_bool(self.warm_start, "warm_start"),
            "level_readout": self._check_level_readout(),
            "heatmap_max_score": (
                None
                if self.heatmap_max_score is None
                else check_in_range(self.heatmap_max_score, "heatmap_max_score", 0.0, 5.0)
            ),
        } | self._check_loss_weights()

    def _check_loss_weights(self) -> dict[str, float]:
        weights = {
            name: check_non_negative(getattr(self, name), name)
            for name in ("score_weight", "heatmap_weight", "level_weight", "content_weight")
        }
        if not any(weights.values()):
            raise InputError.bad(
                "score_weight, heatmap_weight, level_weight, content_weight",
                "at least one loss weight above 0",
                list(weights.values()),
            )
        return weights

    def _check_fitted(self) -> None:
        if not hasattr(self, "net_"):
            from sklearn.exceptions import NotFittedError

            raise NotFittedError("this WatermarkPredictor is not fitted yet; call fit() first")

    # -------------------------------------------------------------- training
    def fit(
        self,
        images: Any,
        *,
        scores: Any,
        masks: Any,
        content_types: Sequence[str],
        progress: Callable[[int, int, WatermarkTrainingHistory], None] | None = None,
        device: str = "cpu",
    ) -> WatermarkPredictor:
        """Train on watermarked (and clean) images with their generator labels.

        ``images`` (n, H, W, 3) uint8; ``scores`` (n,) in [0, 5]; ``masks`` (n, H, W) bool (all
        False for a clean image or an invisible mark without a region); ``content_types`` (n,)
        words of :data:`~trustlab.watermark.vocabulary.CONTENT_TYPES`.

        Trains with subnormal floats flushed to zero: weight decay drives unused weights below
        float32's smallest normal number, where every operation on them is several times slower.

        ``device`` (``"cpu"``, ``"cuda"``, ``"cuda:N"`` or ``"auto"``) trains there, in float32
        proper (no TF32); the draws of the batches and flips are the CPU generator's, so a seed
        gives the same batches on any device. The fitted network is kept on the CPU, and a
        checkpoint left on one device resumes on another.
        """
        torch = _torch()
        where = resolve_device(torch, device)
        with flush_denormals(), _ieee_float32(torch, where):
            return self._fit(images, scores, masks, content_types, progress, where)

    def _fit(
        self,
        images: Any,
        scores: Any,
        masks: Any,
        content_types: Sequence[str],
        progress: Any,
        where: str = "cpu",
    ) -> WatermarkPredictor:
        torch = _torch()
        F = torch.nn.functional
        p = self._check_params()
        imgs = as_images(images)
        n = len(imgs)
        try:
            y_score = np.asarray(scores, dtype=np.float64)
        except (TypeError, ValueError):
            raise InputError.bad("scores", f"{n} finite scores in [0, 5]", scores) from None
        if y_score.shape != (n,) or not np.all(np.isfinite(y_score)):
            raise InputError.bad("scores", f"{n} finite scores in [0, 5]", y_score.shape)
        if y_score.min() < 0 or y_score.max() > 5:
            raise InputError.bad("scores", "scores in [0, 5]", (y_score.min(), y_score.max()))
        m = np.asarray(masks)
        if m.ndim != 3 or m.shape[0] != n:
            raise InputError.bad("masks", f"an array of shape ({n}, H, W)", m.shape)
        # 0/255 masks trained the heatmap towards 255 (a negative loss), NaN ones to NaN weights
        if m.dtype != bool and not (m.dtype.kind in "iuf" and np.isin(m, (0, 1)).all()):
            span = f" from {m.min():g} to {m.max():g}" if m.dtype.kind in "iuf" and m.size else ""
            raise InputError.bad("masks", "bool masks (or 0/1 values)", f"{m.dtype} values{span}")
        for i, img in enumerate(imgs):
            if m.shape[1:] != img.shape[:2]:
                raise InputError.bad("masks", "masks of the images' sizes", (i, m.shape[1:]))
        types = list(content_types)
        if len(types) != n or any(t not in CONTENT_TYPES for t in types):
            raise InputError.bad(
                "content_types", f"{n} words among {', '.join(CONTENT_TYPES)}", types[:5]
            )
        check_progress(progress, "a callable or None")

        x = _stack(imgs, p["size"])
        side = p["size"] // STRIDE
        mt = torch.as_tensor(m.astype(np.float32))[:, None]
        target_heat = block_mask(mt, side)
        # which images train the heatmap: clean ones, and marks that can be seen
        marked = m.reshape(n, -1).any(1)
        cap = p["heatmap_max_score"]
        seen = ~marked | (y_score <= (5.0 if cap is None else cap))
        heat_weight = torch.as_tensor(seen, dtype=torch.float32)
        t_score = torch.as_tensor(y_score, dtype=torch.float32)
        t_level = torch.as_tensor([level_index(level_of_score(s)) for s in y_score])
        t_type = torch.as_tensor([CONTENT_TYPES.index(t) for t in types])

        rng = check_random_state(self.random_state)
        with seeded_torch(int(rng.integers(2**31))):  # the caller's torch stream is restored
            net = _network(p["widths"], p["residual_gain"])
            init = self._warm_weights(p)
            if init is not None:
                try:
                    net.load_state_dict(init)
                except RuntimeError as exc:  # the widths changed since the model was fitted
                    raise InputError.bad(
                        "warm_start", "the fitted model's widths (or warm_start=False)", p["widths"]
                    ) from exc
            fingerprint = self._fingerprint(x, y_score, m, types, init)
            # the data and the network on the device (the fingerprint's are here)
            if where != "cpu":
                x, target_heat = x.to(where), target_heat.to(where)
                heat_weight = heat_weight.to(where)
                t_score, t_level, t_type = t_score.to(where), t_level.to(where), t_type.to(where)
                net.to(where)
            opt = torch.optim.Adam(
                net.parameters(), lr=p["learning_rate"], weight_decay=p["weight_decay"]
            )
            sched = torch.optim.lr_scheduler.CosineAnnealingLR(
                opt, T_max=p["max_epochs"], eta_min=0.02 * p["learning_rate"]
            )
            keys = ("loss", "score_mse", "level_ce", "heatmap_loss", "content_ce")
            hist: dict[str, list] = {k: [] for k in ("epoch", *keys)}
            start, seconds = 0, 0.0
            folder = Path(self.checkpoint_dir) if self.checkpoint_dir is not None else None
            state = load_training_state(folder, fingerprint)
            if state is not None:
                net.load_state_dict(state["net"])
                opt.load_state_dict(state["optimizer"])
                sched.load_state_dict(state["scheduler"])
                hist, seconds, start = state["history"], state["seconds"], state["epoch"] + 1
                rng.bit_generator.state = state["rng"]
                torch.set_rng_state(state["torch_rng"])

            for epoch in range(start, p["max_epochs"]):
                t0 = time.perf_counter()
                net.train()
                order = rng.permutation(n)
                sums = np.zeros(len(keys))
                for s in range(0, n, p["batch_size"]):
                    idx = torch.as_tensor(order[s : s + p["batch_size"]]).to(where)
                    xb = x[idx]
                    flip = torch.as_tensor(rng.random(len(idx)) < 0.5).to(where)
                    hb = target_heat[idx]
                    if bool(flip.any()):  # horizontal flips: location labels flip with the image
                        xb = torch.where(flip[:, None, None, None], xb.flip(-1), xb)
                        hb = torch.where(flip[:, None, None], hb.flip(-1), hb)
                    score, level_logits, type_logits, heat = net(xb)
                    mse = F.mse_loss(score, t_score[idx])
                    ce_level = F.cross_entropy(level_logits, t_level[idx])
                    ce_type = F.cross_entropy(type_logits, t_type[idx])
                    wb = heat_weight[idx]
                    bce = F.binary_cross_entropy_with_logits(heat, hb, reduction="none")
                    bce = bce.mean((1, 2))
                    prob = torch.sigmoid(heat)
                    inter = (prob * hb).sum((1, 2))
                    dice = 1 - (2 * inter + 1) / (prob.sum((1, 2)) + hb.sum((1, 2)) + 1)
                    heat_loss = ((bce + dice) * wb).sum() / wb.sum().clamp(min=1.0)
                    # terms of weight 0 stay out of the graph: what only they reach gets no
                    # gradient, so Adam neither moves nor decays it
                    terms = (
                        (p["score_weight"], mse),
                        (p["level_weight"], ce_level),
                        (p["heatmap_weight"], heat_loss),
                        (p["content_weight"], ce_type),
                    )
                    loss = sum((w * t for w, t in terms if w != 0), start=mse.new_zeros(()))
                    opt.zero_grad()
                    loss.backward()
                    opt.step()
                    parts = (loss, mse, ce_level, heat_loss, ce_type)
                    stacked = torch.stack([v.detach() for v in parts]).double().cpu().numpy()
                    sums += stacked * len(idx)
                sched.step()
                hist["epoch"].append(epoch + 1)
                for key, v in zip(keys, sums / n, strict=True):
                    hist[key].append(float(v))
                seconds += time.perf_counter() - t0
                save_training_state(
                    folder,
                    fingerprint,
                    {
                        "net": net.state_dict(),
                        "optimizer": opt.state_dict(),
                        "scheduler": sched.state_dict(),
                        "history": hist,
                        "seconds": seconds,
                        "epoch": epoch,
                        "rng": rng.bit_generator.state,
                        "torch_rng": torch.get_rng_state(),
                    },
                )
                if progress is not None:
                    progress(epoch + 1, p["max_epochs"], _history(hist, seconds))
        net.to("cpu")
        zero_denormals(net)  # any left from a run resumed from an earlier version
        self.net_ = net.eval()
        self.history_ = _history(hist, seconds)
        self.input_size_ = p["size"]
        return self

    def _warm_weights(self, p: dict[str, Any]) -> dict[str, Any] | None:
        """The fitted network's weights when warm-starting (None otherwise)."""
        if not p["warm_start"] or not hasattr(self, "net_"):
            return None
        if self.input_size_ != p["size"] or float(self.net_.gain) != p["residual_gain"]:
            raise InputError.bad(
                "warm_start",
                "the fitted model's input_size and residual_gain (or warm_start=False)",
                f"input_size={p['size']}, residual_gain={p['residual_gain']} against "
                f"{self.input_size_} and {self.net_.gain}",
            )
        return {k: v.detach().clone() for k, v in self.net_.state_dict().items()}

    def _fingerprint(
        self, x: Any, scores: np.ndarray, masks: np.ndarray, types: list, init: Any = None
    ) -> str:
        h = hashlib.sha256(x.numpy().tobytes())
        if init is not None:  # a resumed warm start must have started from the same weights
            for key in sorted(init):
                h.update(init[key].numpy().tobytes())
        h.update(np.ascontiguousarray(scores).tobytes())
        h.update(np.packbits(masks.astype(bool)).tobytes())
        # the read-out of the level is not a training setting: changing it resumes the same fit
        params = {k: v for k, v in self._params().items() if k != "level_readout"}
        h.update(json.dumps([types, params], sort_keys=True, default=str).encode())
        return h.hexdigest()

    # -------------------------------------------------------------- inference
    def predict(
        self,
        images: Any,
        *,
        threshold: float = 0.5,
        batch_size: int | None = None,
        flip_average: bool = True,
        device: str = "cpu",
    ) -> WatermarkPredictions:
        """Estimate visibility, location and content type of each image (no reference needed).

        Runs in channels-last memory layout in batches of ``batch_size``; None (the default)
        means 2 on the CPU and 64 on a GPU. On one CPU thread a 256 x 256 image's activations
        fill the cache already, and batches of 8 were 5-20 % slower than batches of 1 or 2; on an
        H200, batches of 64 ran 2,878 images/s (docs/watermark.md, Speed).

        ``flip_average`` (default): the network also sees each image's mirror image, and the two
        readouts are averaged (the mirror's heatmap mirrored back), which costs a second pass. The
        model trained on random mirror images, so both views are equally its input; averaging
        them raised SRCC and the heatmap IoU on every held-out seed measured, and the 3x3 cell on
        most (docs/watermark.md) and makes the prediction of a mirrored image the mirror of the
        prediction. The reported score is the mean of the score head's estimate and the level
        head's expected score (:class:`WatermarkPredictions`); the level is read as the model's
        ``level_readout`` says.

        ``device`` (``"cpu"``, ``"cuda"``, ``"cuda:N"`` or ``"auto"``) runs the network there, on a
        copy of it; the fitted model stays on the CPU.
        """
        torch = _torch()
        self._check_fitted()
        readout = self._check_level_readout()
        if not isinstance(flip_average, bool):
            raise InputError.bad("flip_average", "True or False", flip_average)
        imgs = as_images(images)
        thr = check_in_range(threshold, "threshold", 0.0, 1.0, low_open=True, high_open=True)
        where = resolve_device(torch, device)
        if batch_size is None:
            batch_size = 2 if where == "cpu" else 64
        bs = check_positive_int(batch_size, "batch_size")
        outs: list[tuple[Any, ...]] = []
        net = self.net_ if where == "cpu" else copy.deepcopy(self.net_).to(where)
        net = net.to(memory_format=torch.channels_last)
        with torch.inference_mode(), flush_denormals(), _ieee_float32(torch, where):
            for s in range(0, len(imgs), bs):
                x = _stack(imgs[s : s + bs], self.input_size_, where)
                x = x.contiguous(memory_format=torch.channels_last)
                outs.append(self._readout(net, x, mirror=False))
                if flip_average:  # the mirror image too, its heatmap mirrored back; the mean
                    mirrored = self._readout(net, x.flip(-1), mirror=True)
                    outs[-1] = tuple((a + b) / 2 for a, b in zip(outs[-1], mirrored, strict=True))
        regressed = np.concatenate([o[0] for o in outs])
        level_p = np.concatenate([o[1] for o in outs])
        type_p = np.concatenate([o[2] for o in outs])
        heat = np.concatenate([o[3] for o in outs])
        expected = level_p @ np.asarray(LEVEL_SCORES)
        # the two heads' estimates averaged (chosen on seeds 11-16: exact level accuracy 0.592
        # against 0.578 for the score head alone, the same SRCC)
        scores = np.clip((regressed + expected) / 2, 0.0, 5.0)
        if readout == "level_head":  # the most probable level; the score clipped into its bin
            scores = _clip_into_levels(scores, level_p.argmax(1))
        boxes = np.full((len(imgs), 4), -1, dtype=np.int64)
        levels = tuple(level_of_score(s) for s in scores)
        present = np.array([lv != "invisible" for lv in levels], dtype=bool)
        located = np.zeros(len(imgs), bool)
        cells, orients = [], []
        for i, img in enumerate(imgs):
            h, w = img.shape[:2]
            # the whole region above the threshold, boxed by WMarkGPT's rule: what the generator
            # does with the true mask (a pattern or text is several parts, all of them the mark)
            region = heat[i] >= thr
            located[i] = bool(region.any())
            if not located[i] and present[i] and heat[i].max() > 0:
                region = heat[i] >= 0.5 * heat[i].max()
            if not region.any():
                cells.append("Center")
                orients.append("horizontal")
                continue
            x0, y0, x1, y1 = trimmed_box(region)
            sy, sx = h / region.shape[0], w / region.shape[1]
            box = (
                int(x0 * sx),
                int(y0 * sy),
                int(math.ceil(x1 * sx)),
                int(math.ceil(y1 * sy)),
            )
            boxes[i] = box
            cells.append(cell_of_box(box, width=w, height=h))
            orients.append(orientation_of_mask(region, cell_size=(sy, sx)))  # image's frame
        return WatermarkPredictions(
            scores=scores,
            expected_scores=expected,
            levels=levels,
            level_probabilities=level_p,
            content_types=tuple(CONTENT_TYPES[k] for k in type_p.argmax(1)),
            content_probabilities=type_p,
            boxes=boxes,
            cells=tuple(cells),
            orientations=tuple(orients),
            present=present,
            located=located,
            image_sizes=tuple((int(im.shape[0]), int(im.shape[1])) for im in imgs),
            heatmaps=heat.astype(np.float16),
            threshold=thr,
            flip_average=bool(flip_average),
            regressed_scores=regressed,
            level_readout=readout,
        )

    @staticmethod
    def _readout(net: Any, x: Any, *, mirror: bool) -> tuple[np.ndarray, ...]:
        """Score, level and content probabilities and heatmap of one batch (float64)."""
        torch = _torch()
        score, level_logits, type_logits, heat = net(x)
        heat = torch.sigmoid(heat)
        return (
            score.cpu().numpy().astype(np.float64),
            torch.softmax(level_logits.double(), 1).cpu().numpy(),
            torch.softmax(type_logits.double(), 1).cpu().numpy(),
            (heat.flip(-1) if mirror else heat).cpu().numpy().astype(np.float64),
        )

    # -------------------------------------------------------------- persistence
    def save(self, path: str | Path) -> Path:
        """Save into the folder ``path``: ``model.json`` and ``weights.safetensors``."""
        self._check_fitted()
        params = self._params()
        if not isinstance(params["random_state"], (int, type(None))):
            params["random_state"] = None
        meta = {
            "format": _FORMAT,
            "params": params,
            "input_size": self.input_size_,
            "history": self.history_.to_dict(),
        }
        return write_model_folder(path, meta, {"net": self.net_})

    @classmethod
    def load(cls, path: str | Path) -> WatermarkPredictor:
        """Load a model saved by :meth:`save`."""
        meta, states = read_model_folder(path, _FORMAT, "WatermarkPredictor.save")
        params = dict(meta["params"])
        params["widths"] = tuple(params["widths"])
        params.setdefault("heatmap_max_score", None)  # saved before it existed: every image
        params.setdefault("score_weight", 1.0)
        params.setdefault("warm_start", False)
        params.setdefault("level_readout", "score")  # saved before it existed
        model = cls(**params)
        model.net_ = _network(params["widths"], float(params["residual_gain"]))
        try:
            model.net_.load_state_dict(states["net"])
        except RuntimeError as exc:  # weights of another network shape
            raise InputError.bad(
                "path", "a model saved by this version of trustlab", f"{path} ({exc})"
            ) from exc
        # subnormal weights (a model trained before fit flushed them) are zero for the network's
        # outputs but slow every operation on the CPU
        zero_denormals(model.net_)
        model.net_.eval()
        model.input_size_ = int(meta["input_size"])
        h = meta["history"]
        model.history_ = WatermarkTrainingHistory(
            **{k: tuple(v) if isinstance(v, list) else v for k, v in h.items()}
        )
        return model


#: How far under the next level's score a clipped score stays: rounded to two decimals (the
#: contact sheet, a summary) or stored in float32, it still has its level.
_LEVEL_EDGE = 0.01


def _clip_into_levels(scores: np.ndarray, level_idx: np.ndarray) -> np.ndarray:
    """``scores`` clipped into the levels at ``level_idx`` (0 = invisible: [4, 5], 1 = faint:
    [3, 3.99], ... 4 = obvious: [0, 0.99]); a level's bin [4 - k, 5 - k) is open at the top, so
    the clipped score stays :data:`_LEVEL_EDGE` under it."""
    low = 4.0 - level_idx.astype(np.float64)
    high = np.where(level_idx == 0, 5.0, low + 1.0 - _LEVEL_EDGE)
    return np.clip(scores, low, high)


def _history(hist: dict, seconds: float) -> WatermarkTrainingHistory:
    return WatermarkTrainingHistory(
        epoch=tuple(hist["epoch"]),
        loss=tuple(hist["loss"]),
        score_mse=tuple(hist["score_mse"]),
        level_ce=tuple(hist["level_ce"]),
        heatmap_loss=tuple(hist["heatmap_loss"]),
        content_ce=tuple(hist["content_ce"]),
        seconds=float(seconds),
    )
