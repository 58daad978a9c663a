"""WMarkGPT's vocabulary: visibility scores and levels, the 3x3 location cells, orientations,
relations to objects and content types, and :class:`WatermarkFacts`, the structured block that the
generator stores, the predictor estimates and the describer puts into words.

Scores and levels (Tan et al., ICML 2025): a score ``s`` in [0, 5]; ``[4, 5]`` is *invisible*,
``[3, 4)`` *faint*, ``[2, 3)`` *moderate*, ``[1, 2)`` *visible*, ``[0, 1)`` *obvious*. A logo blended
at opacity ``w`` scores ``s = 5 - 20 w`` (``w`` in [0, 0.25]).

>>> level_of_score(5 - 20 * 0.07)
'faint'
>>> score_of_opacity(0.25), level_of_score(0.0)
(0.0, 'obvious')
>>> cell_of_point(10, 200, width=256, height=256)
'Bottom-left'
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from trustlab._checks import as_float_array, check_positive
from trustlab._results import Result
from trustlab.errors import InputError

__all__ = [
    "LEVELS",
    "LEVEL_SCORES",
    "CELLS",
    "ORIENTATIONS",
    "RELATIONS",
    "CONTENT_TYPES",
    "MAX_OPACITY",
    "level_of_score",
    "level_index",
    "score_of_opacity",
    "score_of_level_probabilities",
    "cell_of_point",
    "cell_of_box",
    "orientation_of_mask",
    "ISOTROPIC_RATIO",
    "WatermarkFacts",
    "ObjectRelation",
]

#: The five visibility levels, from the highest score to the lowest (WMarkGPT's readout order).
LEVELS: tuple[str, ...] = ("invisible", "faint", "moderate", "visible", "obvious")
#: The score each level word stands for in the Q-Align-style readout (sum of softmax x score).
LEVEL_SCORES: tuple[float, ...] = (5.0, 4.0, 3.0, 2.0, 1.0)
#: WMarkGPT's nine position labels (WQA-Position), row by row from the top left.
CELLS: tuple[str, ...] = (
    "Top-left",
    "Middle-top",
    "Top-right",
    "Middle-left",
    "Center",
    "Middle-right",
    "Bottom-left",
    "Middle-bottom",
    "Bottom-right",
)
#: Orientation bins of the watermark's principal axis.
ORIENTATIONS: tuple[str, ...] = ("horizontal", "vertical", "diagonal")
#: How the watermark box relates to an object box (checked in this order).
RELATIONS: tuple[str, ...] = ("inside", "partially overlapping", "near the edge", "separate")
#: What the watermark is made of.
CONTENT_TYPES: tuple[str, ...] = ("logo", "text", "pattern", "invisible")
#: Minor/major axis length ratio from which a mask counts as isotropic (no orientation).
ISOTROPIC_RATIO = 0.85
#: The largest opacity of WMarkGPT's blend recipe (w ~ U[0, 0.25]).
MAX_OPACITY = 0.25


_NOT_NUMBERS = (str, bytes, bool, np.bool_)


def _finite(value: Any, name: str) -> float:
    # float() read the string "3.5" as a score (stored as a string in WatermarkFacts, whose
    # summary then raised a raw ValueError) and True as the score 1
    if isinstance(value, _NOT_NUMBERS):
        raise InputError.bad(name, "a number", value)
    try:
        out = float(value)
    except (TypeError, ValueError):
        raise InputError.bad(name, "a number", value) from None
    if not math.isfinite(out):
        raise InputError.bad(name, "a finite number", value)
    return out


def level_of_score(score: float) -> str:
    """The visibility level of a score in [0, 5] (scores outside are clipped onto the range)."""
    s = min(max(_finite(score, "score"), 0.0), 5.0)
    if s >= 4.0:
        return "invisible"
    return LEVELS[4 - int(math.floor(s))]


def level_index(level: str) -> int:
    """Position of ``level`` in :data:`LEVELS` (0 = invisible ... 4 = obvious)."""
    if level not in LEVELS:
        raise InputError.bad("level", f"one of {', '.join(LEVELS)}", level)
    return LEVELS.index(level)


def score_of_opacity(opacity: float) -> float:
    """WMarkGPT's score of a logo blended at ``opacity``: ``5 - 20 w``, for ``w`` in [0, 0.25]."""
    w = _finite(opacity, "opacity")
    if not 0.0 <= w <= MAX_OPACITY:
        raise InputError.bad("opacity", f"a number in [0, {MAX_OPACITY}]", opacity)
    return 5.0 - 20.0 * w


def score_of_level_probabilities(probabilities: Any) -> np.ndarray:
    """Expected score ``sum_k p_k * [5, 4, 3, 2, 1]_k`` of level probabilities (rows sum to 1).

    >>> score_of_level_probabilities([[1, 0, 0, 0, 0], [0, 0, 0.5, 0.5, 0]]).tolist()
    [5.0, 2.5]
    """
    try:  # strings or ragged rows raised numpy's ValueError, naming no argument
        p = np.asarray(probabilities, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError.bad(
            "probabilities", "an array of shape (..., 5) of numbers", probabilities
        ) from None
    if p.ndim not in (1, 2) or p.shape[-1] != len(LEVELS):
        raise InputError.bad("probabilities", "an array of shape (..., 5)", p.shape)
    if not np.all(np.isfinite(p)) or np.any(p < 0) or not np.allclose(p.sum(-1), 1.0, atol=1e-6):
        raise InputError.bad("probabilities", "non-negative rows that sum to 1", "other values")
    return p @ np.asarray(LEVEL_SCORES)


def cell_of_point(x: float, y: float, *, width: int, height: int) -> str:
    """The 3x3 cell (one of :data:`CELLS`) that the point ``(x, y)`` (pixels) falls in; the point
    lies in the image, ``0 <= x <= width`` and ``0 <= y <= height`` (the far edges count as the
    last cells)."""
    width, height = check_positive(width, "width"), check_positive(height, "height")
    x, y = _finite(x, "x"), _finite(y, "y")
    # a point off the image was read as the nearest border cell ((-5, -5) was "Top-left")
    for name, v, side in (("x", x, width), ("y", y, height)):
        if not 0.0 <= v <= side:
            raise InputError.bad(name, f"a position in the image, in [0, {side:g}]", v)
    col = min(int(3 * x / width), 2)
    row = min(int(3 * y / height), 2)
    return CELLS[3 * row + col]


def cell_of_box(box: Any, *, width: int, height: int) -> str:
    """The 3x3 cell of the centre of ``box = (x0, y0, x1, y1)`` (pixels, x1/y1 exclusive)."""
    x0, y0, x1, y1 = as_float_array(box, "box", shape=(4,)).tolist()
    # the same str/bool refusal as _finite: ("1", "1", "2", "2") and (True,) * 4 were read as boxes
    if any(isinstance(v, _NOT_NUMBERS) for v in np.asarray(box, dtype=object).ravel()):
        raise InputError.bad("box", "four numbers (x0, y0, x1, y1)", box)
    if x1 < x0 or y1 < y0:  # (10, 10, 5, 5) was read by its centre, as (5, 5, 10, 10)
        raise InputError.bad("box", "(x0, y0, x1, y1) with x0 <= x1 and y0 <= y1", box)
    return cell_of_point((x0 + x1) / 2, (y0 + y1) / 2, width=width, height=height)


def orientation_of_mask(mask: Any, *, cell_size: tuple[float, float] = (1.0, 1.0)) -> str:
    """Orientation bin of a mask's principal axis (``skimage.measure.regionprops``).

    ``cell_size``: the (height, width) in image pixels of one mask cell, for a mask on a grid that
    is not the image's own pixels (a heatmap of a non-square image: the axis is read in the
    image's frame, not the grid's).

    The angle ``a`` between the major axis and the horizontal, in [0, 90] degrees, is binned:
    ``a < 22.5`` horizontal, ``a > 67.5`` vertical, else diagonal. A nearly isotropic mask (minor
    to major axis length ratio >= 0.85, e.g. a round or square logo) has no principal axis and
    counts as horizontal (upright, as it was pasted); so does an empty mask. ``mask`` is bool,
    integers (nonzero cells are the mask) or floats of 0 and 1 only; a probability map is refused
    (threshold it first).

    >>> m = np.zeros((20, 20), bool); m[9:11, 2:18] = True
    >>> orientation_of_mask(m), orientation_of_mask(m.T), orientation_of_mask(np.eye(20, dtype=bool))
    ('horizontal', 'vertical', 'diagonal')
    """
    m = np.asarray(mask)
    if m.ndim != 2:
        raise InputError.bad("mask", "a 2-D boolean array", m.shape)
    # bool, or integers (nonzero: in the mask), or floats of 0 and 1 only: a probability map, NaN
    # or strings read every nonzero cell as the mask (a diagonal heatmap region was "horizontal")
    if m.dtype != bool:
        if m.dtype.kind not in "iuf":
            raise InputError.bad("mask", "a 2-D array of bools, integers or floats 0 and 1", m)
        other = m[~np.isin(m, (0.0, 1.0))] if m.dtype.kind == "f" else m[:0]
        if other.size:  # say what came: "other values" told neither which nor how many
            raise InputError(
                f"mask: expected a 2-D boolean array (or floats 0 and 1; threshold a probability "
                f"map first), got {other.size} of {m.size} {m.dtype} cells neither 0 nor 1, such "
                f"as {other.flat[0].item()!r}",
                argument="mask",
            )
    m = m.astype(bool)
    if not m.any():
        return "horizontal"
    try:
        sy, sx = (float(v) for v in cell_size)
    except (TypeError, ValueError):
        raise InputError.bad("cell_size", "(height, width) of a mask cell", cell_size) from None
    if not (math.isfinite(sy) and math.isfinite(sx) and sy > 0 and sx > 0):
        raise InputError.bad("cell_size", "positive finite (height, width)", cell_size)
    rows, cols = np.nonzero(m)
    rows, cols = rows * sy, cols * sx
    # second central moments (what regionprops' orientation is computed from), in pixel units
    dr, dc = rows - rows.mean(), cols - cols.mean()
    mu_rr, mu_cc, mu_rc = float(dr @ dr), float(dc @ dc), float(dr @ dc)
    # axis lengths go as the square roots of the moment matrix's eigenvalues
    half_gap = math.hypot((mu_rr - mu_cc) / 2, mu_rc)
    major, minor = (mu_rr + mu_cc) / 2 + half_gap, (mu_rr + mu_cc) / 2 - half_gap
    if major <= 0 or math.sqrt(max(minor, 0.0) / major) >= ISOTROPIC_RATIO:
        return "horizontal"
    # angle of the major axis measured from the column (x) axis
    angle = 0.5 * math.degrees(math.atan2(2 * mu_rc, mu_cc - mu_rr))
    a = abs(angle)
    if a < 22.5:
        return "horizontal"
    if a > 67.5:
        return "vertical"
    return "diagonal"


@dataclass(frozen=True)
class ObjectRelation:
    """How the watermark relates to one named object in the image."""

    name: str
    relation: str

    def __post_init__(self) -> None:
        if self.relation not in RELATIONS:
            raise InputError.bad("relation", f"one of {', '.join(RELATIONS)}", self.relation)


@dataclass(frozen=True)
class WatermarkFacts(Result):
    """What is known (ground truth) or estimated (prediction) about one watermarked image.

    ``present`` is False for a clean image (the other fields then hold no information).
    ``relations`` lists the watermark's relation to each known object; ``objects_known`` is False
    when the objects are not annotated (the describer then speaks of "the main subject" and says so).
    ``coverage`` is the fraction of the objects' area the watermark covers (0 when unknown).
    """

    present: bool
    score: float
    level: str
    cell: str = "Center"
    orientation: str = "horizontal"
    content_type: str = "logo"
    opacity: float | None = None
    relations: tuple[ObjectRelation, ...] = field(default_factory=tuple)
    objects_known: bool = True
    coverage: float = 0.0

    def __post_init__(self) -> None:
        if self.level not in LEVELS:
            raise InputError.bad("level", f"one of {', '.join(LEVELS)}", self.level)
        if self.cell not in CELLS:
            raise InputError.bad("cell", f"one of {', '.join(CELLS)}", self.cell)
        if self.orientation not in ORIENTATIONS:
            raise InputError.bad(
                "orientation", f"one of {', '.join(ORIENTATIONS)}", self.orientation
            )
        if self.content_type not in CONTENT_TYPES:
            raise InputError.bad(
                "content_type", f"one of {', '.join(CONTENT_TYPES)}", self.content_type
            )
        s = _finite(self.score, "score")
        if not 0.0 <= s <= 5.0:
            raise InputError.bad("score", "a number in [0, 5]", self.score)
        c = _finite(self.coverage, "coverage")
        if not 0.0 <= c <= 1.0:
            raise InputError.bad("coverage", "a fraction in [0, 1]", self.coverage)
        # opacity was not checked: "0.1" or True were kept and written by to_dict as they came
        if self.opacity is not None:
            w = _finite(self.opacity, "opacity")
            if not 0.0 <= w <= MAX_OPACITY:
                raise InputError.bad(
                    "opacity", f"None or a number in [0, {MAX_OPACITY}]", self.opacity
                )

    def summary(self) -> str:
        if not self.present:
            return "no watermark"
        return (
            f"{self.content_type} watermark, {self.orientation}, {self.cell}; "
            f"score {self.score:.2f} ({self.level})"
        )
