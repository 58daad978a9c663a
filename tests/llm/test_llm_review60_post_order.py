"""Review pass 60: a POST is judged as the OpenAI API judges it: key, then endpoint, then body.

The server decoded the body before anything else, so a request without the API key whose body
was not JSON got 400 "request body: expected JSON" instead of 401, and a POST to an endpoint
that does not exist got that 400 instead of 404 "no such endpoint" unless its body happened to be
a JSON object. The body is still read whole first (the connection stays usable).
"""

from __future__ import annotations

import httpx
import pytest
from test_server import Reverser

from trustlab.llm import make_server

KEY = {"Authorization": "Bearer sk-1"}


@pytest.fixture(scope="module")
def keyed():
    with make_server(Reverser(), api_key="sk-1") as srv:
        yield srv


@pytest.mark.parametrize("body", ["", "not json", "[1, 2]"])
def test_a_request_without_the_key_is_401_whatever_its_body(keyed, body):
    got = httpx.post(keyed.url + "/v1/chat/completions", content=body, timeout=10)
    assert got.status_code == 401
    assert got.json()["error"]["type"] == "invalid_api_key"


@pytest.mark.parametrize("body", ["", "not json", "{}"])
def test_an_unknown_endpoint_is_404_whatever_its_body(keyed, body):
    got = httpx.post(keyed.url + "/v1/embeddings", content=body, headers=KEY, timeout=10)
    assert got.status_code == 404
    assert got.json()["error"]["message"] == "no such endpoint: POST /v1/embeddings"


def test_a_bad_body_on_a_known_endpoint_is_still_400_and_the_connection_lives(keyed):
    with httpx.Client(headers=KEY, timeout=10) as client:
        bad = client.post(keyed.url + "/v1/completions", content="not json")
        assert bad.status_code == 400
        assert bad.json()["error"]["message"] == "request body: expected JSON"
        good = client.post(
            keyed.url + "/v1/completions", json={"model": "reverser", "prompt": "ab"}
        )
        assert good.status_code == 200 and good.json()["choices"][0]["text"] == "text ba"
