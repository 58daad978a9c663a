"""Degenerate training data and facet matching: review findings (duplicate unsafe rows, fewer
unsafe rows than facets, a category that the facets fire on less often than elsewhere, probe
settings scikit-learn refuses, a flagged row left unprojected)."""

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.safety import FacetReport, SafetyPolytope, select_detector


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


def test_a_category_is_matched_only_to_a_facet_that_fires_more_often_on_it():
    """Mutual information is symmetric: a facet that fires on every harmful row and never on a
    benign one has high MI with "row is benign", so Hungarian matching on MI gave "benign" a
    facet that fires on 0% of it and left a harm category without one (SmolLM2, Do-Not-Answer:
    5 facets, 5 harm categories, one of them "no facet left")."""
    # facet 0 fires on every row of a and b, facet 1 on the rows of c only, never on benign
    categories = np.array(["benign"] * 6 + ["a"] * 2 + ["b"] * 2 + ["c"] * 2)
    fired = np.zeros((12, 2), dtype=bool)
    fired[6:10, 0] = True
    fired[10:, 1] = True
    report = FacetReport.from_violations(fired, categories)
    matched = dict(zip(report.categories, report.matched_facet, strict=True))
    assert matched["benign"] == -1  # was facet 0, which never fires on it
    assert matched["c"] == 1
    assert matched["a"] == 0 or matched["b"] == 0
    for name, k in matched.items():  # every match fires more often in its category
        if k >= 0:
            inside = categories == name
            assert fired[inside, k].mean() > fired[~inside, k].mean()
    assert report.mutual_information[report.categories.index("benign"), 0] > 0.3  # MI kept


@pytest.mark.parametrize("grid", [{"C": (-1.0,)}, {"C": ("a",)}, {"C": (1.0,), "penalty": ("l1",)}])
def test_probe_settings_scikit_learn_refuses_name_the_grid(grid):
    """They were scikit-learn's InvalidParameterError / ValueError from inside the CV loop."""
    acts = np.random.default_rng(0).normal(size=(16, 1, 3))
    unsafe = np.r_[np.zeros(8), np.ones(8)]
    with pytest.raises(InputError, match=r"^grid: expected LogisticRegression settings"):
        select_detector(acts, unsafe, [0], detector="probe", grid=grid)


def test_a_flagged_row_is_always_projected_even_beside_a_far_facet():
    """The "already inside" slack is 1e-9 times the largest |c_k|: with a facet 1e4 away it
    exceeded the margin, and a row flagged by is_unsafe came back unmoved, "feasible", unsafe."""
    box = SafetyPolytope.from_parameters([[1.0, 0.0], [-1.0, 0.0]], [1.0, 1e4])
    x = np.array([[1.0 + 5e-7, 0.0]])
    assert box.is_unsafe(x)[0]
    result = box.project(x)
    assert result.moved[0] and result.feasible[0]
    assert not box.is_unsafe(result.points)[0]
    assert result.max_violation[0] <= -1e-6 + 1e-9
