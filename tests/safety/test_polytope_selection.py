"""Nested selection and bootstrap intervals of detection (no language model: synthetic data).

The AUROC is checked against scikit-learn's, the bootstrap interval against a plain loop over
resamples, and the selection against a direct computation of each cross-validated score.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import StratifiedKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from trustlab.errors import InputError
from trustlab.safety import bootstrap_auroc, compare_detectors, select_detector
from trustlab.safety.polytope.selection import auroc


def _layered(seed, n=160, d=6):
    """Two 'layers': noise only in layer 0, a mean shift of 2 in layer 1."""
    rng = np.random.default_rng(seed)
    y = np.r_[np.zeros(n // 2, bool), np.ones(n // 2, bool)]
    noise = rng.normal(size=(n, d))
    signal = rng.normal(size=(n, d)) + 2.0 * y[:, None] * (np.arange(d) == 0)
    return np.stack([noise, signal], axis=1), y


labels_and_scores = st.integers(4, 40).flatmap(
    lambda n: st.tuples(
        st.lists(st.booleans(), min_size=n, max_size=n).filter(lambda v: 0 < sum(v) < n),
        st.lists(st.integers(-5, 5), min_size=n, max_size=n),  # integers: many ties
    )
)


@settings(max_examples=60, deadline=None)
@given(labels_and_scores)
def test_auroc_equals_scikit_learn_with_ties(data):
    y, s = data
    assert auroc(y, s) == pytest.approx(roc_auc_score(y, s), abs=1e-12)
    assert auroc(np.logical_not(y), s) == pytest.approx(1.0 - auroc(y, s), abs=1e-12)


def test_bootstrap_interval_equals_a_loop_over_stratified_resamples():
    rng = np.random.default_rng(3)
    y = np.r_[np.zeros(30, bool), np.ones(20, bool)]
    s, other = y + rng.normal(size=50), y + 2 * rng.normal(size=50)
    ci = bootstrap_auroc(y, s, n_bootstrap=300, random_state=5)
    diff = bootstrap_auroc(y, s, other=other, n_bootstrap=300, random_state=5)
    # the same draws, one resample at a time: unsafe rows first, then safe rows
    draw = np.random.default_rng(5)
    pos, neg = np.flatnonzero(y), np.flatnonzero(~y)
    idx_pos = pos[draw.integers(0, len(pos), size=(300, len(pos)))]
    idx_neg = neg[draw.integers(0, len(neg), size=(300, len(neg)))]
    single, paired = [], []
    for a, b in zip(idx_pos, idx_neg, strict=True):
        rows = np.r_[a, b]
        single.append(roc_auc_score(y[rows], s[rows]))
        paired.append(single[-1] - roc_auc_score(y[rows], other[rows]))
    assert (ci.low, ci.high) == pytest.approx(tuple(np.percentile(single, [2.5, 97.5])))
    assert (diff.low, diff.high) == pytest.approx(tuple(np.percentile(paired, [2.5, 97.5])))
    assert ci.estimate == pytest.approx(roc_auc_score(y, s))
    assert diff.estimate == pytest.approx(roc_auc_score(y, s) - roc_auc_score(y, other))


def test_probe_selection_equals_a_direct_cross_validation():
    X, y = _layered(0)
    grid = {"C": (0.01, 1.0)}
    chosen = select_detector(X, y, [3, 7], detector="probe", grid=grid, n_splits=3)
    folds = list(StratifiedKFold(3, shuffle=True, random_state=0).split(X[:, 0], y))
    for row in chosen.settings:
        j = [3, 7].index(row["layer"])
        scores = []
        for tr, va in folds:
            probe = make_pipeline(StandardScaler(), LogisticRegression(C=row["C"], max_iter=5000))
            probe.fit(X[tr, j], y[tr])
            scores.append(roc_auc_score(y[va], probe.decision_function(X[va, j])))
        assert row["cv_auroc"] == pytest.approx(np.mean(scores), abs=1e-12)
    assert chosen.layer == 7 and chosen.best["cv_auroc"] > 0.8  # the layer with the signal
    assert chosen.best["cv_auroc"] == max(r["cv_auroc"] for r in chosen.settings)


def test_selection_never_sees_the_held_out_rows():
    X, y = _layered(1)
    Xte, yte = _layered(2, n=80)
    grid = {"n_facets": (2,), "facet_l1": (0.01,)}
    base = compare_detectors(X, y, Xte, yte, [0, 1], polytope_grid=grid, max_epochs=10)
    # scrambling the held-out rows changes the held-out numbers, never the choices
    scrambled = compare_detectors(X, y, Xte[::-1], yte, [0, 1], polytope_grid=grid, max_epochs=10)
    assert scrambled.polytope.to_dict() == base.polytope.to_dict()
    assert scrambled.probe.to_dict() == base.probe.to_dict()
    assert base.polytope.layer == base.probe.layer == 1
    assert base.polytope_auroc.estimate > 0.8 and scrambled.polytope_auroc.estimate < 0.7
    assert "bootstrap" in base.summary()


def test_bad_input_is_rejected():
    X, y = _layered(0, n=20)
    with pytest.raises(InputError, match="layers: expected 2 distinct layers"):
        select_detector(X, y, [1, 1])
    with pytest.raises(InputError, match="detector: expected one of"):
        select_detector(X, y, [0, 1], detector="mlp")
    with pytest.raises(InputError, match="unsafe: expected at least 5 rows of each class"):
        select_detector(X[:12], np.r_[np.zeros(8), np.ones(4)], [0, 1], n_splits=5)
    with pytest.raises(InputError, match="unsafe: expected labels of both classes"):
        bootstrap_auroc(np.ones(5), np.arange(5.0))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"random_state": np.random.default_rng(0)}, "random_state: expected an integer seed"),
        ({"grid": {"Cx": [1.0]}}, "grid: expected parameters of the probe .*got 'Cx'"),
        ({"grid": {"C": []}}, "grid: expected a non-empty sequence of values for 'C'"),
        ({"grid": {"C": 1.0}}, "grid: expected a non-empty sequence of values for 'C'"),
        ({"grid": [("C", [1.0])]}, "grid: expected a dict parameter name -> values"),
        ({"detector": "polytope", "grid": {"n_facet": [2]}}, "grid: expected parameters of the"),
        ({"detector": "polytope", "max_epoch": 3}, "polytope_params: expected SafetyPolytope"),
    ],
)
def test_bad_selection_settings_are_named(kwargs, message):
    """They ended in raw TypeErrors from int(), LogisticRegression(**params) or max([])."""
    X, y = _layered(0, n=20)
    kwargs = {"detector": "probe", **kwargs}
    with pytest.raises(InputError, match=message):
        select_detector(X, y, [0, 1], n_splits=2, **kwargs)


def test_compare_detectors_names_the_grid_at_fault():
    X, y = _layered(0, n=20)
    with pytest.raises(InputError, match="^probe_grid: expected parameters of the probe"):
        compare_detectors(X, y, X, y, [0, 1], probe_grid={"Cx": [1.0]}, n_splits=2)
    with pytest.raises(InputError, match="^polytope_grid: expected a non-empty sequence"):
        compare_detectors(X, y, X, y, [0, 1], polytope_grid={"n_facets": []}, n_splits=2)


def test_parallel_selection_equals_the_serial_one():
    # every fit is seeded: two processes give the same cross-validated scores and winner
    X, y = _layered(7, n=80, d=4)
    grid = {"n_facets": (2, 3), "facet_l1": (1e-2,)}
    serial = select_detector(X, y, [0, 1], grid=grid, n_splits=3, max_epochs=20)
    parallel = select_detector(X, y, [0, 1], grid=grid, n_splits=3, max_epochs=20, n_jobs=2)
    assert parallel.settings == serial.settings and parallel.best == serial.best
    with pytest.raises(InputError, match="n_jobs"):
        select_detector(X, y, [0, 1], grid=grid, n_jobs=0)
