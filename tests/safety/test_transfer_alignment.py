"""Pairing tokens of two different tokenizers by where their character spans end.

``paired_activations(..., align="offsets")`` between SmolLM2-135M-Instruct (byte-level BPE)
and a tiny random Llama with a word-level tokenizer built here with ``tokenizers`` (words split
on whitespace, unknown words as [UNK], a BOS token without a span).

Oracles: each token's span found without the offset mapping - SmolLM2's tokens decoded one by
one and laid end to end along the text, the words found with a regular expression - and
matched by brute force over all pairs of tokens; the models' own ``activations(..., "all")``
for the rows; ``align="tokens"`` when both sides are the same tokenizer; a hand-worked text
where a byte-level tokenizer splits an emoji into two tokens that end at the same character.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from pydoc_texts import pydoc_texts
from test_transfer_fidelity import _brute_force

from tiny_llama import word_tokenizer
from trustlab.errors import InputError
from trustlab.safety.transfer import ActivationMap, mapped_lm_loss, paired_activations
from trustlab.safety.transfer._alignment import boundary_pairs, token_ends

SOURCE_LAYER, TARGET_LAYER = 9, 1


TEXTS = pydoc_texts(60, 70)


def _char_tokenizer(alphabet):
    """A fast character-level tokenizer (every character one token, no special tokens)."""
    from tokenizers import Regex, Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {"[UNK]": 0, **{c: i + 1 for i, c in enumerate(alphabet)}}
    core = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    core.pre_tokenizer = pre_tokenizers.Split(Regex(r"[\s\S]"), behavior="isolated")
    return PreTrainedTokenizerFast(tokenizer_object=core, unk_token="[UNK]")


@pytest.fixture(scope="module")
def word_model():
    """A 2-layer Llama (width 64, random weights) on a vocabulary of the first texts' words,
    so later words of the texts are [UNK]."""
    from transformers import LlamaConfig, LlamaForCausalLM

    from trustlab.llm import LocalModel

    tokenizer = word_tokenizer(sorted({w for t in TEXTS[:5] for w in t.split()}))
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=256,
        bos_token_id=1,
        eos_token_id=None,
        pad_token_id=0,
    )
    torch.manual_seed(0)
    return LocalModel(LlamaForCausalLM(config), tokenizer, name="tiny-words")


def _decoded_ends(lm, text):
    """SmolLM2 token ends from decoding each token alone (ASCII text: one character a byte)."""
    ends, cursor = [], 0
    for token in lm.tokenizer(text)["input_ids"]:
        piece = lm.tokenizer.decode([token])
        assert text[cursor : cursor + len(piece)] == piece
        cursor += len(piece)
        ends.append(cursor)
    assert cursor == len(text)
    return ends


def _word_ends(model, text):
    """Word tokenizer token ends: the BOS (no span) as None, then each whitespace-free run."""
    ids = model.tokenizer(text)["input_ids"]
    words = [m.end() for m in re.finditer(r"\S+", text)]
    assert ids[0] == model.tokenizer.bos_token_id and len(ids) == len(words) + 1
    return [None, *words]


def _brute_force_pairs(source_ends, target_ends):
    pairs = [
        (i, j)
        for i, a in enumerate(source_ends)
        for j, b in enumerate(target_ends)
        if a is not None and a == b
    ]
    assert len({i for i, _ in pairs}) == len(pairs) == len({j for _, j in pairs})
    return pairs


def test_offset_pairs_are_a_brute_force_matching_of_spans(smollm2, word_model):
    assert all(t.isascii() for t in TEXTS)
    source, target = paired_activations(
        smollm2, word_model, TEXTS, SOURCE_LAYER, TARGET_LAYER, batch_size=4, align="offsets"
    )
    own_source = smollm2.activations(TEXTS, SOURCE_LAYER, "all", batch_size=4)
    own_target = word_model.activations(TEXTS, TARGET_LAYER, "all", batch_size=4)
    expected_source, expected_target, dropped = [], [], [0, 0]
    for k, text in enumerate(TEXTS):
        pairs = _brute_force_pairs(_decoded_ends(smollm2, text), _word_ends(word_model, text))
        s_index = [i for i, _ in pairs]
        t_index = [j for _, j in pairs]
        # the private helpers give the same indices
        helper = boundary_pairs(
            token_ends(smollm2, text, "source_model"), token_ends(word_model, text, "target_model")
        )
        assert helper[0].tolist() == s_index and helper[1].tolist() == t_index
        expected_source.append(own_source[k][s_index])
        expected_target.append(own_target[k][t_index])
        dropped[0] += len(own_source[k]) - len(pairs)
        dropped[1] += len(own_target[k]) - len(pairs)
    assert np.array_equal(source, np.concatenate(expected_source))
    assert np.array_equal(target, np.concatenate(expected_target))
    assert source.shape == (len(target), smollm2.hidden_size) and target.shape[1] == 64
    # tokens fell out on both sides: SmolLM2 inside words and at punctuation, the words' BOS
    assert dropped[0] > 0 and dropped[1] >= len(TEXTS)


def test_a_character_split_into_byte_tokens_pairs_its_last_token(smollm2, word_model):
    """SmolLM2 reads the emoji as ' <byte>' (span 10-12) and '<byte>' (11-12): the second is the
    first token that has read the whole emoji."""
    text = "naïve café 😀 ok"
    pieces = [smollm2.tokenizer.decode([t]) for t in smollm2.tokenizer(text)["input_ids"]]
    assert pieces[:3] == ["na", "ïve", " café"] and pieces[-1] == " ok" and len(pieces) == 6
    source_ends = token_ends(smollm2, text, "source_model")
    assert source_ends == {2: 0, 5: 1, 10: 2, 12: 4, 15: 5}
    target_ends = token_ends(word_model, text, "target_model")
    assert target_ends == {5: 1, 10: 2, 12: 3, 15: 4}  # token 0 is the BOS
    s_index, t_index = boundary_pairs(source_ends, target_ends)
    assert s_index.tolist() == [1, 2, 4, 5] and t_index.tolist() == [1, 2, 3, 4]
    source, target = paired_activations(
        smollm2, word_model, [text], SOURCE_LAYER, TARGET_LAYER, align="offsets"
    )
    assert np.array_equal(source, smollm2.activations([text], SOURCE_LAYER, "all")[0][[1, 2, 4, 5]])
    assert np.array_equal(target, word_model.activations([text], TARGET_LAYER, "all")[0][1:])


def test_offsets_between_one_tokenizer_pair_every_token_with_a_span(smollm2, word_model):
    """SmolLM2 adds no special tokens, so with itself every token pairs, as with "tokens"; the
    word tokenizer with itself pairs every token but the BOS, whose span is empty on both
    sides."""
    texts = TEXTS[:4]
    by_offsets = paired_activations(smollm2, smollm2, texts, 4, SOURCE_LAYER, align="offsets")
    by_tokens = paired_activations(smollm2, smollm2, texts, 4, SOURCE_LAYER)
    assert np.array_equal(by_offsets[0], by_tokens[0])
    assert np.array_equal(by_offsets[1], by_tokens[1])
    source, target = paired_activations(word_model, word_model, texts, 0, 1, align="offsets")
    both = word_model.activations(texts, [0, 1], "all")
    assert np.array_equal(source, np.concatenate([a[1:, 0] for a in both]))
    assert np.array_equal(target, np.concatenate([a[1:, 1] for a in both]))


_ALPHABET = "ab"
_CHAR_TOKENIZER = _char_tokenizer(_ALPHABET + " \n\t")
_WORD_TOKENIZER = word_tokenizer(
    sorted({"a", "b", "ab", "ba"})
)  # other words are [UNK], with a span


@settings(max_examples=40, deadline=None)
@given(
    words=st.lists(st.text(_ALPHABET, min_size=1, max_size=4), min_size=1, max_size=8),
    gaps=st.lists(st.sampled_from([" ", "  ", "\n", " \t "]), min_size=8, max_size=8),
    lead=st.sampled_from(["", " "]),
)
def test_every_word_end_pairs_with_its_last_character(words, gaps, lead):
    """Characters against words: each word pairs its last character, nothing else pairs."""

    class Model:
        def __init__(self, tokenizer, name):
            self.tokenizer, self.name = tokenizer, name

    chars = Model(_CHAR_TOKENIZER, "chars")
    word_level = Model(_WORD_TOKENIZER, "words")
    text = lead + "".join(w + g for w, g in zip(words, gaps, strict=False)).rstrip()
    s_index, t_index = boundary_pairs(
        token_ends(chars, text, "source_model"), token_ends(word_level, text, "target_model")
    )
    ends = [m.end() for m in re.finditer(r"\S+", text)]
    assert s_index.tolist() == [e - 1 for e in ends]  # one character one token, no specials
    assert t_index.tolist() == list(range(1, len(ends) + 1))  # after the BOS


def test_bad_alignments_are_named(smollm2, word_model):
    with pytest.raises(InputError) as err:
        paired_activations(smollm2, word_model, TEXTS[:1], 1, 1, align="bytes")
    assert err.value.argument == "align"
    # the default refuses different tokenizers and points to the alignment
    with pytest.raises(InputError, match="align='offsets'") as err:
        paired_activations(smollm2, word_model, TEXTS[:1], 1, 1)
    assert err.value.argument == "target_model"
    # no token end in common: SmolLM2's ' ' against the words' BOS alone
    with pytest.raises(InputError) as err:
        paired_activations(smollm2, word_model, [" "], 1, 1, align="offsets")
    assert err.value.argument == "texts"

    class Slow:
        """The word model behind a tokenizer without offsets (not a fast one)."""

        name, n_layers, hidden_size = "slow", word_model.n_layers, word_model.hidden_size
        activations, intervene = word_model.activations, word_model.intervene
        tokenizer = staticmethod(lambda text, **kwargs: word_model.tokenizer(text))

    with pytest.raises(InputError, match="fast tokenizer") as err:
        paired_activations(smollm2, Slow(), TEXTS[:1], 1, 1, align="offsets")
    assert err.value.argument == "target_model"


# ----------------------------------------------------------------------------- loss with offsets


def _offset_pairs(source, target):
    """The brute-force pairs of a text (decoded spans against the words)."""
    return lambda text: _brute_force_pairs(_decoded_ends(source, text), _word_ends(target, text))


def test_loss_with_offsets_replaces_the_paired_tokens_only(smollm2, word_model):
    """mapped_lm_loss(align="offsets") against the fidelity tests' brute force with the
    brute-force pairs (the unpaired target tokens, the BOS among them, keep their output)."""
    fit_source, fit_target = paired_activations(
        smollm2, word_model, pydoc_texts(0, 20), SOURCE_LAYER, TARGET_LAYER, align="offsets"
    )
    to_words = ActivationMap(kind="affine").fit(
        fit_source, fit_target, source_model=smollm2, target_model=word_model,
        source_layer=SOURCE_LAYER, target_layer=TARGET_LAYER,
    )  # fmt: skip
    texts = TEXTS[:6]
    result = mapped_lm_loss(to_words, smollm2, word_model, texts, align="offsets", batch_size=4)
    (clean, mapped, kl), n, replaced = _brute_force(
        to_words, smollm2, word_model, texts, SOURCE_LAYER, TARGET_LAYER,
        pairs=_offset_pairs(smollm2, word_model),
    )  # fmt: skip
    assert (result.n_tokens, result.n_replaced, result.align) == (n, replaced, "offsets")
    assert result.n_replaced < sum(len(word_model.tokenizer(t)["input_ids"]) for t in texts)
    assert result.clean_loss == pytest.approx(clean, abs=1e-5)
    assert result.mapped_loss == pytest.approx(mapped, abs=1e-4)
    assert result.kl == pytest.approx(kl, abs=1e-4) and result.kl > 1e-4
    assert "replaced (offsets)" in result.summary()
    # the default alignment refuses the two tokenizers
    with pytest.raises(InputError, match="align='offsets'") as err:
        mapped_lm_loss(to_words, smollm2, word_model, texts)
    assert err.value.argument == "target_model"
    with pytest.raises(InputError) as err:
        mapped_lm_loss(to_words, smollm2, word_model, [" "], align="offsets")
    assert err.value.argument == "texts"
