"""Review pass 59: RemoteModel.completions refuses log-probabilities that cover none of the text.

A chat answer with ``"logprobs": {"content": null}`` (or a completions answer with empty
``tokens``) beside a non-empty text was read as a Completion of no token: text 'hello there',
``tokens == ()``, ``total_logprob == 0.0`` (probability 1), without a word. It is now the
``BackendError`` of any other malformed logprobs; an empty text with no token stays a valid
Completion (a reply of nothing, or only a refusal, has no token)."""

from __future__ import annotations

import pytest

from trustlab.errors import BackendError
from trustlab.llm import remote

URL = "http://127.0.0.1:8000/v1/chat/completions"


def _chat(content, logprobs):
    return {"choices": [{"message": {"content": content}, "logprobs": logprobs,
                         "finish_reason": "stop"}]}  # fmt: skip


def _text(text, tokens):
    logprobs = {"tokens": tokens, "token_logprobs": [-0.5] * len(tokens),
                "top_logprobs": [{}] * len(tokens)}  # fmt: skip
    return {"choices": [{"text": text, "logprobs": logprobs, "finish_reason": "stop"}]}


@pytest.mark.parametrize(
    ("data", "chat"),
    [
        (_chat("hello there", {"content": None, "refusal": None}), True),
        (_chat("hello there", {"content": []}), True),
        (_text("hello", []), False),
    ],
)
def test_a_text_without_any_token_logprob_is_malformed(data, chat):
    with pytest.raises(BackendError, match=r"malformed logprobs"):
        remote._choice_completion(data, chat, URL)


def test_an_empty_text_without_tokens_is_an_empty_completion():
    completion = remote._choice_completion(_chat(None, {"content": None}), True, URL)
    assert (completion.text, completion.tokens, completion.total_logprob) == ("", (), 0.0)
    completion = remote._choice_completion(_text("", []), False, URL)
    assert (completion.text, completion.tokens) == ("", ())


def test_a_text_with_its_tokens_is_read():
    completion = remote._choice_completion(_text("hi you", ["hi", " you"]), False, URL)
    assert completion.tokens == ("hi", " you") and completion.total_logprob == -1.0
