"""The server's budget for new tokens against the model's context (the tiny Llama's is 256
positions): the default budget (256) is shortened to what the prompt leaves, a budget that was
sent is still checked, and a prompt that fills the context is named as the prompt."""

import httpx
import pytest

from trustlab.llm import load_model, make_server


@pytest.fixture(scope="module")
def tiny_server(tiny_llama_folder):
    with make_server(load_model(tiny_llama_folder), model_name="tiny") as server:
        yield server


def post(server, path, body):
    return httpx.post(server.url + path, json={"model": "tiny", **body}, timeout=120)


@pytest.mark.parametrize("path, body", [
    ("/v1/completions", {"prompt": "Once upon a time"}),
    ("/v1/chat/completions", {"messages": [{"role": "user", "content": "Hello there"}]}),
])  # fmt: skip
def test_without_max_tokens_the_answer_fills_what_the_context_leaves(tiny_server, path, body):
    # before: 400 "max_tokens: expected at most 2xx ..., got 256", a field the client never sent
    response = post(tiny_server, path, {**body, "temperature": 0})
    assert response.status_code == 200, response.text
    usage = response.json()["usage"]
    assert usage["prompt_tokens"] + usage["completion_tokens"] <= 256
    assert usage["completion_tokens"] >= 1


def test_a_budget_that_was_sent_is_still_checked(tiny_server):
    response = post(
        tiny_server, "/v1/completions", {"prompt": "Once upon a time", "max_tokens": 256}
    )
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["param"] == "max_tokens"
    assert error["message"].startswith("max_tokens: expected at most ")


@pytest.mark.parametrize("path, body, field", [
    ("/v1/completions", {"prompt": "word " * 300}, "prompt"),
    ("/v1/completions", {"prompt": ["short", "word " * 300]}, "prompt[1]"),
    ("/v1/chat/completions", {"messages": [{"role": "user", "content": "word " * 300}]},
     "messages"),
])  # fmt: skip
def test_a_prompt_filling_the_context_is_named_as_the_prompt(tiny_server, path, body, field):
    # before: "max_tokens: expected at most 0 ..." whatever budget was sent
    response = post(tiny_server, path, {**body, "max_tokens": 1})
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["param"] == field
    assert error["message"].startswith(f"{field}: expected at most 255 tokens (the model's context")
