"""Second review of the safety polytope's stored state: calibrate keeps its promise of at most
``floor(max_fpr * n)`` flagged states when rounding puts the threshold state just above 0, and
a refit drops a loaded polytope's metadata."""

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


def test_a_refit_of_a_loaded_polytope_drops_the_old_metadata(tmp_path):
    # the metadata (model, prompt sources, seed) describes the fit it was saved with; a refit
    # kept it and a later save wrote it beside the new facets (eval would rebuild the wrong split)
    rng = np.random.default_rng(0)
    acts = np.r_[rng.normal(size=(20, 3)), rng.normal(size=(20, 3)) + 3.0]
    unsafe = np.r_[np.zeros(20), np.ones(20)]
    SafetyPolytope(n_facets=1, max_epochs=2, random_state=0).fit(acts, unsafe).save(
        tmp_path / "old", metadata={"model": "old-model", "seed": 3}
    )
    loaded = SafetyPolytope.load(tmp_path / "old")
    assert loaded.metadata_ == {"model": "old-model", "seed": 3}
    loaded.fit(acts[:, :2], unsafe)
    loaded.save(tmp_path / "new")
    assert SafetyPolytope.load(tmp_path / "new").metadata_ == {}
