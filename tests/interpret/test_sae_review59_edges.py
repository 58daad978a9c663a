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

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from trustlab.errors import InputError
from trustlab.interpret.sae import (
    SparseAutoencoder,
    cache_latents,
    intervened_generations,
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


def planted_rows(seed=0):
    rng = np.random.default_rng(seed)
    atoms = rng.normal(size=(16, 8))
    codes = rng.exponential(size=(600, 16)) * (rng.random((600, 16)) < 0.1)
    return codes @ atoms  # largest magnitude about 14


def test_fit_is_scale_equivariant_across_float32s_range():
    """The docs' "10 x the rows gives the same decoder" held only for row norms in about
    [1e-12, 1e18]: the scale floor of 1e-12 left rows of norm 1e-19 unscaled (FVU 1.4e9 at
    1e-20), and float32 squares of the row norms overflowed from 1e18 (FVU NaN, NaN encodings).
    Float32 rounding differs between scales, so the decoders agree to 1e-5, not exactly."""
    X = planted_rows()
    fit = dict(n_latents=32, k=4, max_epochs=3, batch_size=64)
    base = SparseAutoencoder(**fit).fit(X)
    for scale in (1e-20, 1e20, 1e30):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no numpy overflow warning reaches the caller
            sae = SparseAutoencoder(**fit).fit(X * scale)
        assert sae.fit_.fvu == pytest.approx(base.fit_.fvu, rel=1e-5), scale
        assert np.abs(sae.W_dec_ - base.W_dec_).max() < 1e-5, scale
        assert np.allclose(sae.reconstruct(X * scale) / scale, base.reconstruct(X), atol=1e-4)


def test_rows_beyond_float32_are_refused_by_name():
    """Rows that overflow float32 (1e38: a raw "Probabilities contain NaN" ValueError from the
    resampling) or sink to its subnormals (1e-40: FVU 0.42 against 0.40, reconstructions off
    by half their size) are refused; so is encoding rows beyond 1e36."""
    X = planted_rows()
    for scale in (1e38, 1e-40):
        with pytest.raises(InputError, match=r"X: expected values whose largest magnitude lies"):
            SparseAutoencoder(n_latents=32, k=4, max_epochs=1, batch_size=64).fit(X * scale)
    sae = small_sae(d=8)
    with pytest.raises(InputError, match=r"X: .*got 'a largest magnitude of 1e\+37'"):
        sae.encode(np.full((2, 8), 1e37))
    assert sae.encode(np.full((2, 8), 1e-40)).shape == (2, 10)  # tiny rows encode as ~0
    SparseAutoencoder(n_latents=8, k=2, max_epochs=1).fit(np.zeros((20, 4)))  # zeros: allowed


def test_intervened_generations_names_the_prompt_of_no_tokens(tiny):
    """Each prompt is generated alone, so the model's own refusal named every prompt
    ``prompts[0]``: the empty second prompt was reported as prompts[0]."""
    sae = small_sae(d=tiny.hidden_size, m=8, layer=0)
    with pytest.raises(InputError, match=r"prompts\[1\]: expected a text of at least one token"):
        intervened_generations(tiny, sae, 0, ["The cat", ""], 1.0, max_new_tokens=2)


def test_a_cache_of_no_token_is_refused(tiny):
    """Texts of one token each (their first token is left out) gave a cache of 0 tokens in
    which every latent "never fires", with a median firing rate of 0 % over nothing."""
    sae = small_sae(d=tiny.hidden_size, m=8, layer=0)
    with pytest.raises(InputError, match=r"texts: expected texts of at least 2 tokens"):
        cache_latents(tiny, sae, ["x", "y"])
    assert cache_latents(tiny, sae, ["x", "The cat sat"]).n_tokens == 2


def test_ordinary_rows_keep_the_float32_mean_norm_scale():
    """The float64 mean norm that makes fit scale-equivariant beyond float32's squares is
    needed only outside it: on ordinary rows the scale stays sqrt(d) over the float32 mean
    row norm, bit for bit, so every earlier fit (and the page's figures) is reproduced. With
    the float64 path everywhere the scale moved by one unit in the last place on every one of
    12 random sets, and the trained weights with it."""
    import math

    for seed in (3, 4, 5):
        rng = np.random.default_rng(seed)
        X = (rng.standard_normal((300, 24)) * rng.uniform(0.1, 3)).astype(np.float32)
        sae = SparseAutoencoder(
            n_latents=16, k=2, max_epochs=1, batch_size=100, random_state=0,
            validation_fraction=0.0,
        ).fit(X)  # fmt: skip
        assert sae.fit_.scale == math.sqrt(24) / float(np.linalg.norm(X, axis=1).mean())
