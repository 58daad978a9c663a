"""Second review of the safety polytope: calibrate keeps its promise of at most
``floor(max_fpr * n)`` flagged states when rounding puts the threshold state just above 0."""

import math

import numpy as np

from trustlab.safety import SafetyPolytope


def test_calibration_flags_at_most_floor_max_fpr_n_despite_rounding():
    # brute force: the flagged count on the calibration states themselves, for many draws;
    # the rounding of offsets + shift flagged the state at the threshold in 6 of 1,000 draws
    rng = np.random.default_rng(1)
    normals, offsets = rng.normal(size=(4, 8)), rng.normal(size=4)
    checked = 0
    for _ in range(300):
        safe = rng.normal(size=(int(rng.integers(5, 200)), 8)) * rng.uniform(0.1, 5.0)
        for max_fpr in (0.01, 0.05, 0.1, 0.3, 0.5):
            sap = SafetyPolytope.from_parameters(normals, offsets).calibrate(safe, max_fpr)
            flagged = int(sap.is_unsafe(safe).sum())
            assert flagged <= math.floor(max_fpr * len(safe))
            assert sap.calibration_["fpr"] == flagged / len(safe)
            checked += 1
    assert checked == 1500
