"""Review pass 59: a field accepted only at its "off" value is compared without counting true as 1
or 0 as false (``_openai._same``). With that rule replaced by plain ``==`` the 113 tests of
tests/llm/test_server.py and the review 2/52 server and review 53 route files still passed; a
JSON ``false`` is not the number 0, nor ``0`` the boolean ``false``."""

from __future__ import annotations

import httpx
import pytest

from trustlab.llm import make_server


class _Echo:
    name = "echo"

    def generate(
        self, prompts, max_new_tokens=64, *, chat=True, temperature=0.0, random_state=None
    ):
        return list(prompts)


@pytest.fixture(scope="module")
def url():
    with make_server(_Echo()) as server:
        yield server.url + "/v1/chat/completions"


BODY = {"model": "echo", "messages": [{"role": "user", "content": "hi"}]}


@pytest.mark.parametrize(
    ("field", "value"),
    [("frequency_penalty", False), ("presence_penalty", False), ("store", 0),
     ("parallel_tool_calls", 1), ("parallel_tool_calls", 0)],
)  # fmt: skip
def test_a_bool_for_a_number_or_a_number_for_a_bool_is_refused(url, field, value):
    reply = httpx.post(url, json={**BODY, field: value})
    assert reply.status_code == 400, reply.text
    error = reply.json()["error"]
    assert error["param"] == field and error["message"].startswith(f"{field}: not supported")


@pytest.mark.parametrize(
    ("field", "value"),
    [("frequency_penalty", 0), ("frequency_penalty", 0.0), ("store", False),
     ("parallel_tool_calls", True), ("parallel_tool_calls", False)],
)  # fmt: skip
def test_the_off_values_themselves_are_accepted(url, field, value):
    reply = httpx.post(url, json={**BODY, field: value})
    assert reply.status_code == 200, reply.text
    assert reply.json()["choices"][0]["message"]["content"] == "hi"
