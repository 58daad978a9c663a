"""Embedding and surprisal scores.

Oracles: sentence-transformers' own ``encode`` and ``cos_sim`` on the shipped MiniLM (to
1e-6); a direct log-probability computation with the Hugging Face SmolLM2 model, one unpadded
sequence at a time (to 1e-4 nats on sums over about 20 tokens); scikit-learn's
``roc_auc_score``.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import roc_auc_score
from test_sae_explain import decode, digit_cache

from trustlab.errors import InputError
from trustlab.interpret import embedding_score, latent_examples, surprisal_score
from trustlab.interpret.sae.ranking import QUERY, surprisal_prompts


@pytest.fixture(scope="module")
def examples():
    cache = digit_cache(5, n_contexts=120, length=60, digit_rate=0.03)
    return latent_examples(cache, 0, ctx_len=16, n_test=10, n_not_active=10, random_state=5)


def _texts(examples):
    return ["".join(decode(int(t)) for t in e.tokens) for e in examples.test + examples.not_active]


def test_embedding_scores_are_sentence_transformers_cosines(examples):
    from sentence_transformers import util

    from trustlab.llm.embeddings import load_sentence_embedder

    result = embedding_score(examples, "numbers written as digits", decode)
    model = load_sentence_embedder()
    query = model.encode([QUERY + "numbers written as digits"], convert_to_tensor=True)
    rows = model.encode(_texts(examples), convert_to_tensor=True)
    expected = util.cos_sim(query, rows)[0].numpy()
    assert np.allclose(result.scores, expected, atol=1e-6)
    assert result.auroc == pytest.approx(roc_auc_score(result.activating, result.scores))
    assert (result.n_activating, result.n_not_active) == (10, 10)
    low, high = result.interval
    assert low <= result.auroc <= high
    assert "AUROC" in result.summary() and result.plot() is not None


def test_surprisal_scores_are_direct_log_probability_gains(examples, smollm2):
    """Three activating and three non-activating examples, each checked against the direct
    computation (two forward passes of SmolLM2 per example on each side: few examples keep the
    test cheap, every one of them is checked)."""
    torch.set_num_threads(1)
    few = dataclasses.replace(examples, test=examples.test[:3], not_active=examples.not_active[:3])
    result = surprisal_score(few, "numbers written as digits", smollm2, decode, batch_size=1)
    explained, neutral = surprisal_prompts("numbers written as digits")
    tok, lm = smollm2.tokenizer, smollm2.model
    assert len(result.scores) == 6 and list(result.activating) == [True] * 3 + [False] * 3
    for score, text in zip(result.scores, _texts(few), strict=True):
        cont = tok(" " + " ".join(text.split()), add_special_tokens=False)["input_ids"]
        totals = []
        for prompt in (explained, neutral):
            ids = tok(prompt)["input_ids"]
            with torch.inference_mode():
                logits = lm(torch.tensor([ids + cont])).logits[0].double()
            logp = torch.log_softmax(logits[len(ids) - 1 : -1], dim=-1)
            totals.append(float(logp[torch.arange(len(cont)), torch.tensor(cont)].sum()))
        assert score == pytest.approx(totals[0] - totals[1], abs=1e-4)
    assert result.auroc == pytest.approx(roc_auc_score(result.activating, result.scores))


def test_bad_inputs_are_named(examples):
    for call, argument in [
        (lambda: embedding_score(examples, "", decode), "explanation"),
        (lambda: embedding_score("x", "digits", decode), "examples"),
        (lambda: surprisal_score(examples, "digits", object(), decode), "model"),
        (lambda: embedding_score(examples, "digits", decode, embedder=object()), "embedder"),
    ]:
        with pytest.raises(InputError) as err:
            call()
        assert err.value.argument == argument


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(2, 30), levels=st.integers(2, 6))
def test_bootstrap_aurocs_equal_scikit_learn_row_by_row(seed, n, levels):
    """The vectorised rank-sum AUROC of the bootstrap against ``roc_auc_score`` per draw, with
    ties (few distinct scores) and draws holding one class only (NaN)."""
    from trustlab.interpret.sae.ranking import bootstrap_aurocs

    rng = np.random.default_rng(seed)
    scores = rng.integers(0, levels, size=(25, n)).astype(float)
    positive = rng.random((25, n)) < 0.5
    found = bootstrap_aurocs(scores, positive)
    for row in range(25):
        if positive[row].all() or not positive[row].any():
            assert np.isnan(found[row])
        else:
            assert found[row] == pytest.approx(roc_auc_score(positive[row], scores[row]), abs=1e-12)
