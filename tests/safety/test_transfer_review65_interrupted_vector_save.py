"""An interrupted overwrite of a saved steering vector (review 65): SteeringVector.save wrote the
tensor, then the JSON, and left an earlier save's JSON in place meanwhile. The loader compares
the lengths, so unit vectors (``unit()``) passed: stopped between the two files, the folder
loaded the new direction under the old layer and model (cosine -0.25 with the vector the JSON
describes). Now the old JSON is removed first, so such a folder no longer loads."""

import numpy as np
import pytest

import trustlab.safety.transfer.vectors as vectors
from interrupted_saves import stopped_at
from trustlab.errors import InputError
from trustlab.safety.transfer import SteeringVector, load_steering_vector


def _unit(layer, model, seed):
    values = np.random.default_rng(seed).normal(size=8)
    return SteeringVector(
        vector=values, layer=layer, kind="diff_in_means", model=model, n_pairs=None,
        n_positive=3, n_negative=3,
    ).unit()  # fmt: skip


def test_an_interrupted_overwrite_does_not_load_under_the_old_layer(tmp_path):
    _unit(3, "base", 0).save(tmp_path)
    new = _unit(5, "tuned", 1)
    with stopped_at(vectors, vectors.JSON_FILE):
        new.save(tmp_path)
    with pytest.raises(InputError):  # the old JSON beside the new tensor loaded
        load_steering_vector(tmp_path)
    new.save(tmp_path)  # a save that completes reads back whole
    loaded = load_steering_vector(tmp_path)
    assert loaded.layer == 5 and np.array_equal(loaded.vector, new.vector)
