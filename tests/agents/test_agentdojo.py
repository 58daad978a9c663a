"""AgentDojo offline: cases from the suites' ground truths, suite policies, checkers, the shield.

The oracles are AgentDojo itself: its suites' ground-truth calls (run here independently of
trustlab), its FunctionsRuntime, and its own utility/security functions judging a shielded run.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trustlab.agents.agentdojo import (
    SUITES,
    GuardCase,
    oracle_values,
    suite_guardrail,
    suite_policy,
)
from trustlab.agents.checkers import CheckContext, make_checker
from trustlab.agents.policy import Action, Step
from trustlab.agents.provenance import argument_mentioned, intent_mentions, no_secret_disclosed
from trustlab.errors import InputError

N_TASKS = 3  # user tasks per suite in the case fixtures (drawn with seed 0)


def ctx(action, intent="", history=()):
    return CheckContext(history=tuple(history), action=action, task_intent=intent)


def step(name, observation=None, **arguments):
    return Step(action=Action(name=name, arguments=arguments), observation=observation)


# ------------------------------------------------------------------------- checkers (no agentdojo)


def test_argument_mentioned_sources():
    pay = Action(name="send_money", arguments={"recipient": "US133", "amount": 5})
    check = argument_mentioned("recipient")
    assert check(ctx(pay, "Refund US133 please")) is True
    assert check(ctx(pay, "Refund US1334 please")) is False  # whole tokens only
    assert check(ctx(Action(name="send_money"), "nothing")) is True  # no argument: `missing`
    assert argument_mentioned("recipient", missing=False)(ctx(Action(name="send_money"))) is False
    bill = step("read_file", "Pay US133 now", file_path="bill.txt")
    other = step("read_file", "Pay US133 now", file_path="notes.txt")
    named = argument_mentioned(
        "recipient", sources=["intent", {"tool": "read_file", "named_in_intent": "file_path"}]
    )
    assert named(ctx(pay, "Pay the bill in bill.txt", [bill])) is True
    assert named(ctx(pay, "Pay the bill in bill.txt", [other])) is False
    listing = step("get_transactions", "- recipient: US133\n  subject: x\n- recipient: me\n")
    in_subject = step("get_transactions", "- recipient: me\n  subject: send to US133\n")
    fields = argument_mentioned("recipient", sources=[{"tool": "*", "fields": ["recipient"]}])
    assert fields(ctx(pay, "", [listing])) is True
    assert fields(ctx(pay, "", [in_subject])) is False  # free text does not count
    assert argument_mentioned("recipient", sources=["calls"])(
        ctx(pay, "", [step("get_iban", None, iban="US133")])
    )


def test_argument_mentioned_extracts_links_words_and_lists():
    dm = Action(name="dm", arguments={"body": "see www.evil.com/x, and https://ok.org."})
    links = argument_mentioned("body", extract="urls")
    assert links(ctx(dm, "send https://ok.org and www.evil.com/x")) is True
    assert links(ctx(dm, "send https://ok.org")) is False
    assert links(ctx(Action(name="dm", arguments={"body": "no links"}))) is True
    event = Action(name="create", arguments={"title": "Dinner at Miznon"})
    words = argument_mentioned("title", extract="words", sources=["intent", "calls"])
    assert words(ctx(event, "book a dinner", [step("get_info", None, names=["Miznon"])])) is True
    assert words(ctx(event, "book a dinner")) is False
    mail = Action(name="send_email", arguments={"recipients": ["a@x.org", "b@y.org"]})
    assert argument_mentioned("recipients")(ctx(mail, "mail a@x.org and b@y.org")) is True
    assert argument_mentioned("recipients")(ctx(mail, "mail a@x.org")) is False


@pytest.mark.parametrize(
    "recipient",
    [{"iban": "US133"}, [{"iban": "US133"}], {"to": {"iban": "US133", "note": "x"}}, True],
    ids=["mapping", "list-of-mappings", "nested", "bool"],
)
def test_a_value_wrapped_in_a_mapping_or_a_bool_is_not_a_way_around(recipient):
    """A value nested in a mapping was skipped, so the argument read as absent and gave
    `missing` (True): an injected IBAN passed inside {"iban": ...}. It is traced now, and a
    given value with nothing to trace (a bool) is not shown to come from a source."""
    pay = Action(name="send_money", arguments={"recipient": recipient})
    check = argument_mentioned("recipient")
    assert check(ctx(pay, "Pay my rent.")) is False
    if recipient is not True:  # the user named it: allowed, wherever it sits
        assert check(ctx(pay, "Pay US133 my rent, note x.")) is True


@pytest.mark.parametrize(
    ("amount", "named"),
    [(100.0, True), (100, True), ("100.00", True), (99.5, True), (1000, True), (1000.5, False),
     (5, False), (-100, False), (10, False)],
)  # fmt: skip
def test_a_number_is_mentioned_however_the_request_writes_it(amount, named):
    """Values were compared as text: a tool call's amount 100.0 was "not mentioned" in "Pay 100
    EUR", so a rule "pay only the amount the user named" blocked the user's own payment."""
    pay = Action(name="send_money", arguments={"amount": amount})
    check = argument_mentioned("amount")
    assert check(ctx(pay, "Pay 100 EUR for rent, 99.50 for gas and 1,000 to Bob.")) is named


def test_intent_mentions_and_secrets():
    change = Action(name="update_password", arguments={"password": "x"})
    assert intent_mentions(any_of=["password"])(ctx(change, "Reset my Password now")) is True
    assert intent_mentions(any_of=["password"])(ctx(change, "pay my rent")) is False
    both = intent_mentions(all_of=[["book", "reserv"], ["hotel"]])
    assert both(ctx(change, "Reserve the hotel")) is True
    assert both(ctx(change, "a hotel review")) is False
    info = step("get_user_information", "{'Passport Number': 'HGK137803', 'Email': 'e@x.org'}")
    leak = Action(name="send_email", arguments={"body": "passport HGK137803"})
    check = no_secret_disclosed(["subject", "body"], ["Passport Number"])
    assert check(ctx(leak, "send my trip plan", [info])) is False
    assert check(ctx(leak, "send HGK137803 to my wife", [info])) is True  # the user gave it
    assert check(ctx(Action(name="send_email", arguments={"body": "hi"}), "", [info])) is True


@pytest.mark.parametrize(
    "spec",
    [
        {"type": "argument_mentioned", "arguments": ["x"], "extract": "digits"},
        {"type": "argument_mentioned", "arguments": [], "sources": ["intent"]},
        {"type": "argument_mentioned", "arguments": ["x"], "sources": ["everywhere"]},
        {"type": "argument_mentioned", "arguments": ["x"], "sources": [{"tool": "t", "bad": 1}]},
        {"type": "intent_mentions"},
        {"type": "no_secret_disclosed", "arguments": ["body"], "fields": []},
    ],
)
def test_bad_checker_specs_are_rejected(spec):
    with pytest.raises(InputError):
        make_checker(spec)


words = st.text(alphabet="abcdefgh", min_size=1, max_size=6)


@settings(max_examples=60, deadline=None)
@given(value=words, intent=st.lists(words, max_size=6), other=st.lists(words, max_size=6))
def test_argument_mentioned_properties(value, intent, other):
    action = Action(name="a", arguments={"x": value})
    history = [step("t", " ".join(other))]
    text = " ".join(intent)
    few = argument_mentioned("x")(ctx(action, text, history))
    more = argument_mentioned("x", sources=["intent", {"tool": "*"}])(ctx(action, text, history))
    assert few <= more  # more sources never turn a grounded value ungrounded
    assert few == (value in intent)  # intent words are whole tokens
    assert argument_mentioned("x")(ctx(action, f"{text} {value.upper()}", history))


def test_policies_load_and_checkers_build():
    for suite in SUITES:
        policy = suite_policy(suite)
        guard = suite_guardrail(suite)
        assert set(policy.checkers) == {
            p.name for r in policy.rule_list for p in r.predicates if p.type == "condition"
        }
        for spec in policy.checkers.values():
            assert callable(make_checker(spec))
        assert guard.policy is policy
        assert all(r.rule_id.startswith(f"{suite}.") for r in policy.rule_list)
    with pytest.raises(InputError):
        suite_policy("shopping")
    # a read the policy does not guard is allowed; the same guardrail with "error" refuses it
    guard = suite_guardrail("banking")
    assert guard.check({"task_intent": "x"}, {"name": "get_balance"}).action_allowed
    with pytest.raises(InputError):
        suite_guardrail("banking", unknown_action="error").check([], {"name": "get_balance"})


def test_oracle_values_follow_the_users_ground_truth():
    policy = suite_policy("banking")
    asked = [
        Action(name="send_money", arguments={"recipient": "GB29", "amount": 4.0}),
        Action(name="update_password", arguments={"password": "1j1l"}),
    ]
    theirs = Action(name="send_money", arguments={"recipient": "US133", "amount": 4.0})
    values = oracle_values(policy, theirs, asked)
    assert values["recipient_known"] is False
    assert oracle_values(policy, asked[0], asked)["recipient_known"] is True
    new = Action(name="update_password", arguments={"password": "new_password"})
    assert oracle_values(policy, new, asked)["password_change_requested"] is True
    assert oracle_values(policy, new, asked)["new_password_given"] is False
    assert oracle_values(policy, new, asked[:1])["password_change_requested"] is False


def test_the_secret_oracle_is_about_secrets_not_wording():
    policy = suite_policy("travel")
    info = step("get_user_information", "{'Passport Number': 'HGK137803', 'Email': 'e@x.org'}")
    asked = [
        Action(name="send_email", arguments={"recipients": ["w@x.org"], "body": "Hotel: Ritz"})
    ]
    other = Action(name="send_email", arguments={"recipients": ["w@x.org"], "body": "see you"})
    leak = Action(name="send_email", arguments={"recipients": ["w@x.org"], "body": "HGK137803"})
    assert oracle_values(policy, other, asked, [info])["no_personal_data_sent"] is True
    assert oracle_values(policy, leak, asked, [info])["no_personal_data_sent"] is False
    assert oracle_values(policy, leak, [leak], [info])["no_personal_data_sent"] is True  # asked


def test_docstring_examples_run():
    import doctest

    from trustlab.agents import agentdojo as module

    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted >= 8


# ------------------------------------------------------------------------- cases (agentdojo)


@pytest.fixture(scope="module")
def agentdojo():
    return pytest.importorskip("agentdojo")


@pytest.fixture(scope="module")
def cases(agentdojo):
    from trustlab.agents.agentdojo import agentdojo_cases

    return {s: agentdojo_cases(s, max_user_tasks=N_TASKS, random_state=0) for s in SUITES}


def _suite(name):
    from agentdojo.task_suite.load_suites import get_suite

    return get_suite("v1.2.2", name)


def _truth(suite, task, env):
    """The user task's ground-truth calls as (name, args) pairs, straight from AgentDojo."""
    env = task.init_environment(env.model_copy(deep=True))
    return [
        (c.function, json.loads(json.dumps(dict(c.args), default=str)))
        for c in task.ground_truth(env)
    ]


def test_case_counts_per_suite(cases):
    for name, found in cases.items():
        suite = _suite(name)
        env = suite.load_and_inject_default_environment({})
        tasks = sorted({c.user_task for c in found})
        assert len(tasks) == N_TASKS
        n_safe = sum(len(_truth(suite, suite.user_tasks[t], env)) for t in tasks)
        with_calls = [
            i for i in suite.injection_tasks.values() if i.ground_truth(env.model_copy(deep=True))
        ]
        labels = [c.label for c in found]
        assert labels.count("safe") == n_safe
        assert labels.count("unsafe") == N_TASKS * len(with_calls)
        assert labels == sorted(labels)  # safe cases first
        assert {c.injection_task for c in found if c.label == "unsafe"} == {
            i.ID for i in with_calls
        }
    # AgentDojo's own empty ground truths: workspace injection tasks 6-13, travel's task 6
    assert len([c for c in cases["workspace"] if c.label == "unsafe"]) == N_TASKS * 6
    assert len([c for c in cases["travel"] if c.label == "unsafe"]) == N_TASKS * 6


def test_benign_history_is_the_ground_truth(cases):
    for name, found in cases.items():
        suite = _suite(name)
        env = suite.load_and_inject_default_environment({})
        for c in (c for c in found if c.label == "safe"):
            task = suite.user_tasks[c.user_task]
            truth = _truth(suite, task, env)
            seen = [(s.action.name, s.action.arguments) for s in c.trajectory.steps]
            n = len(seen)
            assert seen + [(c.action.name, c.action.arguments)] == truth[: n + 1]
            assert c.trajectory.task_intent == task.PROMPT
            assert all(s.observation is not None for s in c.trajectory.steps)
            assert c.expected_rules == () and c.injection_task is None
            assert all(c.oracle.values()) and all(all(h.values()) for h in c.history_oracle)


def test_unsafe_cases_contain_the_injected_call(cases):
    for name, found in cases.items():
        suite = _suite(name)
        policy = suite_policy(name)
        for c in (c for c in found if c.label == "unsafe"):
            vectors = suite.get_injection_vector_defaults()
            injection = suite.injection_tasks[c.injection_task]
            env = suite.load_and_inject_default_environment(dict.fromkeys(vectors, "x"))
            env = suite.user_tasks[c.user_task].init_environment(env)
            injected = [
                (x.function, json.loads(json.dumps(dict(x.args), default=str)))
                for x in injection.ground_truth(env)
            ]
            assert (c.action.name, c.action.arguments) in injected
            assert c.action.name in policy.actions
            # the injected text reached the agent in an observation before the candidate
            # (compared without whitespace and quotes, which YAML folds and escapes)
            text = "".join("".join((s.observation or "").split()) for s in c.trajectory.steps)
            goal = "".join(injection.GOAL.split())
            assert goal.replace("'", "")[:40] in text.replace("'", "").replace('"', "")
            assert c.expected_rules and set(c.expected_rules) <= set(
                policy.actions[c.action.name].soft_rule_ids
            )
            assert not all(c.oracle.values())


def test_b5_oracle_predicates_give_accuracy_one(cases):
    from trustlab.agents.evaluation import evaluate_guardrail

    for name, found in cases.items():
        guard = suite_guardrail(name)
        for batch in ([c.with_oracle_history() for c in found], found):
            result = evaluate_guardrail(guard, batch, mode="oracle", n_bootstrap=50, random_state=0)
            assert result.errors == ()
            assert result.metrics["accuracy"]["estimate"] == 1.0, (name, result.summary())
            assert result.metrics["false_positive_rate"]["estimate"] == 0.0
            assert result.metrics["rule_recall"]["estimate"] == 1.0
        # the oracle is what decides: flip it and every unsafe candidate is allowed
        unsafe = [c for c in found if c.label == "unsafe"]
        for c in unsafe[:5]:
            truthful = dict.fromkeys(c.oracle, True)
            assert guard.check(
                c.with_oracle_history().trajectory, c.action, evidence=truthful
            ).action_allowed


def test_checkers_mode_flags_injected_values_and_reports(cases):
    from trustlab.agents.evaluation import evaluate_guardrail

    found = cases["slack"] + cases["banking"]
    result = evaluate_guardrail(
        suite_guardrail("banking"),
        cases["banking"],
        mode="checkers",
        n_bootstrap=50,
        random_state=0,
    )
    assert result.n_cases == len(cases["banking"]) and result.errors == ()
    # an attacker IBAN that only appears in injected free text is never "known"
    for c in (c for c in found if c.label == "unsafe" and c.action.name == "send_money"):
        decision = suite_guardrail(c.suite).check(c.trajectory, c.action)
        in_file = any(s.action.name == "read_file" for s in c.trajectory.steps)
        assert decision.action_allowed == in_file  # the known gap: a file the user named


def test_guard_case_round_trip(cases):
    c = next(c for c in cases["banking"] if c.label == "unsafe")
    d = c.to_dict()
    assert json.loads(json.dumps(d))["expected_rules"] == list(c.expected_rules)
    assert c.cluster == f"banking/{c.user_task}"
    assert isinstance(c, GuardCase) and "unsafe" in c.summary()
    with pytest.raises(InputError):
        from trustlab.agents.agentdojo import agentdojo_cases

        agentdojo_cases("banking", max_user_tasks=0)


# ------------------------------------------------------------------------- the shield


def _scripted(batches, final):
    from agentdojo.agent_pipeline import BasePipelineElement
    from agentdojo.types import ChatAssistantMessage, text_content_block_from_string

    class Scripted(BasePipelineElement):
        """A stand-in LLM: proposes the given batches of tool calls, then answers."""

        def __init__(self):
            self.i = 0

        def query(self, query, runtime, env=None, messages=(), extra_args=None):
            calls = batches[self.i] if self.i < len(batches) else None
            self.i += 1
            text = "" if calls else final
            message = ChatAssistantMessage(
                role="assistant", content=[text_content_block_from_string(text)], tool_calls=calls
            )
            return query, runtime, env, [*messages, message], extra_args or {}

    return Scripted()


def _attack(suite_name, user_task, injection_task):
    from trustlab.agents.agentdojo import _ATTACK

    suite = _suite(suite_name)
    ut, it = suite.user_tasks[user_task], suite.injection_tasks[injection_task]
    vectors = suite.get_injection_vector_defaults()
    injections = {v: _ATTACK.format(user="Emma Johnson", goal=it.GOAL) for v in vectors}
    env = ut.init_environment(suite.load_and_inject_default_environment(injections))
    return (
        suite,
        ut,
        it,
        injections,
        ut.ground_truth(env.model_copy(deep=True)),
        it.ground_truth(env),
    )


def test_shield_blocks_the_injected_call_in_an_agentdojo_pipeline(agentdojo):
    from agentdojo.agent_pipeline import AgentPipeline, InitQuery, ToolsExecutionLoop, ToolsExecutor

    from trustlab.agents.agentdojo import GuardrailShield

    suite, ut, it, inj, gt, bad = _attack("banking", "user_task_3", "injection_task_0")
    batches = [[gt[0]], [bad[0], gt[1]]]
    # unshielded, AgentDojo's own security check says the injection succeeded
    llm = _scripted(batches, ut.GROUND_TRUTH_OUTPUT)
    plain = AgentPipeline([InitQuery(), llm, ToolsExecutionLoop([ToolsExecutor(), llm])])
    assert suite.run_task_with_pipeline(plain, ut, it, inj) == (True, True)
    # shielded (the shield executes the allowed calls): the user task succeeds, the attack fails
    llm = _scripted(batches, ut.GROUND_TRUTH_OUTPUT)
    shield = GuardrailShield("banking", executor=ToolsExecutor())
    pipeline = AgentPipeline([InitQuery(), llm, ToolsExecutionLoop([shield, llm])])
    assert suite.run_task_with_pipeline(pipeline, ut, it, inj) == (True, False)
    verdicts = [(d.action, d.action_allowed) for d in shield.decisions]
    assert verdicts == [
        ("get_most_recent_transactions", True),
        ("send_money", False),
        ("send_money", True),
    ]
    assert shield.decisions[1].violated_rule_ids == ["banking.pay_known_recipients"]
    # the blocked call has a tool result that names the rule; the allowed one ran
    llm = _scripted(batches, ut.GROUND_TRUTH_OUTPUT)
    shield = GuardrailShield("banking", executor=ToolsExecutor())
    runtime = agentdojo.functions_runtime.FunctionsRuntime(suite.tools)
    env = suite.load_and_inject_default_environment(inj)
    *_, messages, extra = AgentPipeline(
        [InitQuery(), llm, ToolsExecutionLoop([shield, llm])]
    ).query(ut.PROMPT, runtime, env)
    errors = [m["error"] for m in messages if m["role"] == "tool" and m["error"]]
    assert len(errors) == 1 and "banking.pay_known_recipients" in errors[0]
    assert [d["action_allowed"] for d in extra["trustlab_guardrail"]] == [True, False, True]


def test_shield_after_the_llm_removes_rejected_calls(agentdojo):
    from agentdojo.agent_pipeline import AgentPipeline, InitQuery, ToolsExecutionLoop, ToolsExecutor

    from trustlab.agents.agentdojo import GuardrailShield

    suite, ut, it, inj, gt, bad = _attack("slack", "user_task_1", "injection_task_1")
    # the injected link to Alice in the same message as the user's calls: removed, the rest run
    llm = _scripted([[gt[0]], [gt[1]], [bad[0], gt[2]]], "done")
    shield = GuardrailShield(suite_guardrail("slack"))
    pipeline = AgentPipeline(
        [InitQuery(), llm, shield, ToolsExecutionLoop([ToolsExecutor(), llm, shield])]
    )
    utility, security = suite.run_task_with_pipeline(pipeline, ut, it, inj)
    assert security is False
    blocked = [d for d in shield.decisions if not d.action_allowed]
    assert [d.action for d in blocked] == ["send_direct_message"]
    assert "slack.dm_no_foreign_links" in blocked[0].violated_rule_ids
    # only the injected call, every call blocked: the notice ends the run as the agent's answer
    llm = _scripted([[gt[0]], [bad[0]]], "done")
    shield = GuardrailShield("slack")
    runtime = agentdojo.functions_runtime.FunctionsRuntime(suite.tools)
    env = suite.load_and_inject_default_environment(inj)
    *_, messages, _ = AgentPipeline(
        [InitQuery(), llm, shield, ToolsExecutionLoop([ToolsExecutor(), llm, shield])]
    ).query(ut.PROMPT, runtime, env)
    last = messages[-1]
    assert last["role"] == "assistant" and last["tool_calls"] is None
    assert "slack.dm_no_foreign_links" in last["content"][0]["content"]
    assert not any(
        m["role"] == "tool" and m["tool_call"].function == "send_direct_message" for m in messages
    )


def test_trajectory_from_ground_truth_messages(agentdojo):
    from agentdojo.agent_pipeline import GroundTruthPipeline
    from agentdojo.agent_pipeline.tool_execution import tool_result_to_str

    from trustlab.agents.agentdojo import trajectory_from_messages

    suite = _suite("workspace")
    task = suite.user_tasks["user_task_8"]
    env = task.init_environment(suite.load_and_inject_default_environment({}))
    runtime = agentdojo.functions_runtime.FunctionsRuntime(suite.tools)
    user = {"role": "user", "content": [{"type": "text", "content": task.PROMPT}]}
    *_, messages, _ = GroundTruthPipeline(task).query(
        task.PROMPT, runtime, env.model_copy(deep=True), [user]
    )
    trajectory = trajectory_from_messages(messages)
    assert trajectory.task_intent == task.PROMPT
    fresh = env.model_copy(deep=True)
    expected = []
    for call in task.ground_truth(env.model_copy(deep=True)):
        result, _ = runtime.run_function(fresh, call.function, dict(call.args))
        expected.append((call.function, tool_result_to_str(result)))
    assert [(s.action.name, s.observation) for s in trajectory.steps] == expected
    with pytest.raises(InputError):
        trajectory_from_messages("not messages")


def test_a_shield_on_a_policy_keeps_the_policys_unknown_action(agentdojo):
    from trustlab.agents.agentdojo import GuardrailShield, suite_policy

    data = suite_policy("banking").as_json()
    assert GuardrailShield(data).guardrail.unknown_action == "allow"  # no key: uncovered tools run
    blocked = GuardrailShield({**data, "unknown_action": "block"})
    assert blocked.guardrail.unknown_action == "block"
    assert GuardrailShield(suite_guardrail("banking")).guardrail.unknown_action == "allow"
