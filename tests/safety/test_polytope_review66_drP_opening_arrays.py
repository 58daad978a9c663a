"""Diff review 66 P of 79edccfe: refusal_direction reads answer openings given as an array.

79edccfe routed refusals/compliances through check_string_list (lists, tuples, 1-D arrays) but
kept the check ``not openings`` before it; measured on 79edccfe: refusals=np.array([" stop now",
" hi"]) stopped on numpy's raw "ValueError: The truth value of an array with more than one
element is ambiguous" (a pandas Series the same, an empty array "...of an empty array is
ambiguous"). Now an array or Series of openings gives the direction of the same list, and an
empty one is the InputError of the empty list."""

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
