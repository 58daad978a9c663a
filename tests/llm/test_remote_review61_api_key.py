"""API keys an HTTP header cannot carry are refused up front (review 61). A key read from a file
with its line break was accepted: httpx refused the header, RemoteModel retried that as a
connection failure and its error quoted the key; a non-ASCII key was a bare UnicodeEncodeError.
A transport error that quotes the key shows it as *** (as server answers already did)."""

from __future__ import annotations

import httpx
import pytest

from trustlab.errors import BackendError, InputError
from trustlab.llm import RemoteModel

URL = "http://127.0.0.1:9/v1"


@pytest.mark.parametrize(
    "key, what",
    [
        ("sk-secret\n", "a line break at position 9"),
        ("sk-secret\r\nX-Other: 1", "a line break at position 9"),
        ("sk-sécret", "a non-ASCII character at position 4"),
        ("sk-secret ", "a space at its end"),
        ("sk-\x00secret", "a control character at position 3"),
    ],
)
def test_a_key_no_header_can_carry_is_refused_without_showing_it(key, what):
    with pytest.raises(InputError, match="api_key: expected printable ASCII") as exc:
        RemoteModel(URL, "m", api_key=key)
    assert f"got a key with {what} (hidden" in str(exc.value)
    assert "secret" not in str(exc.value) and "cret" not in str(exc.value)


def test_a_key_with_a_space_in_front_or_inside_is_still_accepted():
    for key in (" k", "a b"):  # review 55: a key beginning with a space is the key
        RemoteModel(URL, "m", api_key=key).close()


def test_a_transport_error_quoting_the_key_hides_it(monkeypatch):
    model = RemoteModel(URL, "m", api_key="sk-secret", max_retries=0)

    def refuse(*args, **kwargs):
        raise httpx.ConnectError("proxy refused the key sk-secret")

    monkeypatch.setattr(model._client, "request", refuse)
    with pytest.raises(BackendError, match=r"proxy refused the key \*\*\*") as exc:
        model.chat("hi")
    assert "sk-secret" not in str(exc.value)
    model.close()
