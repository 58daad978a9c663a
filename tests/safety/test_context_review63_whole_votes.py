"""Votes written as whole floats load as before d2bbcfe2 (diff review 63 D, lead's fix).

d2bbcfe2 made the schema's votes strict integers so that JSON true and text are refused; it also
refused ``2.0`` (a JSON number the lax schema read as the vote 2, and what a file written from a
float array holds). A whole float is its int; 1.5, true and "1" stay refused.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.safety.context import load_casebench
from trustlab.safety.context.synthetic import synthetic_casebench


def _records():
    return synthetic_casebench().records()[:2]


def test_whole_float_votes_load_as_their_ints(tmp_path):
    records = _records()
    expected = load_casebench(records).safe_votes.tolist()
    for record in records:
        record["scores"] = [float(v) for v in record["scores"]]
    records[1]["scores"] = list(np.array(records[1]["scores"], dtype=np.float64))
    path = tmp_path / "votes.json"
    path.write_text(json.dumps([_records()[0] | {"scores": records[0]["scores"]}]))
    assert "1.0" in path.read_text() or "2.0" in path.read_text()
    assert load_casebench(records).safe_votes.tolist() == expected
    assert load_casebench(path).safe_votes.tolist() == expected[:1]


@pytest.mark.parametrize("vote", [1.5, 2.5, True, "1", float("nan")])
def test_a_fractional_bool_or_text_vote_is_still_refused(vote):
    records = _records()
    records[0]["scores"] = [vote] + records[0]["scores"][1:]
    with pytest.raises(InputError, match=r"^path: record 0: field scores\.0: input should be"):
        load_casebench(records)
