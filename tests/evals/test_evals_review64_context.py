"""The trustlab provider keeps a request within the model's context (review 64), as
``trustlab llm serve`` does. It ran past it without a word: on SmolLM2 (context 8192) an
8211-token prompt with max_tokens 40 came back as 40 tokens of garbage ('The code of the in
Python additionally, ...') with stop reason max_tokens. Now such a prompt is refused naming
``input``, a ``max_tokens`` set beyond the room left is refused naming ``config.max_tokens``,
and the default budget (256) is cut to the room left, running out as inspect's
``model_length``. A fake model (context 12, one token a word) stands in for SmolLM2."""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip("inspect_ai")

from inspect_ai.model import ChatMessageUser, GenerateConfig  # noqa: E402

import trustlab.evals.provider as provider  # noqa: E402
from provider_fakes import WordTokenizer, context_of  # noqa: E402
from trustlab.errors import InputError  # noqa: E402
from trustlab.llm import Completion  # noqa: E402

NAME = "fake-context-review64"


class FakeModel:
    """Context 12; answers max_new_tokens words 'w' (finish 'length')."""

    has_chat_template = True
    tokenizer = WordTokenizer()
    model = context_of(12)

    def __init__(self):
        self.budgets = []

    def completions(self, prompts, max_new_tokens, **kwargs):
        self.budgets.append(max_new_tokens)
        words = ("w",) * max_new_tokens
        return [
            Completion(
                " ".join(words), "length", words, (-0.1,) * max_new_tokens, ((),) * max_new_tokens
            )
        ] * len(prompts)


def _generate(monkeypatch, words, **config):
    lm = FakeModel()
    monkeypatch.setitem(provider._MODELS, NAME, lm)
    monkeypatch.setitem(provider._MODEL_LOCKS, NAME, provider.threading.Lock())
    api = provider.TrustlabModelAPI(NAME, batch_window=0.0)
    message = [ChatMessageUser(content=" ".join(["x"] * words))]
    out = asyncio.run(api.generate(message, [], "none", GenerateConfig(**config)))
    return lm, out


def test_a_prompt_that_fills_the_context_is_refused(monkeypatch):
    with pytest.raises(
        InputError, match=r"^input: expected at most 11 tokens .*context is 12.*got 12"
    ):
        _generate(monkeypatch, 12, max_tokens=1)


def test_max_tokens_beyond_the_room_left_is_refused(monkeypatch):
    with pytest.raises(
        InputError, match=r"^config\.max_tokens: expected at most 4: the prompt has 8"
    ):
        _generate(monkeypatch, 8, max_tokens=5)


def test_the_default_budget_is_cut_to_the_room_left(monkeypatch):
    lm, out = _generate(monkeypatch, 8)
    assert lm.budgets == [4]
    assert out.choices[0].stop_reason == "model_length"
    assert (out.usage.input_tokens, out.usage.output_tokens) == (8, 4)


def test_a_request_that_fits_is_unchanged(monkeypatch):
    lm, out = _generate(monkeypatch, 8, max_tokens=4)
    assert lm.budgets == [4] and out.choices[0].stop_reason == "max_tokens"
