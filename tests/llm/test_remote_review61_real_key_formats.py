"""Real API keys pass the header check of review 61 (diff review 61 D of 41088bd2): its tests
covered only refused keys and keys with spaces, so a check refusing '-', '_', '.', '+', '/' or
'=' (OpenAI, Anthropic, Azure, JWT and base64 keys) passed them."""

from __future__ import annotations

import pytest

from trustlab.llm import RemoteModel
from trustlab.llm._inputs import check_api_key

JWT = (
    "eyJhbGciOiJIUzI1NiJ9."
    + "eyJzdWIiOiJ1c2VyIn0" * 60
    + ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)
KEYS = [
    "sk-proj-AbC_dEf-1234567890abcdefghijklmnopqrstuvwxyzABCDEFGHIJ_KLMNOP-qrstuv",
    "sk-ant-api03-abc_DEF-ghi~jkl",
    "0123456789abcdef0123456789abcdef",  # an Azure OpenAI key
    "key.with-dash_and.dot",
    "abc+/def==",
    JWT,
    "!#$%&'()*+,/:;<=>?@[\\]^`{|}~\"",  # every other printable ASCII character
]


@pytest.mark.parametrize("key", KEYS)
def test_real_key_formats_are_accepted(key):
    assert check_api_key(key) == key


def test_the_key_is_sent_unchanged():
    with RemoteModel("http://127.0.0.1:9/v1", "m", api_key=JWT) as model:
        assert model._client.headers["Authorization"] == f"Bearer {JWT}"
