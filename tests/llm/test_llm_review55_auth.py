"""Review pass 55: the server's API key check takes the ``Bearer`` scheme in any case, as
RFC 9110 (section 11.1) has it; ``Authorization: bearer <key>`` with the right key was a 401
'missing or wrong API key'."""

import httpx
import pytest
from test_server import Reverser

from trustlab.llm import make_server


@pytest.fixture(scope="module")
def keyed():
    with make_server(Reverser(), api_key="sk-1") as srv:
        yield srv


@pytest.mark.parametrize(
    ("header", "status"),
    [
        ("Bearer sk-1", 200),
        ("bearer sk-1", 200),
        ("BEARER sk-1", 200),
        ("Bearer  sk-1", 200),
        ("Bearer sk-2", 401),
        ("Basic sk-1", 401),
        ("sk-1", 401),
        ("Bearersk-1", 401),
        ("Bearer sk-1x", 401),
        ("Bearer", 401),
    ],
)
def test_the_bearer_scheme_is_case_insensitive_and_the_key_exact(keyed, header, status):
    got = httpx.get(keyed.url + "/v1/models", headers={"Authorization": header}, timeout=10)
    assert got.status_code == status
