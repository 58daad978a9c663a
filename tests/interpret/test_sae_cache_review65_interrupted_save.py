"""An interrupted overwrite of a saved LatentCache (diff review 65 E): save wrote
latent_cache.npz, then latent_cache.json, and left an earlier save's JSON in place meanwhile.
Stopped between the two (Ctrl-C), load_latent_cache gave the new activations under the old
model and SAE fingerprint (which is what ties a cache to its SAE). Now the old JSON is removed
first, so such a folder is refused."""

import numpy as np
import pytest

import trustlab.interpret.sae.cache as cache
from interrupted_saves import stopped_at
from trustlab.errors import ResourceError


def _cache(model, sae, activations):
    return cache.LatentCache(
        model=model, layer=1, n_latents=2, n_contexts=1, n_tokens=3,
        tokens=np.array([5, 6, 7], np.int64), token_offsets=np.array([0, 3]),
        latent_offsets=np.array([0, 1, 2]), contexts=np.array([0, 0], np.int32),
        positions=np.array([1, 2], np.int32), activations=np.array(activations, np.float32),
        sae=sae,
    )  # fmt: skip


def test_an_interrupted_overwrite_does_not_load_under_the_old_sae(tmp_path):
    _cache("old", "a" * 64, [1.0, 2.0]).save(tmp_path)
    new = _cache("new", "b" * 64, [9.0, 8.0])
    with stopped_at(cache, "latent_cache.json"):
        new.save(tmp_path)
    with pytest.raises(ResourceError):  # the old SAE fingerprint beside the new records loaded
        cache.load_latent_cache(tmp_path)
    new.save(tmp_path)  # a save that completes reads back whole
    loaded = cache.load_latent_cache(tmp_path)
    assert loaded.model == "new" and loaded.sae == "b" * 64
    assert np.array_equal(loaded.activations, new.activations)
