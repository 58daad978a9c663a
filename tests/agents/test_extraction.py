"""Rule extraction from policy documents: the pipeline around the model, with scripted models.

These tests check splitting, lenient JSON reading, validation, grouping and bookkeeping (nothing
dropped silently); they say nothing about how well any real model extracts rules. The oracles
are ``json.loads`` on the text the scripted answers were built from, the rule language's own
parser, and a Guardrail run on the extracted policy.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trustlab.agents import Guardrail, load_policy
from trustlab.agents.extraction import (
    ExtractedPolicy,
    extract_rules,
    parse_json_answer,
    split_sections,
)
from trustlab.errors import BackendError, InputError


def rule(rule_id, action="send_money", condition="user_confirmed", logic=None, **extra):
    out = {
        "rule_id": rule_id,
        "predicates": [
            [action, f"the agent calls {action}", "", "action"],
            [condition, f"{condition.replace('_', ' ')}", "", "condition"],
        ],
        "logic": logic or f"ALWAYS({action} IMPLIES {condition})",
        "description": f"rule {rule_id}",
    }
    out.update(extra)
    return out


class Scripted:
    """A language model that answers each prompt with the next scripted text."""

    name = "scripted"

    def __init__(self, answers):
        self.answers = list(answers)
        self.prompts = []
        self.options = []

    def generate(self, prompts, max_new_tokens=64, **options):
        self.prompts.extend(prompts)
        self.options.append({"max_new_tokens": max_new_tokens, **options})
        return [self.answers.pop(0) for _ in prompts]


def document(n):
    """n paragraphs, each alone in a section at section_chars=60."""
    return "\n\n".join(f"Paragraph {i}: the assistant must follow rule {i}." for i in range(n))


# ------------------------------------------------------------------------------ JSON answers


def test_parse_json_answer_reads_the_last_value_and_tolerates_noise():
    rules = [rule("a"), rule("b")]
    text = json.dumps(rules)
    assert parse_json_answer(text) == json.loads(text)
    fenced = f"Here are the rules:\n```json\n{json.dumps(rules, indent=2)}\n```\nHope it helps!"
    assert parse_json_answer(fenced) == rules
    draft = f"First try: {json.dumps([rule('old')])}\nFinal: {text}"
    assert parse_json_answer(draft) == rules  # the last value wins
    assert parse_json_answer(json.dumps(rule("a"))) == rule("a")  # one object
    # trailing commas and Python literals
    assert parse_json_answer('[{"rule_id": "a", "x": [1, 2,], "ok": true, "no": null,},]') == [
        {"rule_id": "a", "x": [1, 2], "ok": True, "no": None}
    ]  # JSON literals: only the trailing-comma repair reads this
    assert parse_json_answer('Rules:\n[{"rule_id": "a",},] ok') == [{"rule_id": "a"}]
    assert parse_json_answer("[{'rule_id': 'a', 'ok': True}]") == [{"rule_id": "a", "ok": True}]
    # a rule list beats a trailing scrap that cannot hold rules
    assert parse_json_answer(text + ' and ["not", "rules"]') == rules
    assert parse_json_answer('["just", "strings"]') == ["just", "strings"]
    for nothing in ("", "No rules apply.", "[unclosed", "{'a': }", "{'a set', 'b'}"):
        assert parse_json_answer(nothing) is None


def test_parse_json_answer_keeps_the_complete_objects_of_a_truncated_array():
    rules = [rule("a"), rule("b"), rule("c")]
    text = json.dumps(rules)
    cut = text[: text.index('"rule_id": "c"') + 20]  # the token limit struck inside rule c
    assert parse_json_answer(cut) == rules[:2]
    assert parse_json_answer(f"Here you go: {cut}") == rules[:2]
    with pytest.raises(InputError, match="text"):
        parse_json_answer(["not", "a", "string"])


def test_parse_json_answer_bounds_its_repairs(monkeypatch):
    import trustlab.agents.extraction as extraction

    calls = []
    real = extraction._loads
    monkeypatch.setattr(extraction, "_loads", lambda chunk: calls.append(1) or real(chunk))
    nested = "[{" * 500 + "}]" * 500  # not JSON ('{[' is no key): every start fails
    assert parse_json_answer(nested) == [{}]  # the innermost pair
    assert 0 < len(calls) <= extraction._REPAIR_BUDGET
    deep = "[" * 5000 + "]" * 5000  # deeper than the JSON parser's recursion limit
    assert parse_json_answer(deep) is None
    assert parse_json_answer(deep + json.dumps([rule("a")])) == [rule("a")]


# ------------------------------------------------------------------------------ sections


def test_split_sections_packs_paragraphs_and_keeps_headings_with_their_text():
    text = (
        "ARTICLE 5\n\nProhibited practices.\n\n# Payments\n\nAsk before paying anyone.\n\n"
        "2.1 Scope\n\nThis applies to every transfer."
    )
    assert split_sections(text, 1000) == [text.replace("\r\n", "\n")]
    parts = split_sections(text, 50)
    assert parts == [
        "ARTICLE 5\n\nProhibited practices.",
        "# Payments\n\nAsk before paying anyone.",
        "2.1 Scope\n\nThis applies to every transfer.",
    ]
    long = "One sentence here. " * 20
    pieces = split_sections(long, 60)
    assert all(len(p) <= 60 for p in pieces) and len(pieces) > 1
    assert all(p.endswith("here.") for p in pieces)  # cut at sentence ends
    heading = "SECTION " + "A" * 60  # too long to share a section with its text
    body = "Some text here. And more text follows here."
    parts = split_sections(f"{heading}\n\n{body}", 50)
    assert all(len(p) <= 50 for p in parts) and parts[-1] == body
    assert "".join("".join(p.split()) for p in parts) == "".join((heading + body).split())
    assert split_sections("  \n\n ", 100) == []
    with pytest.raises(InputError, match="section_chars"):
        split_sections("text", 10)
    with pytest.raises(InputError, match="document"):
        split_sections(None)


words = st.text(alphabet="abcdefghij.,!?#", min_size=1, max_size=30)
paragraphs = st.lists(st.lists(words, min_size=1, max_size=12).map(" ".join), max_size=8)


titles = st.text(alphabet="ABCDEFGHIJ ", max_size=70)


@settings(max_examples=150, deadline=None)
@given(paragraphs, st.integers(50, 200), st.booleans(), titles)
def test_split_sections_loses_nothing_and_respects_the_limit(paras, limit, headings, title):
    if headings:  # a heading (up to 80 characters) before every other paragraph
        paras = [p if i % 2 else f"SECTION {title}\n\n{p}" for i, p in enumerate(paras)]
    text = "\n\n".join(paras)
    sections = split_sections(text, limit)
    assert all(0 < len(s) <= limit for s in sections)
    assert "".join("".join(s.split()) for s in sections) == "".join(text.split())


# ------------------------------------------------------------------------------ extraction


def test_extract_rules_validates_groups_and_loads_as_a_policy():
    answers = [
        json.dumps([rule("pay_confirmed"), rule("schedule", action="schedule_transaction")]),
        "```json\n" + json.dumps({"rules": [rule("pay_known", condition="recipient_known")]}),
    ]
    model = Scripted(answers)
    found = extract_rules(document(2), model, section_chars=60, random_state=3, temperature=0.5)
    assert isinstance(found, ExtractedPolicy)
    assert found.n_sections == 2 and len(model.prompts) == 2
    assert model.options == [
        {"max_new_tokens": 512, "chat": True, "temperature": 0.5, "random_state": 3}
    ]
    assert "Paragraph 0" in model.prompts[0] and "Paragraph 1" in model.prompts[1]
    assert (found.n_valid, found.n_rejected, found.valid_share) == (3, 0, 1.0)
    assert found.actions == {
        "send_money": ["pay_confirmed", "pay_known"],
        "schedule_transaction": ["schedule"],
    }
    policy = found.policy
    assert policy == load_policy(json.loads(json.dumps(found.policy_dict())))
    assert [r.rule_id for r in policy.rules_for("send_money")] == ["pay_confirmed", "pay_known"]
    guard = Guardrail(policy)
    pay = {"name": "send_money", "arguments": {"recipient": "X"}}
    ok = {"user_confirmed": True, "recipient_known": True}
    assert guard.check([], pay, evidence=ok).action_allowed
    blocked = guard.check([], pay, evidence={**ok, "recipient_known": False})
    assert not blocked.action_allowed and blocked.violated_rule_ids == ["pay_known"]
    data = found.to_dict()
    assert json.loads(json.dumps(data)) == data and data["n_valid"] == 3
    assert "answers" not in data and found.answers == tuple(answers)
    assert "3 valid rule(s), 0 rejected" in found.summary()


def test_extract_rules_keeps_every_bad_candidate_with_its_error():
    undeclared = rule("undeclared", logic="ALWAYS(send_money IMPLIES approved_by_manager)")
    syntax = rule("syntax", logic="ALWAYS(send_money IMPLIES")
    no_action = {
        "rule_id": "no_action",
        "predicates": [["a", "", "", "condition"], ["b", "", "", "condition"]],
        "logic": "a IMPLIES b",
    }
    conflict = rule("conflict", action="user_confirmed", condition="send_money")
    bad_type = rule("bad_type")
    bad_type["predicates"][0][3] = "tool"
    copied = rule("mine", "delete_file", "deletion_requested")  # the prompt's example again
    answers = [
        "I cannot write JSON, sorry.",
        json.dumps(
            [rule("good"), undeclared, syntax, "a string", no_action, conflict, bad_type, copied]
        ),
    ]
    found = extract_rules(document(2), Scripted(answers), section_chars=60)
    assert found.n_valid == 1 and found.rules[0]["rule_id"] == "good"
    errors = {(r["section"], (r["rule"] or {}).get("rule_id") if isinstance(r["rule"], dict)
               else r["rule"]): r["error"] for r in found.rejected}  # fmt: skip
    assert len(errors) == found.n_rejected == 8
    assert errors[(1, "mine")].startswith("copied example")
    assert errors[(0, None)].startswith("no JSON") and "cannot write JSON" in errors[(0, None)]
    assert "undeclared predicate" in errors[(1, "undeclared")]
    assert "approved_by_manager" in errors[(1, "undeclared")]
    assert errors[(1, "syntax")].startswith("invalid rule") and "position" in errors[(1, "syntax")]
    assert errors[(1, "a string")].startswith("not a rule")
    assert errors[(1, "no_action")].startswith("no action predicate")
    assert errors[(1, "conflict")].startswith("type conflict")
    assert "send_money" in errors[(1, "conflict")]
    assert (
        errors[(1, "bad_type")].startswith("invalid rule")
        and "predicates" in errors[(1, "bad_type")]
    )
    # the rejected candidate is kept as the model wrote it
    assert next(r["rule"] for r in found.rejected if r["rule"] == syntax) == syntax
    assert found.valid_share == pytest.approx(1 / 9)


def test_extract_rules_reads_only_the_answer_to_its_own_section():
    runaway = f'{json.dumps([rule("mine")])}\nText: "Invented."\nAnswer: {json.dumps([rule("x")])}'
    scraps = '[["send_money", "a predicate list cut from a rule"]]'
    found = extract_rules(document(2), Scripted([runaway, scraps]), section_chars=60)
    assert [r["rule_id"] for r in found.rules] == ["mine"]
    assert found.n_rejected == 1 and found.rejected[0]["error"].startswith("no rule object")
    assert found.rejected[0]["rule"] == json.loads(scraps)


def test_extract_rules_names_ids_and_caps_the_number_of_rules():
    nameless = rule("x")
    del nameless["rule_id"]
    answers = [json.dumps([rule("dup"), nameless]), json.dumps([rule("dup"), rule("extra")])]
    found = extract_rules(document(2), Scripted(answers), section_chars=60, max_rules=3)
    ids = [r["rule_id"] for r in found.rules]
    assert ids == ["dup", "section0_rule2", "dup_2"]
    assert len(found.notes) == 2 and "renamed 'dup_2'" in found.notes[1]
    assert [r["error"].split(":")[0] for r in found.rejected] == ["beyond max_rules"]
    assert found.rejected[0]["rule"]["rule_id"] == "extra"


def test_extract_rules_with_the_agents_action_names():
    answers = [json.dumps([rule("known"), rule("unknown", action="wire_funds")])]
    model = Scripted(answers)
    found = extract_rules("Ask before paying.", model, actions=["send_money", "get_balance"])
    assert "get_balance, send_money" in model.prompts[0]
    assert [r["rule_id"] for r in found.rules] == ["known"]
    assert found.rejected[0]["error"].startswith("unknown action")


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.sampled_from(["good", "undeclared", "junk", "scalar"]), max_size=5),
                min_size=1, max_size=4), st.integers(1, 6))  # fmt: skip
def test_every_candidate_is_kept_or_rejected(plan, max_rules):
    answers, expected = [], 0
    for s, kinds in enumerate(plan):
        items = []
        for k, kind in enumerate(kinds):
            if kind == "good":
                items.append(rule(f"r{s}_{k}"))
            elif kind == "undeclared":
                items.append(rule(f"u{s}_{k}", logic="ALWAYS(send_money IMPLIES other)"))
            else:
                items.append(7 if kind == "scalar" else {"junk": True})
        answers.append(json.dumps(items) if items else "nothing to say")
        # an answer without a rule object (no JSON, or only scalars) is one rejection
        expected += len(items) if any(isinstance(i, dict) for i in items) else 1
    found = extract_rules(document(len(plan)), Scripted(answers), section_chars=60,
                          max_rules=max_rules)  # fmt: skip
    assert found.n_valid + found.n_rejected == expected
    n_good = sum(kind == "good" for kinds in plan for kind in kinds)
    assert found.n_valid == min(n_good, max_rules)
    assert len({r["rule_id"] for r in found.rules}) == found.n_valid
    if found.n_valid:
        assert len(found.policy.rule_list) == found.n_valid
    else:
        assert found.policy is None
        with pytest.raises(InputError, match="rules"):
            found.policy_dict()


def test_extract_rules_bad_inputs_are_named(monkeypatch):
    model = Scripted([json.dumps([rule("a")])] * 10)
    cases = [
        ({"document": "   "}, "document"),
        ({"document": 3}, "document"),
        ({"model": object()}, "model"),
        ({"model": ""}, "model"),
        ({"model": None, "base_url": "http://localhost:1"}, "model"),
        ({"max_rules": 0}, "max_rules"),
        ({"max_new_tokens": 0}, "max_new_tokens"),
        ({"temperature": 3.0}, "temperature"),
        ({"chat": "yes"}, "chat"),
        ({"actions": "send_money"}, "actions"),
        ({"actions": []}, "actions"),
        ({"section_chars": 5}, "section_chars"),
    ]
    for change, name in cases:
        kwargs = {"document": "Ask before paying.", "model": model, **change}
        with pytest.raises(InputError) as err:
            extract_rules(**kwargs)
        assert err.value.argument == name, (change, err.value)

    class Wrong:
        name = "wrong"

        def generate(self, prompts, max_new_tokens=64, **options):
            return "one text for all"

    with pytest.raises(BackendError, match="one text per prompt"):
        extract_rules("Ask before paying.", Wrong())
    # a registry name is loaded once per process through the llm checkers' loader
    import trustlab.agents.checkers as checkers

    loaded = []

    def fake_loader(name):
        loaded.append(name)
        return Scripted([json.dumps([rule("a")])])

    monkeypatch.setattr(checkers, "_registry_model", fake_loader)
    found = extract_rules("Ask before paying.", "some-registered-model")
    assert loaded == ["some-registered-model"] and found.model == "scripted"


def test_the_prompt_teaches_a_valid_rule():
    import trustlab.agents.extraction as extraction
    from trustlab.agents.policy import Rule

    prompt = extraction._PROMPT.format(actions="", section="Pay only known people.")
    example = parse_json_answer(prompt.split("Answer:")[1])  # the worked example's answer
    assert len(example) == 1 and Rule.model_validate(example[0]).logic == extraction._EXAMPLE_LOGIC
    assert prompt.endswith('Text: "Pay only known people."\nAnswer:')
