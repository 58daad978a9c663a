"""Review 62 (diff review A of 97f862bd): GuardClient showed a URL's password and query in
full, in its refusal ('ftp://u:s3cret@h/') and in 'guard server at http://127.0.0.1:9/?token=
s3cret unreachable'; RemoteModel and the CLI hide them (trustlab._checks.shown_url)."""

from __future__ import annotations

import pytest

from trustlab.agents.server import GuardClient
from trustlab.errors import BackendError, InputError


def test_a_refused_url_hides_its_password():
    with pytest.raises(InputError, match=r"^url: .*, got 'ftp://\*\*\*@h/'$"):
        GuardClient("ftp://u:s3cret@h/")


def test_an_unreachable_server_is_named_without_its_query(monkeypatch):
    import urllib.error
    import urllib.request

    def refuse(request, timeout):
        raise urllib.error.URLError("Connection refused")

    monkeypatch.setattr(urllib.request, "urlopen", refuse)  # no socket: deterministic, instant
    client = GuardClient("http://127.0.0.1:9/?token=s3cret")
    with pytest.raises(BackendError) as exc:
        client.check([], {"name": "x", "args": {}})
    assert (
        str(exc.value) == "guard server at http://127.0.0.1:9/?*** unreachable: Connection refused"
    )
