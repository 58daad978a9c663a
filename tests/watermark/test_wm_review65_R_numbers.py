"""diff review 65 R of 8ff3447a: cell_of_box's box and WatermarkFacts.opacity refuse strings and
bools too, as _finite does for the other numbers."""

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.watermark.vocabulary import WatermarkFacts, cell_of_box


@pytest.mark.parametrize(
    "box", [("1", "1", "2", "2"), (True, True, True, True), np.array([0, 0, 1, 1], dtype=bool)]
)
def test_cell_of_box_refuses_strings_and_bools(box):
    with pytest.raises(InputError, match="box: expected four numbers"):
        cell_of_box(box, width=3, height=3)


def test_cell_of_box_reads_numbers_as_before():
    for box in [
        (0, 0, 3, 3),
        np.array([0, 0, 1, 1], np.int64),
        np.array([2.0, 2, 3, 3], np.float32),
    ]:
        assert cell_of_box(box, width=3, height=3) in ("Center", "Top-left", "Bottom-right")
    assert cell_of_box(np.array([2, 2, 3, 3], np.uint8), width=3, height=3) == "Bottom-right"


@pytest.mark.parametrize(
    "opacity", ["0.1", b"0.1", True, np.bool_(False), float("nan"), -0.01, 0.3]
)
def test_facts_opacity_is_checked(opacity):
    with pytest.raises(InputError, match="opacity: expected"):
        WatermarkFacts(present=True, score=3.0, level="faint", opacity=opacity)


def test_facts_opacity_numbers_and_none_kept():
    for w in (None, 0, 0.0, 0.1, np.float64(0.25), np.float32(0.05)):
        assert WatermarkFacts(present=True, score=3.0, level="faint", opacity=w).opacity is w
