"""Review pass 55 (second reviewer): the case-insensitive Bearer check stripped the spaces before
the token, so a key that itself begins with a space, which RemoteModel sends as ``Bearer  <key>``
(as the check before it took), was a 401 against a server holding that very key."""

import httpx
from test_server import Reverser

from trustlab.llm import make_server
from trustlab.llm.remote import RemoteModel


def test_a_key_beginning_with_a_space_is_the_key():
    with make_server(Reverser(), api_key=" k") as srv:
        assert RemoteModel(srv.url, "reverser", api_key=" k").models()  # was a 401
        for header, status in [("Bearer  k", 200), ("Bearer k", 401)]:
            got = httpx.get(srv.url + "/v1/models", headers={"Authorization": header}, timeout=10)
            assert got.status_code == status, header
