"""Review 58: argument_mentioned reads numbers as the docs say (exponents, written-out floats)."""

from __future__ import annotations

import pytest

from trustlab.agents.checkers import CheckContext
from trustlab.agents.policy import Action
from trustlab.agents.provenance import argument_mentioned

_CHECK = argument_mentioned("amount")


def _mentioned(value: object, text: str) -> bool:
    return _CHECK(
        CheckContext((), Action(name="pay", arguments={"amount": value}), task_intent=text)
    )


@pytest.mark.parametrize(
    ("value", "text", "expected"),
    [
        (1e20, "Pay 100000000000000000000 now.", True),  # was False: compared as "1e+20"
        (2.5e16, "Pay 25000000000000000.", True),
        (1e-5, "A fee of 0.00001 per call.", True),
        (1e20, "Pay 1e+20.", True),
        (20, "Pay 1e+20.", False),  # was True: the exponent was read as a number
        (5, "A rate of 1E-5 per call.", False),
        (1, "x 1e99999999999999999999 y", False),  # an exponent too long is no number
        (1000.5, "Pay 1.000,50 EUR.", False),  # European notation is read as no number
        (50, "Pay 1.000,50 EUR.", False),
        (1, "Pay 1.000 EUR.", True),  # a dot is the decimal point, as documented
        (100.0, "Pay 100.", True),
        (1000, "Pay 1,000.", True),
    ],
)
def test_numbers_match_as_the_docs_say(value: object, text: str, expected: bool) -> None:
    assert _mentioned(value, text) is expected
