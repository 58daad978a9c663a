"""Degenerate training data and facet matching: review findings (duplicate unsafe rows, fewer
unsafe rows than facets)."""

import numpy as np
import pytest

from trustlab.safety import SafetyPolytope


def _safe_rows():
    return np.random.default_rng(0).normal(size=(20, 3))


@pytest.mark.parametrize(
    "harmful",
    [
        # identical unsafe rows (the same prompt twice, say): k-means left clusters empty, their
        # mean NaN, and the data-driven start made those facets and every score NaN
        np.tile([4.0, 0.0, 0.0], (10, 1)),
        # fewer unsafe rows than facets: the spare facets kept a random start that flagged
        # almost every safe row (training accuracy 0.09 after the default 40 epochs)
        np.array([[4.0, 0.3, -0.2], [4.2, -0.1, 0.1]]),
    ],
    ids=["duplicates", "fewer-than-facets"],
)
def test_fewer_distinct_unsafe_rows_than_facets_still_separate(harmful):
    acts = np.vstack([_safe_rows(), harmful])
    unsafe = np.r_[np.zeros(20), np.ones(len(harmful))]
    sap = SafetyPolytope(n_facets=3, random_state=0).fit(acts, unsafe)
    assert np.isfinite(sap.normals_).all() and np.isfinite(sap.offsets_).all()
    assert np.isfinite(sap.decision_function(acts)).all()
    assert sap.predict(acts).tolist() == unsafe.astype(int).tolist()
