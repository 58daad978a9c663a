"""One latent's examples (the spec's check D6): equal-count quantile bins, test examples that
carry their bin, display activations in 0..10, the most activating token at index 24 of 32,
non-activating windows that are really zero, disjoint train and test sets.

Caches are built directly from random records (no model), so every property can be checked by
hypothesis on many shapes; the expectations are recomputed here from the records.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trustlab.errors import InputError
from trustlab.interpret import LatentCache, latent_examples


def random_cache(seed, n_contexts=60, length=(20, 120), n_latents=3, rate=0.05):
    """Contexts of random lengths; latent 0 fires at ``rate`` of tokens (values 0.1-5), latent 1
    never fires, latent 2 fires once."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(*length, size=n_contexts)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    records = []
    for c, n in enumerate(lengths):
        for p in range(1, n):
            if rng.random() < rate:
                records.append((0, c, p, rng.uniform(0.1, 5.0)))
    records.append((2, 0, 1, 1.0))
    records.sort()
    latents = np.array([r[0] for r in records])
    counts = np.bincount(latents, minlength=n_latents)
    return LatentCache(
        model="toy",
        layer=0,
        n_latents=n_latents,
        n_contexts=n_contexts,
        n_tokens=int((lengths - 1).sum()),
        tokens=rng.integers(0, 1000, size=offsets[-1]),
        token_offsets=offsets,
        latent_offsets=np.concatenate([[0], np.cumsum(counts)]),
        contexts=np.array([r[1] for r in records], dtype=np.int32),
        positions=np.array([r[2] for r in records], dtype=np.int32),
        activations=np.array([r[3] for r in records], dtype=np.float32),
    )


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), n_quantiles=st.integers(1, 12), ctx=st.sampled_from([8, 32]))
def test_sampling_invariants(seed, n_quantiles, ctx):
    cache = random_cache(seed)
    ex = latent_examples(cache, 0, ctx_len=ctx, n_quantiles=n_quantiles, random_state=seed)
    contexts, positions, values = cache.latent(0)
    # every block of ctx tokens where the latent fires is one activating example (two blocks
    # moved onto the same window by a context end count once)
    windows = set()
    for c, b in {(int(c), int(p) // ctx) for c, p in zip(contexts, positions, strict=True)}:
        in_block = (contexts == c) & (positions // ctx == b)
        centre = int(positions[in_block][np.argmax(values[in_block])])
        length = int(cache.token_offsets[c + 1] - cache.token_offsets[c])
        windows.add((c, 0 if length <= ctx else min(max(centre - 3 * ctx // 4, 0), length - ctx)))
    assert ex.n_activating == len(windows)
    assert {(e.context, e.start) for e in ex.train + ex.test} <= windows
    # equal-count bins, increasing; each test example's max lies in its bin's range
    sizes = [len(b) for b in np.array_split(np.arange(ex.n_activating), n_quantiles)]
    assert max(sizes) - min(sizes) <= 1
    assert list(ex.quantile_edges) == sorted(ex.quantile_edges)
    per_bin = ex.n_test and np.bincount([e.quantile for e in ex.test], minlength=n_quantiles)
    for q, size in enumerate(sizes):
        assert per_bin[q] == min(size // 2, 50 // n_quantiles) if size else True
    for e in ex.test:
        low = ex.quantile_edges[e.quantile]
        high = ex.quantile_edges[e.quantile + 1] if e.quantile + 1 < len(ex.quantile_edges) else 99
        assert low <= e.max_activation <= high
    # train and test are disjoint windows
    key = {(e.context, e.start, e.max_activation) for e in ex.test}
    assert not key & {(e.context, e.start, e.max_activation) for e in ex.train}
    # windows: ctx tokens (whole short contexts), tokens and activations from the cache
    for e in ex.train + ex.test:
        length = cache.token_offsets[e.context + 1] - cache.token_offsets[e.context]
        assert len(e.tokens) == min(ctx, length) == len(e.activations)
        assert np.array_equal(e.tokens, cache.context_tokens(e.context)[e.start : e.start + ctx])
        norm = e.normalized(ex.max_activation)
        assert set(norm.tolist()) <= set(range(11)) and norm.max() >= 1
        # the window holds the cache's values; when no context end moved it, the token at
        # index ctx - ctx // 4 is the most activating of its block of ctx tokens
        for i in np.flatnonzero(e.activations):
            at = (contexts == e.context) & (positions == e.start + i)
            assert e.activations[i] == pytest.approx(values[at][0])
        if e.start > 0 and e.start + ctx < length:
            centre = e.start + ctx - ctx // 4
            block = (contexts == e.context) & (positions // ctx == centre // ctx)
            assert e.activations[ctx - ctx // 4] == pytest.approx(values[block].max())
    # non-activating windows: no record inside
    for e in ex.not_active:
        inside = (contexts == e.context) & (positions >= e.start)
        inside &= positions < e.start + len(e.tokens)
        assert not inside.any() and e.quantile is None and e.max_activation == 0


def test_the_centre_is_index_24_of_32_on_long_contexts():
    cache = random_cache(1, length=(200, 300))
    ex = latent_examples(cache, 0, random_state=1)
    centred = [e for e in ex.test if 0 < e.start < 200 - 32]
    assert len(centred) >= 20
    assert all(e.activations[24] > 0 for e in centred)
    # most are the window's strongest token too (a neighbouring block may hold a stronger one)
    assert np.mean([int(np.argmax(e.activations)) == 24 for e in centred]) >= 0.5


@pytest.mark.parametrize("strategy", ["quantiles", "top", "random", "mix"])
def test_train_strategies(strategy):
    cache = random_cache(2, n_contexts=200)
    ex = latent_examples(cache, 0, train_strategy=strategy, random_state=2)
    assert ex.n_train == 40 and ex.n_test == 50 and ex.n_not_active == 50
    strengths = sorted((e.max_activation for e in ex.train), reverse=True)
    if strategy == "top":
        tested = {(e.context, e.start) for e in ex.test}
        others = [
            e.max_activation for e in ex.test if (e.context, e.start) not in tested
        ]  # fmt: skip
        assert strengths[-1] >= max(others, default=0)
    if strategy == "quantiles":
        assert np.array_equal(np.bincount([e.quantile for e in ex.train]), [4] * 10)
    again = latent_examples(cache, 0, train_strategy=strategy, random_state=2)
    assert [(e.context, e.start) for e in again.train] == [(e.context, e.start) for e in ex.train]


def test_latents_that_rarely_or_never_fire_are_reported():
    cache = random_cache(3)
    silent = latent_examples(cache, 1)
    assert (silent.n_activating, silent.n_train, silent.n_test) == (0, 0, 0)
    assert not silent.explainable and silent.max_activation == 0
    assert silent.n_not_active == 50  # it is zero everywhere
    once = latent_examples(cache, 2)
    assert once.n_activating == 1 and not once.explainable
    assert "too few to explain" in once.summary()
    assert latent_examples(cache, 0, min_examples=5).explainable


def test_bad_inputs_are_named():
    cache = random_cache(4)
    for kwargs, argument in [
        (dict(latent=3), "latent"),  # the name in this call (LatentCache.latent says "index")
        (dict(latent=0, ctx_len=2), "ctx_len"),
        (dict(latent=0, train_strategy="best"), "train_strategy"),
        (dict(latent=0, n_quantiles=0), "n_quantiles"),
        # 5 // 10 a bin: no test example at all, which was returned without a word
        (dict(latent=0, n_test=5), "n_test"),
    ]:
        with pytest.raises(InputError) as err:
            latent_examples(cache, **kwargs)
        assert err.value.argument == argument
    with pytest.raises(InputError) as err:
        latent_examples("cache", 0)
    assert err.value.argument == "cache"
