"""Review pass 59: the Retry-After rules of RemoteModel that no test pinned.

Mutations that every RemoteModel test (tests/llm/test_remote.py, the review 52/53/57 remote and
http files, test_openai_client.py: 115 tests) survived: dropping the 60 s cap on a server's
Retry-After (``wait = max(wait, retry_after)``) and reading an HTTP-date Retry-After as 0 s.
docs/llm-remote.md promises the cap; RFC 9110 allows both forms of the header.
"""

from __future__ import annotations

import email.utils
import types

import pytest

import trustlab.llm.remote as remote
from trustlab.llm import RemoteModel, make_server
from trustlab.llm.server import Faults

NOW = 1_700_000_000.0  # a fixed clock for the HTTP-date tests


class _Echo:
    """A stand-in model: the prompt back."""

    name = "echo"

    def generate(
        self, prompts, max_new_tokens=64, *, chat=True, temperature=0.0, random_state=None
    ):
        return list(prompts)


@pytest.fixture
def waits(monkeypatch):
    recorded: list[float] = []
    monkeypatch.setattr(remote, "_sleep", recorded.append)
    return recorded


def test_a_retry_after_over_a_minute_is_capped_at_60_s(waits):
    faults = Faults(count=2, status=429, retry_after=3600)
    with make_server(_Echo(), faults=faults) as server:
        with RemoteModel(server.url, "echo", backoff=0.001) as model:
            assert model.complete("ab") == "ab"
    assert waits == [remote.MAX_RETRY_AFTER_S, remote.MAX_RETRY_AFTER_S] == [60.0, 60.0]


@pytest.fixture
def fixed_clock(monkeypatch):
    """``remote``'s view of the time module with time.time() fixed at NOW."""
    monkeypatch.setattr(remote, "time", types.SimpleNamespace(time=lambda: NOW))


@pytest.mark.parametrize("ahead, expected", [(30, 30.0), (0, 0.0), (-120, 0.0)])
def test_an_http_date_retry_after_is_the_seconds_until_it(fixed_clock, ahead, expected):
    header = email.utils.formatdate(NOW + ahead, usegmt=True)  # 'Tue, 14 Nov 2023 22:13:50 GMT'
    assert remote._parse_retry_after(header) == expected


@pytest.mark.parametrize("header", [None, "", "soon", "nan", "inf", "-inf"])
def test_a_retry_after_that_says_no_time_is_ignored(header):
    assert remote._parse_retry_after(header) is None


def test_seconds_are_taken_as_they_are_and_never_negative():
    assert remote._parse_retry_after("2.5") == 2.5
    assert remote._parse_retry_after("-3") == 0.0
