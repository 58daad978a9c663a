"""Review pass 52: YAML aliases in tool outputs, huge integers in a served request, trajectory 0
in an evaluation, a rule listed twice under an action, odd AgentDojo chat records."""

from __future__ import annotations

import json
import math
import socket

import pytest
from one_rule_policy import one_rule_policy

from trustlab.agents import Guardrail, evaluate_guardrail, load_policy
from trustlab.agents.agentdojo import trajectory_from_messages
from trustlab.agents.checkers import CheckContext, make_checker
from trustlab.agents.policy import Action, Step
from trustlab.agents.provenance import _field_values
from trustlab.agents.server import make_guard_server
from trustlab.errors import InputError


def _doubling_yaml(levels: int, last: str) -> str:
    """Anchors each listing the one before twice: 2**levels leaves in a few lines of text."""
    lines = ['a0: &a0 ["DE89370400440532013000", "x"]']
    lines += [f"a{i}: &a{i} [*a{i - 1}, *a{i - 1}]" for i in range(1, levels)]
    return "\n".join([*lines, last])


def test_yaml_aliases_in_a_tool_output_are_walked_once():
    # each line doubled the work (a tool's output hung the guardrail): the values are the same
    # whichever alias reaches them, so each node is read once
    obs = _doubling_yaml(16, "sender: {iban: *a15}")
    assert sorted(set(_field_values(obs, ("sender",)))) == ["de89370400440532013000", "iban", "x"]
    assert len(_field_values(obs, ("sender",))) <= 3
    assert len(_field_values(obs, ("iban",))) <= 2  # the field under a mapping: values only
    checker = make_checker(
        {
            "type": "argument_mentioned",
            "arguments": "recipient",
            "sources": [{"tool": "*", "fields": ["sender"]}],
        }
    )
    history = (Step(action=Action(name="read"), observation=_doubling_yaml(60, "sender: *a59")),)

    def mentioned(recipient: str) -> bool:
        action = Action(name="pay", arguments={"recipient": recipient})
        return checker(CheckContext(history=history, action=action, task_intent=""))

    assert mentioned("DE89370400440532013000") is True  # 2**60 leaves: never finished before
    assert mentioned("GB29NWBK60161331926819") is False


def test_a_served_request_with_a_huge_integer_gets_400():
    # int('1' * 5000) is refused by Python (ValueError, not a JSONDecodeError): the server
    # dropped the connection without an answer
    body = b'{"action": "pay", "evidence": {"ok": ' + b"1" * 5000 + b"}}"
    head = f"POST /check HTTP/1.1\r\nHost: x\r\nContent-Length: {len(body)}\r\n"
    request = (head + "Connection: close\r\n\r\n").encode() + body
    with make_guard_server(Guardrail(one_rule_policy()), port=0) as server:
        with socket.create_connection((server.host, server.port), timeout=10) as conn:
            conn.sendall(request)
            chunks = []
            while chunk := conn.recv(65536):
                chunks.append(chunk)
    answer = b"".join(chunks).decode()
    assert answer.startswith("HTTP/1.1 400")
    assert "body: expected a JSON object, got invalid JSON" in answer
    assert "4300 digits" in answer


def _cases(first_cluster):
    """Trajectory first_cluster: four cases, one right; trajectories 1 and 2: two right, one not."""
    out = []
    for cluster, oks in ((first_cluster, [1, 0, 0, 0]), (1, [1, 1]), (2, [0, 1])):
        for ok in oks:
            label = "safe" if bool(ok) == (cluster != first_cluster) else "unsafe"
            out.append(
                {"trajectory": [], "action": "pay", "oracle": {"ok": bool(ok)}, "label": label}
            )
            out[-1]["cluster"] = cluster
    return out


def test_trajectory_zero_is_one_cluster_and_group_zero_a_group():
    guard = Guardrail(one_rule_policy())
    zero = evaluate_guardrail(guard, _cases(0), mode="oracle", random_state=0)
    three = evaluate_guardrail(guard, _cases(3), mode="oracle", random_state=0)
    # cluster 0 was falsy: its four cases became four trajectories (a narrower interval)
    assert sorted({r["trajectory"] for r in zero.records}) == ["0", "1", "2"]
    assert zero.metrics["accuracy"] == three.metrics["accuracy"]
    grouped = [{**c, "group": i % 2} for i, c in enumerate(_cases(3))]
    by_group = evaluate_guardrail(guard, grouped, mode="oracle", random_state=0).by_group
    assert sorted(by_group) == ["0", "1"]  # group 0 was filed under "all"


def test_a_rule_listed_twice_under_an_action_is_refused_when_the_policy_loads():
    policy = one_rule_policy()
    policy["actions"]["pay"]["soft_rule_ids"] = ["r", "r"]
    with pytest.raises(InputError, match=r"action 'pay' lists rule id\(s\) \['r'\] more than once"):
        load_policy(policy)


@pytest.mark.parametrize(
    ("messages", "where"),
    [
        ([{"role": "assistant", "tool_calls": [{"args": {}}]}], r"messages\[0\]\.tool_calls\[0\]"),
        (
            [{"role": "user", "content": "x"}, {"role": "assistant", "tool_calls": [
                {"function": "f", "args": [1, 2]}]}],
            r"messages\[1\]\.tool_calls\[0\]",
        ),
        ([{"role": "assistant", "tool_calls": {"function": "f"}}], r"messages\[0\]\.tool_calls"),
    ],
)  # fmt: skip
def test_a_malformed_tool_call_is_named(messages, where):
    # a pydantic ValidationError, a TypeError from dict([1, 2]) before
    with pytest.raises(InputError, match=where):
        trajectory_from_messages(messages)


def test_odd_contents_become_text():
    calls = {"role": "assistant", "tool_calls": [{"function": "f", "args": {}, "id": "1"}]}
    result = {"role": "tool", "tool_call": {"id": "1", "function": "f"}}
    traj = trajectory_from_messages(
        [{"role": "user", "content": ["Pay my rent."]}, calls, {**result, "content": {"a": 1}}]
    )
    assert traj.task_intent == "Pay my rent."  # bare strings: AttributeError before
    assert json.loads(traj.steps[0].observation) == {"a": 1}  # AttributeError before
    openai = [{"role": "user", "content": [{"type": "text", "text": "Pay my rent."}]}]
    assert trajectory_from_messages(openai).task_intent == "Pay my rent."  # "" before
    failed = trajectory_from_messages([calls, {**result, "error": {"message": "no such file"}}])
    assert json.loads(failed.steps[0].observation) == {"message": "no such file"}


def _two_rules(first_type: str, second_type: str, order=(0, 1)) -> dict:
    rules = [
        {
            "rule_id": f"r{i}",
            "predicates": [["pay", "", "", "action"], ["ok", "", "", kind]],
            "logic": "pay IMPLIES ok",
        }
        for i, kind in enumerate((first_type, second_type))
    ]
    return {
        "actions": {"pay": {"soft_rule_ids": ["r0", "r1"]}},
        "rule_list": [rules[k] for k in order],
    }


def test_a_predicate_declared_with_two_types_is_refused():
    # the first declaration won: listing the rules the other way round turned the free 'ok'
    # into an action predicate, false for 'pay' (p_safe 0.362 became 0.119)
    for order in ((0, 1), (1, 0)):
        with pytest.raises(InputError, match=r"predicate 'ok' is declared as an action in rule"):
            load_policy(_two_rules("condition", "action", order))
    assert Guardrail(_two_rules("condition", "condition")).check([], "pay").p_safe == pytest.approx(
        (math.e**2 + 1) / (3 * math.e**2 + 1)
    )
    # a policy action is an action whatever a rule calls it
    assert load_policy(_pay_as_condition()).rule_ids == ["r"]


def _pay_as_condition() -> dict:
    policy = one_rule_policy()
    policy["rule_list"][0]["predicates"][0] = ["pay", "", "", "condition"]
    return policy


@pytest.mark.parametrize("name", ["true", "FALSE", "True"])
def test_a_predicate_named_like_a_constant_is_refused(name):
    # 'pay IMPLIES true' read the word: the declared predicate took evidence and never counted
    with pytest.raises(
        InputError, match=rf"predicate name\(s\) \['{name}'\] are words of the rule"
    ):
        load_policy(one_rule_policy(condition=name))


TWO_ACTIONS = {
    "actions": {"pay": {"soft_rule_ids": ["kept"]}, "wire": {"soft_rule_ids": ["broken"]}},
    "rule_list": [
        {
            "rule_id": "kept",
            "predicates": [["pay", "", "", "action"], ["c", "", "", "condition"]],
            "logic": "pay OR c",
        },
        {
            "rule_id": "broken",
            "predicates": [["wire", "", "", "action"], ["d", "", "", "condition"]],
            "logic": "wire IMPLIES d",
        },
    ],
}


@pytest.mark.parametrize("method", ["auto", "enumerate", "compiled"])
@pytest.mark.parametrize("weight", [30.0, 800.0])
def test_two_circuits_add_their_exact_log_odds(method, weight):
    # pay instantiates both actions (evidence on wire): one circuit's log-odds +weight, the
    # other's -(weight - 0.001); their p_safe round to 1 and 0, and logit(1.0) + logit(0.0) was
    # nan ("p_safe: expected a number in [0, 1], got nan" from weight 37 on); at 30, logit of a
    # p_safe near 1 lost digits (0.500255 for 0.500250)
    guard = Guardrail({**TWO_ACTIONS, "weights": {"kept": weight, "broken": weight - 1e-3}})
    guard.method = method
    decision = guard.check([], "pay", evidence={"wire": True, "c": False, "d": False})
    assert decision.circuits == ("pay", "wire")
    assert decision.methods == (("closed_form",) if method == "auto" else (method,)) * 2
    assert decision.p_safe == pytest.approx(1 / (1 + math.exp(-1e-3)), abs=1e-12)
    assert decision.action_allowed


def _nested(value, depth: int):
    for _ in range(depth):
        value = [value]
    return value


def test_a_deeply_nested_argument_is_traced_without_recursion():
    # the provenance and sensitive-data checkers recursed: 500 levels (a JSON request the
    # server parses) raised RecursionError, a 500 answer
    iban = "DE89370400440532013000"
    guard = Guardrail(
        one_rule_policy(
            checkers={"ok": {"type": "argument_mentioned", "arguments": "recipient"}},
        )
    )
    intent = {"task_intent": f"Pay {iban}.", "steps": []}
    for value, allowed in ((iban, True), ("GB29NWBK60161331926819", False)):
        action = {"name": "pay", "arguments": {"recipient": _nested(value, 3000)}}
        assert guard.check(intent, action).action_allowed is allowed
    leak = make_checker({"type": "sensitive_data", "patterns": ["iban"], "fields": ["arguments"]})
    deep = Action(name="send", arguments={"body": _nested(f"my iban {iban}", 3000)})
    assert leak(CheckContext(history=(), action=deep, task_intent="")) is True


def test_a_history_step_nested_too_deep_is_named():
    # pydantic cannot serialise it (the history's cache key): PydanticSerializationError, a
    # 500 from the server
    guard = Guardrail(one_rule_policy(logic="ALWAYS(pay IMPLIES ok)"))
    step = {"action": {"name": "pay", "arguments": {"r": _nested("x", 300)}}}
    first = {"action": "x", "predicates": {"ok": True}}
    with pytest.raises(InputError, match=r"trajectory\.steps\[1\]: expected a step whose values"):
        guard.check([first, step], "pay", evidence={"ok": True})
    shallow = {
        "action": {"name": "pay", "arguments": {"r": _nested("x", 200)}},
        "predicates": {"ok": True},
    }
    assert guard.check([shallow], "pay", evidence={"ok": True}).action_allowed
