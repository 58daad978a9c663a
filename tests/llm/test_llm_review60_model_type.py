"""Review pass 60: a request whose ``model`` is not a string is a 400 naming ``model``.

``{"model": 5}`` (or a list, an object, true) got 404 model_not_found "model 5 not found; this
server serves 'reverser'", as if 5 were an id it lacked; the OpenAI API answers a wrong type with
a 400 invalid_request_error. Another string id is still the 404.
"""

from __future__ import annotations

import httpx
import pytest
from test_server import Reverser

from trustlab.llm import make_server


@pytest.fixture(scope="module")
def served():
    with make_server(Reverser()) as srv:
        yield srv


@pytest.mark.parametrize("model", [5, ["reverser"], {"id": "reverser"}, True])
@pytest.mark.parametrize("path", ["/v1/chat/completions", "/v1/completions"])
def test_a_model_that_is_not_a_string_is_a_400(served, model, path):
    body = {"model": model, "messages": [{"role": "user", "content": "hi"}], "prompt": "hi"}
    body.pop("prompt" if "chat" in path else "messages")
    got = httpx.post(served.url + path, json=body, timeout=10)
    assert got.status_code == 400
    error = got.json()["error"]
    assert error["type"] == "invalid_request_error" and error["param"] == "model"
    assert error["message"].startswith("model: expected null or a model id (a string), got ")


def test_another_model_id_is_still_a_404(served):
    body = {"model": "other", "prompt": "hi"}
    got = httpx.post(served.url + "/v1/completions", json=body, timeout=10)
    assert got.status_code == 404 and got.json()["error"]["type"] == "model_not_found"
