"""relation_of_boxes at its two edges (review 60): the tests compared it with a pixel-grid oracle
on 40 random box pairs and four hand cases away from the edges, and both 'inside' at 0.8 of the
watermark box (instead of 0.9) and 'near the edge' for gap < margin (instead of <=) passed them
and test_synth, test_describer and the review-58 tests."""

from __future__ import annotations

import pytest

from trustlab.watermark import relation_of_boxes


@pytest.mark.parametrize(
    ("object_box", "relation"),
    [
        ((1, 0, 20, 10), "inside"),  # 90 of the 100 pixels
        ((2, 0, 20, 10), "partially overlapping"),  # 80
        ((0, 1, 10, 30), "inside"),
        ((15, 0, 30, 10), "near the edge"),  # a gap of 5 = margin
        ((16, 0, 30, 10), "separate"),  # 6
        ((0, 15, 10, 30), "near the edge"),
    ],
)
def test_the_ninety_percent_and_margin_edges(object_box, relation):
    assert relation_of_boxes((0, 0, 10, 10), object_box, margin=5) == relation
