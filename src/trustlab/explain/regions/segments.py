"""Superpixels for region-sparse classification (P2P): SLIC or watershed region maps, cached.

:func:`superpixels` computes the region maps the classifier selects from (labels renumbered
``0 .. K-1`` per image; with ``cache_dir`` one ``.npz`` per call, named by a hash of the settings
and the image bytes); :func:`segment_sizes`, :func:`mask_from_segments` and :func:`kept_fraction`
turn a selection of regions into pixels. Needs scikit-image, imported when first used.
"""

from __future__ import annotations

import hashlib
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from trustlab._checks import check_choice, check_positive, check_positive_int
from trustlab._lazy import require
from trustlab._results import output_dir, write_atomic
from trustlab.errors import InputError

# labels below this are accepted on any map, however small (see check_label_range)
LABEL_LIMIT = 65536

__all__ = ["superpixels", "segment_sizes", "mask_from_segments", "kept_fraction"]

_CACHE_VERSION = "1"


def _skimage(module: str) -> Any:
    return require(f"skimage.{module}", "image")


# --------------------------------------------------------------------------------------------------
# Superpixels
# --------------------------------------------------------------------------------------------------


def _check_images(images: Any) -> np.ndarray:
    arr = np.asarray(images)
    if arr.ndim != 4 or arr.shape[1] != 3 or arr.shape[0] < 1 or min(arr.shape[2:]) < 2:
        raise InputError.bad("images", "an array of shape (n, 3, H, W), n >= 1, H, W >= 2", arr)
    if not np.issubdtype(arr.dtype, np.floating) and not np.issubdtype(arr.dtype, np.integer):
        raise InputError.bad("images", "a numeric array", arr)
    given, arr = arr, arr.astype(np.float32, copy=False)  # errors describe what came
    if not np.isfinite(arr).all() or arr.min() < 0.0 or arr.max() > 1.0:
        raise InputError.bad("images", "finite values in [0, 1]", given)
    return np.ascontiguousarray(arr)


def _consecutive(labels: np.ndarray) -> np.ndarray:
    """``labels`` renumbered 0..K-1 in their order (int32)."""
    _, inverse = np.unique(labels, return_inverse=True)
    return inverse.reshape(labels.shape).astype(np.int32)


def _segment_one(image_hwc: np.ndarray, method: str, n_segments: int, compactness: float):
    segmentation = _skimage("segmentation")
    if method == "slic":
        labels = segmentation.slic(
            image_hwc,
            n_segments=n_segments,
            compactness=compactness,
            start_label=0,
            channel_axis=-1,
        )
    else:
        gradient = _skimage("filters").sobel(_skimage("color").rgb2gray(image_hwc))
        labels = segmentation.watershed(
            gradient, markers=n_segments, compactness=compactness * _WATERSHED_COMPACTNESS
        )
    return _consecutive(labels)


#: ``compactness`` is on SLIC's scale (colour vs space, 1-100); watershed's compact term weighs
#: squared pixel distances against a gradient in [0, ~1.4], so it is scaled by this factor.
_WATERSHED_COMPACTNESS = 1e-4


def superpixels(
    images: Any,
    *,
    method: str = "slic",
    n_segments: int = 64,
    compactness: float = 20.0,
    cache_dir: str | Path | None = None,
) -> np.ndarray:
    """Superpixel maps of channels-first RGB images (SLIC or compact watershed, scikit-image).

    Parameters
    ----------
    images : array of shape (n, 3, H, W) in [0, 1]
    method : {"slic", "watershed"}
        ``"slic"``: ``skimage.segmentation.slic`` on the RGB image (Lab distance); ``"watershed"``:
        ``skimage.segmentation.watershed`` of the Sobel gradient of the grey image from
        ``n_segments`` grid markers, with compactness ``compactness * 1e-4``.
    n_segments : int >= 1
        The approximate number of regions per image.
    compactness : float > 0
        Trade-off between colour and spatial closeness (SLIC's scale; 20 as in P2P).
    cache_dir : path, optional
        Keep the maps in ``cache_dir`` (one ``.npz`` per call, named by a SHA-256 of the image
        bytes, their shape and the settings): a second call with the same input reads the file
        (a file that cannot be read is computed again and rewritten).

    Returns
    -------
    ndarray of shape (n, H, W), int32
        Per image, region labels ``0 .. K-1`` with every label used (numbered in label order).

    Examples
    --------
    >>> from trustlab.explain.regions.data import bam_lite
    >>> ds = bam_lite(2, random_state=0)
    >>> seg = superpixels(ds.images, n_segments=50)
    >>> seg.shape, seg.dtype, int(seg[0].min())
    ((2, 64, 64), dtype('int32'), 0)
    """
    arr = _check_images(images)
    method = check_choice(method, "method", ("slic", "watershed"))
    n_segments = check_positive_int(n_segments, "n_segments")
    compactness = check_positive(compactness, "compactness")
    path = None
    if cache_dir is not None:
        key = hashlib.sha256()
        key.update(f"v{_CACHE_VERSION}|{method}|{n_segments}|{compactness!r}|{arr.shape}".encode())
        key.update(arr.tobytes())
        path = output_dir(cache_dir, "cache_dir") / f"superpixels-{key.hexdigest()[:32]}.npz"
        cached = _read_cached(path) if path.exists() else None
        if (
            cached is not None
            and cached.shape == (arr.shape[0], *arr.shape[2:])
            and cached.dtype == np.int32
        ):
            return cached
    out = np.empty((arr.shape[0], *arr.shape[2:]), dtype=np.int32)
    for i in range(arr.shape[0]):
        out[i] = _segment_one(arr[i].transpose(1, 2, 0), method, n_segments, compactness)
    if path is not None:

        def save(tmp: Path) -> None:
            with open(tmp, "wb") as fh:
                np.savez_compressed(fh, segments=out)

        write_atomic(path, save)
    return out


def _read_cached(path: Path) -> np.ndarray | None:
    """The maps stored in a cache file, or None when it cannot be read (damaged, or not one of
    ours): the maps are then computed again and the file rewritten."""
    try:
        with np.load(path, allow_pickle=False) as stored:
            return np.asarray(stored["segments"])
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):
        return None


def check_label_range(largest: Any, pixels: int, name: str = "segments") -> None:
    """Refuse region labels far past a map's size: every label up to the largest gets a count
    or a column (pixel counts, selection tables), so a label of 1e12 would ask for terabytes
    (a raw MemoryError). Allowed: labels below the pixels of one map, or below 65536."""
    limit = max(int(pixels), LABEL_LIMIT)
    if int(largest) >= limit:
        raise InputError.bad(
            name,
            f"region labels below {limit} (the pixels of one map, or {LABEL_LIMIT})",
            f"a label of {int(largest)}",
        )


def _check_segments(segments: Any) -> np.ndarray:
    seg = np.asarray(segments)
    if seg.ndim not in (2, 3) or seg.size == 0 or not np.issubdtype(seg.dtype, np.integer):
        raise InputError.bad("segments", "an integer array of shape (H, W) or (n, H, W)", seg)
    if seg.min() < 0:
        raise InputError.bad("segments", "non-negative region labels", seg)
    check_label_range(seg.max(), seg.shape[-2] * seg.shape[-1])
    return seg


def segment_sizes(segments: Any) -> list[np.ndarray]:
    """The pixel count of each region ``0 .. max label`` of each segment map.

    Parameters
    ----------
    segments : int array of shape (H, W) or (n, H, W)

    Returns
    -------
    list of ndarray
        One int64 array per map (one map: a list of one).

    Examples
    --------
    >>> segment_sizes(np.array([[0, 0], [1, 2]]))[0].tolist()
    [2, 1, 1]
    """
    seg = _check_segments(segments)
    maps = seg[None] if seg.ndim == 2 else seg
    return [np.bincount(m.ravel()).astype(np.int64) for m in maps]


def _selection_table(seg: np.ndarray, selected: Any) -> np.ndarray:
    """``selected`` as a bool table (n_maps, n_labels) with one row per map."""
    maps = seg[None] if seg.ndim == 2 else seg
    n, n_labels = maps.shape[0], int(seg.max()) + 1
    rows = [selected] if seg.ndim == 2 else selected
    if isinstance(rows, np.ndarray) and rows.ndim == 1 and seg.ndim == 3:
        raise InputError.bad("selected", "one selection per segment map", selected)
    try:
        count = len(rows)
    except TypeError:
        raise InputError.bad("selected", "a selection per segment map", selected) from None
    if count != n:
        raise InputError.bad("selected", f"{n} selections (one per segment map)", selected)
    table = np.zeros((n, n_labels), dtype=bool)
    for i, row in enumerate(rows):
        r = np.asarray(row)
        if r.ndim != 1:
            raise InputError.bad("selected", "a 1-D bool mask or label list per map", r)
        if r.dtype == bool:
            if r.size < n_labels:
                raise InputError.bad("selected", f"bool masks of length >= {n_labels}", r)
            table[i] = r[:n_labels]
        elif r.size == 0 or np.issubdtype(r.dtype, np.integer):
            r = r.astype(np.int64)
            if r.size and (r.min() < 0 or r.max() >= n_labels):
                raise InputError.bad("selected", f"region labels in [0, {n_labels})", r)
            table[i, r] = True
        else:
            raise InputError.bad("selected", "bool masks or integer region labels", r)
    return table


def mask_from_segments(segments: Any, selected: Any) -> np.ndarray:
    """The pixels of the selected regions.

    Parameters
    ----------
    segments : int array of shape (H, W) or (n, H, W)
    selected : for one map, a bool mask over its labels or a list of labels; for ``n`` maps, one
        such selection per map (a 2-D bool array of shape (n, >= K) also works).

    Returns
    -------
    bool ndarray shaped like ``segments``

    Examples
    --------
    >>> mask_from_segments(np.array([[0, 1], [1, 2]]), [1]).astype(int).tolist()
    [[0, 1], [1, 0]]
    """
    seg = _check_segments(segments)
    table = _selection_table(seg, selected)
    maps = seg[None] if seg.ndim == 2 else seg
    out = np.take_along_axis(table, maps.reshape(maps.shape[0], -1), axis=1).reshape(maps.shape)
    return out[0] if seg.ndim == 2 else out


def kept_fraction(segments: Any, selected: Any) -> float | np.ndarray:
    """The fraction of pixels in the selected regions (per map).

    Returns
    -------
    float for one map, ndarray of shape (n,) for ``n`` maps

    Examples
    --------
    >>> kept_fraction(np.array([[0, 1], [1, 2]]), [1])
    0.5
    """
    mask = mask_from_segments(segments, selected)
    if mask.ndim == 2:
        return float(mask.mean())
    return mask.reshape(mask.shape[0], -1).mean(axis=1)
