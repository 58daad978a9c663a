"""Review 58: a predicate named like a word of the rule language, written last in the logic."""

from __future__ import annotations

import pytest

from trustlab.agents.logic import parse_rule
from trustlab.agents.policy import Rule
from trustlab.errors import InputError


@pytest.mark.parametrize("name", ["next", "Always", "weak_next"])
def test_rule_names_the_reserved_predicate_even_when_it_ends_the_logic(name: str) -> None:
    # before: the parse ran first and failed with "expected an operand ... got the end of the
    # text", naming neither the predicate nor why
    with pytest.raises(ValueError, match=rf"rule 'r1': predicate name\(s\) \['{name}'\] are words"):
        Rule(
            rule_id="r1",
            predicates=[["pay", "", "", "action"], [name, "", "", "condition"]],
            logic=f"pay IMPLIES {name}",
        )


def test_parse_error_after_a_unary_word_says_the_word_is_an_operator() -> None:
    with pytest.raises(InputError) as err:
        parse_rule("send IMPLIES next")
    message = str(err.value)
    assert message.startswith("logic: expected an operand")
    assert "'next' at position 13 is the operator NEXT" in message
    assert "cannot name a predicate" in message
    with pytest.raises(InputError) as plain:  # a plain syntax error gets no such note
        parse_rule("a AND")
    assert "reserved" not in str(plain.value)


@pytest.mark.parametrize("text", ["pay AND NOT", "send IMPLIES NEXT", "a AND AND", "NOT"])
def test_a_word_written_as_the_operator_gets_no_predicate_note(text: str) -> None:
    # diffA 58: 'pay AND NOT' added "'NOT' ... is the operator NOT ... so it cannot name a
    # predicate", beside the point where an operand is simply missing
    with pytest.raises(InputError, match="logic: expected an operand") as err:
        parse_rule(text)
    assert "cannot name a predicate" not in str(err.value)


@pytest.mark.parametrize(
    ("text", "note"),
    [("pay AND not", "'not' at position 8 is the operator NOT"),
     ("a AND until", "'until' at position 6 is the operator UNTIL"),
     ("a AND Next", "'Next' at position 6 is the operator NEXT")],
)  # fmt: skip
def test_a_word_not_written_as_an_operator_keeps_the_note(text: str, note: str) -> None:
    with pytest.raises(InputError, match="cannot name a predicate") as err:
        parse_rule(text)
    assert note in str(err.value)
