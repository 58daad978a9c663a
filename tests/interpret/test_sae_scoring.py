"""Detection and fuzzing scores.

Oracles: a rule-based scripted scorer that reads each excerpt from the prompt and answers by a
rule tied to the explanation (the spec's check D4: the correct explanation scores a balanced
accuracy of exactly 1, a wrong one 0.5 +- 0.1 over 100 examples); scikit-learn's metrics on
the per-example answers; a scorer whose answers do not parse.
"""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest
from rule_scorer import RuleScorer, excerpts
from sklearn.metrics import (
    accuracy_score,
    balanced_accuracy_score,
    f1_score,
    precision_score,
    recall_score,
    roc_auc_score,
)
from test_sae_explain import DIGITS, decode, digit_cache

from trustlab.errors import InputError
from trustlab.interpret import detection_score, fuzzing_score, latent_examples


@pytest.fixture(scope="module")
def examples():
    cache = digit_cache(4, n_contexts=200, length=80, digit_rate=0.02)
    return latent_examples(cache, 0, ctx_len=16, random_state=4)


@pytest.mark.parametrize("score", [detection_score, fuzzing_score])
def test_the_right_explanation_scores_one_and_a_wrong_one_one_half(examples, score):
    assert examples.n_test + examples.n_not_active == 100
    right = score(examples, "digits", RuleScorer(), decode)
    assert right.balanced_accuracy == 1.0 and right.n_failed == 0
    assert right.interval == (1.0, 1.0) and right.f1 == 1.0
    # the answer mode, not the scorer's last reply (the loop once reused its name)
    assert right.answer == "list" and right.to_dict()["answer"] == "list"
    wrong = score(examples, "the word cat", RuleScorer(), decode)
    assert abs(wrong.balanced_accuracy - 0.5) <= 0.1


@pytest.mark.parametrize("score", [detection_score, fuzzing_score])
def test_metrics_are_sklearns_on_the_answers(examples, score):
    scorer = RuleScorer()
    result = score(examples, "the word 5", scorer, decode, batch_size=7, random_state=1)
    t, p = result.activating, result.predicted
    assert len(t) == result.n_examples == 100 and len(scorer.prompts) == 15  # ceil(100 / 7)
    assert result.balanced_accuracy == pytest.approx(balanced_accuracy_score(t, p))
    assert result.accuracy == pytest.approx(accuracy_score(t, p))
    assert result.precision == pytest.approx(precision_score(t, p, zero_division=np.nan))
    assert result.recall == pytest.approx(recall_score(t, p))
    assert result.f1 == pytest.approx(f1_score(t, p))
    assert result.tp + result.tn + result.fp + result.fn == 100
    low, high = result.interval
    assert low <= result.balanced_accuracy <= high
    assert (
        set(result.quantiles[t].tolist()) <= set(range(10)) and (result.quantiles[~t] == -1).all()
    )
    assert result.plot() is not None and "balanced accuracy" in result.summary()


def test_unparsed_batches_are_left_out_and_counted(examples):
    result = detection_score(examples, "digits", RuleScorer(garbage_every=3), decode)
    # 20 batches of 5: every third answer does not parse
    assert result.n_failed == 6 * 5 and len(result.activating) == 70
    assert result.balanced_accuracy == 1.0


def test_fuzzing_marks_the_right_number_of_wrong_tokens(examples):
    scorer = RuleScorer()
    fuzzing_score(examples, "digits", scorer, decode)
    texts = [t for prompt in scorer.prompts for t in excerpts(prompt)[0]]
    n_wrong = int(np.ceil(np.mean([(e.activations > 0).sum() for e in examples.test])))
    plain = [t.replace("<<", " ").replace(">>", " ") for t in texts]
    negatives = [t for t, p in zip(texts, plain, strict=True) if not set(p.split()) & set(DIGITS)]
    assert len(negatives) == examples.n_not_active
    for text in negatives:
        assert sum(len(span.split()) for span in re.findall(r"<<(.*?)>>", text)) == n_wrong


def test_a_prompt_builder_replaces_our_wording(examples):
    seen = []

    def builder(explanation, texts):
        seen.append((explanation, list(texts)))
        return "Feature: digits\n" + "\n".join(f"Excerpt {i}: {t}" for i, t in enumerate(texts, 1))

    result = detection_score(examples, "digits", RuleScorer(), decode, prompt_builder=builder)
    assert len(seen) == 20 and all(e == "digits" and len(t) == 5 for e, t in seen)
    assert result.balanced_accuracy == 1.0


def test_bad_inputs_are_named(examples):
    cases = [
        (lambda: detection_score("x", "digits", RuleScorer(), decode), "examples"),
        (lambda: detection_score(examples, 3, RuleScorer(), decode), "explanation"),
        (lambda: detection_score(examples, "digits", object(), decode), "scorer"),
        (lambda: detection_score(examples, "digits", RuleScorer(), decode, batch_size=0),
         "batch_size"),
        (lambda: fuzzing_score(examples, "digits", RuleScorer(), decode, threshold=2.0),
         "threshold"),
    ]  # fmt: skip
    for call, argument in cases:
        with pytest.raises(InputError) as err:
            call()
        assert err.value.argument == argument


class RuleLogprobs:
    """A LocalModel double for answer="logprob": log p("1") is high for excerpts with a digit
    word (for the explanation "digits"), log p("0") otherwise."""

    name = "rule-logprobs"
    has_chat_template = False

    def __init__(self):
        self.calls = []

    def logprobs(self, prompts, continuations, *, chat=False, batch_size=8):
        self.calls.append((list(prompts), list(continuations), chat))
        out = []
        for prompt, cont in zip(prompts, continuations, strict=True):
            text = prompt.split("\nExcerpt: ", 1)[1].split("\nAnswer", 1)[0]
            present = "digits" in prompt and any(w in DIGITS for w in text.split())
            out.append(-0.2 if (cont == "1") == present else -2.5)
        return np.array(out)


@pytest.mark.parametrize("score", [detection_score, fuzzing_score])
def test_logprob_answers_are_probabilities_of_one_against_zero(examples, score):
    scorer = RuleLogprobs()
    result = score(examples, "digits", scorer, decode, answer="logprob")
    ((prompts, continuations, chat),) = scorer.calls
    assert len(prompts) == 200 and continuations == ["1"] * 100 + ["0"] * 100 and not chat
    assert result.n_failed == 0 and result.answer == "logprob"
    p_high = 1 / (1 + np.exp(-2.5 + 0.2))
    assert np.allclose(np.sort(np.unique(result.probabilities)), [1 - p_high, p_high])
    assert result.auroc == pytest.approx(roc_auc_score(result.activating, result.probabilities))
    if score is detection_score:
        assert result.balanced_accuracy == 1.0 and result.auroc == 1.0
    assert "AUROC" in result.summary()
    with pytest.raises(InputError) as err:
        score(examples, "digits", RuleScorer(), decode, answer="logprob")
    assert err.value.argument == "scorer"


def test_logprob_answers_on_smollm2_equal_a_direct_computation(examples, smollm2):
    import torch

    from trustlab.interpret.sae.scoring import render_one

    torch.set_num_threads(1)
    few = dataclasses.replace(examples, test=examples.test[:3], not_active=examples.not_active[:3])
    result = detection_score(few, "numbers written as digits", smollm2, decode, answer="logprob",
                             random_state=0)  # fmt: skip
    order = np.random.default_rng(0).permutation(6)
    shown = [(list(few.test) + list(few.not_active))[i] for i in order]
    tok, lm = smollm2.tokenizer, smollm2.model
    for p, example in zip(result.probabilities, shown, strict=True):
        text = "".join(decode(int(t)) for t in example.tokens)
        chat = tok.apply_chat_template(
            [{"role": "user", "content": render_one("detection", "numbers written as digits", text)}],
            add_generation_prompt=True, tokenize=False,
        )  # fmt: skip
        ids = tok(chat, add_special_tokens=False)["input_ids"]
        with torch.inference_mode():
            logits = lm(torch.tensor([ids])).logits[0, -1].double()
        logp = torch.log_softmax(logits, dim=-1)
        one, zero = (tok(x, add_special_tokens=False)["input_ids"] for x in ("1", "0"))
        assert len(one) == len(zero) == 1
        expected = 1 / (1 + np.exp(float(logp[zero[0]] - logp[one[0]])))
        assert p == pytest.approx(expected, abs=1e-5)
