"""A checkpoint resumes for the same settings however they are spelt: 0 or 0.0 for a float
setting, the baselines in any order (each method runs on its own)."""

import numpy as np

from trustlab.federated import UEFLConfig, simulate_uefl

TINY = dict(n_silos=2, rounds=1, rounds_plus=1, local_epochs=1, mc_passes=2, max_iterations=1,
            random_state=0)  # fmt: skip


def test_float_settings_are_floats_whatever_number_type_was_passed():
    config = UEFLConfig(threshold_factor=0, learning_rate=np.float32(0.5), commitment=1)
    assert [
        type(v) for v in (config.threshold_factor, config.learning_rate, config.commitment)
    ] == [float] * 3


def test_the_same_settings_spelt_otherwise_resume_the_checkpoint(tmp_path):
    first = simulate_uefl(checkpoint=tmp_path, threshold_factor=0, baselines=("fedavg", "vq"),
                          **TINY)  # fmt: skip
    again = simulate_uefl(checkpoint=tmp_path, threshold_factor=0.0, baselines=("vq", "fedavg"),
                          **TINY)  # fmt: skip
    assert again.resumed and sorted(again.methods) == sorted(first.methods)
    for name, run in first.methods.items():
        assert np.array_equal(again.methods[name].accuracy, run.accuracy)
