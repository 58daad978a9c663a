"""Review 61: the guard server refuses a request body that lists a key twice in one object.

json.loads keeps the last of repeated keys, so '{"action": "pay", "action": "refund"}' was
checked as 'refund' (allowed: no rule covers it) while a client reading the first key asked about
'pay'; a repeated evidence value was likewise replaced silently.
"""

from __future__ import annotations

import http.client
import json

import pytest
from one_rule_policy import one_rule_policy

from trustlab.agents import Guardrail
from trustlab.agents.server import make_guard_server


@pytest.fixture(scope="module")
def server():
    with make_guard_server(Guardrail(one_rule_policy(unknown_action="allow")), port=0) as served:
        yield served


def _post(server, body: str) -> tuple[int, dict]:
    conn = http.client.HTTPConnection(server.host, server.port, timeout=10)
    try:
        conn.request("POST", "/check", body=body.encode(), headers={"Content-Type": "x"})
        answer = conn.getresponse()
        return answer.status, json.loads(answer.read())
    finally:
        conn.close()


@pytest.mark.parametrize(
    ("body", "key"),
    [
        ('{"action": "pay", "action": "refund"}', "action"),
        ('{"action": "pay", "evidence": {"ok": false, "ok": true}}', "ok"),
    ],
)
def test_a_key_given_twice_is_refused(server, body, key):
    status, answer = _post(server, body)
    assert status == 400
    assert answer == {"error": f"body: expected each key once in an object, got {key!r} twice"}


def test_keys_given_once_are_checked(server):
    status, answer = _post(server, '{"action": "pay", "evidence": {"ok": false}}')
    assert status == 200 and answer["action_allowed"] is False
