"""Cover images for the watermark generator: crops of the photos and textures that ship with
scikit-image and scikit-learn, and composed scenes with known objects (name and box).

The bundled images and their licences are those of BAM-lite
(:data:`trustlab.explain.regions.LICENCES`). A *photo* cover is a random crop of a randomly scaled,
randomly mirrored photo and has no annotated objects; a *scene* cover pastes one to three coloured
objects (a scikit-learn digit or a ``skimage.draw`` shape) on a photo or a tinted texture, with
their names, boxes and pixel masks.

>>> import numpy as np
>>> cover = make_cover(np.random.default_rng(0), 256, scene=True)
>>> cover.image.shape, cover.image.dtype, len(cover.objects) >= 1
((256, 256, 3), dtype('uint8'), True)
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np

from trustlab._lazy import require

__all__ = ["PHOTOS", "TEXTURES", "OBJECT_SHAPES", "Cover", "SceneObject", "make_cover"]

#: Colour photos used as covers (names of :data:`trustlab.explain.regions.SCENES`).
PHOTOS: tuple[str, ...] = (
    "astronaut",
    "coffee",
    "chelsea",
    "rocket",
    "hubble_deep_field",
    "china",
    "flower",
)
#: Grey textures used (tinted) as backgrounds of composed scenes.
TEXTURES: tuple[str, ...] = ("brick", "grass", "gravel")
#: Shapes drawn as objects of composed scenes (besides the digits ``"digit 0"`` .. ``"digit 9"``).
OBJECT_SHAPES: tuple[str, ...] = ("rectangle", "circle", "triangle", "ellipse")


@dataclass(frozen=True)
class SceneObject:
    """A known object of a composed cover: its name, box ``(x0, y0, x1, y1)`` (x1/y1 exclusive)
    and pixel mask (bool, the cover's size)."""

    name: str
    box: tuple[int, int, int, int]
    mask: np.ndarray


@dataclass(frozen=True)
class Cover:
    """A cover image (uint8 RGB), where it came from, and its known objects (possibly none)."""

    image: np.ndarray
    source: str
    objects: tuple[SceneObject, ...]
    objects_known: bool


def _original(name: str) -> np.ndarray:
    """The bundled image as read-only uint8 RGB (the BAM-lite scenes' loader, cached there)."""
    from trustlab.explain.regions import scene_photo

    return scene_photo(name)


@cache
def _scaled(name: str, short_side: int) -> np.ndarray:
    """The image resized (bilinear, Pillow) so that its shorter side is ``short_side`` pixels."""
    from PIL import Image

    img = _original(name)
    h, w = img.shape[:2]
    scale = short_side / min(h, w)
    shape = (max(short_side, round(w * scale)), max(short_side, round(h * scale)))
    out = np.asarray(Image.fromarray(img).resize(shape, Image.BILINEAR), dtype=np.uint8)
    out.setflags(write=False)
    return out


def _crop(rng: np.random.Generator, name: str, size: int) -> np.ndarray:
    short = int(round(size * float(rng.choice((1.0, 1.25, 1.6)))))
    img = _scaled(name, short)
    h, w = img.shape[:2]
    y = int(rng.integers(0, h - size + 1))
    x = int(rng.integers(0, w - size + 1))
    out = img[y : y + size, x : x + size]
    if rng.random() < 0.5:
        out = out[:, ::-1]
    return np.ascontiguousarray(out)


def _object_mask(rng: np.random.Generator, kind: str, h: int, w: int) -> np.ndarray:
    draw = require("skimage.draw", "watermark")
    mask = np.zeros((h, w), dtype=bool)
    if kind.startswith("digit"):
        from PIL import Image

        from trustlab.explain.regions import digit_images

        images, target = digit_images()
        pick = int(rng.choice(np.flatnonzero(target == int(kind.split()[-1]))))
        up = np.asarray(
            Image.fromarray((images[pick] * 255).astype(np.uint8)).resize((w, h), Image.BILINEAR)
        )
        mask = up > 100
    elif kind == "rectangle":
        mask[:, :] = True
    elif kind == "circle":
        r = min(h, w) / 2
        rr, cc = draw.disk((h / 2 - 0.5, w / 2 - 0.5), r, shape=(h, w))
        mask[rr, cc] = True
    elif kind == "ellipse":
        rr, cc = draw.ellipse(h / 2 - 0.5, w / 2 - 0.5, h / 2, w / 2, shape=(h, w))
        mask[rr, cc] = True
    else:  # triangle
        rr, cc = draw.polygon([h - 1, h - 1, 0], [0, w - 1, (w - 1) / 2], shape=(h, w))
        mask[rr, cc] = True
    if not mask.any():
        mask[:, :] = True
    return mask


def _colour(rng: np.random.Generator) -> np.ndarray:
    import colorsys

    rgb = colorsys.hsv_to_rgb(rng.random(), rng.uniform(0.7, 1.0), rng.uniform(0.6, 1.0))
    return np.array(rgb, dtype=np.float64) * 255.0


def _box_of(mask: np.ndarray) -> tuple[int, int, int, int]:
    ys, xs = np.nonzero(mask)
    return int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1


def make_cover(rng: np.random.Generator, size: int, *, scene: bool) -> Cover:
    """One ``size`` x ``size`` cover drawn with ``rng``: a photo crop, or (``scene=True``) a
    composed scene with one to three objects on a photo crop or a tinted texture."""
    if not scene:
        name = str(rng.choice(PHOTOS))
        return Cover(_crop(rng, name, size), name, (), False)
    if rng.random() < 0.5:
        name = str(rng.choice(TEXTURES))
        grey = _crop(rng, name, size).astype(np.float64)
        tint = 0.6 + 0.4 * rng.random(3)
        base = grey * tint
    else:
        name = str(rng.choice(PHOTOS))
        base = _crop(rng, name, size).astype(np.float64)
    objects: list[SceneObject] = []
    k = int(rng.integers(1, 4))
    for _ in range(k):
        kind = (
            f"digit {int(rng.integers(10))}"
            if rng.random() < 0.4
            else str(rng.choice(OBJECT_SHAPES))
        )
        for _attempt in range(15):
            h = int(rng.integers(size // 6, size // 2.5))
            w = int(np.clip(h * rng.uniform(0.6, 1.6), size // 8, size // 2))
            y = int(rng.integers(0, size - h + 1))
            x = int(rng.integers(0, size - w + 1))
            if all(
                x + w <= o.box[0] or o.box[2] <= x or y + h <= o.box[1] or o.box[3] <= y
                for o in objects
            ):
                break
        else:
            continue
        local = _object_mask(rng, kind, h, w)
        full = np.zeros((size, size), dtype=bool)
        full[y : y + h, x : x + w] = local
        shade = 0.8 + 0.2 * base[full].mean(axis=-1, keepdims=True) / 255.0
        base[full] = _colour(rng) * shade
        objects.append(SceneObject(kind, _box_of(full), full))
    image = np.clip(np.rint(base), 0, 255).astype(np.uint8)
    return Cover(image, f"scene/{name}", tuple(objects), True)
