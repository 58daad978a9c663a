"""Intervention scoring, steps 4 to 6: output effects, their explanations, generations and the
score.

Oracles: forward passes written here on the Hugging Face model (one full pass per sequence, no
key-value cache) for the output effects, the explanation's log-probability and the intervened
greedy generation; the common-random-numbers invariance (at strength 0 the intervened passages
are the clean ones and every score is exactly 0); direct numpy means and standard errors.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from trustlab.errors import InputError
from trustlab.interpret import (
    Example,
    LatentExamples,
    SparseAutoencoder,
    effects_template,
    explain_effects,
    intervened_generations,
    intervention_prompts,
    intervention_score,
    output_effects,
    sae_activations,
)
from trustlab.interpret.sae.effects import (
    SHOTS,
    effects_prompt,
    explanation_logprobs,
    surprisal_prompt,
)

PROMPTS = ["The capital of France is", "Two plus two equals", "Once upon a time there"]


@pytest.fixture(scope="module")
def sae(tiny):
    from trustlab.interpret import pydoc_texts

    rows = sae_activations(tiny, pydoc_texts(200)[:40], 1)
    return SparseAutoencoder(n_latents=32, k=4, max_epochs=2, batch_size=64).fit(
        rows, model_name=tiny.name, layer=1
    )


def _hooked_logits(lm, ids, layer, direction, positions):
    """Logits of one full pass over ``ids`` with ``direction`` added to block ``layer``'s
    output at ``positions`` (a hook written here)."""
    block = lm.model.model.layers[layer]

    def hook(module, args, output):
        h = (output if torch.is_tensor(output) else output[0]).clone()
        h[0, positions] += direction
        return h if torch.is_tensor(output) else (h, *output[1:])

    handle = block.register_forward_hook(hook)
    try:
        with torch.inference_mode():
            return lm.model(torch.tensor([ids])).logits[0].double()
    finally:
        handle.remove()


def test_prompts_end_at_the_first_firing_token():
    tokens = np.arange(10, 18)
    fire = Example(0, 0, tokens, np.array([0, 0, 0, 2.0, 0, 5.0, 0, 0], np.float32), 3)
    first = Example(1, 0, tokens, np.array([1.0, 0, 0, 0, 0, 0, 0, 0], np.float32), 0)
    examples = LatentExamples(
        latent=4, n_activating=2, max_activation=5.0, explainable=False,
        quantile_edges=(0.0, 5.0), train=(first,), test=(fire,),
    )  # fmt: skip
    decode = lambda t: f"<{t}>"  # noqa: E731
    assert intervention_prompts(examples, decode) == ["<10><11><12><13>"]
    assert intervention_prompts(examples, decode, split="train") == ["<10>"]
    with pytest.raises(InputError) as err:
        intervention_prompts(examples, decode, split="all")
    assert err.value.argument == "split"


def test_output_effects_equal_a_direct_computation(tiny, sae):
    found = output_effects(tiny, sae, 7, PROMPTS, 4.0, top_k=6)
    direction = torch.as_tensor(4.0 * sae.W_dec_[7])
    for prompt, row in zip(PROMPTS, found.effects, strict=True):
        ids = tiny.tokenizer(prompt)["input_ids"]
        with torch.inference_mode():
            clean = torch.softmax(tiny.model(torch.tensor([ids])).logits[0, -1].double(), -1)
        changed = torch.softmax(_hooked_logits(tiny, ids, 1, direction, [-1])[-1], -1)
        gain = (changed - clean).numpy()
        best = np.argsort(-gain)[:6]
        assert [t for t, _ in row] == [tiny.tokenizer.decode([int(i)]) for i in best]
        assert np.allclose([g for _, g in row], gain[best], atol=1e-9)
    total = {}
    for row in found.effects:
        for token, g in row:
            total[token] = total.get(token, 0.0) + g
    top = max(total, key=total.get)
    assert found.top_tokens(1) == [(top, pytest.approx(total[top]))]
    assert effects_template(found).split(", ")[0] == top.strip()
    assert "promotes" in found.summary() and found.plot() is not None


def test_the_intervened_greedy_generation_equals_a_full_recompute(smollm2):
    """With the key-value cache, the latent must be raised at the prompt's last token and at
    every generated one: the oracle recomputes the whole sequence at each step with the
    direction added at exactly those positions. (SmolLM2, not the tiny random Llama: that one
    repeats its last token whatever the later positions get, so it could not tell.)"""
    rng = np.random.default_rng(0)
    W_dec = rng.normal(size=(4, smollm2.hidden_size))
    W_dec /= np.linalg.norm(W_dec, axis=1, keepdims=True)
    sae = SparseAutoencoder.from_weights(W_dec.T, np.zeros(4), W_dec, np.zeros(smollm2.hidden_size),
                                         layer=20)  # fmt: skip
    strength, latent, n_new = 60.0, 1, 5
    clean, raised = intervened_generations(smollm2, sae, latent, PROMPTS, strength,
                                           max_new_tokens=n_new, temperature=0.0)  # fmt: skip
    direction = torch.as_tensor(strength * sae.W_dec_[latent])
    for prompt, text in zip(PROMPTS, raised, strict=True):
        ids = smollm2.tokenizer(prompt)["input_ids"]
        start = len(ids) - 1
        for _ in range(n_new):
            logits = _hooked_logits(smollm2, ids, 20, direction, list(range(start, len(ids))))
            ids = ids + [int(logits[-1].argmax())]
        assert text == smollm2.tokenizer.decode(ids[start + 1 :], skip_special_tokens=True)
    assert clean == [c.text for c in smollm2.completions(PROMPTS, n_new, chat=False)]
    assert clean != raised


def test_at_strength_zero_every_score_is_exactly_zero(tiny, sae):
    """The clean and intervened passages share their random streams, so raising the latent by
    0 changes nothing: a run whose streams differed would give non-zero scores."""
    found = intervention_score(tiny, sae, 2, PROMPTS, ["cats", "numbers"], 0.0, random_state=5)
    assert found.clean == found.intervened
    assert np.array_equal(found.deltas, np.zeros((2, 3))) and found.score == 0.0


def test_the_score_is_the_mean_surprisal_drop(tiny, sae):
    explanations = ["cats", "numbers written as digits", "the weather"]
    found = intervention_score(tiny, sae, 2, PROMPTS, explanations, 8.0, random_state=1)
    clean, raised = intervened_generations(tiny, sae, 2, PROMPTS, 8.0, random_state=1)
    assert found.clean == tuple(p + c for p, c in zip(PROMPTS, clean, strict=True))
    assert found.intervened == tuple(p + c for p, c in zip(PROMPTS, raised, strict=True))
    logp = explanation_logprobs(tiny, [*found.clean, *found.intervened], explanations)
    deltas = logp[:, 3:] - logp[:, :3]
    assert np.allclose(found.deltas, deltas, atol=1e-12)
    assert np.allclose(found.scores, deltas.mean(axis=1), atol=1e-12)
    assert np.allclose(found.sems, deltas.std(axis=1, ddof=1) / np.sqrt(3), atol=1e-12)
    assert found.score == max(found.scores)
    assert found.best_explanation == explanations[int(np.argmax(found.scores))]
    assert found.to_dict()["score"] == found.score and found.plot() is not None


def test_given_generations_give_the_score_of_sampling_them(tiny, sae):
    """``generations=`` (sampled once, reused for more explanations) equals sampling them."""
    explanations = ["cats", "numbers written as digits"]
    own = intervention_score(tiny, sae, 2, PROMPTS, explanations, 8.0, random_state=4)
    passages = intervened_generations(tiny, sae, 2, PROMPTS, 8.0, random_state=4)
    given = intervention_score(tiny, sae, 2, PROMPTS, explanations, 8.0, generations=passages)
    assert np.array_equal(given.deltas, own.deltas) and given.clean == own.clean
    with pytest.raises(InputError) as err:
        intervention_score(tiny, sae, 2, PROMPTS, "cats", 8.0, generations=(["a"], ["b"]))
    assert err.value.argument == "generations"


@pytest.mark.parametrize("which", ["tiny", "smollm2"])
def test_explanation_logprobs_equal_one_full_pass_each(which, tiny, smollm2):
    """The cached computation (worked examples once, each passage once, all explanations in
    one batch) against one uncached pass per (passage, explanation)."""
    lm = tiny if which == "tiny" else smollm2
    passages = ["The cat sat on the mat, and another cat came", "Numbers: 1, 2 and 3."]
    explanations = ["cats", "numbers written as digits", "x"]
    found = explanation_logprobs(lm, passages, explanations)
    tok = lm.tokenizer
    for i, e in enumerate(explanations):
        for j, p in enumerate(passages):
            context = tok(SHOTS)["input_ids"]
            context += tok(surprisal_prompt(p), add_special_tokens=False)["input_ids"]
            target = tok(e, add_special_tokens=False)["input_ids"]
            with torch.inference_mode():
                logits = lm.model(torch.tensor([context + target])).logits[0].double()
            logp = torch.log_softmax(logits, -1)
            direct = sum(float(logp[len(context) - 1 + k, t]) for k, t in enumerate(target))
            assert found[i, j] == pytest.approx(direct, abs=1e-4)


class Scripted:
    """A stand-in explainer: records the prompts and answers with its list in turn."""

    name = "scripted"

    def __init__(self, answers):
        self.answers, self.calls = answers, []

    def generate(self, prompts, max_new_tokens, *, chat, temperature, random_state):
        self.calls.append((list(prompts), max_new_tokens, chat, temperature, random_state))
        return [self.answers[i % len(self.answers)] for i in range(len(prompts))]


def test_explanations_of_the_effects_are_sampled_and_parsed(tiny, sae):
    effects = output_effects(tiny, sae, 7, PROMPTS, 4.0)
    explainer = Scripted(["thinking [EXPLANATION]: draft\n[EXPLANATION]: cats and kittens",
                          "", "felines"])  # fmt: skip
    found = explain_effects(effects, explainer, n_explanations=4, random_state=9)
    assert found == ("cats and kittens", "felines", "cats and kittens")
    (prompts, n_tokens, chat, temperature, seed) = explainer.calls[0]
    assert len(prompts) == 4 and n_tokens == 20 and chat and temperature == 0.7 and seed == 9
    prompt = prompts[0]
    assert prompt == effects_prompt(effects) and prompt.endswith("[EXPLANATION]:")
    for i, row in enumerate(effects.effects, start=1):
        assert f"{i}. " + ", ".join(repr(t) for t, _ in row) in prompt


def test_bad_inputs_are_named(tiny, sae):
    cases = [
        (lambda: output_effects(tiny, sae, 32, PROMPTS, 1.0), "latent"),
        (lambda: output_effects(tiny, sae, 0, PROMPTS, 1.0, top_k=0), "top_k"),
        (lambda: intervened_generations(tiny, sae, 0, [], 1.0), "prompts"),
        (lambda: intervened_generations(tiny, sae, 0, PROMPTS, "x"), "strength"),
        (lambda: intervention_score(tiny, sae, 0, PROMPTS, [], 1.0), "explanations"),
        (lambda: intervention_score(tiny, sae, 0, PROMPTS, [" "], 1.0), "explanations"),
        (lambda: intervention_score(tiny, sae, 0, PROMPTS, "cats", 1.0, scorer="m"), "scorer"),
        (lambda: explain_effects("effects", Scripted(["x"])), "effects"),
        (lambda: explain_effects(output_effects(tiny, sae, 0, PROMPTS, 1.0), "m"), "explainer"),
        (lambda: explanation_logprobs(tiny, ["p"], [""]), "explanations"),
    ]
    for call, argument in cases:
        with pytest.raises(InputError) as err:
            call()
        assert err.value.argument == argument
