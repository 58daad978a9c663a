"""The target's next-token loss with one layer's output replaced by mapped activations.

Oracles: a brute-force computation with the Hugging Face model itself - one text at a time, no
padding, the source activations read from ``output_hidden_states`` (not through trustlab's
capture hooks), mapped by ``ActivationMap.transform`` in numpy and put in place by a forward
hook registered here, the loss and KL written out from ``log_softmax`` of the logits; the
identity map (the loss must not move); a map to zero (it must). Models: SmolLM2-135M-Instruct
with itself (layer 4 -> 9) and into a tiny random Llama of width 64 that shares its tokenizer.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch
from pydoc_texts import pydoc_texts

from tiny_llama import tiny_llama
from trustlab.errors import InputError
from trustlab.safety.transfer import ActivationMap, paired_activations
from trustlab.safety.transfer.fidelity import MappedLoss, mapped_lm_loss

LAYER = 9  # not 11, the layer reported broken in SmolLM2-135M


# held-out texts of different lengths (batches of 3 sort and pad them) and one of a single token
TEXTS = [t[: 30 + 9 * i] for i, t in enumerate(pydoc_texts(60, 67))] + ["Hello"]


@pytest.fixture(scope="module")
def tiny(smollm2):
    """A 2-layer Llama of width 64 with random weights on SmolLM2's tokenizer."""
    return tiny_llama(smollm2.tokenizer, smollm2.model.config.vocab_size)


@pytest.fixture(scope="module")
def layer_4_to_9(smollm2):
    """SmolLM2's layer 4 mapped to its layer 9 (affine, fitted on other texts): a real but
    imperfect map."""
    source, target = paired_activations(smollm2, smollm2, pydoc_texts(0, 40), 4, LAYER)
    return ActivationMap(kind="affine").fit(
        source, target, source_model=smollm2, target_model=smollm2, source_layer=4,
        target_layer=LAYER,
    )  # fmt: skip


def _constant_map(source_width, target_width, coef):
    """An affine map with the given coefficients and no intercept (lstsq on exact data)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(source_width + 200, source_width))
    return ActivationMap(kind="affine", validation_fraction=0.0).fit(X, X @ coef.T)


def _brute_force(activation_map, source, target, texts, source_layer, target_layer, pairs=None):
    """Token-weighted mean clean loss, mapped loss and KL, one unpadded text at a time, and the
    tokens compared and replaced. ``pairs(text)``: the (source index, target index) of the
    target tokens to replace (two tokenizers); None replaces every token (one tokenizer)."""
    totals, n, replaced = np.zeros(3), 0, 0
    layer = target.model.model.layers[target_layer]
    with torch.inference_mode():
        for text in texts:
            ids = target.tokenizer(text, return_tensors="pt").input_ids
            if ids.shape[1] < 2:
                continue
            matched = [(i, i) for i in range(ids.shape[1])] if pairs is None else pairs(text)
            s_index = torch.tensor([i for i, _ in matched], dtype=torch.long)
            t_index = torch.tensor([j for _, j in matched], dtype=torch.long)
            replaced += len(matched)
            s_ids = source.tokenizer(text, return_tensors="pt").input_ids
            hidden = source.model(s_ids, output_hidden_states=True).hidden_states[source_layer + 1]
            rows = torch.from_numpy(activation_map.transform(hidden[0, s_index].numpy()))

            def replace(module, args, output, rows=rows, where=t_index):
                h = (output if torch.is_tensor(output) else output[0]).clone()
                h[0, where] = rows.to(h.dtype)
                return h if torch.is_tensor(output) else (h, *output[1:])

            clean = torch.log_softmax(target.model(ids).logits[0, :-1].double(), dim=-1)
            handle = layer.register_forward_hook(replace)
            try:
                changed = torch.log_softmax(target.model(ids).logits[0, :-1].double(), dim=-1)
            finally:
                handle.remove()
            picked = torch.arange(ids.shape[1] - 1), ids[0, 1:]
            totals += (
                -float(clean[picked].sum()),
                -float(changed[picked].sum()),
                float((clean.exp() * (clean - changed)).sum()),
            )
            n += ids.shape[1] - 1
    return totals / n, n, replaced


def test_an_identity_map_leaves_the_loss_unchanged(smollm2):
    identity = _constant_map(smollm2.hidden_size, smollm2.hidden_size, np.eye(smollm2.hidden_size))
    result = mapped_lm_loss(identity, smollm2, smollm2, TEXTS, LAYER, LAYER, batch_size=3)
    assert result.mapped_loss == pytest.approx(result.clean_loss, abs=1e-5)
    assert abs(result.kl) <= 1e-7 and abs(result.relative_rise) <= 1e-5
    np.testing.assert_allclose(result.text_mapped_loss[:-1], result.text_clean_loss[:-1], atol=1e-5)
    assert result.clean_loss > 1.0  # a real loss, not a degenerate zero


def test_losses_and_kl_equal_a_brute_force_computation(smollm2, layer_4_to_9):
    result = mapped_lm_loss(layer_4_to_9, smollm2, smollm2, TEXTS, batch_size=3)
    (clean, mapped, kl), n, _ = _brute_force(layer_4_to_9, smollm2, smollm2, TEXTS, 4, LAYER)
    assert (result.source_layer, result.target_layer) == (4, LAYER)  # from the map
    assert result.n_tokens == n and result.n_texts == len(TEXTS)
    assert result.clean_loss == pytest.approx(clean, abs=1e-5)
    assert result.mapped_loss == pytest.approx(mapped, abs=1e-4)
    assert result.kl == pytest.approx(kl, abs=1e-4)
    # the layer-4 map is imperfect: the loss rises and the distributions move
    assert result.mapped_loss > result.clean_loss + 0.1 and result.kl > 0.1
    lengths = [len(smollm2.tokenizer(t)["input_ids"]) - 1 for t in TEXTS]
    assert result.text_tokens.tolist() == lengths and math.isnan(result.text_clean_loss[-1])
    weighted = np.nansum(result.text_mapped_loss * result.text_tokens) / sum(lengths)
    assert weighted == pytest.approx(result.mapped_loss, rel=1e-12)


def test_a_map_to_zero_raises_the_loss(smollm2):
    width = smollm2.hidden_size
    zero = _constant_map(width, width, np.zeros((width, width)))
    result = mapped_lm_loss(zero, smollm2, smollm2, TEXTS, LAYER, LAYER, batch_size=3)
    assert result.mapped_loss > result.clean_loss + 1.0 and result.kl > 1.0
    # a zero residual stream stays zero through Llama's bias-free blocks and gives all-zero
    # logits: the uniform distribution, whose loss is log(vocabulary size)
    assert result.mapped_loss == pytest.approx(math.log(smollm2.model.config.vocab_size), abs=1e-6)
    assert result.relative_rise == pytest.approx(
        (result.mapped_loss - result.clean_loss) / result.clean_loss
    )


def test_into_another_model_of_the_same_tokenizer(smollm2, tiny):
    """Source and target differ (widths 576 -> 64): the same brute force."""
    source, target = paired_activations(smollm2, tiny, pydoc_texts(0, 20), LAYER, 1)
    to_tiny = ActivationMap(kind="affine").fit(
        source, target, source_model=smollm2, target_model=tiny, source_layer=LAYER,
        target_layer=1,
    )  # fmt: skip
    result = mapped_lm_loss(to_tiny, smollm2, tiny, TEXTS, batch_size=3)
    (clean, mapped, kl), n, _ = _brute_force(to_tiny, smollm2, tiny, TEXTS, LAYER, 1)
    assert result.n_tokens == n and result.target_model == "tiny-llama"
    assert result.clean_loss == pytest.approx(clean, abs=1e-5)
    assert result.mapped_loss == pytest.approx(mapped, abs=1e-4)
    assert result.kl == pytest.approx(kl, abs=1e-4)
    assert result.kl > 1e-4  # the map is not exact, so the comparison has something to compare


def test_result_reports_itself(smollm2, layer_4_to_9):
    result = mapped_lm_loss(layer_4_to_9, smollm2, smollm2, TEXTS[:3])
    values = json.loads(json.dumps(result.to_dict()))
    assert values["relative_rise"] == pytest.approx(result.relative_rise)
    assert values["mapped_perplexity"] == pytest.approx(math.exp(result.mapped_loss))
    assert "text_clean_loss" not in values and values["kl"] == pytest.approx(result.kl)
    assert "nats/token" in result.summary() and result.plot() is not None
    assert isinstance(result, MappedLoss)


def test_bad_inputs_are_named(smollm2, tiny, layer_4_to_9):
    width = smollm2.hidden_size
    cases = [
        # a map of other widths: the message names the model and its width
        ((_constant_map(8, 8, np.eye(8)), smollm2, smollm2, TEXTS, 1, 1), "activation_map"),
        # the map records its models and layers
        ((layer_4_to_9, smollm2, tiny, TEXTS), "target_model"),
        ((layer_4_to_9, smollm2, smollm2, TEXTS, 5), "source_layer"),
        ((layer_4_to_9, smollm2, smollm2, TEXTS, 4, 30), "target_layer"),
        # an unrecorded layer must be given
        ((_constant_map(width, width, np.eye(width)), smollm2, smollm2, TEXTS), "source_layer"),
        ((layer_4_to_9, smollm2, smollm2, ["Hello", "Hi"]), "texts"),
        ((layer_4_to_9, smollm2, smollm2, []), "texts"),
        ((ActivationMap(), smollm2, smollm2, TEXTS), "activation_map"),
        ((layer_4_to_9, "smollm2", smollm2, TEXTS), "source_model"),
    ]
    for args, name in cases:
        with pytest.raises(InputError) as err:
            mapped_lm_loss(*args)
        assert err.value.argument == name, (args[3:], str(err.value))
    with pytest.raises(InputError, match="hidden size of target_model 'smollm2") as err:
        mapped_lm_loss(_constant_map(width, 8, np.zeros((8, width))), smollm2, smollm2, TEXTS, 1, 1)


def test_modules_do_not_import_torch():
    import subprocess
    import sys

    code = (
        "import sys, trustlab.safety.transfer as t; t.mapped_lm_loss; t.paired_activations; "
        "assert 'torch' not in sys.modules and 'transformers' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
