"""Third review of SafetyPolytope.calibrate: at most ``floor(max_fpr * n)`` of the given states
are flagged also when the shift is large next to the facet offsets (a nudge below the shift's
rounding step was lost, and the state at the threshold stayed flagged)."""

import math

import numpy as np

from trustlab.safety import SafetyPolytope


def test_calibration_keeps_its_promise_when_the_shift_dwarfs_the_rounding_nudge():
    # brute force against the calibration's definition: flagged iff the old score exceeds the
    # (allowed)-th largest score; facets of mixed scale and rounded (tied) states
    rng = np.random.default_rng(5)
    wrong = []
    for draw in range(300):
        k = int(rng.integers(1, 4))
        concept = draw % 2 == 0
        extra = (
            {"encoder_weight": rng.normal(size=(5, 3)), "encoder_bias": rng.normal(size=5)}
            if concept
            else {}
        )
        normals = rng.normal(size=(k, 5 if concept else 3)) * 10 ** rng.uniform(-3, 3)
        sap = SafetyPolytope.from_parameters(normals, rng.normal(size=k) * 100, **extra)
        n = int(rng.integers(1, 60))
        states = np.round(rng.normal(size=(n, 3)), int(rng.integers(0, 3)))
        max_fpr = float(rng.choice([0.01, 0.05, 0.1, 0.5, 0.99]))
        old = sap.decision_function(states)
        allowed = math.floor(max_fpr * n)
        ranked = np.sort(old)[::-1]
        expected = old > (ranked[allowed] if allowed < n else ranked[-1] - 1.0)
        flagged = sap.calibrate(states, max_fpr=max_fpr).is_unsafe(states)
        if not np.array_equal(flagged, expected) or sap.calibration_["fpr"] != flagged.mean():
            wrong.append((draw, int(flagged.sum()), allowed))
    assert wrong == []


def test_a_single_state_at_the_threshold_is_not_flagged_after_a_large_shift():
    # scores -36.6 and -46.6; max_fpr 0.1 of 2 states allows none, so the shift is -36.6 and the
    # offset 27.4 - 36.6 = -9.2: rounding left the top state at c = +1.8e-15, and the nudge by
    # that much was below the rounding step of the shift (7.1e-15), so it stayed flagged
    line = SafetyPolytope.from_parameters([[0.2]], [27.4])
    states = np.array([[-46.0], [-96.0]])
    assert not line.calibrate(states, max_fpr=0.1).is_unsafe(states).any()
    assert line.calibration_["fpr"] == 0.0
