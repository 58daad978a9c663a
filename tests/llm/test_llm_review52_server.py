"""The server, the local model and the client under odd text (review pass 52): a lone surrogate,
which JSON can carry ("\\ud800") and the tokenizer cannot encode, is refused naming the field."""

import json

import httpx
import pytest

from trustlab.errors import InputError
from trustlab.llm import RemoteModel, load_model, make_server

LONE = "a\ud800b"


@pytest.fixture(scope="module")
def tiny(tiny_llama_folder):
    return load_model(tiny_llama_folder)


@pytest.fixture(scope="module")
def tiny_server(tiny):
    with make_server(tiny, model_name="tiny") as server:
        yield server


def post(server, path, body):
    body = json.dumps({"model": "tiny", **body})  # ASCII: a lone surrogate as "\\ud800"
    return httpx.post(
        server.url + path, content=body, headers={"content-type": "application/json"}, timeout=120
    )


@pytest.mark.parametrize("path, body, field", [
    ("/v1/completions", {"prompt": LONE}, "prompt"),
    ("/v1/completions", {"prompt": ["fine", LONE]}, "prompt[1]"),
    ("/v1/completions", {"prompt": "fine", "stop": ["x", LONE]}, "stop"),
    ("/v1/chat/completions", {"messages": [{"role": "user", "content": LONE}]}, "messages"),
    ("/v1/chat/completions",
     {"messages": [{"role": "system", "content": "s"}, {"role": "user", "content": LONE}]},
     "messages"),
])  # fmt: skip
def test_the_server_refuses_a_lone_surrogate_naming_the_field(tiny_server, path, body, field):
    # before: 500 "TypeError: TextEncodeInput must be Union[...]" with a traceback in the log
    response = post(tiny_server, path, {**body, "max_tokens": 2})
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["param"] == field
    assert error["message"].startswith(f"{field}: expected text UTF-8 can encode")
    assert "'\\ud800' at character 1" in error["message"]
    ok = post(tiny_server, "/v1/completions", {"prompt": "a\u00e9\U0001f426b", "max_tokens": 2})
    assert ok.status_code == 200, ok.text


@pytest.mark.parametrize("call", [
    lambda lm: lm.generate([LONE], 2, chat=False),
    lambda lm: lm.completions(["fine"], 2, chat=False, stop=LONE),
    lambda lm: lm.completions([[{"role": "user", "content": LONE}]], 2),
    lambda lm: lm.logprobs([LONE], ["x"]),
    lambda lm: lm.logprobs(["x"], [LONE]),
])  # fmt: skip
def test_the_local_model_refuses_a_lone_surrogate(tiny, call):
    with pytest.raises(InputError, match="expected text UTF-8 can encode"):
        call(tiny)


def test_the_client_refuses_a_lone_surrogate_before_sending(tiny_server):
    with RemoteModel(tiny_server.url, "tiny", max_retries=0) as client:
        with pytest.raises(InputError, match=r"prompts\[0\]: expected text UTF-8 can encode"):
            client.generate([LONE], 2)
        with pytest.raises(InputError, match="messages: expected text UTF-8 can encode"):
            client.chat(LONE, 2)
        with pytest.raises(InputError, match="prompt: expected text UTF-8 can encode"):
            client.complete(LONE, 2)
        with pytest.raises(InputError, match="stop: expected text UTF-8 can encode"):
            client.complete("fine", 2, stop=LONE)
        for chat in (True, False):  # checked when stream() is called, before any request
            with pytest.raises(InputError, match="messages: expected text UTF-8 can encode"):
                client.stream(LONE, 2, chat=chat)


def test_seeded_samples_repeat_as_the_runtime_page_says(tiny):
    # docs/llm-runtime.md: generate repeats with the same seed, prompts and batch_size;
    # completions' samples do not depend on the batch (checked unchanged code; the page did not
    # say that generate's do)
    prompts = ["hello there", "a", "the cat sat on", "xyz"]
    settings = {"chat": False, "temperature": 1.0, "random_state": 3}
    first = tiny.generate(prompts, 4, batch_size=2, **settings)
    assert tiny.generate(prompts, 4, batch_size=2, **settings) == first
    texts = {
        size: [c.text for c in tiny.completions(prompts, 4, batch_size=size, **settings)]
        for size in (1, 3, 8)
    }
    assert texts[1] == texts[3] == texts[8]
