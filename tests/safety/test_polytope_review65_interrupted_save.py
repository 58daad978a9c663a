"""An interrupted overwrite of a saved SafetyPolytope (diff review 65 E): save wrote the arrays,
then the settings, and left an earlier save's settings in place meanwhile. Stopped between the
two (Ctrl-C), load gave the new normals under the old layer (2 for a polytope of layer 7). Now
the old settings file is removed first, so such a folder is refused."""

import numpy as np
import pytest

import trustlab.safety.polytope.estimator as estimator
from interrupted_saves import stopped_at
from trustlab.errors import TrustlabError
from trustlab.safety import SafetyPolytope


def test_an_interrupted_overwrite_does_not_load_under_the_old_layer(tmp_path):
    old = SafetyPolytope.from_parameters([[1.0, 0.0]], [1.0], layer=2)
    new = SafetyPolytope.from_parameters([[0.0, 1.0]], [5.0], layer=7)
    old.save(tmp_path, metadata={"model": "old"})
    with stopped_at(estimator, estimator.PARAMS_FILE):
        new.save(tmp_path, metadata={"model": "new"})
    with pytest.raises(TrustlabError):  # the old layer beside the new normals loaded
        SafetyPolytope.load(tmp_path)
    new.save(tmp_path, metadata={"model": "new"})  # a save that completes reads back whole
    loaded = SafetyPolytope.load(tmp_path)
    assert loaded.layer == 7 and loaded.metadata_ == {"model": "new"}
    assert np.array_equal(loaded.normals_, new.normals_)
