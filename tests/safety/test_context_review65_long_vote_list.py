"""A vote list longer than 21 is refused (review 65).

A record with 22 (or 42) votes loaded without a word: the list was ignored, the label taken from
safe_rate, and the record counted in CaseBench.short_vote_lists ("vote lists that do not hold
all 21 votes"), although no share of 21 votes has 22 of them.
"""

from __future__ import annotations

import pytest

from trustlab.errors import InputError
from trustlab.safety.context import load_casebench, synthetic_casebench

RECORDS = synthetic_casebench().records()[:2]


@pytest.mark.parametrize("extra", [1, 21])
def test_long_vote_list_is_refused(extra):
    records = [dict(r) for r in RECORDS]
    records[1]["scores"] = records[1]["scores"] + [2] * extra
    with pytest.raises(InputError, match=rf"^path: record 1: field scores: .* got {21 + extra}$"):
        load_casebench(records)


def test_twenty_and_twenty_one_still_load():
    records = [dict(r) for r in RECORDS]
    records[0]["scores"] = records[0]["scores"][:20]
    data = load_casebench(records)
    assert data.short_vote_lists == 1
