"""A LanguageModel double whose generate returns the wrong number of texts, or not strings
(review pass 52): generate_texts and the server say so instead of pairing texts with the wrong
prompts, failing later in to_dict(), or leaving a request unanswered."""

import httpx
import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.llm import generate_texts, make_server


class Returns:
    name = "double"

    def __init__(self, answer):
        self.answer = answer

    def generate(self, prompts, max_new_tokens=64, **settings):
        return self.answer(list(prompts))


SHORT = Returns(lambda prompts: ["only one"])
NONE = Returns(lambda prompts: [None] * len(prompts))
GOOD = Returns(lambda prompts: [p.upper() for p in prompts])


@pytest.mark.parametrize("model", [SHORT, NONE, Returns(lambda prompts: "ab")])
def test_generate_texts_refuses_a_model_that_answers_wrongly(model):
    # before: ['only one'] was kept against two prompts and to_dict() raised
    # 'ValueError: zip() argument 2 is shorter than argument 1'; None was kept as a text
    with pytest.raises(InputError, match=r"^model: expected a generate that returns 2 text\(s\)"):
        generate_texts(model, ["a", "b"], 3)


def test_generate_texts_takes_a_list_tuple_or_array_of_strings():
    for answer in (list, tuple, np.array):
        model = Returns(lambda prompts, answer=answer: answer([p * 2 for p in prompts]))
        result = generate_texts(model, ["a", "b"], 3)
        assert result.to_dict()["generations"][1] == {"prompt": "b", "text": "bb"}


@pytest.fixture(scope="module")
def servers():
    with (
        make_server(SHORT, model_name="short") as short,
        make_server(NONE, model_name="none") as none,
        make_server(GOOD, model_name="good") as good,
    ):
        yield {"short": short, "none": none, "good": good}


@pytest.mark.parametrize("name", ["short", "none"])
@pytest.mark.parametrize("body", [
    {"prompt": ["a", "b"]},
    {"prompt": "a", "n": 2},
    {"prompt": "a", "n": 2, "stream": True},
])  # fmt: skip
def test_the_server_answers_500_when_the_model_answers_wrongly(servers, name, body):
    # before: the request waited forever for the missing choice (the client timed out); None
    # was answered as the text "None"
    if name == "none" and "n" in body:
        body = {**body, "n": 3}
    response = httpx.post(
        servers[name].url + "/v1/completions", json={"max_tokens": 3, **body}, timeout=30
    )
    assert response.status_code == 500, response.text
    message = response.json()["error"]["message"]
    assert message.startswith("BackendError: the model's generate returned list [")
    assert "(expected one string per prompt)" in message


def test_the_server_still_answers_a_good_model(servers):
    response = httpx.post(
        servers["good"].url + "/v1/completions",
        json={"prompt": ["a", "b"], "max_tokens": 3, "n": 2},
        timeout=30,
    )
    assert response.status_code == 200, response.text
    assert [c["text"] for c in response.json()["choices"]] == ["A", "A", "B", "B"]


class Seeded:
    """Like a server: a prompt's text depends only on the prompt and the seed it is sent with."""

    name = "seeded"

    def __init__(self):
        self.calls = []

    def generate(self, prompts, max_new_tokens=64, *, random_state=None, **settings):
        self.calls.append(list(prompts))
        return [f"{p}:{random_state}" for p in prompts]


def test_a_seeded_request_with_several_choices_gets_different_choices():
    # before: one generate call with one seed for every choice, so a model that answers a
    # (prompt, seed) the same way (RemoteModel through another server) gave n copies of one
    # sample; the docs say choice c samples from its own stream derived from (seed, c)
    model = Seeded()
    with make_server(model, model_name="seeded") as server:

        def texts(**body):
            response = httpx.post(
                server.url + "/v1/completions",
                json={"max_tokens": 3, "temperature": 1.0, **body},
                timeout=30,
            )
            assert response.status_code == 200, response.text
            return [c["text"] for c in response.json()["choices"]]

        three = texts(prompt=["a", "b"], n=3, seed=5)
        assert len(set(three[:3])) == 3 and len(set(three[3:])) == 3
        assert [t.split(":")[0] for t in three] == ["a"] * 3 + ["b"] * 3  # prompt by prompt
        assert texts(prompt=["a", "b"], n=3, seed=5) == three  # reproducible
        assert texts(prompt="a", n=2, seed=5) == three[:2]  # choice c whatever n is
        assert texts(prompt="a", seed=5) == ["a:5"]  # one choice: the request's seed
        model.calls.clear()
        assert texts(prompt="a", n=2) == ["a:None", "a:None"]  # unseeded: one call as before
        assert model.calls == [["a", "a"]]


@pytest.mark.parametrize("prompts", [(p for p in ["a", "b"]), [], ["a", 1]])
def test_generate_texts_checks_the_prompts_before_any_model_call(prompts):
    # a generator was consumed by the model and then recorded as no prompts at all
    model = Seeded()
    with pytest.raises(InputError, match="^prompts: expected"):
        generate_texts(model, prompts, 3)
    assert model.calls == []
