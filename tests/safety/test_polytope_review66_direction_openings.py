"""Review 66 of refusal_direction's answer openings (method="answers").

Measured on the old file (2-layer random Llama on a word tokenizer, chat=False, 2 harmful
prompts): refusals=[""] or [" "] gave a RefusalDirection of norm NaN (its mean over 0 answer
tokens was 0 / 0, a RuntimeWarning 'invalid value encountered in divide'), which
steered_generate(correction="direction") then accepted; refusals=["x"] (glued to the prompt's
last word, no token of its own) did the same; refusals=[None] or [1] raised a raw
"TypeError: can only concatenate str (not 'NoneType') to str". Now each is an InputError naming
the argument; openings that add tokens give the same direction as before (checked against the
mean of the answer states read one text at a time).

Diff review 66 P of 79edccfe (the last two tests, moved here from their own file to share its
model and prompts): 79edccfe kept the check ``not openings`` before check_string_list, so
refusals=np.array([" stop now", " hi"]) stopped on numpy's raw "ValueError: The truth value of
an array with more than one element is ambiguous" (a pandas Series the same, an empty array
"...of an empty array is ambiguous"). Now an array or Series of openings gives the direction of
the same list, and an empty one is the InputError of the empty list."""

import warnings

import numpy as np
import pandas as pd
import pytest

from trustlab.errors import InputError
from trustlab.safety import SafetyPrompts, refusal_direction

WORDS = "the cat sat on mat dog ran far away hi stop now".split()
PROMPTS = SafetyPrompts(
    prompts=("the cat sat", "dog ran far", "hi now", "stop the dog"),
    unsafe=np.array([True, True, False, False]),
    categories=("a", "a", "benign", "benign"),
    sources=("test",),
    split="train",
)
REFUSALS, COMPLIANCES = [" stop now", " hi"], [" the cat", " dog ran"]


@pytest.fixture(scope="module")
def tiny():
    import torch

    from tiny_llama import tiny_llama, word_tokenizer

    torch.set_num_threads(1)
    return tiny_llama(word_tokenizer(WORDS), len(WORDS) + 3, hidden_size=32)


@pytest.mark.parametrize(
    ("side", "openings", "message"),
    [
        ("refusals", [""], r"^refusals: expected an answer opening that is not blank"),
        ("compliances", [" ", ""], r"^compliances: expected an answer opening that is not blank"),
        ("refusals", ["x"], r"^refusals: expected answer openings that add tokens after"),
        ("refusals", [None], r"^refusals\[0\]: expected a string, got None"),
        ("compliances", ["the cat", 1], r"^compliances\[1\]: expected a string, got 1"),
    ],
)
def test_openings_without_answer_tokens_or_text_are_refused_by_name(tiny, side, openings, message):
    kwargs = {"refusals": [" stop now"], "compliances": [" the cat"], side: openings}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # was a RuntimeWarning and a NaN direction
        with pytest.raises(InputError, match=message) as info:
            refusal_direction(tiny, PROMPTS, 1, chat=False, **kwargs)
    assert info.value.argument.startswith(side)


def test_openings_that_add_tokens_give_the_mean_answer_state(tiny):
    refusals, compliances = [" stop now", " hi", ""], [" the cat", " dog"]
    got = refusal_direction(
        tiny, PROMPTS, 1, chat=False, refusals=refusals, compliances=compliances
    )

    def mean(openings):
        rows = []
        for prompt in ("the cat sat", "dog ran far"):
            n = len(tiny.tokenizer(prompt)["input_ids"])
            for opening in openings:
                rows.append(tiny.activations([prompt + opening], 1, "all", chat=False)[0][n:])
        return np.concatenate(rows).astype(np.float64).mean(axis=0)

    assert np.isfinite(got.norm) and got.norm > 0
    np.testing.assert_allclose(got.vector, mean(refusals) - mean(compliances), atol=1e-7)


def _direction(model, refusals, compliances):
    return refusal_direction(
        model, PROMPTS, 1, chat=False, refusals=refusals, compliances=compliances
    ).vector


@pytest.mark.parametrize("kind", [np.array, pd.Series])
def test_openings_as_an_array_give_the_direction_of_the_list(tiny, kind):
    expected = _direction(tiny, REFUSALS, COMPLIANCES)
    got = _direction(tiny, kind(REFUSALS), kind(COMPLIANCES))
    np.testing.assert_array_equal(got, expected)


def test_an_empty_array_of_openings_is_refused_by_name(tiny):
    with pytest.raises(InputError, match=r"^compliances: expected a non-empty sequence") as info:
        _direction(tiny, REFUSALS, np.array([], dtype=str))
    assert info.value.argument == "compliances"
