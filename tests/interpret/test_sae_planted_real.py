"""A latent planted on digit tokens, through SmolLM2-135M-Instruct and an SAE (the issue's
detection check, end to end).

Latent 1 of a ReLU SAE of SmolLM2's width is a linear probe for "this token is a digit" (one of
the tokens "0" to "9"; SmolLM2's tokenizer writes every digit as its own token), fitted with
scikit-learn's ``LogisticRegression`` on the block-2 residual stream of one set of pydoc texts:
its encoder column is the probe's weights and its bias is set so that its pre-activation is the
probe's margin; latent 0 is a probe for the token " the" built the same way (its explanation is
the wrong one below, the paper's control of another latent's explanation).

Oracles: the tokenizer's own token ids of other (held-out) texts say where the digits (and the
" the" tokens) are, and the cache must put each latent's records there; the probe's
``decision_function`` is the latent's pre-activation; a rule-based scripted scorer
(tests/interpret/rule_scorer.py) answers detection and fuzzing prompts by the explanation's rule.
The whole module takes about 10 s on one thread after the session's SmolLM2 is loaded.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from rule_scorer import RuleScorer
from sklearn.linear_model import LogisticRegression

from trustlab.interpret import (
    SparseAutoencoder,
    cache_latents,
    detection_score,
    fuzzing_score,
    latent_examples,
    pydoc_texts,
    sae_activations,
)

LAYER = 2
THE, DIGITS = "the word the", "numbers written as digits"  # latents 0 and 1


def _split_texts():
    """Pydoc texts of up to 200 characters, with and without a digit, in two disjoint sets:
    the probes' and the evaluation's."""
    texts = list(dict.fromkeys(pydoc_texts(200)))  # a few sentences recur across topics
    digit = [t for t in texts if re.search(r"[0-9]", t)]
    plain = [t for t in texts if not re.search(r"[0-9]", t)]
    probe = digit[0::4][:100] + plain[0::8][:100]
    held_out = digit[2::4][:120] + plain[4::8][:120]
    assert not set(probe) & set(held_out)
    return probe, held_out


def _targets(tokenizer, texts, ids):
    """Per token after each text's first (the rows sae_activations gives): is it one of ``ids``."""
    return np.concatenate([np.isin(tokenizer(t)["input_ids"][1:], ids) for t in texts])


@pytest.fixture(scope="module")
def planted(smollm2):
    import torch

    torch.set_num_threads(1)
    tok = smollm2.tokenizer
    digits = [tok.convert_tokens_to_ids(str(d)) for d in range(10)]
    assert [tok.decode([i]) for i in digits] == [str(d) for d in range(10)]
    the = tok(" the", add_special_tokens=False)["input_ids"]
    assert len(the) == 1
    probe, held_out = _split_texts()
    X = sae_activations(smollm2, probe, LAYER)
    probes = [
        LogisticRegression(max_iter=2000).fit(X, _targets(tok, probe, ids)) for ids in (the, digits)
    ]
    b_dec = X.mean(axis=0)  # any b_dec: the bias below cancels it
    W_enc = np.stack([p.coef_[0] for p in probes], axis=1)
    b_enc = np.array([p.intercept_[0] for p in probes]) + b_dec @ W_enc
    W_dec = W_enc.T / np.linalg.norm(W_enc, axis=0)[:, None]
    sae = SparseAutoencoder.from_weights(W_enc, b_enc, W_dec, b_dec, model_name=smollm2.name,
                                         layer=LAYER)  # fmt: skip
    cache = cache_latents(smollm2, sae, held_out)
    return {
        "sae": sae, "probes": probes, "classes": (the, digits), "held_out": held_out,
        "cache": cache,
        "X_held_out": sae_activations(smollm2, held_out[::8], LAYER),
        "examples": [latent_examples(cache, i, random_state=0) for i in (0, 1)],
        "decode": lambda token: tok.decode([token]),
    }  # fmt: skip


def test_each_latent_is_its_probe_and_fires_on_its_tokens_in_held_out_texts(planted, smollm2):
    """Each latent's pre-activation is its probe's margin; the cache's records of each latent
    against the tokenizer's own ids of the held-out texts (the digits "0"-"9" for latent 1,
    " the" for latent 0): precision and recall >= 0.98. The issue asks for a latent that fires
    exactly on its class; 0.98 allows about one miss in 50 (measured: 1.0 and 1.0 for both,
    over 551 digit and 333 " the" tokens of 9,037)."""
    sae, cache, X = planted["sae"], planted["cache"], planted["X_held_out"]
    ids = [smollm2.tokenizer(text)["input_ids"] for text in planted["held_out"]]
    for latent, (probe, wanted) in enumerate(
        zip(planted["probes"], planted["classes"], strict=True)
    ):
        margin = probe.decision_function(X)
        assert np.allclose(sae.encode(X)[:, latent], np.maximum(margin, 0),
                           atol=1e-3 * np.abs(margin).max())  # fmt: skip
        where = {
            (c, p) for c, row in enumerate(ids) for p in range(1, len(row)) if row[p] in wanted
        }
        contexts, positions, _ = cache.latent(latent)
        fires = set(zip(contexts.tolist(), positions.tolist(), strict=True))
        hits = len(fires & where)
        precision, recall = hits / len(fires), hits / len(where)
        print(f"latent {latent} on held-out tokens: precision {precision:.4f}, recall "
              f"{recall:.4f}, {len(where)} of its tokens of {cache.n_tokens}")  # fmt: skip
        assert len(where) >= 300 and precision >= 0.98 and recall >= 0.98


@pytest.mark.parametrize("score", [detection_score, fuzzing_score])
def test_the_right_explanation_is_detected_and_a_wrong_one_is_not(planted, score):
    """The issue's check through the real pipeline: balanced accuracy >= 0.9 with the right
    explanation, <= 0.6 with another latent's (both ways: the digit latent and the " the"
    latent, each with its own explanation and the other's).

    The scripted scorer only knows the rules of the explanations it is given (a word with a
    digit in it; the word "the"), so what this checks is that the real-model pipeline - the
    cache's positions, the windows, the highlights and the tokenizer's decoding - carries the
    latent's behaviour to the scorer faithfully, not that a language model can read the
    explanation. Measured: 1.0 right in both methods for both latents; wrong 0.33 and 0.34
    (detection: " the" is rarer in the code-like windows around digits), 0.5 (fuzzing)."""
    explanations = (THE, DIGITS)
    for latent, examples in enumerate(planted["examples"]):
        assert examples.n_test == 50 and examples.n_not_active == 50
        right = score(examples, explanations[latent], RuleScorer(), planted["decode"])
        wrong = score(examples, explanations[1 - latent], RuleScorer(), planted["decode"])
        print(f"{right.method}, latent {latent}: right {right.balanced_accuracy:.3f}, "
              f"wrong {wrong.balanced_accuracy:.3f}")  # fmt: skip
        assert right.n_failed == wrong.n_failed == 0
        assert right.balanced_accuracy >= 0.9 and wrong.balanced_accuracy <= 0.6
