"""A damaged checkpoint folder is named as the checkpoint's fault (diff review 64 N of 54a621e1,
sister): load_latent_cache names a damaged cache, but cache_latents read a checkpointed chunk and
the folder's cache.json raw. Measured: a chunk_000001.npz of junk -> BadZipFile, a cache.json
holding [1] -> AttributeError ('sae cache': 'unexpected failure', exit 1, not the --out hint).
"""

from __future__ import annotations

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.interpret import SparseAutoencoder, cache_latents, pydoc_texts

TEXTS = pydoc_texts(200)[:4]


@pytest.fixture
def run(tmp_path, tiny):
    rng = np.random.default_rng(0)
    d = tiny.hidden_size
    sae = SparseAutoencoder.from_weights(
        rng.normal(size=(d, 8)), np.zeros(8), rng.normal(size=(8, d)), np.zeros(d), k=2, layer=1
    )
    folder = tmp_path / "chunks"
    cache_latents(tiny, sae, TEXTS, checkpoint=folder, checkpoint_every=2)
    return lambda: cache_latents(tiny, sae, TEXTS, checkpoint=folder, checkpoint_every=2), folder


@pytest.mark.parametrize(
    ("name", "text", "said"),
    [
        ("chunk_000001.npz", "PK\x03\x04junk", "could not be read as a checkpointed chunk"),
        ("cache.json", "[1]", "could not be read as a checkpoint record .a JSON list"),
        ("cache.json", '{"format": 1', "could not be read as a checkpoint record .JSONDecodeError"),
    ],
)
def test_a_damaged_checkpoint_is_named(run, name, text, said):
    again, folder = run
    (folder / name).write_text(text, encoding="latin-1")
    with pytest.raises(InputError, match=said) as err:
        again()
    assert err.value.argument == "checkpoint" and name in str(err.value)
