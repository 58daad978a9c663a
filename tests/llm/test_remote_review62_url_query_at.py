"""Review 62: a refused base URL with an '@' in its query showed 'http://***@b' (the hiding took
the query's '@' for the end of a password, so the host was hidden), and a query's
'?api_key=...' was shown in full. trustlab._checks.shown_url now hides credentials, query and
fragment and keeps the host; an unparseable URL (a password with '/', '?' or '#') is still
hidden up to its last '@' (tests/llm/test_remote_review61_url_password_hidden.py)."""

from __future__ import annotations

import pytest

from trustlab._checks import shown_url
from trustlab.errors import InputError
from trustlab.llm import RemoteModel


@pytest.mark.parametrize(
    "url, shown",
    [
        ("http://example.org/v1?x=a@b", "'http://example.org/v1?***'"),
        ("http://u:pw@example.org:8000/v1?q=a@b", "'http://***@example.org:8000/v1?***'"),
        ("http://example.org/v1?api_key=sk-123", "'http://example.org/v1?***'"),
        ("http://example.org/v1#frag@x", "'http://example.org/v1#***'"),
    ],
)
def test_a_refused_url_with_a_query_shows_its_host_not_its_query(url, shown):
    with pytest.raises(InputError, match="without a query") as exc:
        RemoteModel(url, "m")
    assert str(exc.value).endswith(f"got {shown}")


@pytest.mark.parametrize(
    "url, shown",
    [
        # a query '@' after a port: the "port" could be a password's digits cut at a '?'
        ("http://example.org:8000/v1?x=a@b", "http://example.org:***/v1?***"),
        ("http://user:1234?pw@host/v1", "http://user:***?***"),
        ("http://user:pw?x@host:8000/v1", "http://***@host:8000/v1"),  # unparseable
        ("http://user:pw@host/v1", "http://***@host/v1"),
        ("http://host:8000/v1", "http://host:8000/v1"),
        ("http://[::1]/v1?a@b", "http://[::1]/v1?***"),
    ],
)
def test_shown_url(url, shown):
    assert shown_url(url) == shown


@pytest.mark.parametrize(
    "url, shown",
    [
        # diff review 62 A: an unparseable URL (a '/' in the password) showed its query whole
        ("http://u:p/w@host/v1?api_key=sk-9", "http://***@host/v1?***"),
        ("http://u:p/w@host/v1#k", "http://***@host/v1#***"),
        ("http://host:abc/v1?api_key=sk-9", "http://host:abc/v1?***"),
    ],
)
def test_an_unparseable_url_hides_its_query_too(url, shown):
    assert shown_url(url) == shown
