"""Review 59 (polysae): edge inputs of the SAE and of the intervention functions.

- ``decode`` (and so ``reconstruct``) of no rows gives no rows, as ``encode`` does: it refused
  them naming ``Z``, an argument ``reconstruct``'s caller never passed;
- ``decode`` of a scipy sparse ``Z`` holding NaN is refused as the dense one is (it returned NaN
  rows);
- an intervention prompt of no tokens (the empty text, SmolLM2's tokenizer adds no BOS) is
  refused naming ``prompts[i]`` (it raised torch's "Expected tensor for argument #1 'indices'
  to have one of the following scalar types: Long, Int").
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from trustlab.errors import InputError
from trustlab.interpret.sae import (
    SparseAutoencoder,
    intervention_kl,
    kl_curve,
    output_effects,
)


def small_sae(d=6, m=10, layer=None):
    rng = np.random.default_rng(0)
    return SparseAutoencoder.from_weights(
        rng.normal(size=(d, m)), rng.normal(size=m) * 0.1, rng.normal(size=(m, d)),
        rng.normal(size=d), k=3, layer=layer,
    )  # fmt: skip


def test_decode_and_reconstruct_take_no_rows_as_encode_does():
    sae = small_sae()
    empty = np.zeros((0, 6))
    assert sae.encode(empty).shape == (0, 10)
    assert sae.reconstruct(empty).shape == (0, 6)
    assert sae.decode(np.zeros((0, 10))).dtype == np.float32
    assert sae.decode(sae.encode(empty, sparse=True)).shape == (0, 6)
    with pytest.raises(InputError, match="Z: expected 10 columns"):
        sae.decode(np.zeros((0, 9)))


def test_sparse_decode_refuses_nan_as_dense_decode_does():
    sae = small_sae()
    Z = np.zeros((3, 10))
    Z[1, 4] = np.nan
    with pytest.raises(InputError, match="Z: expected finite values"):
        sae.decode(Z)
    with pytest.raises(InputError, match=r"Z: expected finite values, got nan at index \(1, 4\)"):
        sae.decode(sp.csr_matrix(Z))
    Z[1, 4] = np.inf
    with pytest.raises(InputError, match=r"got inf at index \(1, 4\)"):
        sae.decode(sp.csc_matrix(Z))


def test_a_prompt_of_no_tokens_is_refused_by_name(tiny):
    assert tiny.tokenizer("")["input_ids"] == []  # no BOS: the empty text has no token
    sae = small_sae(d=tiny.hidden_size, m=8, layer=0)
    prompts = ["The cat sat", ""]
    with pytest.raises(InputError, match=r"prompts\[1\]: expected a text of at least one token"):
        intervention_kl(tiny, sae, 0, prompts, 1.0)
    with pytest.raises(InputError, match=r"prompts\[1\]"):
        kl_curve(tiny, sae, 0, prompts)
    with pytest.raises(InputError, match=r"prompts\[1\]"):
        output_effects(tiny, sae, 0, prompts, 1.0)
    assert intervention_kl(tiny, sae, 0, prompts[:1], 0.0) == 0.0
