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
