"""A refused base URL never shows its password (diff review 61 D): one holding an unescaped '/',
'?' or '#' was refused as a bad port and shown in full, since the hiding stopped at the first
'/', '?' or '#' (e.g. 'got 'http://user:hunter2#x@host/v1'')."""

from __future__ import annotations

import pytest

from trustlab.errors import InputError
from trustlab.llm import RemoteModel


@pytest.mark.parametrize("password", ["hunter2#x", "hunter2/x", "hunter2?x", "hunter2 x/y"])
def test_a_refused_url_hides_a_password_with_url_delimiters(password):
    with pytest.raises(InputError, match="^base_url: expected") as exc:
        RemoteModel(f"http://user:{password}@host:8000/v1", "m")
    assert "hunter2" not in str(exc.value) and "//***@host:8000/v1" in str(exc.value)


def test_a_url_without_credentials_is_shown_whole():
    with pytest.raises(InputError, match=r"got 'http://host:99999/v1'"):
        RemoteModel("http://host:99999/v1", "m")
