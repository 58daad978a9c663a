"""A base URL with an '@' after its host is refused (diff review 61 F of 2dea88ed): a password
holding an unescaped '/' after digits, 'http://user:12345/secret@host/v1', was parsed as host
'user', port 12345 and path '/secret@host/v1', accepted, and shown whole in the repr and every
error; the refusal hides it like the other refusals, and the encoded password still works."""

from __future__ import annotations

import pytest

from trustlab.errors import InputError
from trustlab.llm import RemoteModel
from trustlab.llm.remote import _check_base_url

AT_AFTER_HOST = r"^base_url: expected .* with no '@' after the host"


def test_a_password_with_a_slash_after_digits_is_refused_and_hidden():
    with pytest.raises(InputError, match=AT_AFTER_HOST) as exc:
        RemoteModel("http://user:12345/secret@host/v1", "m")
    assert "secret" not in str(exc.value) and exc.value.argument == "base_url"
    with pytest.raises(InputError, match=AT_AFTER_HOST):
        RemoteModel("http://host:8000/v1/@me", "m")


def test_the_encoded_password_is_basic_auth_and_not_shown():
    url, auth = _check_base_url("http://user:12345%2Fsecret@host:8000/v1")
    assert (url, auth) == ("http://host:8000/v1", ("user", "12345/secret"))
    with RemoteModel("http://user:12345%2Fsecret@host:8000/v1", "m") as model:
        assert "secret" not in repr(model)
