"""``GET /health`` answers without the API key (a load balancer's check carries none; it says only
'ok'; it was 401), and ``GET /v1/models/<name>`` answers as the OpenAI API does, so the client's
``models.retrieve`` works (it was 404); every other request still needs the key."""

import httpx
import openai
import pytest
from test_server import Reverser

from trustlab.llm import make_server

KEY = {"Authorization": "Bearer sk-1"}


@pytest.fixture(scope="module")
def keyed():
    with make_server(Reverser(), api_key="sk-1") as srv:
        yield srv


def test_health_needs_no_key_and_the_rest_still_does(keyed):
    assert httpx.get(keyed.url + "/health", timeout=10).json() == {"status": "ok"}
    for path in ("/v1/models", "/v1/models/reverser", "/models/reverser"):
        assert httpx.get(keyed.url + path, timeout=10).status_code == 401, path


@pytest.mark.parametrize("prefix", ["/v1", ""])
def test_a_model_is_retrieved_by_its_name(keyed, prefix):
    got = httpx.get(f"{keyed.url}{prefix}/models/reverser", headers=KEY, timeout=10)
    assert got.status_code == 200
    assert got.json() == {"id": "reverser", "object": "model", "created": 0, "owned_by": "trustlab"}
    other = httpx.get(f"{keyed.url}{prefix}/models/other", headers=KEY, timeout=10)
    assert other.status_code == 404
    assert other.json()["error"]["message"] == (
        "model 'other' not found; this server serves 'reverser'"
    )


def test_the_openai_client_retrieves_the_model(keyed):
    with openai.OpenAI(base_url=keyed.url + "/v1", api_key="sk-1", max_retries=0) as client:
        assert client.models.retrieve("reverser").id == "reverser"
