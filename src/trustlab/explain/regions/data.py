"""BAM-lite images for region-sparse classification (P2P).

BAM-lite is a small, offline version of BAM (objects pasted on scenes): 64x64 crops of ten photos
and textures that ship with scikit-image and scikit-learn (one scene class per photo), with a
coloured digit (scikit-learn ``load_digits``) or a random shape (``skimage.draw.random_shapes``)
pasted at a random place. The label is the object's class (``label="object"``) or the scene's
(``label="scene"``, the object is a distractor); the ground-truth mask is the object's pixels.
:func:`~trustlab.explain.regions.segments.superpixels` computes (and caches) the region maps the
classifier selects from.

>>> ds = bam_lite(20, random_state=0)
>>> ds.images.shape, ds.n_classes
((20, 3, 64, 64), 10)

Needs scikit-image (and scikit-learn), imported when first used.
"""

from __future__ import annotations

import colorsys
import io
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cache
from importlib import resources
from typing import Any

import numpy as np

from trustlab._checks import check_choice, check_positive, check_positive_int, check_random_state
from trustlab._lazy import require
from trustlab._results import Result, internal_field
from trustlab._splits import split_indices
from trustlab.errors import InputError
from trustlab.explain.regions.inputs import images_count

__all__ = [
    "ImageDataset",
    "bam_lite",
    "bam_lite_sources",
    "LICENCES",
    "SCENES",
    "DIGIT_CLASSES",
    "SHAPE_CLASSES",
    "scene_photo",
    "digit_images",
]

#: The ten scene classes of :func:`bam_lite`, in label order: (package, file in its data folder).
#: scikit-image's ``camera`` is left out: it would be a fourth grey image next to the three grey
#: textures, and most of its 64x64 crops are flat sky or blurred background, which say little
#: about the scene.
SCENES: dict[str, tuple[str, str]] = {
    "brick": ("skimage.data", "brick.png"),
    "grass": ("skimage.data", "grass.png"),
    "gravel": ("skimage.data", "gravel.png"),
    "coffee": ("skimage.data", "coffee.png"),
    "astronaut": ("skimage.data", "astronaut.png"),
    "rocket": ("skimage.data", "rocket.jpg"),
    "chelsea": ("skimage.data", "chelsea.png"),
    "hubble_deep_field": ("skimage.data", "hubble_deep_field.jpg"),
    "china": ("sklearn.datasets.images", "china.jpg"),
    "flower": ("sklearn.datasets.images", "flower.jpg"),
}
#: Object classes for ``object_source="digits"`` and ``"shapes"``.
DIGIT_CLASSES = tuple(str(d) for d in range(10))
SHAPE_CLASSES = ("rectangle", "circle", "triangle", "ellipse")

#: Origin and licence of every scene image, as the packages that ship them state it: scikit-image
#: in each loader's docstring (skimage/data/_fetchers.py, 0.26; its data README.txt says nothing
#: about licences), scikit-learn in sklearn/datasets/images/README.txt (1.9).
LICENCES: dict[str, dict[str, str]] = {
    "brick": {
        "origin": "CC0Textures, Bricks25 (perspective-transformed, rotated, cropped, scaled)",
        "licence": "CC0 1.0 (public domain dedication)",
        "source": "scikit-image 0.26, skimage.data.brick docstring",
    },
    "grass": {
        "origin": "DeviantArt, linolafett 'Grass 01' (cropped, converted to grey)",
        "licence": "CC0 1.0 (public domain dedication)",
        "source": "scikit-image 0.26, skimage.data.grass docstring",
    },
    "gravel": {
        "origin": "CC0Textures, Gravel04 (rescaled, cropped, converted to grey)",
        "licence": "CC0 1.0 (public domain dedication)",
        "source": "scikit-image 0.26, skimage.data.gravel docstring",
    },
    "coffee": {
        "origin": "photograph by Rachel Michetti, courtesy of Pikolo Espresso Bar",
        "licence": "CC0 1.0 ('No copyright restrictions')",
        "source": "scikit-image 0.26, skimage.data.coffee docstring",
    },
    "astronaut": {
        "origin": "NASA Great Images database: astronaut Eileen Collins",
        "licence": "public domain ('No known copyright restrictions')",
        "source": "scikit-image 0.26, skimage.data.astronaut docstring",
    },
    "rocket": {
        "origin": "SpaceX Photos (Flickr): DSCOVR launch on Falcon 9",
        "licence": "public domain (released by SpaceX)",
        "source": "scikit-image 0.26, skimage.data.rocket docstring",
    },
    "chelsea": {
        "origin": "photograph of Chelsea the cat by Stefan van der Walt",
        "licence": "CC0 1.0 ('No copyright restrictions')",
        "source": "scikit-image 0.26, skimage.data.chelsea docstring",
    },
    "hubble_deep_field": {
        "origin": "HubbleSite, NASA: Hubble eXtreme Deep Field (2012 release 37)",
        "licence": "public domain (NASA media guidelines)",
        "source": "scikit-image 0.26, skimage.data.hubble_deep_field docstring",
    },
    "china": {
        "origin": "Flickr, danielbuechele, photo 6061409035; retrieved 2011-08-21 by Robert Layton",
        "licence": "CC BY 2.0 (attribution: 'Some rights reserved by danielbuechele')",
        "source": "scikit-learn 1.9, sklearn/datasets/images/README.txt",
    },
    "flower": {
        "origin": "Flickr, vultilion, photo 6056698931; retrieved 2011-08-21 by Robert Layton",
        "licence": (
            "CC BY 2.0 (README attribution line says 'danielbuechele' while the link is "
            "vultilion's; which is right: unverified)"
        ),
        "source": "scikit-learn 1.9, sklearn/datasets/images/README.txt",
    },
}

_MIN_SIZE = 24
_MIN_OBJECT = 8


def bam_lite_sources() -> dict[str, dict[str, str]]:
    """Origin, licence note and where it is stated, per scene image of :func:`bam_lite`.

    Returns
    -------
    dict
        scene name -> ``{"origin", "licence", "source", "package", "file"}`` (a copy).

    Examples
    --------
    >>> bam_lite_sources()["astronaut"]["licence"]
    "public domain ('No known copyright restrictions')"
    """
    return {
        name: {**LICENCES[name], "package": SCENES[name][0], "file": SCENES[name][1]}
        for name in SCENES
    }


# --------------------------------------------------------------------------------------------------
# The dataset container
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ImageDataset(Result):
    """Labelled images with ground-truth masks (channels first, float32 in [0, 1]).

    Attributes
    ----------
    name : str
        What generated it (e.g. ``"bam_lite/object/digits"``).
    class_names : tuple of str
        Names of the labels ``0 .. n_classes - 1``.
    images : ndarray of shape (n, 3, H, W), float32
    labels : ndarray of shape (n,), int64
    masks : ndarray of shape (n, H, W), bool
        Ground-truth pixels (the pasted object).
    scenes : ndarray of shape (n, 3, H, W) or None
        The same images without the object (when asked for with ``keep_scenes=True``).
    info : dict
        Per-image facts (``scene``, ``object`` class indices), arrays kept out of ``to_dict()``.

    Examples
    --------
    >>> ds = bam_lite(30, label="scene", random_state=1)
    >>> train, test = ds.split(0.2, random_state=0)
    >>> len(train), len(test)
    (20, 10)
    """

    name: str
    class_names: tuple[str, ...]
    images: np.ndarray = internal_field()
    labels: np.ndarray = internal_field()
    masks: np.ndarray = internal_field()
    scenes: np.ndarray | None = internal_field(default=None)
    info: dict = internal_field(default_factory=dict)
    _dict_extras = ("n_images", "n_classes", "image_size", "class_counts", "mean_object_fraction")

    def __len__(self) -> int:
        return int(self.images.shape[0])

    @property
    def n_images(self) -> int:
        """The number of images."""
        return len(self)

    @property
    def n_classes(self) -> int:
        """The number of classes."""
        return len(self.class_names)

    @property
    def image_size(self) -> tuple[int, int]:
        """(H, W)."""
        return int(self.images.shape[2]), int(self.images.shape[3])

    @property
    def class_counts(self) -> dict[str, int]:
        """Images per class name."""
        counts = np.bincount(self.labels, minlength=self.n_classes)
        return {name: int(c) for name, c in zip(self.class_names, counts, strict=True)}

    @property
    def object_fractions(self) -> np.ndarray:
        """The ground-truth (object) area fraction of each image."""
        return self.masks.reshape(len(self), -1).mean(axis=1)

    @property
    def mean_object_fraction(self) -> float:
        """Mean ground-truth area fraction."""
        return float(self.object_fractions.mean()) if len(self) else 0.0

    def summary(self) -> str:
        counts = self.class_counts.values()
        return (
            f"ImageDataset {self.name}: {images_count(self.n_images)} {self.image_size[0]}x"
            f"{self.image_size[1]}, {self.n_classes} classes ({min(counts, default=0)}-"
            f"{max(counts, default=0)} per class), mean object area "
            f"{self.mean_object_fraction:.1%}"
        )

    def subset(self, indices: Sequence[int] | np.ndarray) -> ImageDataset:
        """The images at ``indices`` (in that order) as a new dataset."""
        idx = np.asarray(indices)
        if idx.dtype == bool or (idx.size and not np.issubdtype(idx.dtype, np.integer)):
            raise InputError.bad("indices", "a sequence of integer positions", indices)
        idx = idx.ravel().astype(np.int64)
        if idx.size and (idx.min() < -len(self) or idx.max() >= len(self)):
            raise InputError.bad("indices", f"positions in [-{len(self)}, {len(self)})", indices)
        return replace(
            self,
            images=self.images[idx],
            labels=self.labels[idx],
            masks=self.masks[idx],
            scenes=None if self.scenes is None else self.scenes[idx],
            info={k: np.asarray(v)[idx] for k, v in self.info.items()},
        )

    def split(
        self, test_size: float = 0.25, *, stratify: bool = True, random_state: Any = None
    ) -> tuple[ImageDataset, ImageDataset]:
        """Split into (train, test), stratified by label unless ``stratify=False``.

        Parameters
        ----------
        test_size : float in (0, 1)
            Fraction of images (of each class, when stratified) that go to the test part.
        stratify : bool
        random_state : None, int or numpy Generator

        Returns
        -------
        (ImageDataset, ImageDataset)

        Examples
        --------
        >>> train, test = bam_lite(100, random_state=0).split(0.2, random_state=0)
        >>> sorted(set(test.class_counts.values()))
        [2]
        """
        train, test = split_indices(
            self.labels, self.n_classes, test_size, stratify=stratify,
            random_state=random_state, items="images",
        )  # fmt: skip
        return self.subset(train), self.subset(test)


# --------------------------------------------------------------------------------------------------
# BAM-lite
# --------------------------------------------------------------------------------------------------


def _skimage(module: str) -> Any:
    return require(f"skimage.{module}", "image")


@cache
def scene_photo(name: str) -> np.ndarray:
    """The bundled image ``name`` (a key of :data:`SCENES`) as read-only uint8 RGB (H, W, 3),
    read from its package's files (cached)."""
    if name not in SCENES:
        raise InputError.bad("name", f"one of {', '.join(SCENES)}", name)
    package, filename = SCENES[name]
    data = resources.files(package).joinpath(filename).read_bytes()
    from PIL import Image  # a dependency of scikit-image and of scikit-learn's sample images

    with Image.open(io.BytesIO(data)) as img:
        arr = np.asarray(img.convert("RGB"), dtype=np.uint8)
    arr.setflags(write=False)
    return arr


@cache
def _scene_original(name: str) -> np.ndarray:
    """The bundled scene image as float32 RGB (H, W, 3) in [0, 1]."""
    arr = scene_photo(name).astype(np.float32) / 255.0
    arr.setflags(write=False)
    return arr


@cache
def _scene_scaled(name: str, short_side: int) -> np.ndarray:
    """The scene resized (anti-aliased) so that its shorter side is ``short_side`` pixels."""
    img = _scene_original(name)
    h, w = img.shape[:2]
    scale = short_side / min(h, w)
    shape = (max(short_side, round(h * scale)), max(short_side, round(w * scale)))
    out = _skimage("transform").resize(
        img, shape, order=1, anti_aliasing=scale < 1, preserve_range=True
    )
    out = np.clip(out, 0.0, 1.0).astype(np.float32)
    out.setflags(write=False)
    return out


@cache
def digit_images() -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn's 8x8 digits scaled to [0, 1] and their labels (cached)."""
    from sklearn.datasets import load_digits

    bunch = load_digits()
    return bunch.images / 16.0, bunch.target.astype(np.int64)


def _digit_mask(rng: np.random.Generator, digit: int, side: int) -> np.ndarray:
    images, target = digit_images()
    pick = rng.choice(np.flatnonzero(target == digit))
    up = _skimage("transform").resize(images[pick], (side, side), order=1, anti_aliasing=False)
    mask = up > 0.4
    if not mask.any():  # cannot happen with load_digits, but never paste nothing
        mask = up >= up.max()
    return mask


def _shape_mask(rng: np.random.Generator, shape: str, side: int) -> np.ndarray:
    draw = _skimage("draw")
    for _ in range(20):
        img, _labels = draw.random_shapes(
            (side, side),
            max_shapes=1,
            min_shapes=1,
            min_size=max(side // 2, 4),
            max_size=side,
            shape=shape,
            channel_axis=None,
            intensity_range=(0, 0),
            rng=int(rng.integers(2**31 - 1)),
        )
        mask = img < 255
        if mask.sum() >= side * side // 12:  # skip slivers (its triangles are small)
            return mask
    return mask


def _saturated_colour(rng: np.random.Generator) -> np.ndarray:
    hue = rng.random()
    saturation = rng.uniform(0.8, 1.0)
    value = rng.uniform(0.8, 1.0)
    return np.array(colorsys.hsv_to_rgb(hue, saturation, value), dtype=np.float32)


def _balanced(rng: np.random.Generator, n: int, k: int) -> np.ndarray:
    """``n`` labels in ``0..k-1``, counts differing by at most one, in random order."""
    return rng.permutation(np.arange(n) % k).astype(np.int64)


def bam_lite(
    n_images: int,
    *,
    label: str = "object",
    size: int = 64,
    object_source: str = "digits",
    object_size: int | None = None,
    scene_scale: float = 2.0,
    keep_scenes: bool = False,
    random_state: Any = None,
) -> ImageDataset:
    """A BAM-like set: one object pasted on a scene crop; the label is the object's or the scene's.

    Each image is a random ``size x size`` crop of one of the ten :data:`SCENES` (each resized so
    that its shorter side is ``scene_scale * size``; grey textures become RGB), with one object
    pasted at a random position in one random saturated colour: a scikit-learn digit (8x8,
    upsampled bilinearly to ``object_size`` and thresholded) or a ``skimage.draw.random_shapes``
    shape. Both factors are balanced and drawn independently of each other.

    Parameters
    ----------
    n_images : int >= 1
    label : {"object", "scene"}
        ``"object"``: the object's class (10 digits, or 4 shapes); ``"scene"``: the scene's class
        (10 scenes; the object is a distractor).
    size : int >= 24
        Image side in pixels.
    object_size : int, optional
        Object side in pixels, between 8 and ``size``; default ``round(3 * size / 8)`` (24 at 64).
    object_source : {"digits", "shapes"}
    scene_scale : float >= 1
        Shorter side of the resized scene, in multiples of ``size`` (more: less context per crop).
    keep_scenes : bool
        Also return the images without the object (``ImageDataset.scenes``).
    random_state : None, int or numpy Generator

    Returns
    -------
    ImageDataset
        ``images`` (n, 3, size, size) float32 in [0, 1], ``labels`` (n,), ``masks`` (n, size, size)
        bool = object pixels; ``info`` holds the ``scene`` and ``object`` class of every image.

    Examples
    --------
    >>> ds = bam_lite(40, label="scene", object_source="shapes", random_state=0)
    >>> ds.class_names[:3], ds.masks.dtype
    (('brick', 'grass', 'gravel'), dtype('bool'))
    """
    n_images = check_positive_int(n_images, "n_images")
    check_choice(label, "label", ("object", "scene"))
    check_choice(object_source, "object_source", ("digits", "shapes"))
    size = check_positive_int(size, "size")
    if size < _MIN_SIZE:
        raise InputError.bad(
            "size", f"an image side >= {_MIN_SIZE} pixels (room for an object)", size
        )
    if object_size is None:
        object_size = round(3 * size / 8)
    elif (
        isinstance(object_size, bool)
        or not isinstance(object_size, (int, np.integer))
        or not _MIN_OBJECT <= object_size <= size
    ):
        raise InputError.bad(
            "object_size", f"an integer in [{_MIN_OBJECT}, size={size}]", object_size
        )
    object_size = int(object_size)
    scene_scale = check_positive(scene_scale, "scene_scale")
    if scene_scale < 1.0:
        raise InputError.bad("scene_scale", "a number >= 1", scene_scale)
    if not isinstance(keep_scenes, bool):
        raise InputError.bad("keep_scenes", "True or False", keep_scenes)
    rng = check_random_state(random_state)

    scene_names = tuple(SCENES)
    object_names = DIGIT_CLASSES if object_source == "digits" else SHAPE_CLASSES
    if label == "object":
        objects = _balanced(rng, n_images, len(object_names))
        scenes = _balanced(rng, n_images, len(scene_names))
    else:
        scenes = _balanced(rng, n_images, len(scene_names))
        objects = _balanced(rng, n_images, len(object_names))
    short_side = max(size, round(scene_scale * size))

    images = np.empty((n_images, size, size, 3), dtype=np.float32)
    masks = np.zeros((n_images, size, size), dtype=bool)
    backgrounds = np.empty_like(images) if keep_scenes else None
    for i in range(n_images):
        scene = _scene_scaled(scene_names[scenes[i]], short_side)
        top = rng.integers(scene.shape[0] - size + 1)
        left = rng.integers(scene.shape[1] - size + 1)
        images[i] = scene[top : top + size, left : left + size]
        if backgrounds is not None:
            backgrounds[i] = images[i]
        if object_source == "digits":
            obj = _digit_mask(rng, int(objects[i]), object_size)
        else:
            obj = _shape_mask(rng, SHAPE_CLASSES[objects[i]], object_size)
        y = rng.integers(size - object_size + 1)
        x = rng.integers(size - object_size + 1)
        masks[i, y : y + object_size, x : x + object_size] = obj
        images[i][masks[i]] = _saturated_colour(rng)

    def chw(a: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(a.transpose(0, 3, 1, 2))

    return ImageDataset(
        name=f"bam_lite/{label}/{object_source}",
        class_names=object_names if label == "object" else scene_names,
        images=chw(images),
        labels=objects if label == "object" else scenes,
        masks=masks,
        scenes=None if backgrounds is None else chw(backgrounds),
        info={"scene": scenes, "object": objects},
    )
