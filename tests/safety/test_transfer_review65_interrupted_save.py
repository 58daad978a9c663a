"""An interrupted overwrite of a saved activation map (review 65): ActivationMap.save wrote the
weights, then the JSON, and left an earlier save's JSON in place meanwhile. Stopped between the
two (Ctrl-C), the folder loaded as a whole map: the new weights under the old models, layers and
fit (R^2 1.0 claimed; squared error 4.2e3 against the map the JSON describes). Now the old JSON
is removed first, so such a folder no longer loads."""

import numpy as np
import pytest

import trustlab.safety.transfer.mapping as mapping
from interrupted_saves import stopped_at
from trustlab.errors import TrustlabError
from trustlab.safety.transfer import ActivationMap, load_activation_map


def test_an_interrupted_overwrite_does_not_load_as_the_old_map(tmp_path):
    rng = np.random.default_rng(0)
    source = rng.normal(size=(40, 4))
    old = ActivationMap(kind="affine").fit(source, source @ rng.normal(size=(4, 3)), source_layer=3)
    new = ActivationMap(kind="affine").fit(source, source[:, :3] + 5.0, source_layer=7)
    old.save(tmp_path)
    with stopped_at(mapping, mapping.PARAMS_FILE):
        new.save(tmp_path)
    with pytest.raises(TrustlabError):  # the old JSON beside the new weights loaded
        load_activation_map(tmp_path)
    new.save(tmp_path)  # a save that completes reads back whole
    loaded = load_activation_map(tmp_path)
    assert loaded.source_layer_ == 7 and np.array_equal(loaded.coef_, new.coef_)
