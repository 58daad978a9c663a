"""The watermark contact sheet refuses images, names or descriptions without a length in words
(review 67 I, beside c5786d74's descriptions check of the evaluation page).

build_contact_sheet compares len(images), len(names) and len(descriptions) with the number of
predictions; measured on HEAD (c5786d74) and 1b2aaee5, an int, a generator or a 0-d array there stopped on
Python's bare 'TypeError: object of type 'int' has no len()'. Now that is an InputError naming
the argument ('images: expected a sequence of 0 items, one per prediction, got 5').
"""

from __future__ import annotations

import numpy as np
import pytest

from trustlab.audit.sections.watermark import build_contact_sheet
from trustlab.errors import InputError
from trustlab.watermark.nr import WatermarkPredictions


def _no_predictions() -> WatermarkPredictions:
    predictions = object.__new__(WatermarkPredictions)  # the class check passes
    object.__setattr__(predictions, "scores", np.zeros(0))  # len() 0; no other field is read
    return predictions


@pytest.mark.parametrize("position", [0, 1, 2])
@pytest.mark.parametrize(
    "bad", [5, (x for x in []), np.array(3)], ids=["int", "generator", "0-d array"]
)
def test_an_argument_without_a_length_is_refused_by_name(position, bad):
    args = [[], [], []]
    args[position] = bad
    with pytest.raises(InputError, match=r"expected a sequence of 0 items") as info:
        build_contact_sheet(_no_predictions(), *args)
    assert info.value.argument == ("images", "names", "descriptions")[position]
