"""WMarkGPT's vocabulary: level bins, the opacity score, the 3x3 cells and the structured facts."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from skimage.draw import polygon
from skimage.measure import regionprops

from trustlab.errors import InputError
from trustlab.watermark.vocabulary import (
    CELLS,
    LEVELS,
    WatermarkFacts,
    cell_of_box,
    cell_of_point,
    level_index,
    level_of_score,
    orientation_of_mask,
    score_of_level_probabilities,
    score_of_opacity,
)

# The spec's table, written out: [4, 5] invisible, [3, 4) faint, [2, 3) moderate, [1, 2) visible,
# [0, 1) obvious.
TABLE = [
    (4.0, 5.0, "invisible"),
    (3.0, 4.0, "faint"),
    (2.0, 3.0, "moderate"),
    (1.0, 2.0, "visible"),
]


@given(st.floats(0.0, 5.0))
def test_level_of_score_follows_the_table(s):
    expected = next(
        (name for lo, hi, name in TABLE if lo <= s <= hi and (s < hi or hi == 5.0)), None
    )
    assert level_of_score(s) == (expected or "obvious")


def test_level_boundaries_and_clipping():
    assert [level_of_score(s) for s in (5, 4, 3.999, 3, 2, 1, 0.999, 0)] == [
        "invisible",
        "invisible",
        "faint",
        "faint",
        "moderate",
        "visible",
        "obvious",
        "obvious",
    ]
    assert level_of_score(7) == "invisible" and level_of_score(-1) == "obvious"
    assert [level_index(name) for name in LEVELS] == [0, 1, 2, 3, 4]


@given(st.integers(0, 25))
def test_opacity_score_is_five_minus_twenty_w(percent):
    w = percent / 100
    assert score_of_opacity(w) == pytest.approx(5 - 20 * w, abs=1e-12)


def test_expected_score_of_level_probabilities():
    rng = np.random.default_rng(0)
    p = rng.dirichlet(np.ones(5), size=20)
    brute = [sum(p[i, k] * (5 - k) for k in range(5)) for i in range(20)]
    np.testing.assert_allclose(score_of_level_probabilities(p), brute, atol=1e-12)


@given(st.floats(0, 255.999), st.floats(0, 191.999))
def test_cell_of_point_by_brute_force(x, y):
    col = next(c for c in range(3) if x < (c + 1) * 256 / 3)
    row = next(r for r in range(3) if y < (r + 1) * 192 / 3)
    assert cell_of_point(x, y, width=256, height=192) == CELLS[3 * row + col]


def test_cells_read_as_positions():
    assert cell_of_box((0, 0, 10, 10), width=90, height=90) == "Top-left"
    assert cell_of_box((40, 40, 50, 50), width=90, height=90) == "Center"
    assert cell_of_box((80, 40, 90, 50), width=90, height=90) == "Middle-right"
    assert cell_of_box((40, 80, 50, 90), width=90, height=90) == "Middle-bottom"


@pytest.mark.parametrize(
    ("kwargs", "argument"),
    [
        ({"level": "loud"}, "level"),
        ({"cell": "Top"}, "cell"),
        ({"orientation": "slanted"}, "orientation"),
        ({"content_type": "stamp"}, "content_type"),
        ({"score": 6.0}, "score"),
        ({"coverage": 1.5}, "coverage"),
    ],
)
def test_facts_reject_unknown_words(kwargs, argument):
    base = {"present": True, "score": 2.5, "level": "moderate"}
    with pytest.raises(InputError, match=argument):
        WatermarkFacts(**{**base, **kwargs})


def test_bad_numbers_name_their_argument():
    with pytest.raises(InputError, match="opacity"):
        score_of_opacity(0.3)
    with pytest.raises(InputError, match="score"):
        level_of_score(float("nan"))
    with pytest.raises(InputError, match="probabilities"):
        score_of_level_probabilities([[0.5, 0.5, 0.5, 0, 0]])


@settings(deadline=None)
@given(st.integers(0, 179), st.integers(20, 60), st.integers(2, 6))
def test_orientation_agrees_with_regionprops(degrees, length, width):
    t = np.radians(degrees)
    u, v = np.array([np.cos(t), np.sin(t)]), np.array([-np.sin(t), np.cos(t)])
    c = np.array([50.0, 50.0])
    corners = [
        c + a * length / 2 * u + b * width / 2 * v for a, b in ((-1, -1), (1, -1), (1, 1), (-1, 1))
    ]
    xs, ys = zip(*corners, strict=True)
    mask = np.zeros((100, 100), bool)
    mask[polygon(ys, xs, mask.shape)] = True
    # regionprops: orientation is the angle between the row axis and the major axis
    a = 90 - abs(np.degrees(regionprops(mask.astype(int))[0].orientation))
    if min(abs(a - 22.5), abs(a - 67.5)) < 1e-6:
        return  # on a bin edge
    expected = "horizontal" if a < 22.5 else "vertical" if a > 67.5 else "diagonal"
    assert orientation_of_mask(mask) == expected


def test_isotropic_masks_count_as_upright():
    from skimage.draw import disk

    round_logo = np.zeros((60, 60), bool)
    round_logo[disk((30, 30), 20)] = True
    square = np.zeros((60, 60), bool)
    square[10:50, 12:50] = True
    assert orientation_of_mask(round_logo) == orientation_of_mask(square) == "horizontal"
    # a diamond's principal axes are degenerate too; a stretched one has a direction
    props = regionprops(square.astype(int))[0]
    assert props.axis_minor_length / props.axis_major_length >= 0.85
