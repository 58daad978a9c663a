"""Review 64: DatasetCertificate.certified_accuracy and worst_cost took a negative radius and
answered as for 0 (an L2 radius is a distance; Certificate.certified refuses a negative one),
and certificate() said "an integer >= -3" for a position past the lower end, without the upper
bound it gives past the upper end."""

from __future__ import annotations

import pytest

from trustlab.errors import InputError
from trustlab.robustness import DatasetCertificate


@pytest.fixture(scope="module")
def result():
    counts = [[990, 10], [30, 970], [500, 500]]
    return DatasetCertificate.from_counts([0, 1, 0], counts, [0, 1, 1], sigma=0.5, alpha=0.001)


@pytest.mark.parametrize("call", ["std", "cs", "cost"])
def test_a_negative_radius_is_refused(result, call):
    method = result.worst_cost if call == "cost" else result.certified_accuracy
    args = () if call == "cost" else (call,)
    with pytest.raises(InputError, match=r"radii: expected radii >= 0.*-0\.5"):
        method([0.0, -0.5], *args)
    assert method([0.0, 0.25], *args).shape == (2,)


@pytest.mark.parametrize("position", [-4, 3, True, 1.0])
def test_a_position_out_of_range_names_both_bounds(result, position):
    with pytest.raises(InputError, match=r"position: expected an integer in \[-3, 3\)"):
        result.certificate(position)
    assert result.certificate(-3).label == result.certificate(0).label == 0
