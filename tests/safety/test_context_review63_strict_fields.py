"""A record's safe_rate and votes are numbers, not JSON true or text (review 63).

Before: ``"safe_rate": true`` (without a 21-vote list) was read as 1.0, every vote safe, and
``"safe_rate": "0.476..."`` as the number; a vote list of texts ("1") passed the schema and then
counted no safe vote, so the error blamed safe_rate ("expected 0/21 from its 21 votes"). Now
each is refused naming the record and the field. Integers stay valid (0 and 1 as shares).
"""

from __future__ import annotations

import pytest

from casebench_records import MINIMAL_CONTEXT
from trustlab.errors import InputError
from trustlab.safety.context import load_casebench

CONTEXT = MINIMAL_CONTEXT


def _record(query, safe_rate, intended, **extra):
    record = {
        "query": query,
        "category": "x",
        "context": CONTEXT,
        "context_intended_to_be_safe": intended,
        "safe_rate": safe_rate,
    }
    return record | extra


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"safe_rate": True}, "safe_rate"),
        ({"safe_rate": "0.47619047619047616"}, "safe_rate"),
        ({"scores": ["1"] * 10 + ["2"] * 11}, "scores.0"),
        ({"scores": [True] * 10 + [2] * 11}, "scores.0"),
    ],
)
def test_a_share_or_vote_of_another_json_type_is_refused(change, field):
    records = [_record("q", 10 / 21, True) | change, _record("q", 0.0, False)]
    with pytest.raises(InputError, match=rf"^path: record 0: field {field}: input should be"):
        load_casebench(records)


def test_integer_shares_and_votes_stay_valid():
    records = [_record("q", 1, True, scores=[1] * 21), _record("q", 0, False, scores=[2] * 21)]
    data = load_casebench(records)
    assert data.safe_votes.tolist() == [21, 0]
    assert data.safe_rate.tolist() == [1.0, 0.0]
