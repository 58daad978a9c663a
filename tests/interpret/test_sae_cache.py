"""The latent cache: records grouped by latent, checkpointed chunks, bad input.

Oracle: a dense brute force - every text's activations (the same batches), encoded densely by
the SAE, and every non-zero (latent, text, token, value) listed in a Python loop - against the
cache's sparse, latent-grouped arrays, read back latent by latent.
"""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.interpret import (
    SparseAutoencoder,
    cache_latents,
    load_latent_cache,
    pydoc_texts,
    sae_activations,
)

TEXTS = pydoc_texts(200)[:13] + ["Hi"]  # the last one is a single token: nothing to encode
LAYER = 1


@pytest.fixture(scope="module")
def sae(tiny):
    rows = sae_activations(tiny, pydoc_texts(200)[20:60], LAYER)
    return SparseAutoencoder(n_latents=96, k=4, max_epochs=3, batch_size=64).fit(
        rows, model_name=tiny.name, layer=LAYER
    )


def _brute_force(model, sae, texts, batch_size, **kwargs):
    records = {}
    acts = model.activations(texts, LAYER, "all", batch_size=batch_size, **kwargs)
    for c, rows in enumerate(acts):
        for p in range(1, len(rows)):
            z = sae.encode(rows[p : p + 1])[0]
            for latent in np.flatnonzero(z):
                records.setdefault(int(latent), []).append((c, p, float(z[latent])))
    return records


def _assert_records(cache, expected):
    """The cache holds exactly the brute force's records, in its order, values to 1e-5."""
    assert cache.n_records == sum(len(v) for v in expected.values())
    for latent in range(cache.n_latents):
        contexts, positions, values = cache.latent(latent)
        want = expected.get(latent, [])
        assert [(int(c), int(p)) for c, p in zip(contexts, positions, strict=True)] == [
            w[:2] for w in want
        ]
        assert np.allclose(values, [w[2] for w in want], atol=1e-5)


def test_the_cache_holds_every_nonzero_activation_grouped_by_latent(tiny, sae):
    calls = []
    cache = cache_latents(
        tiny, sae, TEXTS, batch_size=4, checkpoint_every=5, progress=lambda *a: calls.append(a)
    )
    _assert_records(cache, _brute_force(tiny, sae, TEXTS, batch_size=4))
    lengths = [len(tiny.tokenizer(t)["input_ids"]) for t in TEXTS]
    assert cache.n_contexts == len(TEXTS) and cache.n_tokens == sum(n - 1 for n in lengths)
    for c, text in enumerate(TEXTS):
        assert cache.context_tokens(c).tolist() == tiny.tokenizer(text)["input_ids"]
    assert cache.firing_counts.sum() == cache.n_records
    assert calls[-1] == (len(TEXTS), len(TEXTS))
    assert (cache.model, cache.layer, cache.n_latents) == ("tiny-llama", LAYER, 96)
    assert "records of 96 latents" in cache.summary() and cache.plot() is not None


def test_a_bfloat16_cache_holds_the_bfloat16_records_and_keeps_its_own_checkpoints(
    tmp_path, tiny, sae
):
    """``autocast="bfloat16"``: the records of the model run in bfloat16 (the brute force
    through ``activations(autocast=...)``, itself checked against transformers under
    ``torch.autocast`` in tests/llm/test_local.py), not float32's; a float32 run's checkpoint
    folder is refused."""
    folder = tmp_path / "chunks"
    cache = cache_latents(tiny, sae, TEXTS, batch_size=4, autocast="bfloat16", checkpoint=folder)
    _assert_records(cache, _brute_force(tiny, sae, TEXTS, batch_size=4, autocast="bfloat16"))
    with pytest.raises(AssertionError):  # bfloat16 is not float32
        _assert_records(cache, _brute_force(tiny, sae, TEXTS, batch_size=4))
    with pytest.raises(InputError, match="autocast") as err:
        cache_latents(tiny, sae, TEXTS, batch_size=4, checkpoint=folder)
    assert err.value.argument == "checkpoint"
    with pytest.raises(InputError) as err:
        cache_latents(tiny, sae, TEXTS, autocast="half")
    assert err.value.argument == "autocast"


def test_a_latent_that_never_fires_is_reported_not_an_error(tiny, sae):
    cache = cache_latents(tiny, sae, TEXTS[:3])
    silent = int(np.argmin(cache.firing_counts))
    assert cache.firing_counts[silent] == 0  # three short texts leave some of 96 latents silent
    contexts, positions, values = cache.latent(silent)
    assert len(contexts) == len(positions) == len(values) == 0
    assert cache.n_dead == int((cache.firing_counts == 0).sum())
    assert cache.to_dict()["n_dead"] == cache.n_dead


def test_checkpoints_resume_and_refuse_another_run(tmp_path, tiny, sae, monkeypatch):
    folder = tmp_path / "chunks"
    full = cache_latents(tiny, sae, TEXTS, checkpoint=folder, checkpoint_every=5)
    chunks = sorted(p.name for p in folder.glob("chunk_*.npz"))
    assert chunks == ["chunk_000000.npz", "chunk_000001.npz", "chunk_000002.npz"]
    (folder / "chunk_000001.npz").unlink()  # as if the run had stopped there
    seen = []
    original = tiny.activations

    def counting(texts, *args, **kwargs):
        seen.extend(texts)
        return original(texts, *args, **kwargs)

    monkeypatch.setattr(tiny, "activations", counting)
    again = cache_latents(tiny, sae, TEXTS, checkpoint=folder, checkpoint_every=5)
    assert seen == TEXTS[5:10]  # only the missing chunk is computed
    for name in ("contexts", "positions", "latent_offsets", "tokens", "token_offsets"):
        assert np.array_equal(getattr(again, name), getattr(full, name))
    assert np.allclose(again.activations, full.activations, atol=1e-6)
    with pytest.raises(InputError, match="texts") as err:
        cache_latents(tiny, sae, TEXTS[:-1], checkpoint=folder, checkpoint_every=5)
    assert err.value.argument == "checkpoint"
    # chunks are found by their number: another chunk size read them as other texts, and
    # another k (set on the same weights) returned the old k's records
    with pytest.raises(InputError, match="checkpoint_every differ"):
        cache_latents(tiny, sae, TEXTS, checkpoint=folder, checkpoint_every=3)
    other_k = copy.deepcopy(sae).set_params(k=8)  # the same weights
    with pytest.raises(InputError, match="encoding differ"):
        cache_latents(tiny, other_k, TEXTS, checkpoint=folder, checkpoint_every=5)


def test_checkpoints_of_another_models_weights_are_refused(tmp_path, tiny, sae, smollm2):
    """``model.name`` of a model folder is its last path component (``a/tiny`` and ``b/tiny``
    look alike): the run record holds a fingerprint of the weights, so the chunks another
    model computed are refused, not mixed into this model's cache."""
    from tiny_llama import tiny_llama

    other = tiny_llama(smollm2.tokenizer, smollm2.model.config.vocab_size, hidden_size=48, seed=1)
    assert other.name == tiny.name
    folder = tmp_path / "chunks"
    cache_latents(tiny, sae, TEXTS[:6], checkpoint=folder, checkpoint_every=3)
    (folder / "chunk_000001.npz").unlink()  # as if the run had stopped there
    with pytest.raises(InputError, match="another run .*weights") as err:
        cache_latents(other, sae, TEXTS[:6], checkpoint=folder, checkpoint_every=3)
    assert err.value.argument == "checkpoint"
    assert not (folder / "chunk_000001.npz").exists()
    # the same model still resumes
    again = cache_latents(tiny, sae, TEXTS[:6], checkpoint=folder, checkpoint_every=3)
    assert again.n_contexts == 6
    # a folder written before the fingerprint (no "weights" in its run record): another run
    meta = folder / "cache.json"
    run = json.loads(meta.read_text())
    del run["weights"]
    run["format"] = 1
    meta.write_text(json.dumps(run))
    with pytest.raises(InputError, match="older trustlab.*start afresh") as err:
        cache_latents(tiny, sae, TEXTS[:6], checkpoint=folder, checkpoint_every=3)
    assert err.value.argument == "checkpoint"


def test_a_duck_typed_model_without_torch_weights_still_checkpoints(tmp_path, tiny, sae):
    class Duck:  # the attributes cache_latents checks, no torch module behind them
        name, n_layers, hidden_size, tokenizer = tiny.name, tiny.n_layers, 48, tiny.tokenizer

        def activations(self, *args, **kwargs):
            return tiny.activations(*args, **kwargs)

    folder = tmp_path / "chunks"
    first = cache_latents(Duck(), sae, TEXTS[:4], checkpoint=folder, checkpoint_every=2)
    (folder / "chunk_000001.npz").unlink()
    again = cache_latents(Duck(), sae, TEXTS[:4], checkpoint=folder, checkpoint_every=2)
    assert np.array_equal(again.contexts, first.contexts)
    # and it is not taken for the torch model of the same name
    with pytest.raises(InputError, match="another run .*weights"):
        cache_latents(tiny, sae, TEXTS[:4], checkpoint=folder, checkpoint_every=2)


def test_save_and_load_round_trip(tmp_path, tiny, sae):
    cache = cache_latents(tiny, sae, TEXTS[:4])
    back = load_latent_cache(cache.save(tmp_path / "cache"))
    assert back.to_dict() == cache.to_dict()
    for name in ("tokens", "contexts", "positions", "activations", "latent_offsets"):
        assert np.array_equal(getattr(back, name), getattr(cache, name))


def test_bad_inputs_are_named(tiny, sae):
    rng = np.random.default_rng(0)
    narrow = SparseAutoencoder(n_latents=8, k=2, max_epochs=1, batch_size=32).fit(
        rng.normal(size=(64, 16))
    )
    cases = [
        (lambda: cache_latents(tiny, narrow, TEXTS, layer=1), "sae"),
        (lambda: cache_latents(tiny, SparseAutoencoder(), TEXTS), "sae"),
        (lambda: cache_latents(tiny, sae, []), "texts"),
        (lambda: cache_latents(tiny, sae, TEXTS, layer=7), "layer"),
        (lambda: cache_latents("tiny", sae, TEXTS), "model"),
        (lambda: cache_latents(tiny, sae, TEXTS, checkpoint_every=0), "checkpoint_every"),
    ]
    for call, argument in cases:
        with pytest.raises(InputError) as err:
            call()
        assert err.value.argument == argument, str(err.value)
    with pytest.raises(InputError, match="width 48.*width 16"):
        cache_latents(tiny, narrow, TEXTS, layer=1)
    # an empty text (no token) is named by its place among the texts, in any chunk; the error
    # named 'prompts', which these functions do not take
    with pytest.raises(InputError, match=r"^texts\[6\]: expected a text of at least one token"):
        cache_latents(tiny, sae, [*TEXTS[:6], "", *TEXTS[6:]], checkpoint_every=4)
    with pytest.raises(InputError, match=r"^texts\[1\]: expected a text of at least one token"):
        sae_activations(tiny, ["Hello world.", ""], LAYER)
    with pytest.raises(InputError):
        cache_latents(tiny, sae, TEXTS).latent(96)
