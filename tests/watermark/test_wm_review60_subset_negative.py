"""WatermarkDataset.subset takes negative indices (numpy's rule), and its refusal says so
(review 60: it said 'indices in [0, 3)' while subset([-1]) returned the last image)."""

import pytest

from trustlab.errors import InputError
from trustlab.watermark import synthesize


@pytest.fixture(scope="module")
def three():
    return synthesize(3, random_state=0)


def test_negative_indices_count_from_the_end_and_the_refusal_says_so(three):
    assert three.subset([-1]).structured(0) == three.subset([2]).structured(0)
    for bad in ([3], [-4]):
        with pytest.raises(InputError) as info:
            three.subset(bad)
        assert str(info.value).startswith(
            "indices: expected indices in [-3, 2] (negative ones count from the end), got"
        )
