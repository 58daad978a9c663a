"""The explainer: highlighting, the prompt, last-marker parsing, a scripted model, the baseline.

Oracles: highlighting recomputed as maximal runs of tokens above the threshold (hypothesis);
a scripted model double that records its prompt and answers a fixed text; a planted latent
that fires exactly on digits, for the template baseline.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trustlab.errors import InputError
from trustlab.interpret import (
    LatentCache,
    explain_latent,
    explanation_prompt,
    highlight,
    latent_examples,
    parse_explanation,
    template_explanation,
)

WORDS = ["the", "cat", "sat", "on", "mat", "dog", "ran", "far", "and", "then"]
DIGITS = [str(d) for d in range(10)]
VOCAB = WORDS + DIGITS  # token id i is VOCAB[i]


def decode(token: int) -> str:
    return " " + VOCAB[token]


def digit_cache(seed=0, n_contexts=80, length=40, digit_rate=0.5):
    """Latent 0 fires exactly on digit tokens (activation 1-3); a token is a digit with
    probability ``digit_rate``."""
    rng = np.random.default_rng(seed)
    words = rng.integers(0, len(WORDS), size=(n_contexts, length))
    digits = rng.integers(len(WORDS), len(VOCAB), size=(n_contexts, length))
    tokens = np.where(rng.random((n_contexts, length)) < digit_rate, digits, words)
    contexts, positions, values = [], [], []
    for c in range(n_contexts):
        for p in range(1, length):
            if VOCAB[tokens[c, p]].isdigit():
                contexts.append(c)
                positions.append(p)
                values.append(rng.uniform(1.0, 3.0))
    n = len(values)
    return LatentCache(
        model="toy",
        layer=0,
        n_latents=1,
        n_contexts=n_contexts,
        n_tokens=n_contexts * (length - 1),
        tokens=tokens.ravel(),
        token_offsets=np.arange(n_contexts + 1) * length,
        latent_offsets=np.array([0, n]),
        contexts=np.array(contexts, dtype=np.int32),
        positions=np.array(positions, dtype=np.int32),
        activations=np.array(values, dtype=np.float32),
    )


class Scripted:
    """A model double: records the prompts, answers a fixed text."""

    name = "scripted"

    def __init__(self, answer):
        self.answer, self.prompts = answer, []

    def generate(self, prompts, max_new_tokens=64, *, chat=True, temperature=0.0,
                 batch_size=8, random_state=None):  # fmt: skip
        self.prompts.extend(prompts)
        assert chat and temperature == 0.0
        return [self.answer for _ in prompts]


@settings(max_examples=200, deadline=None)
@given(
    values=st.lists(st.floats(0, 10, allow_nan=False), min_size=1, max_size=30),
    threshold=st.floats(0, 0.99),
)
def test_highlight_marks_maximal_runs_above_the_threshold(values, threshold):
    pieces = [f"t{i} " for i in range(len(values))]
    text, marked = highlight(pieces, values, threshold)
    top = max(values)
    expected = [i for i, v in enumerate(values) if top > 0 and v > threshold * top]
    assert marked == expected
    assert text.replace("<<", "").replace(">>", "") == "".join(pieces)
    runs = sum(1 for i in expected if i - 1 not in expected)
    assert text.count("<<") == text.count(">>") == runs
    for span in re.findall(r"<<(.*?)>>", text):
        ids = [int(t[1:]) for t in span.split()]
        assert ids == list(range(ids[0], ids[-1] + 1)) and set(ids) <= set(expected)


def test_parsing_takes_the_last_marker():
    # a chain of thought that drafts with the marker: first-match parsing would keep the draft
    answer = (
        "Let me think. [EXPLANATION]: maybe animals?\nNo: every marked token is a number.\n"
        "[EXPLANATION]: digits and numbers"
    )
    assert parse_explanation(answer) == ("digits and numbers", True)
    assert parse_explanation('[EXPLANATION]: "the word cat"') == ("the word cat", True)
    assert parse_explanation("[EXPLANATION]:") == ("", True)
    assert parse_explanation("  \n the digits 0-9\nmore") == ("the digits 0-9", False)
    assert parse_explanation("") == ("", False)
    with pytest.raises(InputError):
        parse_explanation(None)


def test_the_prompt_shows_every_training_example_marked():
    examples = latent_examples(digit_cache(), 0, ctx_len=16, n_train=10, random_state=0)
    prompt = explanation_prompt(examples, decode)
    lines = [ln for ln in prompt.splitlines() if ln.startswith("Excerpt ")]
    assert len(lines) == examples.n_train == 10
    for line, example in zip(lines, examples.train, strict=True):
        marked = re.findall(r"<<(.*?)>>", line)
        assert marked and all(w in DIGITS for span in marked for w in span.split())
        plain = line.split(": ", 1)[1].replace("<<", "").replace(">>", "")
        assert plain.split() == "".join(decode(t) for t in example.tokens).split()
    assert "Active tokens (0-10):" in prompt and "[EXPLANATION]:" in prompt
    bare = explanation_prompt(examples, decode, show_activations=False, chain_of_thought=True)
    assert "Active tokens" not in bare and "Think it through" in bare


def test_explain_latent_sends_the_prompt_and_parses_the_answer():
    examples = latent_examples(digit_cache(1), 0, ctx_len=16, n_train=8, random_state=1)
    model = Scripted("The marked tokens are numbers.\n[EXPLANATION]: digits")
    explanation = explain_latent(examples, model, decode)
    assert model.prompts == [explanation_prompt(examples, decode)]
    assert (explanation.text, explanation.marker_found, explanation.explainer) == (
        "digits", True, "scripted"
    )  # fmt: skip
    assert explanation.to_dict()["latent"] == 0 and "digits" in explanation.summary()
    no_marker = explain_latent(examples, Scripted("numbers\n"), decode)
    assert (no_marker.text, no_marker.marker_found) == ("numbers", False)
    assert "no marker" in no_marker.summary()


def test_the_template_baseline_names_the_planted_tokens():
    examples = latent_examples(digit_cache(2), 0, ctx_len=16, random_state=2)
    explanation = template_explanation(examples, decode, n_tokens=5)
    named = explanation.text.split(": ", 1)[1].split(", ")
    assert len(named) == 5 and set(named) <= set(DIGITS)
    assert explanation.explainer == "template"


def test_bad_inputs_are_named():
    examples = latent_examples(digit_cache(3), 0, ctx_len=16, n_train=4)
    empty = latent_examples(digit_cache(3), 0, ctx_len=16, n_train=0)
    cases = [
        (lambda: explanation_prompt("examples", decode), "examples"),
        (lambda: explanation_prompt(examples, "decode"), "decode"),
        (lambda: explanation_prompt(examples, decode, threshold=1.5), "threshold"),
        (lambda: explanation_prompt(empty, decode), "examples"),
        (lambda: explain_latent(examples, object(), decode), "explainer"),
        (lambda: highlight(["a", "b"], [1.0]), "activations"),
    ]
    for call, argument in cases:
        with pytest.raises(InputError) as err:
            call()
        assert err.value.argument == argument
