"""cell_of_box / cell_of_point refuse inverted boxes and points off the image (review 65)."""

import pytest

from trustlab.errors import InputError
from trustlab.watermark import cell_of_box, cell_of_point


@pytest.mark.parametrize(
    ("call", "argument"),
    [
        (lambda: cell_of_box((10, 10, 5, 5), width=30, height=30), "box"),
        (lambda: cell_of_box((0, 20, 10, 5), width=30, height=30), "box"),
        (lambda: cell_of_box((100, 0, 200, 10), width=30, height=30), "x"),
        (lambda: cell_of_point(-5, 1, width=30, height=30), "x"),
        (lambda: cell_of_point(1, 30.5, width=30, height=30), "y"),
    ],
)
def test_off_image_or_inverted_is_refused(call, argument):
    with pytest.raises(InputError, match=rf"^{argument}: expected"):
        call()


def test_edges_still_read_as_the_border_cells():
    assert cell_of_point(30, 30, width=30, height=30) == "Bottom-right"
    assert cell_of_point(0, 0, width=30, height=30) == "Top-left"
    assert cell_of_box((0, 0, 0, 0), width=30, height=30) == "Top-left"
    assert cell_of_box((20, 0, 30, 30), width=30, height=30) == "Middle-right"
