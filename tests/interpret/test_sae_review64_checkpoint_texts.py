"""The checkpoint's run key tells texts holding a NUL apart (review 64).

It hashed the texts joined by NUL, so ["ab\\x00", "c"] and ["ab", "\\x00c"] (same count) had one
key and a run over the second resumed the first's chunks (their tokens and records). Texts
without a NUL keep the key of folders written so far (a stopped run still resumes). The run key
alone, with a duck-typed model: no forward pass.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.interpret import SparseAutoencoder
from trustlab.interpret.sae import cache as cache_module


class _Named:
    name = "duck"


@pytest.fixture
def sae():
    return SparseAutoencoder.from_weights(np.eye(2), np.zeros(2), np.eye(2), np.zeros(2), k=1)


def test_texts_joined_alike_are_other_runs(tmp_path, sae):
    cache_module._checkpoint_folder(tmp_path, _Named(), sae, 0, ["ab\x00", "c"], None, 1)
    with pytest.raises(InputError, match="its texts differ"):
        cache_module._checkpoint_folder(tmp_path, _Named(), sae, 0, ["ab", "\x00c"], None, 1)


def test_texts_without_nul_keep_the_old_key():
    texts = ["one text", "another"]
    old = hashlib.sha256("\x00".join(texts).encode()).hexdigest()
    assert cache_module._texts_digest(texts) == old
