"""The transferred vector maps activations, then averages (spec 06 step 3: M is non-linear), for
both read positions (review 61). Mapping the mean activations instead (M(mean) - M(mean)) passed
every mapping test: these compare with the brute force and check that the shortcut differs."""

from __future__ import annotations

import numpy as np
import pytest

from tiny_llama import tiny_llama, word_tokenizer
from trustlab.safety.transfer import ActivationMap, mapped_steering_vector, transfer_vector

pytest.importorskip("torch")
WORDS = "a b c d e f".split()


def _relative(a, b):
    return float(np.linalg.norm(np.asarray(a, float) - b) / np.linalg.norm(b))


@pytest.fixture(scope="module")
def source():
    return tiny_llama(word_tokenizer(WORDS), len(WORDS) + 3, hidden_size=16, name="src", seed=1)


@pytest.fixture(scope="module")
def autoencoder():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(300, 16))
    y = np.tanh(x @ rng.normal(size=(16, 12)))  # a non-linear target: the ReLU layer is used
    return ActivationMap(hidden=32, max_epochs=3, batch_size=16).fit(
        x, y, source_model="src", target_model="tgt", source_layer=1, target_layer=0
    )


def test_transfer_vector_is_the_mean_of_the_mapped_rows(autoencoder):
    rng = np.random.default_rng(1)
    pos, neg = rng.normal(1.0, 1.0, size=(20, 16)), rng.normal(-1.0, 1.0, size=(15, 16))
    brute = autoencoder.transform(pos).mean(0) - autoencoder.transform(neg).mean(0)
    got = transfer_vector(autoencoder, pos, neg)
    assert _relative(got, brute) < 1e-5  # float64 against the float32 transform
    means = (
        autoencoder.transform(pos.mean(0)[None])[0] - autoencoder.transform(neg.mean(0)[None])[0]
    )
    assert _relative(means, brute) > 1e-2  # the shortcut is another vector (0.20 here)


@pytest.mark.parametrize("positions", ["last", "mean"])
def test_mapped_steering_vector_maps_each_read_activation(source, autoencoder, positions):
    pos, neg = ["a b c d e f a", "b c", "d"], ["e f", "a b c d", "f f f"]

    def side(prompts):
        if positions == "last":
            return autoencoder.transform(source.activations(prompts, 1, "last")).mean(0)
        rows = source.activations(prompts, 1, "all")
        return np.mean([autoencoder.transform(r[1:]).mean(0) for r in rows], axis=0)

    brute = side(pos) - side(neg)
    got = mapped_steering_vector(
        autoencoder, source, pos, neg, kind="diff_in_means", positions=positions
    )
    assert _relative(got.vector, brute) < 1e-4  # 3e-6 here: float32 activations, batched
    shortcut = transfer_vector(
        autoencoder,
        source.activations(pos, 1, positions).mean(0, keepdims=True),
        source.activations(neg, 1, positions).mean(0, keepdims=True),
    )
    assert _relative(shortcut, brute) > 5e-3  # 0.029 (last), 0.014 (mean) here
