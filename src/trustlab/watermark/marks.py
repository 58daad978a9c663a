"""Watermark marks for the generator: making them, embedding them and measuring them.

Visible marks are an RGB mark with a binary mask:

- ``logo``: scikit-image's logo (``skimage.data.logo()``; its alpha channel is all opaque, so the
  mask is its non-white pixels, grey < 230) resized to a random size and aspect ratio, or a shape
  drawn with ``skimage.draw`` (ring, star, frame, triangle) in one colour; upright.
- ``text``: a random string rendered with Pillow's built-in scalable default font
  (``ImageFont.load_default(size)``), rotated by an angle drawn uniformly in [-90, 90) degrees.
- ``pattern``: a text or shape tile repeated along one to three parallel lines (a band), rotated
  by an angle drawn uniformly in [-90, 90) degrees, so that the band's long axis (the orientation)
  varies.

Invisible marks (:func:`embed_invisible`, :func:`decode_invisible`) come from invisible-watermark
(dwtDctSvd, dwtDct, RivaGAN) and blind-watermark. :func:`blend` is WMarkGPT's blend recipe;
:func:`trimmed_box`, :func:`principal_angle` and :func:`relation_of_boxes` measure a mask;
:func:`score_of_psnr` bins an invisible mark's PSNR.

>>> import numpy as np
>>> rgb, mask = make_mark(np.random.default_rng(0), "text", 256)
>>> rgb.shape[:2] == mask.shape, mask.dtype
(True, dtype('bool'))
"""

from __future__ import annotations

import math
import string
from collections.abc import Sequence
from functools import cache
from typing import Any

import numpy as np

from trustlab._checks import as_float_array, check_in_range, check_non_negative
from trustlab._lazy import require
from trustlab.errors import InputError
from trustlab.watermark.vocabulary import MAX_OPACITY

__all__ = [
    "VISIBLE_KINDS",
    "PSNR_LEVEL_BINS",
    "blend",
    "trimmed_box",
    "principal_angle",
    "relation_of_boxes",
    "score_of_psnr",
    "PAYLOAD_BITS",
    "BLIND_PASSWORDS",
    "make_mark",
    "embed_invisible",
    "decode_invisible",
]

#: The kinds of visible marks.
VISIBLE_KINDS: tuple[str, ...] = ("logo", "text", "pattern")

_ALPHABET = string.ascii_letters + string.digits
#: Draws of a mark that is too sparse to reach the asked area (see :func:`make_mark`).
_AREA_TRIES = 6
_LOGO_SHAPES = ("ring", "star", "frame", "triangle")


@cache
def _skimage_logo() -> tuple[np.ndarray, np.ndarray]:
    data = require("skimage.data", "watermark")
    rgba = data.logo()
    rgb = np.ascontiguousarray(rgba[..., :3])
    mask = rgb.mean(axis=-1) < 230
    ys, xs = np.nonzero(mask)
    rgb = rgb[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1]
    mask = mask[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1]
    rgb.setflags(write=False)
    mask.setflags(write=False)
    return rgb, mask


def _mark_colour(rng: np.random.Generator) -> np.ndarray:
    r = rng.random()
    if r < 0.3:
        return np.array([255, 255, 255], dtype=np.uint8)
    if r < 0.55:
        return np.array([0, 0, 0], dtype=np.uint8)
    if r < 0.7:
        return np.full(3, int(rng.integers(80, 200)), dtype=np.uint8)
    return rng.integers(0, 256, size=3).astype(np.uint8)


def _shape_logo(rng: np.random.Generator, h: int, w: int) -> np.ndarray:
    draw = require("skimage.draw", "watermark")
    mask = np.zeros((h, w), dtype=bool)
    kind = str(rng.choice(_LOGO_SHAPES))
    cy, cx = (h - 1) / 2, (w - 1) / 2
    if kind == "ring":
        rr, cc = draw.ellipse(cy, cx, h / 2, w / 2, shape=(h, w))
        mask[rr, cc] = True
        rr, cc = draw.ellipse(cy, cx, h / 3.2, w / 3.2, shape=(h, w))
        mask[rr, cc] = False
    elif kind == "star":
        t = np.pi / 2 + np.arange(10) * np.pi / 5
        rad = np.where(np.arange(10) % 2 == 0, 1.0, 0.42)
        rr, cc = draw.polygon(cy - rad * np.sin(t) * h / 2, cx + rad * np.cos(t) * w / 2, (h, w))
        mask[rr, cc] = True
    elif kind == "frame":
        mask[:, :] = True
        t = max(2, min(h, w) // 6)
        mask[t:-t, t:-t] = False
    else:
        rr, cc = draw.polygon([h - 1, h - 1, 0], [0, w - 1, cx], shape=(h, w))
        mask[rr, cc] = True
    if not mask.any():
        mask[:, :] = True
    return mask


def _logo(rng: np.random.Generator, size: int) -> tuple[np.ndarray, np.ndarray]:
    from PIL import Image

    side = rng.uniform(0.2, 0.5) * size
    aspect = rng.uniform(0.6, 1.7)
    h = int(np.clip(round(side / np.sqrt(aspect)), 12, size))
    w = int(np.clip(round(side * np.sqrt(aspect)), 12, size))
    if rng.random() < 0.5:
        rgb, mask = _skimage_logo()
        rgb = np.asarray(Image.fromarray(rgb).resize((w, h), Image.BILINEAR))
        m = np.asarray(Image.fromarray(mask.astype(np.uint8) * 255).resize((w, h), Image.BILINEAR))
        mask = m >= 128
    else:
        mask = _shape_logo(rng, h, w)
        rgb = np.broadcast_to(_mark_colour(rng), (h, w, 3))
    if not mask.any():
        mask = np.ones((h, w), dtype=bool)
    return np.ascontiguousarray(rgb, dtype=np.uint8), mask


@cache
def _font(px: int):
    from PIL import ImageFont

    return ImageFont.load_default(px)


def _random_text(rng: np.random.Generator, lo: int, hi: int) -> str:
    n = int(rng.integers(lo, hi + 1))
    chars = rng.choice(list(_ALPHABET), size=n)
    text = "".join(chars)
    if rng.random() < 0.3:
        text = "\u00a9 " + text
    return text


def _render(text: str, px: int) -> np.ndarray:
    """``text`` as a bool mask tightly cropped, at font size ``px``."""
    from PIL import Image, ImageDraw

    font = _font(px)
    x0, y0, x1, y1 = font.getbbox(text)
    img = Image.new("L", (x1 - x0 + 2, y1 - y0 + 2), 0)
    ImageDraw.Draw(img).text((1 - x0, 1 - y0), text, fill=255, font=font)
    mask = np.asarray(img) >= 128
    return mask


def _rotate(mask: np.ndarray, angle: float) -> np.ndarray:
    from PIL import Image

    img = Image.fromarray(mask.astype(np.uint8) * 255)
    out = np.asarray(img.rotate(angle, resample=Image.BILINEAR, expand=True)) >= 128
    ys, xs = np.nonzero(out)
    if ys.size == 0:
        return mask
    return out[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1]


def _fit(mask: np.ndarray, size: int) -> np.ndarray | None:
    return mask if mask.shape[0] <= size and mask.shape[1] <= size and mask.any() else None


def _text(rng: np.random.Generator, size: int) -> np.ndarray:
    angle = float(rng.uniform(-90.0, 90.0))
    px = int(round(rng.uniform(0.07, 0.16) * size))
    text = _random_text(rng, 4, 12)
    while True:
        mask = _fit(_rotate(_render(text, px), angle), size)
        if mask is not None:
            return mask
        px = max(6, int(px * 0.8))
        text = text[: max(2, len(text) - 1)]


def _pattern(rng: np.random.Generator, size: int) -> np.ndarray:
    angle = float(rng.uniform(-90.0, 90.0))
    if rng.random() < 0.6:
        tile = _render(_random_text(rng, 3, 6), int(round(rng.uniform(0.05, 0.09) * size)))
    else:
        s = int(round(rng.uniform(0.05, 0.09) * size))
        tile = _shape_logo(rng, s, s)
    th, tw = tile.shape
    gap = max(2, int(round(rng.uniform(0.3, 0.8) * tw)))
    lines = int(rng.integers(1, 4))
    line_gap = max(2, int(round(rng.uniform(0.4, 1.0) * th)))
    reps = int(rng.integers(3, 8))
    while True:
        width = reps * tw + (reps - 1) * gap
        height = lines * th + (lines - 1) * line_gap
        band = np.zeros((height, width), dtype=bool)
        for j in range(lines):
            offset = (j * (tw + gap)) // 2 % (tw + gap)
            for r in range(reps):
                x = r * (tw + gap) + offset
                if x + tw <= width:
                    y = j * (th + line_gap)
                    band[y : y + th, x : x + tw] |= tile
        mask = _fit(_rotate(band, angle), size)
        if mask is not None:
            return mask
        if reps > 2:
            reps -= 1
        elif lines > 1:
            lines -= 1
        else:
            tile = tile[::2, ::2]
            th, tw = tile.shape
            gap = max(1, gap // 2)


def _rescale(rgb: np.ndarray, mask: np.ndarray, area: int, size: int):
    """Resize the mark so that its mask has about ``area`` pixels (and still fits)."""
    from PIL import Image

    h, w = mask.shape
    f = float(np.sqrt(area / max(int(mask.sum()), 1)))
    f = min(f, size / h, size / w)
    nh, nw = max(4, int(round(h * f))), max(4, int(round(w * f)))
    if (nh, nw) == (h, w):
        return rgb, mask
    m = np.asarray(Image.fromarray(mask.astype(np.uint8) * 255).resize((nw, nh), Image.BILINEAR))
    new_mask = m >= 128
    if not new_mask.any():
        return rgb, mask
    new_rgb = np.asarray(
        Image.fromarray(np.ascontiguousarray(rgb)).resize((nw, nh), Image.BILINEAR)
    )
    return np.ascontiguousarray(new_rgb, dtype=np.uint8), new_mask


def make_mark(
    rng: np.random.Generator, kind: str, size: int, *, area: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """A visible mark of ``kind`` (one of :data:`VISIBLE_KINDS`) that fits a ``size`` x ``size``
    image: its RGB pixels (uint8, h x w x 3) and binary mask (bool, h x w).

    With ``area``, the mark is resized so that its mask has about that many pixels; a mark too
    sparse to get there within the image (a long diagonal band) is drawn again, up to
    :data:`_AREA_TRIES` times, and the one closest to ``area`` is kept. Text, pattern and shape
    marks get one colour (white, black, a grey or a random colour).
    """
    best: tuple[np.ndarray, np.ndarray] | None = None
    for _ in range(_AREA_TRIES if area is not None else 1):
        if kind == "logo":
            rgb, mask = _logo(rng, size)
        else:
            mask = _text(rng, size) if kind == "text" else _pattern(rng, size)
            rgb = np.ascontiguousarray(np.broadcast_to(_mark_colour(rng), mask.shape + (3,)))
        if area is None:
            return rgb, mask
        rgb, mask = _rescale(rgb, mask, int(area), size)
        if best is None or abs(int(mask.sum()) - area) < abs(int(best[1].sum()) - area):
            best = (rgb, mask)
        if mask.sum() >= 0.85 * area:
            break
    assert best is not None
    return best


# --------------------------------------------------------------------------------------------------
# Invisible marks (invisible-watermark, blind-watermark)
# --------------------------------------------------------------------------------------------------

#: Bits embedded per invisible mark (RivaGAN takes exactly 32).
PAYLOAD_BITS = 32
#: blind-watermark's passwords (fixed, so that anyone can decode a stored payload).
BLIND_PASSWORDS = {"password_wm": 1, "password_img": 1}


def _blind_watermark() -> Any:
    """Import blind-watermark without letting it switch multiprocessing's start method (its
    ``pool`` module calls ``multiprocessing.set_start_method('fork')`` when imported)."""
    import multiprocessing
    import sys

    if "blind_watermark" not in sys.modules:
        original = multiprocessing.set_start_method
        multiprocessing.set_start_method = lambda *a, **k: None  # type: ignore[assignment]
        try:
            module = require("blind_watermark", "watermark")
        finally:
            multiprocessing.set_start_method = original  # type: ignore[assignment]
        module.bw_notes.close()
    return sys.modules["blind_watermark"]


def _imwatermark() -> Any:
    return require("imwatermark", "watermark")


def _check_invisible(kind: Any, image: Any, strength: Any, n_bits: Any, bits: str) -> np.ndarray:
    """``image`` as an (H, W, 3) uint8 array once the arguments suit ``kind``'s library (a
    strength <= 0 embedded nothing, silently; a small image raised the library's own error)."""
    from trustlab._checks import check_positive, check_positive_int

    if kind not in ("dwtDctSvd", "dwtDct", "rivaGan", "blind"):
        raise InputError.bad("kind", "'dwtDctSvd', 'dwtDct', 'rivaGan' or 'blind'", kind)
    arr = np.asarray(image)
    if arr.ndim != 3 or arr.shape[2] != 3 or arr.dtype != np.uint8:
        raise InputError.bad("image", "an (H, W, 3) uint8 RGB image", arr)
    n_bits = check_positive_int(n_bits, bits)
    if kind == "rivaGan" and n_bits != PAYLOAD_BITS:
        raise InputError.bad(bits, f"exactly {PAYLOAD_BITS} bits for rivaGan", n_bits)
    if kind != "rivaGan":
        check_positive(strength, "strength")
    h, w = arr.shape[:2]
    if kind == "blind" and ((h + 1) // 8) * ((w + 1) // 8) <= n_bits:
        raise InputError.bad(
            "image", f"room for {n_bits} bits (blind: over {n_bits} blocks of 8 x 8)", arr
        )
    if kind != "blind" and h * w < 256 * 256:
        raise InputError.bad("image", f"at least 256 x 256 = 65,536 pixels for {kind}", arr)
    if kind in ("dwtDctSvd", "dwtDct") and n_bits > (h // 8) * (w // 8):  # bits past it: noise
        raise InputError.bad(
            bits, f"at most {(h // 8) * (w // 8)} bits ({kind}: one per 8 x 8 block)", n_bits
        )
    return arr


def embed_invisible(kind: str, image: np.ndarray, strength: float, bits: np.ndarray) -> np.ndarray:
    """Embed ``bits`` into the uint8 RGB ``image`` with ``kind``'s library at ``strength``.

    ``"dwtDctSvd"`` and ``"dwtDct"``: invisible-watermark with ``scales=[0, strength, 0]`` (the
    U channel); ``"rivaGan"``: invisible-watermark's RivaGAN (ONNX, exactly 32 bits; ``strength``
    is ignored); ``"blind"``: blind-watermark with ``d1 = strength``, ``d2 = strength * 20 / 36``
    (its default ratio) and :data:`BLIND_PASSWORDS`. Returns the uint8 RGB watermarked image.
    """
    bits = np.asarray(bits)
    if bits.ndim != 1 or not np.isin(bits, (0, 1)).all():
        raise InputError.bad("bits", "a 1-D array of 0/1 values", bits)
    bgr = np.ascontiguousarray(
        _check_invisible(kind, image, strength, bits.size, "bits")[..., ::-1]
    )
    if kind in ("dwtDctSvd", "dwtDct", "rivaGan"):
        iw = _imwatermark()
        enc = iw.WatermarkEncoder()
        enc.set_watermark("bits", [int(b) for b in bits])
        if kind == "rivaGan":
            iw.WatermarkEncoder.loadModel()
            out = enc.encode(bgr, "rivaGan")
        else:
            out = enc.encode(bgr, kind, scales=[0, float(strength), 0])
    elif kind == "blind":
        bw = _blind_watermark()
        wm = bw.WaterMark(**BLIND_PASSWORDS)
        wm.bwm_core.d1, wm.bwm_core.d2 = float(strength), float(strength) * 20.0 / 36.0
        wm.read_img(img=bgr.astype(np.float32))
        wm.read_wm([bool(b) for b in bits], mode="bit")
        out = wm.embed()
    else:
        raise ValueError(f"unknown invisible kind {kind!r}")
    out = np.clip(np.rint(np.asarray(out, dtype=np.float64)), 0, 255).astype(np.uint8)
    return np.ascontiguousarray(out[..., ::-1])


def decode_invisible(
    kind: str, image: np.ndarray, strength: float, n_bits: int = PAYLOAD_BITS
) -> np.ndarray:
    """Read ``n_bits`` back from the uint8 RGB ``image`` with ``kind``'s own decoder (the
    counterpart of :func:`embed_invisible`); returns a bool array."""
    bgr = np.ascontiguousarray(_check_invisible(kind, image, strength, n_bits, "n_bits")[..., ::-1])
    if kind in ("dwtDctSvd", "dwtDct", "rivaGan"):
        iw = _imwatermark()
        dec = iw.WatermarkDecoder("bits", n_bits)
        if kind == "rivaGan":
            iw.WatermarkDecoder.loadModel()
            bits = dec.decode(bgr, "rivaGan")
        else:
            bits = dec.decode(bgr, kind, scales=[0, float(strength), 0])
    elif kind == "blind":
        bw = _blind_watermark()
        wm = bw.WaterMark(**BLIND_PASSWORDS)
        wm.bwm_core.d1, wm.bwm_core.d2 = float(strength), float(strength) * 20.0 / 36.0
        bits = wm.extract(embed_img=bgr.astype(np.float32), wm_shape=n_bits, mode="bit")
    else:
        raise ValueError(f"unknown invisible kind {kind!r}")
    return np.asarray(bits).astype(bool).ravel()


#: PSNR (dB) to score for invisible marks: ``score = clip((PSNR - 15) / 5, 0, 5)``, so PSNR >= 35
#: is invisible, [30, 35) faint, [25, 30) moderate, [20, 25) visible, < 20 obvious. (An assumption:
#: these marks spread weak noise over the whole image, where 35 dB is commonly taken as the limit
#: of perception; the SSIM is stored for other binnings.)
PSNR_LEVEL_BINS: dict[str, float] = {"offset_db": 15.0, "db_per_level": 5.0}
#: RMS grey-level difference between a visible mark and the cover under its mask.
_CONTRAST = 110.0


# --------------------------------------------------------------------------------------------------
# Geometry and the blend
# --------------------------------------------------------------------------------------------------


def _as_mask(mask: Any, name: str = "mask") -> np.ndarray:
    m = np.asarray(mask)
    if m.ndim != 2 or m.dtype != bool:
        raise InputError.bad(name, "a 2-D bool array", m)
    if not m.any():
        raise InputError.bad(name, "at least one True pixel", "an empty mask")
    return m


def trimmed_box(mask: Any, *, trim: float = 0.05) -> tuple[int, int, int, int]:
    """WMarkGPT's watermark box: the bounding box of the mask pixels left after discarding the
    fraction ``trim`` nearest to and ``trim`` farthest from the mask's centroid (by rank).

    Parameters
    ----------
    mask : bool array (H, W)
    trim : float in [0, 0.5)

    Returns
    -------
    tuple of int
        ``(x0, y0, x1, y1)``, x1/y1 exclusive.

    Examples
    --------
    >>> m = np.zeros((10, 10), bool); m[2:5, 3:8] = True
    >>> trimmed_box(m, trim=0.0)
    (3, 2, 8, 5)
    """
    m = _as_mask(mask)
    trim = check_in_range(trim, "trim", 0.0, 0.5, high_open=True)
    ys, xs = np.nonzero(m)
    d = np.hypot(ys - ys.mean(), xs - xs.mean())
    order = np.argsort(d, kind="stable")
    k = int(math.floor(trim * order.size))
    keep = order[k : order.size - k] if order.size - 2 * k > 0 else order
    return (
        int(xs[keep].min()),
        int(ys[keep].min()),
        int(xs[keep].max()) + 1,
        int(ys[keep].max()) + 1,
    )


def principal_angle(mask: Any) -> float:
    """Angle in degrees, in [0, 90], between the mask's principal axis and the horizontal, from
    ``skimage.measure.regionprops`` (NaN when the mask is isotropic and has no principal axis).
    :func:`~trustlab.watermark.vocabulary.orientation_of_mask` bins it.

    Examples
    --------
    >>> m = np.zeros((40, 40), bool); m[18:22, 5:35] = True
    >>> principal_angle(m)
    0.0
    """
    m = _as_mask(mask)
    measure = require("skimage.measure", "watermark")
    props = measure.regionprops(m.astype(np.uint8))[0]
    if props.axis_major_length <= props.axis_minor_length:
        return math.nan
    # skimage: angle between the rows axis (vertical) and the major axis, in [-pi/2, pi/2]
    return float(90.0 - abs(math.degrees(props.orientation)))


def _area(box: Sequence[float]) -> float:
    return max(0.0, box[2] - box[0]) * max(0.0, box[3] - box[1])


def relation_of_boxes(
    watermark_box: Sequence[float], object_box: Sequence[float], *, margin: float
) -> str:
    """How the watermark box relates to an object box (checked in this order): ``"inside"`` if at
    least 90 % of the watermark box lies in the object box, ``"partially overlapping"`` if their
    IoU is positive, ``"near the edge"`` if the gap between them is at most ``margin`` pixels
    (Chebyshev gap between the boxes), else ``"separate"``.

    Examples
    --------
    >>> relation_of_boxes((0, 0, 10, 10), (12, 0, 30, 10), margin=4)
    'near the edge'
    """
    wb = as_float_array(watermark_box, "watermark_box", shape=(4,)).tolist()
    ob = as_float_array(object_box, "object_box", shape=(4,)).tolist()
    margin = check_non_negative(margin, "margin")  # NaN or negative: every gap was "separate"
    if len(wb) != 4 or _area(wb) <= 0:
        raise InputError.bad("watermark_box", "(x0, y0, x1, y1) with positive area", watermark_box)
    if len(ob) != 4 or _area(ob) <= 0:
        raise InputError.bad("object_box", "(x0, y0, x1, y1) with positive area", object_box)
    inter = _area((max(wb[0], ob[0]), max(wb[1], ob[1]), min(wb[2], ob[2]), min(wb[3], ob[3])))
    if inter >= 0.9 * _area(wb):
        return "inside"
    if inter > 0:
        return "partially overlapping"
    gap = max(ob[0] - wb[2], wb[0] - ob[2], ob[1] - wb[3], wb[1] - ob[3], 0.0)
    if gap <= margin:
        return "near the edge"
    return "separate"


def blend(cover: Any, mark: Any, mask: Any, opacity: float) -> tuple[np.ndarray, float]:
    """WMarkGPT's blend: inside ``mask`` ``(1 - w) * cover + w * mark``, then one brightness
    shift of the whole image so that its mean equals the cover's, clip to [0, 255], round.

    Parameters
    ----------
    cover, mark : uint8 arrays (H, W, 3)
    mask : bool array (H, W)
    opacity : float in [0, 0.25]

    Returns
    -------
    image : uint8 array (H, W, 3)
    shift : float
        The brightness shift added to every pixel before clipping.

    Examples
    --------
    >>> c = np.full((4, 4, 3), 100, np.uint8); k = np.full((4, 4, 3), 200, np.uint8)
    >>> m = np.zeros((4, 4), bool); m[0, 0] = True
    >>> img, shift = blend(c, k, m, 0.16)
    >>> int(img[0, 0, 0]), int(img[3, 3, 0]), round(shift, 2)
    (115, 99, -1.0)
    """
    c = np.asarray(cover)
    k = np.asarray(mark)
    if c.dtype != np.uint8 or c.ndim != 3 or c.shape[2] != 3:
        raise InputError.bad("cover", "a uint8 array (H, W, 3)", c)
    if k.shape != c.shape or k.dtype != np.uint8:  # a float 0-1 or NaN mark blended as garbage
        raise InputError.bad("mark", f"a uint8 array of the cover's shape {c.shape}", k)
    m = np.asarray(mask)
    if m.shape != c.shape[:2] or m.dtype != bool:
        raise InputError.bad("mask", f"a bool array of shape {c.shape[:2]}", m)
    return _blend(c, k, m, check_in_range(opacity, "opacity", 0.0, MAX_OPACITY))


def _blend(c: np.ndarray, k: np.ndarray, m: np.ndarray, w: float) -> tuple[np.ndarray, float]:
    x = c.astype(np.float64)
    out = x.copy()
    out[m] = (1.0 - w) * x[m] + w * k[m].astype(np.float64)
    shift = float(x.mean() - out.mean())
    out += shift
    np.clip(out, 0.0, 255.0, out=out)
    return np.rint(out).astype(np.uint8), shift


def _contrast(rgb: np.ndarray, cover: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Shift each channel of the mark by a constant so that the RMS difference between mark and
    cover under the mask is :data:`_CONTRAST` grey levels (where clipping allows), keeping the
    mark's own pattern; without it the PSNR would depend on the mark's colour as much as on w."""
    out = rgb.astype(np.float64).copy()
    for ch in range(3):
        d = out[..., ch][mask] - cover[..., ch][mask].astype(np.float64)
        mu, var = float(d.mean()), float(d.var())
        if var >= _CONTRAST**2:
            t = -mu
        else:
            r = math.sqrt(_CONTRAST**2 - var)
            level = float(out[..., ch][mask].mean())
            up, down = level - mu + r, level - mu - r  # the two mark means that reach the target
            t = (up if abs(up - 127.5) <= abs(down - 127.5) else down) - level
        out[..., ch] += t
    return np.clip(np.rint(out), 0, 255).astype(np.uint8)


def score_of_psnr(psnr: float) -> float:
    """The visibility score of an invisible mark from its full-reference PSNR in dB:
    ``clip((psnr - 15) / 5, 0, 5)`` (:data:`PSNR_LEVEL_BINS`).

    >>> score_of_psnr(31.0), score_of_psnr(float("inf"))
    (3.2, 5.0)
    """
    p = check_in_range(psnr, "psnr", -math.inf, math.inf)  # inf: an identical image
    s = (p - PSNR_LEVEL_BINS["offset_db"]) / PSNR_LEVEL_BINS["db_per_level"]
    return float(min(max(s, 0.0), 5.0))


def _psnr(cover: np.ndarray, image: np.ndarray) -> float:
    metrics = require("skimage.metrics", "watermark")
    if np.array_equal(cover, image):
        return math.inf
    return float(metrics.peak_signal_noise_ratio(cover, image, data_range=255))


def _ssim(cover: np.ndarray, image: np.ndarray) -> float:
    metrics = require("skimage.metrics", "watermark")
    if np.array_equal(cover, image):
        return 1.0
    return float(metrics.structural_similarity(cover, image, channel_axis=2, data_range=255))
