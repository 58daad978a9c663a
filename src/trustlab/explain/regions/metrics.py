"""Evaluation metrics for region-sparse classification (spec 12, "Evaluation" and checks 5-7).

Localisation of a hard mask against a ground-truth mask: :func:`localisation_precision` (the
paper's "mask percentage correct" ``|m & m*| / |m|``), :func:`mask_iou`; of a soft map:
:func:`pxap` (pixel average precision pooled over all pixels of all images) and
:func:`pxap_per_image`. Controls: :func:`random_area_masks` (random superpixel masks of a given
area, check 5) and :func:`pixel_grid_mask` (the "Blackbox-Pixel" baseline, an evenly spaced pixel
lattice, check 7). Fidelity: :func:`deletion_curve` and :func:`insertion_curve` black out regions
in order of importance (or in a random order, the control of check 6) and report how often the
classifier keeps its own unmasked prediction (:class:`FidelityCurve`).

Masks are numpy arrays; the classifier is any callable on torch tensors, so this module needs no
training code. torch is imported only by the fidelity curves.

Why this module is long: it holds every metric of the spec's evaluation with the one set of mask
and segment validators they share; split, the validators would be imported across three modules
for ~100 lines each of metric code.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from trustlab._checks import (
    check_callable,
    check_choice,
    check_in_range,
    check_positive_int,
    check_random_state,
)
from trustlab._lazy import require
from trustlab._results import Result, internal_field, new_axes
from trustlab.errors import InputError
from trustlab.explain.regions.inputs import images_count
from trustlab.explain.regions.segments import check_label_range

__all__ = [
    "localisation_precision",
    "mask_iou",
    "pxap",
    "pxap_per_image",
    "PXAP_BINS",
    "random_area_masks",
    "pixel_grid_mask",
    "FidelityCurve",
    "deletion_curve",
    "insertion_curve",
]

#: Bins of the binned PxAP of the spec ("1e-5 histogram bins").
PXAP_BINS = 100_000


# ------------------------------------------------------------------ input checks


def _from_tensor(value: Any) -> Any:
    """A torch tensor as a numpy array (detached, on the CPU; bfloat16, which numpy lacks, as
    float32, which holds each value); anything else as it is."""
    if not hasattr(value, "detach"):
        return value
    value = value.detach().cpu()
    if str(value.dtype) == "torch.bfloat16":
        value = value.float()
    return value.numpy()


def _masks(value: Any, name: str, shape: tuple[int, ...] | None = None) -> np.ndarray:
    """A bool (n, H, W) array from bool or 0/1 numeric input."""
    try:
        arr = np.asarray(_from_tensor(value))
    except ValueError:  # ragged nested lists
        raise InputError.bad(name, "a non-empty mask array of shape (n, H, W)", value) from None
    if arr.ndim != 3 or arr.size == 0:
        raise InputError.bad(name, "a non-empty mask array of shape (n, H, W)", arr)
    if shape is not None and arr.shape != shape:
        raise InputError.bad(name, f"shape {shape}", arr)
    if arr.dtype == bool:
        return arr
    if not (np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)):
        raise InputError.bad(name, "a bool or 0/1 array", arr)
    if not np.isin(arr, (0, 1)).all():
        raise InputError.bad(name, "a bool or 0/1 array", "values other than 0 and 1")
    return arr.astype(bool)


def _soft_maps(value: Any) -> np.ndarray:
    value = _from_tensor(value)
    try:
        kind = np.asarray(value).dtype.kind
    except (TypeError, ValueError):
        kind = "O"
    if kind == "c":  # the cast below would drop the imaginary part with only a warning
        raise InputError.bad("soft_maps", "real values in [0, 1]", "complex values")
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError.bad("soft_maps", "a numeric array of shape (n, H, W)", value) from None
    if arr.ndim != 3 or arr.size == 0:
        raise InputError.bad("soft_maps", "a non-empty array of shape (n, H, W)", arr)
    if not np.isfinite(arr).all() or arr.min() < 0 or arr.max() > 1:
        raise InputError.bad("soft_maps", "finite values in [0, 1]", arr)
    return arr


def _label_maps(segments: Any) -> np.ndarray:
    try:
        seg = np.asarray(_from_tensor(segments))  # a bfloat16 tensor: refused below, by name
    except ValueError:  # ragged nested lists
        raise InputError.bad("segments", "an integer array of shape (n, H, W)", segments) from None
    if seg.ndim != 3 or seg.size == 0 or not np.issubdtype(seg.dtype, np.integer):
        raise InputError.bad("segments", "a non-empty integer array of shape (n, H, W)", seg)
    if seg.min() < 0:
        raise InputError.bad("segments", "non-negative region labels", seg)
    check_label_range(seg.max(), seg.shape[1] * seg.shape[2])
    return seg.astype(np.int64, copy=False)


def _sizes(seg: np.ndarray, k: int | None = None) -> np.ndarray:
    """Pixels per label (n, K), K = ``k`` or the largest label + 1."""
    n = seg.shape[0]
    k = int(seg.max()) + 1 if k is None else k
    offsets = (np.arange(n) * k)[:, None]
    flat = (seg.reshape(n, -1) + offsets).ravel()
    return np.bincount(flat, minlength=n * k).reshape(n, k)


# ------------------------------------------------------------------ localisation


def localisation_precision(masks: Any, truth: Any) -> np.ndarray:
    """The share of each mask inside the ground truth, ``|m & m*| / |m|`` ("mask % correct").

    The paper's headline localisation metric: it rewards small masks inside the object.

    Parameters
    ----------
    masks : bool (or 0/1) array of shape (n, H, W)
        The selected pixels (a hard mask).
    truth : bool (or 0/1) array of shape (n, H, W)
        The ground-truth object pixels.

    Returns
    -------
    ndarray of shape (n,), float64
        NaN for an empty mask (the ratio is undefined; average with ``np.nanmean``).

    Examples
    --------
    >>> m = np.array([[[1, 1], [0, 0]], [[0, 0], [0, 0]]], dtype=bool)
    >>> t = np.array([[[1, 0], [0, 0]], [[1, 0], [0, 0]]], dtype=bool)
    >>> localisation_precision(m, t).tolist()
    [0.5, nan]
    """
    m = _masks(masks, "masks")
    t = _masks(truth, "truth", m.shape)
    n = m.shape[0]
    inside = (m & t).reshape(n, -1).sum(1)
    size = m.reshape(n, -1).sum(1)
    return np.where(size > 0, inside / np.maximum(size, 1), np.nan)


def mask_iou(masks: Any, truth: Any) -> np.ndarray:
    """Intersection over union of each mask with the ground truth, ``|m & m*| / |m | m*|``.

    Same arguments as :func:`localisation_precision`. Returns (n,) float64, NaN where both masks
    are empty.

    Examples
    --------
    >>> m = np.array([[[1, 1], [0, 0]]], dtype=bool)
    >>> t = np.array([[[1, 0], [1, 0]]], dtype=bool)
    >>> mask_iou(m, t).tolist()
    [0.3333333333333333]
    """
    m = _masks(masks, "masks")
    t = _masks(truth, "truth", m.shape)
    n = m.shape[0]
    inter = (m & t).reshape(n, -1).sum(1)
    union = (m | t).reshape(n, -1).sum(1)
    return np.where(union > 0, inter / np.maximum(union, 1), np.nan)


def _average_precision(scores: np.ndarray, truth: np.ndarray) -> float:
    """Step-wise average precision ``sum_k (R_k - R_{k-1}) P_k`` over the distinct thresholds.

    ``scores`` float or int (1-D), ``truth`` bool (1-D) with at least one positive.
    """
    order = np.argsort(-scores, kind="stable")
    s, y = scores[order], truth[order]
    # the last index of every run of equal scores: one threshold per distinct value
    last = np.flatnonzero(np.diff(s) != 0)
    last = np.append(last, s.size - 1)
    tp = np.cumsum(y, dtype=np.int64)[last]
    predicted = last + 1
    precision = tp / predicted
    gain = np.diff(tp, prepend=0) / tp[-1]  # recall increments
    return float(np.sum(gain * precision))


def _binned_scores(s: np.ndarray, n_bins: int) -> np.ndarray:
    """The lower grid edge of every score, as an integer: ``floor(s * n_bins)`` (0 .. n_bins)."""
    return np.floor(s * n_bins).astype(np.int64)


# the finest grid: floor(s * n_bins) of a score in [0, 1] is then an exact int64 (a grid past
# 2**63 overflowed the cast and merged different scores into one bin)
MAX_BINS = 2**53


def _check_bins(n_bins: Any) -> int | None:
    if n_bins is None:
        return None
    bins = check_positive_int(n_bins, "n_bins")
    if bins > MAX_BINS:
        raise InputError.bad("n_bins", "an integer in [1, 2**53] (or None: the exact PxAP)", n_bins)
    return bins


def pxap(soft_maps: Any, truth: Any, n_bins: int | None = None) -> float:
    """Pixel average precision (PxAP) of soft maps, pooled over all pixels of all images.

    Every pixel of every image is one sample with score ``soft_maps`` and label ``truth``;
    PxAP is the step-wise average precision ``sum_k (R_k - R_{k-1}) P_k`` over the thresholds
    ``s >= theta`` (precision and recall at each distinct score), as
    ``sklearn.metrics.average_precision_score`` defines it.

    Parameters
    ----------
    soft_maps : array (n, H, W) of values in [0, 1]
    truth : bool (or 0/1) array (n, H, W); at least one true pixel
    n_bins : int, optional
        None (default): the exact PxAP (every distinct score a threshold). An integer: thresholds
        on the grid ``j / n_bins`` only, i.e. every score is rounded down to
        ``floor(s * n_bins) / n_bins`` first (the spec's "1e-5 histogram bins" is
        ``n_bins=PXAP_BINS`` = 100000). The binned value differs from the exact one only through
        scores that share a bin. At most 2**53.

    Returns
    -------
    float

    Examples
    --------
    >>> s = np.array([[[0.9, 0.8], [0.3, 0.1]]])
    >>> t = np.array([[[1, 0], [1, 0]]], dtype=bool)
    >>> round(pxap(s, t), 6)  # (1/2)(1/1) + (1/2)(2/3)
    0.833333
    """
    s = _soft_maps(soft_maps)
    t = _masks(truth, "truth", s.shape)
    bins = _check_bins(n_bins)
    if not t.any():
        raise InputError.bad("truth", "at least one ground-truth pixel", "no true pixel")
    flat = s.ravel() if bins is None else _binned_scores(s.ravel(), bins)
    return _average_precision(flat, t.ravel())


def pxap_per_image(soft_maps: Any, truth: Any, n_bins: int | None = None) -> np.ndarray:
    """:func:`pxap` of every image on its own: (n,) float64, NaN for an image with no true pixel.

    Examples
    --------
    >>> s = np.array([[[0.9, 0.1]], [[0.2, 0.4]]])
    >>> t = np.array([[[1, 0]], [[0, 0]]], dtype=bool)
    >>> pxap_per_image(s, t).tolist()
    [1.0, nan]
    """
    s = _soft_maps(soft_maps)
    t = _masks(truth, "truth", s.shape)
    bins = _check_bins(n_bins)
    out = np.full(s.shape[0], np.nan)
    for i in range(s.shape[0]):
        if t[i].any():
            flat = s[i].ravel() if bins is None else _binned_scores(s[i].ravel(), bins)
            out[i] = _average_precision(flat, t[i].ravel())
    return out


# ------------------------------------------------------------------ control masks


def _per_image_fraction(value: Any, n: int, name: str) -> np.ndarray:
    try:
        arr = np.asarray(value)
        if arr.dtype.kind not in "iuf":  # "0.5" or True is no fraction
            raise TypeError
        arr = arr.astype(np.float64)
    except (TypeError, ValueError):
        raise InputError.bad(name, f"a number or {n} numbers in [0, 1]", value) from None
    if arr.ndim == 0:
        arr = np.full(n, float(arr))
    if arr.shape != (n,):
        raise InputError.bad(name, f"a number or {n} numbers in [0, 1] (one per image)", arr)
    if np.isnan(arr).any() or arr.min() < 0 or arr.max() > 1:
        raise InputError.bad(name, "fractions in [0, 1]", arr)
    return arr


def random_area_masks(segments: Any, kept_fraction: Any, random_state: Any = None) -> np.ndarray:
    """Random superpixel masks whose areas are as close as possible to a target (check 5).

    Per image, its present regions are put in a random order (``rng.permutation`` of the labels
    present, images in turn) and the prefix of that order whose area is closest to
    ``kept_fraction * H * W`` is kept (ties: the smaller prefix). The kept area is therefore
    within half a region (the next one in the order) of the target.

    Parameters
    ----------
    segments : int array (n, H, W)
    kept_fraction : float or array (n,) in [0, 1]
        The target area per image (e.g. the kept fraction of the mask to compare with).
    random_state : None, int or numpy Generator

    Returns
    -------
    bool ndarray (n, H, W), constant within every region

    Examples
    --------
    >>> seg = np.repeat(np.arange(4), 4).reshape(1, 4, 4)
    >>> float(random_area_masks(seg, 0.5, random_state=0).mean())
    0.5
    """
    seg = _label_maps(segments)
    n, h, w = seg.shape
    target = _per_image_fraction(kept_fraction, n, "kept_fraction") * (h * w)
    rng = check_random_state(random_state)
    sizes = _sizes(seg)
    table = np.zeros(sizes.shape, dtype=bool)
    for i in range(n):
        labels = rng.permutation(np.flatnonzero(sizes[i]))
        area = np.concatenate([[0], np.cumsum(sizes[i, labels])])
        j = int(np.argmin(np.abs(area - target[i])))
        table[i, labels[:j]] = True
    return np.take_along_axis(table, seg.reshape(n, -1), axis=1).reshape(seg.shape)


def _lattice_shift(p: int) -> int:
    """The shift ``k`` making the lattice ``{(i, j): (j + k i) mod p == 0}`` most even.

    Maximises the shortest lattice vector (smallest ``k`` on ties); its vectors with
    ``0 < i < p`` are ``(i, +-(k i mod p))``, and ``(0, p)``, ``(p, 0)`` always belong to it.
    """
    if p <= 2:
        return p - 1 if p == 2 else 0
    # the shortest vector of every k at once by Lagrange (Gauss) reduction of the basis
    # (0, p), (1, -k): O(p log p), where the minimum over 0 < i < p above was O(p^2); integers,
    # so the lengths (and the argmax, smallest k on ties) are exactly those of that minimum
    a0, a1 = np.zeros(p, dtype=np.int64), np.full(p, p, dtype=np.int64)
    b0, b1 = np.ones(p, dtype=np.int64), -np.arange(p, dtype=np.int64)
    shortest = np.empty(p, dtype=np.int64)
    live = np.arange(p)  # the shifts k still being reduced
    while live.size:
        na, nb = a0 * a0 + a1 * a1, b0 * b0 + b1 * b1
        swap = nb < na  # keep a the shorter
        a0, b0 = np.where(swap, b0, a0), np.where(swap, a0, b0)
        a1, b1 = np.where(swap, b1, a1), np.where(swap, a1, b1)
        na = np.minimum(na, nb)
        mu = np.floor_divide(2 * (a0 * b0 + a1 * b1) + na, 2 * na)  # round(a.b / a.a), halves up
        done = mu == 0
        shortest[live[done]] = na[done]
        go = ~done
        live, a0, a1, mu = live[go], a0[go], a1[go], mu[go]
        b0, b1 = b0[go] - mu * a0, b1[go] - mu * a1
    return int(np.argmax(np.minimum(shortest, p * p)))


def _lattice(h: int, w: int, p: int, complement: bool) -> np.ndarray:
    k = _lattice_shift(p) if h > 1 else 0  # one row: every shift gives the same mask
    rows, cols = np.arange(h)[:, None], np.arange(w)[None, :]
    on = (cols + k * rows) % p == 0
    return ~on if complement else on


def pixel_grid_mask(shape: Sequence[int], kept_fraction: float) -> np.ndarray:
    """The "Blackbox-Pixel" mask: an evenly spaced pixel lattice keeping about ``kept_fraction``.

    The lattice is ``L(p) = {(i, j): (j + k i) mod p == 0}`` (row ``i``, column ``j``): one pixel
    in every ``p`` along each row, rows shifted by ``k``, with ``k`` chosen to maximise the
    shortest distance between kept pixels (``p = 2`` is the checkerboard, ``p = 5`` the square
    lattice spanned by (1, -2) and (2, 1)). It keeps ``1/p`` of the pixels exactly when ``p``
    divides ``W``; in general row ``i`` keeps ``floor((W - 1 - r_i) / p) + 1`` pixels,
    ``r_i = (-k i) mod p``. Fractions above 1/2 use the complement of a lattice (keep all but
    ``L(p)``, about ``1 - 1/p``).

    Returned: the lattice or complement whose exact kept fraction is closest to ``q`` among
    those with ``p <= W`` and those with ``p`` next to ``1 / q`` (lattices) or ``1 / (1 - q)``
    (complements); ties: the sparser, then the plain lattice, then the smaller ``p``. (With
    ``1 / q > W`` a row holds at most one kept pixel and the fraction can be far from ``1 / p``;
    use images wider than ``1 / q``.)

    Parameters
    ----------
    shape : (H, W)
    kept_fraction : float in (0, 1]

    Returns
    -------
    bool ndarray (H, W); ``mask.mean()`` is the exact kept fraction.

    Examples
    --------
    >>> m = pixel_grid_mask((4, 5), 0.2)
    >>> m.astype(int).tolist(), float(m.mean())
    ([[1, 0, 0, 0, 0], [0, 0, 0, 1, 0], [0, 1, 0, 0, 0], [0, 0, 0, 0, 1]], 0.2)
    """
    try:
        h, w = (int(v) for v in shape)
        bad = any(int(v) != v for v in shape)
    except (TypeError, ValueError):
        raise InputError.bad("shape", "(H, W), two positive integers", shape) from None
    if bad or h < 1 or w < 1:
        raise InputError.bad("shape", "(H, W), two positive integers", shape)
    q = check_in_range(kept_fraction, "kept_fraction", 0.0, 1.0, low_open=True)
    hw = h * w
    window = set()
    for complement, base in ((False, 1 / q), (True, 1 / (1 - q) if q < 1 else np.inf)):
        if not np.isfinite(base):
            continue
        centre = min(int(np.floor(base)), hw)
        for p in range(centre - 1, centre + 3):
            if 1 <= p <= hw and not (complement and p < 2):
                window.add((complement, p))
    best: Any = None

    def consider(complement: bool, p: int) -> None:
        nonlocal best
        mask = _lattice(h, w, p, complement)
        key = (abs(mask.mean() - q), mask.mean(), complement, p)
        if best is None or key < best[0]:
            best = (key, mask)

    for complement, p in sorted(window):
        consider(complement, p)
    # every other p <= W keeps floor(W/p) or ceil(W/p) pixels per row, and row 0 (r_0 = 0)
    # ceil(W/p): its kept count lies in [lo, hi] below. Only a p whose best possible count has
    # a key below the best's is built (the key from the count is the mask's: mean = count / HW)
    ps = np.arange(1, min(w, hw) + 1, dtype=np.int64)
    floor, ceil = w // ps, -(-w // ps)
    counts = {False: (ceil + (h - 1) * floor, h * ceil)}
    counts[True] = (hw - counts[False][1], hw - counts[False][0])
    near = np.floor(q * hw)

    def nearest_gap(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        a, b = np.clip(near, lo, hi), np.clip(near + 1, lo, hi)
        return np.minimum(np.abs(a / hw - q), np.abs(b / hw - q))

    gaps = {c: nearest_gap(*counts[c]) for c in (False, True)}
    gaps[True][ps < 2] = np.inf
    slack = 1e-9 * q  # a prefilter only: the exact test below decides
    (close,) = np.nonzero(np.minimum(gaps[False], gaps[True]) <= best[0][0] + slack)

    def could_win(complement: bool, index: int) -> bool:
        lo, hi = (int(v[index]) for v in counts[complement])
        centre = int(near)
        for count in {lo, hi, *(min(max(centre + d, lo), hi) for d in (-1, 0, 1, 2))}:
            mean = count / hw
            if (abs(mean - q), mean, complement, int(ps[index])) < best[0]:
                return True
        return False

    for index in close:
        p = int(ps[index])
        for complement in (False, True):
            if complement and p < 2 or (complement, p) in window:
                continue
            if could_win(complement, index):
                consider(complement, p)
    return best[1]


# ------------------------------------------------------------------ fidelity curves


@dataclass(frozen=True)
class FidelityCurve(Result):
    """Agreement with the unmasked prediction as regions are deleted (:func:`deletion_curve`,
    :func:`insertion_curve`).

    Attributes
    ----------
    kind : "deletion" (``fractions`` are removed areas, lower agreement is better) or
        "insertion" (``fractions`` are kept areas, higher is better).
    order : "importance" or "random" (the control).
    fractions : the levels ``t``, in the order given.
    agreement : (T,) the share of images whose masked prediction equals the unmasked one.
    mean_removed_area : (T,) the mean area actually removed at each level.
    n_images, classifier_rows : images and classifier evaluations (masked and unmasked).
    removed_area : (n, T) removed pixels / all pixels per image and level.
    agrees : (n, T) bool; prediction : (n, T) masked predictions; reference : (n,) unmasked ones.
    """

    kind: str
    order: str
    fractions: tuple[float, ...]
    agreement: np.ndarray
    mean_removed_area: np.ndarray
    n_images: int
    classifier_rows: int
    removed_area: np.ndarray = internal_field()
    agrees: np.ndarray = internal_field()
    prediction: np.ndarray = internal_field()
    reference: np.ndarray = internal_field()
    figure_name = "fidelity_curve.png"

    def summary(self) -> str:
        what = "removed" if self.kind == "deletion" else "kept"
        better = "lower" if self.kind == "deletion" else "higher"
        lines = [
            f"{self.kind.capitalize()} fidelity ({self.order} order) on {images_count(self.n_images)}:"
            f" agreement with the unmasked prediction ({better} is better)"
        ]
        for t, a, r in zip(self.fractions, self.agreement, self.mean_removed_area, strict=True):
            lines.append(f"  {what} area {t:g}: agreement {a:.1%} (mean removed area {r:.3f})")
        return "\n".join(lines)

    def plot(self, ax: Any = None) -> Any:
        """Agreement against the removed (deletion) or kept (insertion) area."""
        ax = new_axes(ax, (5.0, 3.5))
        what = "removed" if self.kind == "deletion" else "kept"
        ax.plot(self.fractions, self.agreement, "o-", label=f"{self.kind}, {self.order} order")
        ax.set_xlabel(f"{what} area fraction")
        ax.set_ylabel("agreement with unmasked prediction")
        ax.set_ylim(-0.02, 1.02)
        ax.legend()
        return ax


def _levels(values: Any, name: str) -> tuple[float, ...]:
    try:
        arr = np.asarray(values)
        if arr.dtype.kind not in "iuf":  # "0.2" or True is no level
            raise TypeError
        arr = arr.astype(np.float64).ravel()
    except (TypeError, ValueError):
        raise InputError.bad(name, "numbers in (0, 1]", values) from None
    if arr.size == 0 or np.isnan(arr).any() or arr.min() <= 0 or arr.max() > 1:
        raise InputError.bad(name, "at least one number, all in (0, 1]", values)
    return tuple(float(v) for v in arr)


def _predict(torch: Any, classify_fn: Callable[[Any], Any], x: Any, n: int) -> np.ndarray:
    logits = classify_fn(x)
    if isinstance(logits, torch.Tensor):
        if logits.dtype == torch.bfloat16:  # numpy has no bfloat16; float32 holds each exactly
            logits = logits.float()
        logits = logits.detach().cpu().numpy()
    arr = np.asarray(logits)
    if arr.ndim != 2 or arr.shape[0] != n or arr.shape[1] < 1:
        raise InputError.bad("classify_fn", f"logits of shape ({n}, n_classes)", arr)
    if np.issubdtype(arr.dtype, np.floating) and np.isnan(arr).any():  # argmax: class 0
        raise InputError.bad("classify_fn", "logits without NaN", "NaN logits")
    return arr.argmax(1)


def _fidelity(
    kind: str,
    classify_fn: Callable[[Any], Any],
    images: Any,
    segments: Any,
    scores: Any,
    levels: Any,
    fill: Any,
    order: str,
    random_state: Any,
    chunk_size: int,
) -> FidelityCurve:
    torch = require("torch", "image")
    from trustlab.explain.regions.selection import apply_mask

    check_callable(classify_fn, "classify_fn")
    name = "fractions" if kind == "deletion" else "kept"
    ts = _levels(levels, name)
    order = check_choice(order, "order", ("importance", "random"))
    chunk = check_positive_int(chunk_size, "chunk_size")
    try:  # ragged nested lists or text: no array of images
        x = images if isinstance(images, torch.Tensor) else torch.as_tensor(np.asarray(images))
    except (TypeError, ValueError):
        x = torch.empty(0)
    if x.ndim != 4 or not x.is_floating_point() or x.numel() == 0:
        raise InputError.bad("images", "a non-empty float array or tensor (n, C, H, W)", images)
    if not bool(torch.isfinite(x).all()):  # NaN logits: argmax 0 everywhere, agreement 1.0
        raise InputError.bad("images", "finite values", "NaN or infinite values")
    seg = _label_maps(segments)
    n, _, h, w = x.shape
    if seg.shape != (n, h, w):
        raise InputError.bad("segments", f"shape {(n, h, w)} to match images", seg)
    sizes = _sizes(seg)
    k = sizes.shape[1]
    present = sizes > 0
    if order == "importance" or scores is not None:
        if scores is None:
            raise InputError.bad("scores", "an array (n, K) of region scores", scores)
        if hasattr(scores, "detach"):
            scores = scores.detach().cpu().numpy()
        try:
            sc = np.asarray(scores, dtype=np.float64)
        except (TypeError, ValueError):
            raise InputError.bad("scores", "a numeric array (n, K)", scores) from None
        if sc.ndim != 2 or sc.shape[0] != n or sc.shape[1] < k:
            raise InputError.bad("scores", f"shape ({n}, K) with K >= {k} (largest label + 1)", sc)
        sc = sc[:, :k]
        if not np.isfinite(sc[present]).all():
            raise InputError.bad("scores", "finite scores for every present region", sc)
    # ranking: present regions, most important first (ties: the lower label first)
    rng = check_random_state(random_state) if order == "random" else None
    ranks = []
    for i in range(n):
        labels = np.flatnonzero(present[i])
        if rng is not None:
            labels = rng.permutation(labels)
        else:
            labels = labels[np.argsort(-sc[i, labels], kind="stable")]
        ranks.append(labels if kind == "deletion" else labels[::-1])  # removal order
    total = h * w
    n_t = len(ts)
    removed = np.zeros((n, n_t, k), dtype=bool)
    area = np.zeros((n, n_t))
    for i, labels in enumerate(ranks):
        cum = np.concatenate([[0], np.cumsum(sizes[i, labels])])  # pixels removed by a prefix
        gone, left = cum / total, (total - cum) / total
        for j, t in enumerate(ts):
            if kind == "deletion":
                stop = int(np.flatnonzero(gone >= t)[0])  # first prefix removing >= t
            else:
                stop = int(np.flatnonzero(left <= t)[0])  # first prefix leaving <= t
            removed[i, j, labels[:stop]] = True
            area[i, j] = gone[stop]
    rows_seg = torch.as_tensor(seg, device=x.device)
    keep_table = torch.as_tensor(~removed.reshape(n * n_t, k), device=x.device)
    with torch.no_grad():
        reference = np.concatenate(
            [
                _predict(torch, classify_fn, x[s : s + chunk], len(x[s : s + chunk]))
                for s in range(0, n, chunk)
            ]
        )
        preds = []
        for s in range(0, n * n_t, chunk):
            r = torch.arange(s, min(s + chunk, n * n_t), device=x.device)
            img = r // n_t
            m = torch.gather(keep_table[r], 1, rows_seg[img].reshape(len(r), -1))
            masked = apply_mask(x[img], m.reshape(len(r), 1, h, w), fill)
            preds.append(_predict(torch, classify_fn, masked, len(r)))
    prediction = np.concatenate(preds).reshape(n, n_t)
    agrees = prediction == reference[:, None]
    return FidelityCurve(
        kind=kind,
        order=order,
        fractions=ts,
        agreement=agrees.mean(0),
        mean_removed_area=area.mean(0),
        n_images=n,
        classifier_rows=n + n * n_t,
        removed_area=area,
        agrees=agrees,
        prediction=prediction,
        reference=reference,
    )


def deletion_curve(
    classify_fn: Callable[[Any], Any],
    images: Any,
    segments: Any,
    scores: Any,
    fractions: Sequence[float] = (0.05, 0.1, 0.2),
    *,
    fill: Any = 0.0,
    order: str = "importance",
    random_state: Any = None,
    chunk_size: int = 256,
) -> FidelityCurve:
    """Deletion fidelity: black out the most important regions first; does the prediction hold?

    Per image, its present regions are sorted by ``scores`` descending (ties: lower label
    first); at each level ``t`` the shortest prefix of that order whose area is ``>= t`` of the
    image (area fractions are pixel counts / ``H W``) is replaced by ``fill``
    (:func:`~trustlab.explain.regions.selection.apply_mask`), and the classifier's argmax on
    the masked image is compared with its argmax on the unmasked image. Reported: the share of
    images that agree, per ``t`` (spec: ``t`` in 0.05 / 0.1 / 0.2, lower is better).

    Parameters
    ----------
    classify_fn : callable ``(images (m, C, H, W) tensor) -> logits (m, n_classes)``
        Called under ``torch.no_grad()`` with at most ``chunk_size`` rows; returns a tensor or
        an array.
    images : float array or tensor (n, C, H, W)
    segments : int array or tensor (n, H, W)
        Region labels; a label with no pixel in an image is ignored there.
    scores : array (n, K), K >= largest label + 1
        Region importance (e.g. ``sigmoid(mu)``; any monotone transform gives the same curve).
        Scores of absent (padded) regions are ignored and may be NaN. May be None with
        ``order="random"``.
    fractions : levels ``t`` in (0, 1]
    fill : number or per-channel values
        The value of removed pixels (the normalised black).
    order : {"importance", "random"}
        "random": the regions in a random order instead (the control of check 6).
    random_state : None, int or numpy Generator (``order="random"`` only)
    chunk_size : int
        The most images per classifier call.

    Returns
    -------
    FidelityCurve

    Examples
    --------
    >>> import torch
    >>> seg = np.repeat(np.arange(4), 4).reshape(1, 4, 4)  # four rows of 4 pixels
    >>> classify = lambda x: torch.stack([x[:, 0, 0].sum(1), torch.full((len(x),), 2.0)], 1)
    >>> x = np.full((1, 1, 4, 4), 1.0, dtype=np.float32)  # the classifier reads row 0 only
    >>> r = deletion_curve(classify, x, seg, [[0.9, 0.1, 0.2, 0.3]], (0.2, 0.25))
    >>> r.agreement.tolist(), r.removed_area.tolist()
    ([0.0, 0.0], [[0.25, 0.25]])
    """
    return _fidelity(
        "deletion",
        classify_fn,
        images,
        segments,
        scores,
        fractions,
        fill,
        order,
        random_state,
        chunk_size,
    )


def insertion_curve(
    classify_fn: Callable[[Any], Any],
    images: Any,
    segments: Any,
    scores: Any,
    kept: Sequence[float] = (0.8, 0.9, 0.95),
    *,
    fill: Any = 0.0,
    order: str = "importance",
    random_state: Any = None,
    chunk_size: int = 256,
) -> FidelityCurve:
    """Insertion fidelity: black out the least important regions first, keeping the important.

    Per image, regions are removed from least to most important (``scores`` ascending; ties:
    the higher label first, the reverse of :func:`deletion_curve`'s order) and at each level
    ``t`` the shortest prefix whose removal leaves a kept area ``<= t`` is removed. Reported:
    the share of images whose prediction equals the unmasked one (spec: kept area 0.8 / 0.9 /
    0.95, higher is better). Arguments as in :func:`deletion_curve`, with ``kept`` the levels.

    Examples
    --------
    >>> import torch
    >>> seg = np.repeat(np.arange(4), 4).reshape(1, 4, 4)
    >>> classify = lambda x: torch.stack([x[:, 0, 0].sum(1), torch.full((len(x),), 2.0)], 1)
    >>> x = np.full((1, 1, 4, 4), 1.0, dtype=np.float32)
    >>> r = insertion_curve(classify, x, seg, [[0.9, 0.1, 0.2, 0.3]], (0.5, 0.75))
    >>> r.agreement.tolist(), r.removed_area.tolist()
    ([1.0, 1.0], [[0.5, 0.25]])
    """
    return _fidelity(
        "insertion",
        classify_fn,
        images,
        segments,
        scores,
        kept,
        fill,
        order,
        random_state,
        chunk_size,
    )
