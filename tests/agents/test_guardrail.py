"""The guardrail: decisions, temporal rules over the whole trace, bad inputs, the HTTP endpoint."""

from __future__ import annotations

import json
import math
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from one_rule_policy import one_rule_policy

from trustlab.agents import Guardrail, Trajectory, load_policy
from trustlab.agents.server import GuardClient, make_guard_server
from trustlab.errors import InputError


def _rule(rule_id, logic, preds, description=""):
    return {
        "rule_id": rule_id,
        "predicates": [[p, "", "", "action" if p in ACTIONS else "condition"] for p in preds],
        "logic": logic,
        "description": description,
    }


ACTIONS = {"pay", "verify", "browse", "refund"}

POLICY = {
    "actions": {
        "pay": {"soft_rule_ids": ["verified_first", "confirmed"]},
        "verify": {"soft_rule_ids": []},
        "browse": {"soft_rule_ids": []},
        "refund": {"soft_rule_ids": ["refund_ok"]},
    },
    "rule_list": [
        _rule(
            "verified_first",
            "verify RELEASE NOT pay",
            ["verify", "pay"],
            "pay only after verifying",
        ),
        _rule("confirmed", "ALWAYS(pay IMPLIES ok)", ["pay", "ok"], "pay only when confirmed"),
        _rule(
            "refund_ok", "refund IMPLIES (ok AND NOT fraud)", ["refund", "ok", "fraud"], "refunds"
        ),
    ],
    "weights": {"verified_first": 2.0, "confirmed": 1.5, "refund_ok": 1.0},
}


def _h(*names):
    """History steps with the condition predicates recorded (no checker computes them here)."""
    return [{"action": n, "predicates": {"ok": True, "fraud": False}} for n in names]


def sigmoid(x):
    return 1.0 / (1.0 + math.exp(-x))


def test_closed_form_decision_and_violations():
    guard = Guardrail(POLICY)
    d = guard.check(_h("browse"), "pay", evidence={"ok": False})
    # both rules hold without the payment and fail with it: p = sigmoid(-(2.0 + 1.5))
    assert d.p_safe == pytest.approx(sigmoid(-3.5), abs=1e-12)
    assert not d.action_allowed
    assert d.violated_rule_ids == ["verified_first", "confirmed"]  # ranked by weight
    assert "pay only after verifying" in d.explanation
    d = guard.check(_h("verify"), "pay", evidence={"ok": True})
    assert d.p_safe == pytest.approx(0.5) and d.action_allowed and not d.violated_rules
    out = d.to_dict()
    assert {"action_allowed", "violated_rules", "explanation", "p_safe"} <= set(out)


def test_temporal_rules_are_evaluated_on_the_whole_trace():
    # the authors' code evaluates ALWAYS/UNTIL at the current step only; then a payment after a
    # verification step would be blocked (the candidate step itself holds no `verify`)
    guard = Guardrail(POLICY)
    after = guard.check(_h("browse", "verify", "browse"), "pay", evidence={"ok": True})
    before = guard.check(_h("browse", "browse"), "pay", evidence={"ok": True})
    assert after.action_allowed and after.p_safe == pytest.approx(0.5)
    assert not before.action_allowed and before.p_safe == pytest.approx(sigmoid(-2.0))


def test_history_violation_does_not_count_against_the_candidate():
    # an earlier unconfirmed payment already broke ALWAYS(pay -> ok): the rule fails with or
    # without the candidate, so it carries no evidence about it
    traj = Trajectory.from_dict(
        {"steps": [*_h("verify"), {"action": "pay", "predicates": {"ok": False}}]}
    )
    d = Guardrail(POLICY).check(traj, "pay", evidence={"ok": True})
    assert d.p_safe == pytest.approx(0.5)


def test_soft_evidence_marginalises_exactly():
    w, q = 1.5, 0.3
    policy = {
        "actions": {"pay": {"soft_rule_ids": ["confirmed"]}},
        "rule_list": [_rule("confirmed", "pay IMPLIES ok", ["pay", "ok"])],
        "weights": {"confirmed": w},
    }
    guard = Guardrail(policy)
    p = guard.check([], "pay", evidence={"ok": q}).p_safe
    e = math.exp(w)
    assert p == pytest.approx((e * q + (1 - q)) / (e * q + (1 - q) + e), abs=1e-12)
    # a free predicate (no checker, no evidence) is marginalised with no prior: q = 1/2
    free = guard.check([], "pay").p_safe
    assert free == pytest.approx((e + 1) / (e + 1 + 2 * e), abs=1e-12)
    assert guard.check([], "pay").predicates["ok"] is None


def test_epsilon_threshold():
    guard = Guardrail(POLICY, epsilon=0.2)
    d = guard.check(_h("verify"), "pay", evidence={"ok": True})
    assert (
        d.p_safe == pytest.approx(0.5)
        and not d.action_allowed
        and d.threshold == pytest.approx(0.6)
    )


def test_checkers_compute_predicates_on_history_and_candidate():
    calls = []

    def ok(ctx):
        calls.append(len(ctx.history))
        return ctx.action.arguments.get("amount", 0) < 100

    guard = Guardrail(POLICY, checkers={"ok": ok})
    small = {"name": "pay", "arguments": {"amount": 10}}
    big = {"name": "pay", "arguments": {"amount": 500}}
    assert guard.check(["verify"], small).action_allowed
    assert not guard.check(["verify"], big).action_allowed
    # history values are cached between calls (the same prefix is not checked twice)
    n = len(calls)
    guard.check(["verify", small], small)
    guard.check(["verify", small], small)
    assert len(calls) - n == 3


def test_several_matching_actions_add_their_log_odds():
    policy = {
        "actions": {
            "pay": {"soft_rule_ids": ["a"]},
            "big_pay": {"soft_rule_ids": ["b"]},
        },
        "rule_list": [
            _rule("a", "pay IMPLIES ok", ["pay", "ok"]),
            {
                "rule_id": "b",
                "predicates": [["big_pay", "", "", "action"], ["ok2", "", "", "condition"]],
                "logic": "big_pay IMPLIES ok2",
            },
        ],
        "weights": {"a": 1.0, "b": 2.0},
        "checkers": {},
    }
    guard = Guardrail(
        policy, checkers={"big_pay": lambda ctx: ctx.action.arguments.get("amount", 0) > 100}
    )
    d = guard.check(
        [], {"name": "pay", "arguments": {"amount": 500}}, evidence={"ok": False, "ok2": False}
    )
    assert d.circuits == ("pay", "big_pay")
    assert d.p_safe == pytest.approx(sigmoid(-3.0), abs=1e-12)


def test_unknown_actions():
    with pytest.raises(InputError, match="action"):
        Guardrail(POLICY).check([], "delete_everything")
    assert Guardrail(POLICY, unknown_action="allow").check([], "x").action_allowed
    assert not Guardrail(POLICY, unknown_action="block").check([], "x").action_allowed


def test_conversation_format():
    traj = Trajectory.from_dict(
        {
            "task_intent": "pay my bill",
            "conversation": [
                {"role": "agent", "messages": [{"thought": "check id"}, {"action": "verify"}]},
                {"role": "environment", "content": "verified"},
                {"role": "agent", "messages": [{"action": {"name": "browse"}}]},
            ],
        }
    )
    assert [s.action.name for s in traj.steps] == ["verify", "browse"]
    assert traj.steps[0].thought == "check id" and traj.steps[0].observation == "verified"
    guard = Guardrail(POLICY, checkers={"ok": lambda ctx: ctx.action.name != "pay"})
    assert guard.check(traj, "pay", evidence={"ok": True}).action_allowed


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda p: p["rule_list"][1].update(logic="ALWAYS(pay IMPLIES approved)"), "undeclared"),
        (lambda p: p.update(rule_list=[]), "no rules"),
        (lambda p: p.update(actions={}), "no actions"),
        (lambda p: p["actions"]["pay"].update(soft_rule_ids=["nope"]), "unknown rule"),
        # a rule that never names the action cannot move its decision: it was silently inert
        (
            lambda p: p["actions"]["pay"].update(soft_rule_ids=["confirmed", "refund_ok"]),
            r"action 'pay' lists rule\(s\) \['refund_ok'\] whose logic never mentions 'pay'",
        ),
        (lambda p: p.update(weights={"confirmed": float("nan")}), "finite"),
        # pydantic read "0" as 0.0 (the rule switched off) and true as 1.0
        (lambda p: p.update(weights={"confirmed": "0"}), r"weights\.confirmed: .*valid number"),
        (lambda p: p.update(weights={"confirmed": True}), r"weights\.confirmed: .*valid number"),
        (
            lambda p: p.update(
                action_tree={"pay": {"L2_children": {"refund": {"L2_children": ["pay"]}}}}
            ),
            "cycle",
        ),
        (lambda p: p["rule_list"][0].update(logic="verify RELEASE AND pay"), "logic"),
        (lambda p: p["rule_list"].append(dict(p["rule_list"][0])), "twice"),
    ],
)
def test_bad_policies_are_named(change, message):
    policy = json.loads(json.dumps(POLICY))
    change(policy)
    with pytest.raises(InputError, match=message) as info:
        load_policy(policy)
    assert str(info.value).startswith("policy")


def test_bad_checks_are_named():
    guard = Guardrail(POLICY)
    with pytest.raises(InputError, match=r"evidence\['ok'\]"):
        guard.check([], "pay", evidence={"ok": 1.5})
    with pytest.raises(InputError, match="evidence"):
        guard.check([], "pay", evidence={"unknown": True})
    with pytest.raises(InputError, match="epsilon"):
        Guardrail(POLICY, epsilon=1.0)
    with pytest.raises(InputError, match="trajectory"):
        guard.check({"steps": "pay"}, "pay")
    with pytest.raises(InputError, match=r"steps\[0\].*'ok'"):
        # a history payment needs `ok`: no checker and no recorded value
        guard.check(["pay"], "pay", evidence={"ok": True})
    with pytest.raises(InputError, match="action"):
        guard.check([], {"arguments": {}})
    for weight in ("abc", "1", True):  # float() would read the last two as 1.0
        with pytest.raises(InputError, match=r"weights\['confirmed'\]: expected a number"):
            guard.with_weights({"confirmed": weight})
    assert guard.with_weights({"confirmed": np.float32(2.5)}).weight("confirmed") == 2.5


@pytest.fixture()
def served():
    guard = Guardrail(POLICY)
    with make_guard_server(guard, port=0) as server:
        yield guard, server


def _post(url, body: bytes):
    request = urllib.request.Request(url + "/check", data=body, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def test_http_endpoint_answers_concurrent_checks_like_the_library(served):
    guard, server = served
    rng = np.random.default_rng(0)
    requests = []
    for _ in range(48):
        history = [
            str(a) for a in rng.choice(["browse", "verify", "refund"], size=rng.integers(0, 5))
        ]
        history = [{"action": a, "predicates": {"ok": True, "fraud": False}} for a in history]
        evidence = {"ok": bool(rng.random() < 0.5)}
        if rng.random() < 0.3:
            evidence["ok"] = float(rng.random())
        requests.append(({"steps": history}, "pay", evidence))
    client = GuardClient(server.url)
    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(lambda r: client.check(r[0], r[1], evidence=r[2]), requests))
    for (traj, action, evidence), answer in zip(requests, answers, strict=True):
        expected = json.loads(
            json.dumps(Guardrail(POLICY).check(traj, action, evidence=evidence).to_dict())
        )
        assert answer == expected
    assert server.n_checks == 48


def test_http_endpoint_rejects_malformed_requests(served):
    _, server = served
    status, body = _post(server.url, b"{not json")
    assert status == 400 and "JSON" in body["error"]
    status, body = _post(
        server.url, json.dumps({"trajectory": {"steps": 3}, "action": "pay"}).encode()
    )
    assert status == 400 and "trajectory" in body["error"]
    status, body = _post(
        server.url, json.dumps({"trajectory": [], "action": "pay", "x": 1}).encode()
    )
    assert status == 400 and "keys" in body["error"]
    status, body = _post(server.url, json.dumps({"action": "pay", "evidence": {"ok": 2}}).encode())
    assert status == 400 and "evidence" in body["error"]
    with pytest.raises(InputError, match="action"):
        GuardClient(server.url).check([], "launch_rockets")
    with urllib.request.urlopen(server.url + "/health", timeout=10) as answer:
        assert json.loads(answer.read())["rules"] == 3


def test_http_endpoint_routes_a_path_with_a_query_string(served):
    # "GET /health?x=1" (a load balancer's probe, a cache-buster) answered 404
    _, server = served
    with urllib.request.urlopen(server.url + "/health?probe=1", timeout=10) as answer:
        assert json.loads(answer.read())["rules"] == 3
    with urllib.request.urlopen(server.url + "/policy/?v=2", timeout=10) as answer:
        assert answer.status == 200
    request = urllib.request.Request(
        server.url + "/check?trace=1", data=json.dumps({"action": "pay"}).encode(), method="POST"
    )
    with urllib.request.urlopen(request, timeout=10) as answer:
        assert answer.status == 200 and "action_allowed" in json.loads(answer.read())


def test_http_endpoint_answers_a_negative_content_length_with_400(served):
    # rfile.read(-1) waited for the client to close the connection: no answer at all
    import socket

    _, server = served
    with socket.create_connection((server.host, server.port), timeout=10) as conn:
        conn.sendall(
            b'POST /check HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n{"action": "pay"}'
        )
        chunks = []
        while chunk := conn.recv(65536):  # the server closes the connection after answering
            chunks.append(chunk)
        answer = b"".join(chunks).decode()
    assert answer.startswith("HTTP/1.1 400")
    assert "Content-Length: expected a non-negative integer" in answer


@pytest.mark.parametrize("host", ["256.1.1.1", "192.0.2.1"], ids=["no-such-address", "not-ours"])
def test_a_host_that_cannot_be_served_on_is_named_not_the_port(host):
    # the error blamed --port ("expected a free port on 256.1.1.1, got 8765 ...")
    with pytest.raises(InputError, match=r"^host: expected a name or address of this machine"):
        make_guard_server(Guardrail(POLICY), host=host, port=0)


def test_rules_without_temporal_operators_are_judged_at_the_proposed_step():
    # read as LTLf at the trace's first step, `refund IMPLIES ...` would stop applying as soon as
    # there is a history (the first step is not the refund); the guardrail anchors it at the
    # proposed step, and needs no history values for it
    guard = Guardrail(POLICY)
    history = ["browse", "verify", "browse"]
    bad = guard.check(history, "refund", evidence={"ok": True, "fraud": True})
    good = guard.check(history, "refund", evidence={"ok": True, "fraud": False})
    assert not bad.action_allowed and bad.violated_rule_ids == ["refund_ok"]
    assert bad.p_safe == pytest.approx(sigmoid(-1.0), abs=1e-12)
    assert good.action_allowed and good.p_safe == pytest.approx(0.5)


def test_negative_epsilon_tolerates_doubt_about_a_compliant_action():
    # with a checker 90 % sure the payment was confirmed, p_safe < 1/2 although nothing is broken
    guard = Guardrail(POLICY)
    d = guard.check(_h("verify"), "pay", evidence={"ok": 0.9})
    e = math.exp(1.5)
    assert d.p_safe == pytest.approx((0.9 * e + 0.1) / (0.9 * e + 0.1 + e), abs=1e-12)
    assert not d.action_allowed
    assert (
        Guardrail(POLICY, epsilon=-0.1)
        .check(_h("verify"), "pay", evidence={"ok": 0.9})
        .action_allowed
    )
    assert (
        not Guardrail(POLICY, epsilon=-0.1)
        .check(_h("verify"), "pay", evidence={"ok": 0.2})
        .action_allowed
    )


@pytest.mark.parametrize("weight", [1e4, -1e4, 1.1e4, 1e150, 1e308])
def test_rule_weights_beyond_1e4_are_refused_and_those_within_decide_exactly(weight):
    # 1e150 with P(ok) = 0.5 decided "allowed" (p_safe 0.5, exact 1/3); 1e308 gave NaN (compiled)
    policy = one_rule_policy(weights={"r": weight})
    if abs(weight) > 1e4:
        with pytest.raises(
            InputError, match=r"weights\['r'\]: expected a finite number in \[-10000"
        ):
            Guardrail(policy)
        with pytest.raises(InputError, match="default_weight: expected a number in"):
            Guardrail({**policy, "weights": {}}, default_weight=weight)
        return
    # exact: ok true (P 0.5) keeps the rule, weight e^w; ok false breaks it: p_safe -> 1/3
    # (w = 1e4) or 1 (w = -1e4), the same for every inference method
    for method in ("enumerate", "compiled"):
        p = Guardrail(policy, method=method).check([], "pay", evidence={"ok": 0.5}).p_safe
        assert p == pytest.approx(1 / 3 if weight > 0 else 1.0, abs=1e-12)
