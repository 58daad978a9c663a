"""The safety switch on SmolLM2-135M-Instruct: a layer's output replaced by an activation map.

Oracles: the plain model (an identity map must not change greedy text), ``ActivationMap.
transform`` in numpy float64 (the switched layer must read M of the plain layer, token by token)
and the decoder layer's own ``_forward_hooks`` (nothing left after the block, errors included).
"""

from __future__ import annotations

from pydoc_data.topics import topics

import numpy as np
import pytest
import torch

from trustlab.errors import InputError, TrustlabError
from trustlab.safety.transfer import ActivationMap, SafetySwitch, paired_activations

LAYER = 9  # not 11, the layer reported broken in SmolLM2-135M
PROMPTS = ["Tell me a short story about a cat.", "What is the capital of France?"]
NEW_TOKENS = 8


def _texts(n):
    """Short general texts: the openings of Python's pydoc topics (offline, varied)."""
    out = []
    for key in sorted(topics)[:n]:
        lines = [line for line in topics[key].splitlines() if line.strip("*=- ")]
        out.append(" ".join(" ".join(lines).split())[:120])
    return out


def _hooks(lm):
    """Forward hooks on the switched layer. transformers 5 adds its own recorder hook to every
    decoder layer once hidden states are asked for (an earlier test may have), so the tests
    compare with the count before the switch, not with zero."""
    return len(lm.model.model.layers[LAYER]._forward_hooks)


def _all_hooks(lm):
    return {(id(m), key) for m in lm.model.modules() for key in m._forward_hooks}


@pytest.fixture(scope="module")
def pairs(smollm2):
    """Paired activations of SmolLM2 with itself at LAYER (about 1,000 tokens: > 577 coefficients
    per output, so the affine map is determined)."""
    return paired_activations(smollm2, smollm2, _texts(40), LAYER, LAYER)


@pytest.fixture(scope="module")
def identity_map(pairs, smollm2):
    source, target = pairs
    return ActivationMap(kind="affine").fit(
        source, target, source_model=smollm2, target_model=smollm2, source_layer=LAYER
    )


@pytest.fixture(scope="module")
def plain(smollm2):
    return smollm2.generate(PROMPTS, NEW_TOKENS)


def test_an_identity_map_leaves_generation_unchanged(smollm2, identity_map, plain):
    assert identity_map.fit_.held_out_fvu < 1e-6
    switch = SafetySwitch(identity_map, smollm2, LAYER)
    base = _hooks(smollm2)
    assert not switch.active
    with switch as entered:
        assert entered is switch and switch.active and _hooks(smollm2) == base + 1
        switched = smollm2.generate(PROMPTS, NEW_TOKENS)
    assert switched == plain
    assert not switch.active and _hooks(smollm2) == base


def test_a_zero_map_changes_generation(smollm2, pairs, plain):
    source, _ = pairs
    zero = ActivationMap(kind="affine").fit(source, np.zeros_like(source))
    assert not zero.coef_.any() and not zero.intercept_.any()
    with SafetySwitch(zero, smollm2, LAYER):
        switched = smollm2.generate(PROMPTS, NEW_TOKENS)
    assert switched != plain
    assert smollm2.generate(PROMPTS, NEW_TOKENS) == plain  # restored


@pytest.mark.parametrize("kind", ["affine", "autoencoder"])
def test_the_switched_layer_reads_the_map_of_the_plain_layer(smollm2, pairs, kind):
    """Token by token: activations at LAYER under the switch = M(plain activations at LAYER)."""
    source, _ = pairs
    rng = np.random.default_rng(0)
    # a map that really moves the states: a random rotation-like mix, fitted exactly
    mix = np.eye(source.shape[1]) + 0.05 * rng.normal(size=(source.shape[1],) * 2)
    m = ActivationMap(kind=kind, hidden=64, max_epochs=2, random_state=0)
    m.fit(source, source @ mix.T + 1.0)
    texts = ["A cat sat on the mat.", "Numbers: one, two, three and four."]
    before = smollm2.activations(texts, LAYER, "all")
    with SafetySwitch(m, smollm2, LAYER):
        after = smollm2.activations(texts, LAYER, "all")
    for b, a in zip(before, after, strict=True):
        assert a.shape == b.shape and a.dtype == np.float32
        expected = m.transform(b)
        scale = np.abs(expected).max()
        np.testing.assert_allclose(a, expected, rtol=0, atol=1e-6 * scale)
        assert np.abs(a - b).max() > 0.01 * scale  # the map did something


def test_hooks_are_removed_after_an_error(smollm2, identity_map, plain):
    switch = SafetySwitch(identity_map, smollm2, LAYER)
    base, every = _hooks(smollm2), _all_hooks(smollm2)
    with pytest.raises(RuntimeError, match="inside"):
        with switch:
            assert _hooks(smollm2) == base + 1
            raise RuntimeError("raised inside the block")
    assert _hooks(smollm2) == base and not switch.active
    assert _all_hooks(smollm2) == every  # exactly the hooks there were before, anywhere
    with switch:  # usable again
        with pytest.raises(TrustlabError, match="already on"):
            switch.__enter__()
    assert _all_hooks(smollm2) == every


def test_a_map_between_other_models_is_refused(smollm2):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 8))
    other = ActivationMap(kind="affine").fit(X, X, source_model="tiny-a", target_model="tiny-b")
    with pytest.raises(InputError) as err:
        SafetySwitch(other, smollm2, LAYER)
    message = str(err.value)
    assert err.value.argument == "activation_map"
    assert "tiny-a" in message and "tiny-b" in message and smollm2.name in message
    assert "width 576" in message and "width 8)" in message
    half = ActivationMap(kind="affine").fit(
        rng.normal(size=(700, 576)), rng.normal(size=(700, 8)), target_model="tiny-b"
    )
    with pytest.raises(InputError, match="tiny-b"):
        SafetySwitch(half, smollm2, LAYER)


def test_bad_layers_and_arguments_are_named(smollm2, identity_map):
    for layer in (-1, smollm2.n_layers, 2.0, True):
        with pytest.raises(InputError) as err:
            SafetySwitch(identity_map, smollm2, layer)
        assert err.value.argument == "layer"
    # the map records that its source is LAYER: another layer is a hook mismatch
    with pytest.raises(InputError, match=f"layer {LAYER}") as err:
        SafetySwitch(identity_map, smollm2, LAYER + 1)
    assert err.value.argument == "layer"
    with pytest.raises(InputError) as err:
        SafetySwitch(ActivationMap(kind="affine"), smollm2, LAYER)
    assert err.value.argument == "activation_map"
    with pytest.raises(InputError) as err:
        SafetySwitch(identity_map, "smollm2", LAYER)
    assert err.value.argument == "model"


def test_the_switch_keeps_the_dtype(identity_map):
    h = torch.randn(2, 3, 576, dtype=torch.bfloat16)
    out = identity_map.apply_torch(h)
    assert out.dtype == torch.bfloat16 and out.shape == h.shape
    torch.testing.assert_close(out, h, rtol=2e-2, atol=2e-2)
    with torch.inference_mode():  # the weights made here must still work with autograd later
        identity_map.apply_torch(torch.randn(1, 576, dtype=torch.float16))
    g = torch.randn(4, 576, dtype=torch.float16, requires_grad=True)
    identity_map.apply_torch(g).float().sum().backward()
    assert g.grad is not None
