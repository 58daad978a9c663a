"""SafetyPolytope.calibrate: one common shift of the facets to a target false-positive rate."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trustlab.errors import InputError
from trustlab.safety import SafetyPolytope


def _box():
    """Two facets on two coordinates: c = (x0 - 1, x1 - 1)."""
    return SafetyPolytope.from_parameters([[1.0, 0.0], [0.0, 1.0]], [1.0, 1.0])


@settings(max_examples=60, deadline=None)
@given(
    st.integers(1, 400).flatmap(
        lambda n: st.tuples(
            st.lists(st.integers(-6, 6), min_size=2 * n, max_size=2 * n),  # ties on purpose
            st.floats(0.001, 0.5),
        )
    )
)
def test_at_most_the_target_share_is_flagged_and_the_shift_is_a_quantile(data):
    values, max_fpr = data
    safe = np.array(values, dtype=float).reshape(-1, 2)
    sap = _box()
    before = sap.decision_function(safe)
    sap.calibrate(safe, max_fpr=max_fpr)
    after = sap.decision_function(safe)
    shift = sap.calibration_["shift"]
    assert np.allclose(after, before - shift)  # one common shift of every facet
    flagged = sap.is_unsafe(safe)
    assert flagged.sum() <= np.floor(max_fpr * len(safe))
    assert sap.calibration_["fpr"] == pytest.approx(flagged.mean())
    # the smallest threshold with that property: lowering it by any step flags more than allowed
    strictly_above = (before > shift).sum()
    at_or_above = (before >= shift).sum()
    assert strictly_above <= np.floor(max_fpr * len(safe)) < at_or_above


def test_calibration_is_stored_and_repeated_calibration_adds_up(tmp_path):
    rng = np.random.default_rng(0)
    safe = rng.normal(size=(500, 2))
    sap = _box().calibrate(safe, max_fpr=0.1)
    first = sap.calibration_["shift"]
    sap.calibrate(safe + 1.0, max_fpr=0.1)
    assert sap.calibration_["shift"] == pytest.approx(first + 1.0)
    assert sap.calibration_["n_states"] == 500 and sap.calibration_["max_fpr"] == 0.1
    loaded = SafetyPolytope.load(sap.save(tmp_path / "p"))
    assert loaded.calibration_ == sap.calibration_
    assert np.array_equal(loaded.offsets_, sap.offsets_)
    # a calibrated polytope projects onto its calibrated facets
    fixed = sap.project([[9.0, 9.0]])
    assert fixed.all_feasible and not sap.is_unsafe(fixed.points).any()


def test_a_fresh_fit_has_no_calibration_and_bad_targets_are_rejected():
    rng = np.random.default_rng(1)
    X = np.vstack([rng.normal(size=(40, 3)), rng.normal(size=(40, 3)) + 3])
    sap = SafetyPolytope(n_facets=2, max_epochs=3, random_state=0).fit(X, np.r_[[0] * 40, [1] * 40])
    assert sap.calibration_ is None
    for bad in (0.0, 1.0, -0.1):
        with pytest.raises(InputError, match="max_fpr"):
            sap.calibrate(X[:40], max_fpr=bad)
    with pytest.raises(InputError, match="safe_acts: expected activations of width 3"):
        sap.calibrate(np.zeros((5, 2)))
