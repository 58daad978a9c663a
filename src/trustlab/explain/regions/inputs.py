"""Validation of images and superpixel maps at the public boundary of the region-sparse models."""

from __future__ import annotations

from typing import Any

import numpy as np

from trustlab._lazy import require
from trustlab.errors import InputError
from trustlab.explain.regions.segments import _consecutive, check_label_range

torch = require("torch", "image")

__all__ = [
    "check_images",
    "check_segment_maps",
    "check_known_labels",
    "images_count",
    "is_number",
]


def check_images(images: Any, name: str = "images", size: tuple[int, int] | None = None) -> Any:
    """``images`` as a float32 tensor (n, 3, H, W) with values in [0, 1] (and sides ``size``)."""
    if isinstance(images, torch.Tensor):
        x = images.detach().to(torch.float32).cpu()
        given: Any = images  # the errors describe what came, not its float32 copy
    else:
        try:
            arr = np.asarray(images)
        except Exception:  # noqa: BLE001 - any failure to convert is bad input
            sizes = _sizes(images)
            if sizes:  # a list of images of several sizes (files read one by one)
                raise InputError(
                    f"{name}: expected images of one size (n, 3, H, W), got {len(images)} images "
                    f"of shapes {sizes}; resize them to one size first",
                    argument=name,
                ) from None
            raise InputError.bad(name, "an array of shape (n, 3, H, W)", images) from None
        if arr.dtype == object or not (
            np.issubdtype(arr.dtype, np.floating) or np.issubdtype(arr.dtype, np.integer)
        ):
            raise InputError.bad(name, "a numeric array of shape (n, 3, H, W)", images)
        x, given = torch.as_tensor(np.ascontiguousarray(arr, dtype=np.float32)), arr
    if x.ndim != 4 or x.shape[1] != 3 or x.shape[0] == 0:
        raise InputError.bad(name, "a non-empty array of shape (n, 3, H, W)", given)
    if not bool(torch.isfinite(x).all()):
        raise InputError.bad(name, "finite values in [0, 1]", "NaN or infinite values")
    low, high = float(x.min()), float(x.max())
    if low < 0 or high > 1:
        hint = ""
        if low >= 0:  # 0..255 and 0..65535 are the ranges of 8-bit and 16-bit image files
            bits = 8 if high <= 255 else 16 if high <= 65535 else None
            hint = f" ({bits}-bit images: divide by {2**bits - 1} first)" if bits else ""
        raise InputError(
            f"{name}: expected values in [0, 1], got values from {low:g} to {high:g}{hint}",
            argument=name,
        )
    if size is not None and tuple(x.shape[2:]) != tuple(size):
        raise InputError.bad(
            name, f"images of {size[0]}x{size[1]} pixels (the model's size)", given
        )
    return x


def _sizes(images: Any) -> str:
    """The distinct shapes of a list or tuple of images (3, H, W) ('(3, 64, 64), (3, 32, 32)',
    at most three), or '' when ``images`` is not one."""
    if not isinstance(images, (list, tuple)):
        return ""
    try:
        shapes = list(dict.fromkeys(np.shape(image) for image in images))
    except Exception:  # noqa: BLE001 - an element without a shape: no sizes to tell
        return ""
    if len(shapes) < 2 or any(len(shape) != 3 for shape in shapes):  # not all images
        return ""
    return ", ".join(map(str, shapes[:3])) + (", ..." if len(shapes) > 3 else "")


def check_segment_maps(
    segments: Any, images: Any, name: str = "segments", compact: bool = False
) -> Any:
    """``segments`` as a long tensor (n, H, W) of labels >= 0 matching ``images`` (n, 3, H, W).

    ``compact``: renumber each map's labels 0..K-1 in their order, so that the work (and the
    groups of a model) follows the number of regions, not the largest label; a map whose labels
    are 0..K-1 already is returned as it is.
    """
    arr = segments.detach().cpu().numpy() if isinstance(segments, torch.Tensor) else segments
    try:
        arr = np.asarray(arr)
    except Exception:  # noqa: BLE001
        raise InputError.bad(name, "an integer array of shape (n, H, W)", segments) from None
    want = (images.shape[0], *images.shape[2:])
    if arr.dtype == bool or not np.issubdtype(arr.dtype, np.integer):
        raise InputError.bad(name, f"an integer array of shape {want}", segments)
    if tuple(arr.shape) != tuple(want):
        raise InputError.bad(name, f"an integer array of shape {want} to match the images", arr)
    if arr.size and arr.min() < 0:
        raise InputError.bad(name, "segment labels >= 0", arr)
    if arr.size and not compact:  # used as given: a huge label would size the groups
        check_label_range(arr.max(), arr.shape[1] * arr.shape[2], name)
    arr = arr.astype(np.int64)
    if compact:
        arr = np.stack([_compact(m) for m in arr]) if arr.size else arr
    return torch.as_tensor(arr)


def _compact(labels: np.ndarray) -> np.ndarray:
    """One map's labels renumbered 0..K-1 in their order (the map itself when they are)."""
    renumbered = _consecutive(labels)
    return labels if np.array_equal(renumbered, labels) else renumbered.astype(np.int64)


def check_training_data(X: Any, y: Any) -> tuple[Any, np.ndarray, np.ndarray]:
    """Training images and labels: ``(images tensor, classes, label indices)``; the image sides
    must be multiples of 8 and there must be two classes at least."""
    x = check_images(X, "X")
    if x.shape[2] % 8 or x.shape[3] % 8:
        given = X if isinstance(X, torch.Tensor) else np.asarray(X)  # not its float32 copy
        raise InputError.bad("X", "images whose sides are multiples of 8", given)
    try:
        y_arr = np.asarray(y)
    except ValueError:  # ragged nested lists
        raise InputError.bad("y", f"{x.shape[0]} labels (one per image)", y) from None
    if y_arr.ndim != 1 or len(y_arr) != x.shape[0]:
        raise InputError.bad("y", f"{x.shape[0]} labels (one per image)", y)
    if _missing(y_arr).any():
        raise InputError.bad("y", "a label for every image (no None or NaN)", y)
    try:
        classes, y_idx = np.unique(y_arr, return_inverse=True)
    except TypeError:  # labels of mixed types that cannot be sorted
        raise InputError.bad("y", "labels of one type (all numbers or all strings)", y) from None
    if len(classes) < 2:
        raise InputError.bad("y", "labels of at least two classes", y)
    return x, classes, y_idx


def check_known_labels(y: Any, n: int, classes: np.ndarray, name: str = "y") -> np.ndarray:
    """``y`` as an array of ``n`` labels among ``classes`` (a model's ``classes_``): a label outside
    them would only count as wrong, and a column (n, 1) would be compared with every prediction."""
    try:
        arr = np.asarray(y)
    except ValueError:  # ragged nested lists
        raise InputError.bad(name, f"{n} labels (one per image)", y) from None
    if arr.shape != (n,):
        raise InputError.bad(name, f"{n} labels (one per image)", y)
    unknown = arr[~np.isin(arr, classes)]
    if len(unknown):
        distinct = list(dict.fromkeys(unknown.tolist()))
        shown = ", ".join(map(repr, distinct[:3])) + (", ..." if len(distinct) > 3 else "")
        raise InputError(
            f"{name}: expected labels among the model's classes ({', '.join(map(str, classes))}), "
            f"got {len(unknown)} of {n} outside them ({shown})",
            argument=name,
        )
    return arr


def is_number(value: Any) -> bool:
    """A real number, numpy scalars included, not a bool."""
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(
        value, (bool, np.bool_)
    )


def _missing(y: np.ndarray) -> np.ndarray:
    """Which labels are missing: None, a float NaN or pandas' NA (a 'string' or 'Int64' column)."""
    if np.issubdtype(y.dtype, np.floating):
        return np.isnan(y)
    if y.dtype != object:
        return np.zeros(y.shape, dtype=bool)
    return np.array(
        [v is None or (isinstance(v, float) and v != v) or type(v).__name__ == "NAType" for v in y],
        dtype=bool,
    )


def images_count(n: int) -> str:
    """``"1 image"``, ``"2 images"``: a number of images for the summaries."""
    return f"{n} image" if n == 1 else f"{n} images"
