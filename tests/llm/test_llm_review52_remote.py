"""RemoteModel.completions against log-probabilities of the wrong JSON shape (review pass 52):
each is a BackendError 'malformed logprobs', never an AttributeError or a Completion whose tokens,
values and alternatives disagree."""

import json

import pytest

from trustlab.errors import BackendError, InputError
from trustlab.llm import RemoteModel, make_server
from trustlab.llm.server import Faults


class Echo:
    name = "echo"

    def generate(self, prompts, max_new_tokens=64, **settings):
        return list(prompts)


def _answer(chat, logprobs):
    if chat:
        choice = {"message": {"role": "assistant", "content": "ab"}, "logprobs": logprobs}
    else:
        choice = {"text": "ab", "logprobs": logprobs}
    return json.dumps({"choices": [{"index": 0, "finish_reason": "length", **choice}]})


def _completions(answer, chat):
    with (
        make_server(Echo(), model_name="echo", faults=Faults(1, malformed=answer)) as server,
        RemoteModel(server.url, "echo", max_retries=0) as client,
    ):
        return client.completions(["p"], 2, chat=chat, top_logprobs=1)


TOP = [{"a": -1.0}, {"b": -2.0}]
BAD_COMPLETIONS = {
    # before: AttributeError 'list' object has no attribute 'items'
    "alternatives as lists": {"tokens": ["a", "b"], "token_logprobs": [-1, -2],
                              "top_logprobs": [["a", -1], ["b", -2]]},
    # before: a Completion with 2 tokens and 1 log-probability (or 1 set of alternatives)
    "fewer values": {"tokens": ["a", "b"], "token_logprobs": [-1], "top_logprobs": TOP},
    "fewer alternatives": {"tokens": ["a", "b"], "token_logprobs": [-1, -2],
                           "top_logprobs": TOP[:1]},
    # before: the string's characters were read as the tokens, "NaN" as a float
    "tokens as a string": {"tokens": "ab", "token_logprobs": [-1, -2], "top_logprobs": TOP},
    "a value as a string": {"tokens": ["a", "b"], "token_logprobs": [-1, "NaN"],
                            "top_logprobs": TOP},
}  # fmt: skip
ENTRY = {"token": "a", "logprob": -1.0, "top_logprobs": [{"token": "a", "logprob": -1.0}]}
BAD_CHAT = {
    "content as a string": {"content": "ab"},
    "a token as a number": {"content": [{**ENTRY, "token": 7}]},
    "a NaN value": {"content": [{**ENTRY, "logprob": float("nan")}]},
    "alternatives as a dict": {"content": [{**ENTRY, "top_logprobs": {"a": -1.0}}]},
}


@pytest.mark.parametrize("logprobs", BAD_COMPLETIONS.values(), ids=BAD_COMPLETIONS.keys())
def test_malformed_completions_logprobs_are_a_backend_error(logprobs):
    with pytest.raises(BackendError, match="malformed logprobs"):
        _completions(_answer(False, logprobs), chat=False)


@pytest.mark.parametrize("logprobs", BAD_CHAT.values(), ids=BAD_CHAT.keys())
def test_malformed_chat_logprobs_are_a_backend_error(logprobs):
    with pytest.raises(BackendError, match="malformed logprobs"):
        _completions(_answer(True, logprobs), chat=True)


def test_well_formed_logprobs_still_read():
    completions = {"tokens": ["a", "b"], "token_logprobs": [-1, -2.5], "top_logprobs": TOP}
    got = _completions(_answer(False, completions), chat=False)[0]
    assert got.tokens == ("a", "b") and got.logprobs == (-1.0, -2.5)
    assert got.top_logprobs == ((("a", -1.0),), (("b", -2.0),))
    chat = {"content": [ENTRY, {**ENTRY, "token": "b", "logprob": -9999.0}]}
    got = _completions(_answer(True, chat), chat=True)[0]
    assert got.tokens == ("a", "b") and got.logprobs == (-1.0, -9999.0)
    no_alternatives = {"content": [{"token": "a", "logprob": -1.0, "top_logprobs": None}]}
    assert _completions(_answer(True, no_alternatives), chat=True)[0].top_logprobs == ((),)


@pytest.mark.parametrize("base_url", [
    "https://host/openai/deployments/d?api-version=2024-02-01",
    "http://host:8000/v1#part",
])  # fmt: skip
def test_a_base_url_with_a_query_or_fragment_is_refused(base_url):
    # before: the query was dropped in silence (base_url 'https://host/openai/deployments/d'),
    # so a server that needs it answered every request with an error
    with pytest.raises(InputError, match=r"^base_url: expected .* without a query"):
        RemoteModel(base_url, "m")
