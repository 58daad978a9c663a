"""BlackBoxClassifier.save keeps a numpy integer random_state (review 66).

Measured before: BlackBoxClassifier(random_state=np.int64(3)).fit(...).save(DIR) wrote
random_state null (only a Python int passed its check), so BlackBoxClassifier.load(DIR) had
random_state None and get_params() differed from the saved model's; a refit of the loaded model
was no longer seeded. RegionSparseClassifier.save kept it (3) all along. Now the seed is saved as
the Python int; a numpy Generator is still saved as None (it cannot be written to JSON).
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("skimage")

from trustlab.explain.regions import BlackBoxClassifier, bam_lite  # noqa: E402


@pytest.fixture(scope="module")
def data():
    return bam_lite(8, size=24, random_state=0)


def _fit(data, seed):
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        bb = BlackBoxClassifier(max_epochs=1, classifier_widths=(4, 4, 4), random_state=seed)
        return bb.fit(data.images, data.labels)
    finally:
        torch.set_num_threads(old)


@pytest.mark.parametrize("seed", [np.int64(3), np.int32(3), np.uint8(3)])
def test_a_numpy_integer_seed_survives_save_and_load(data, tmp_path, seed):
    model = _fit(data, seed)
    back = BlackBoxClassifier.load(model.save(tmp_path / "bb"))
    assert back.random_state == 3 and type(back.random_state) is int
    assert back.get_params() == model.get_params()


def test_a_generator_is_still_saved_as_none(data, tmp_path):
    model = _fit(data, np.random.default_rng(0))
    assert BlackBoxClassifier.load(model.save(tmp_path / "bb")).random_state is None
