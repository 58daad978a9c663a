"""Diff review 64 C: a 2-D table of radii went through DatasetCertificate.certified_accuracy and
worst_cost unchecked: on 3 points certified_accuracy([[0, 0.5]], "std") gave a (3, 2) table of
per-point hits (not an accuracy) and worst_cost a single value; it is now refused, naming radii."""

from __future__ import annotations

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.robustness import DatasetCertificate


@pytest.fixture(scope="module")
def result():
    counts = [[990, 10], [30, 970], [500, 500]]
    return DatasetCertificate.from_counts([0, 1, 0], counts, [0, 1, 1], sigma=0.5, alpha=0.001)


@pytest.mark.parametrize("call", ["std", "cs", "cost"])
def test_a_table_of_radii_is_refused(result, call):
    method = result.worst_cost if call == "cost" else result.certified_accuracy
    args = () if call == "cost" else (call,)
    with pytest.raises(InputError, match=r"radii: expected a radius or a 1-D list of radii"):
        method([[0.0, 0.5]], *args)
    # a scalar, a list and a numpy grid starting at 0 still give one value per radius
    assert method(np.float32(0.0), *args).shape == (1,)
    assert method(np.linspace(0.0, 1.0, 5), *args).shape == (5,)
