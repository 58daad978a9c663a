"""Second review of the LLM server: its words for a prompt the model refuses and for injected
client errors; a busy port found before a model loads."""

import socket

import httpx
import pytest

import trustlab.llm.server as server_module
from trustlab.errors import ResourceError
from trustlab.llm import load_model, make_server
from trustlab.llm.server import Faults


class Reverser:
    name = "reverser"

    def generate(
        self, prompts, max_new_tokens=64, *, chat=True, temperature=0.0, random_state=None
    ):
        return [p[::-1] for p in prompts]


@pytest.fixture(scope="module")
def tiny_server(tiny_llama_folder):
    with make_server(load_model(tiny_llama_folder), model_name="tiny") as server:
        yield server


@pytest.mark.parametrize(
    "prompt, field",
    [("", "prompt"), ([""], "prompt"), (["a", ""], "prompt[1]"), (["", "a"], "prompt[0]")],
)
def test_a_prompt_without_tokens_is_named_by_the_request_field(tiny_server, prompt, field):
    # before: "prompts[0]: expected a text of at least one token" (LocalModel's argument name)
    body = {"model": "tiny", "prompt": prompt, "max_tokens": 2}
    response = httpx.post(tiny_server.url + "/v1/completions", json=body, timeout=30)
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["param"] == field
    assert error["message"] == f"{field}: expected a text of at least one token, got ''"
    assert error["type"] == "invalid_request_error"


@pytest.mark.parametrize(
    "status, kind",
    [(400, "invalid_request_error"), (404, "invalid_request_error"),
     (429, "rate_limit_exceeded"), (500, "server_error"), (503, "server_error")],
)  # fmt: skip
def test_an_injected_fault_has_the_error_type_of_its_status(status, kind):
    # before: every status but 429 was a "server_error", 4xx client errors included
    with make_server(Reverser(), faults=Faults(count=1, status=status)) as server:
        response = httpx.post(server.url + "/v1/completions", json={"prompt": "x"}, timeout=10)
    assert response.status_code == status
    assert response.json()["error"]["type"] == kind


def test_a_busy_port_is_refused_before_the_model_loads(monkeypatch):
    loaded = []
    monkeypatch.setattr(server_module, "load_model", lambda name: loaded.append(name) or Reverser())
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        with pytest.raises(ResourceError, match=f"^could not listen on 127.0.0.1:{port}: "):
            make_server("some-model", port=port)
    assert loaded == []  # before: the model loaded, then binding failed


def test_a_port_freed_a_moment_ago_still_serves(monkeypatch):
    monkeypatch.setattr(server_module, "load_model", lambda name: Reverser())
    with make_server("some-model") as first:
        port = first.port
        assert httpx.post(first.url + "/v1/completions", json={"prompt": "ab"}).status_code == 200
    with make_server("some-model", port=port) as again:  # the probe does not hold the port
        response = httpx.post(again.url + "/v1/completions", json={"prompt": "ab"}, timeout=10)
        assert response.json()["choices"][0]["text"] == "ba"
