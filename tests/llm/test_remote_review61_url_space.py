"""A base URL with a space or a control character is refused (review 61): a host with a space
was looked up after every retry (DNS failure, 8-9 s with the default retries), and urlsplit
dropped a tab silently, so 'http://exa<TAB>mple.com/v1' reached example.com."""

from __future__ import annotations

import pytest

from trustlab.errors import InputError
from trustlab.llm import RemoteModel


@pytest.mark.parametrize(
    "url", ["http://ex ample.com/v1", "http://exa\tmple.com/v1", "http://h:8000/v1\n/x"]
)
def test_a_url_with_a_space_or_control_character_is_refused(url):
    with pytest.raises(InputError, match="base_url: .*without spaces or control characters"):
        RemoteModel(url, "m")


def test_surrounding_whitespace_is_still_stripped():
    with RemoteModel("  http://127.0.0.1:9/v1\n", "m") as model:
        assert model.base_url == "http://127.0.0.1:9/v1"
