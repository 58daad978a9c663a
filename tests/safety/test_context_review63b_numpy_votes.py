"""Records built in Python with numpy votes or shares still load (diff review 63 B of d2bbcfe2).

d2bbcfe2 made the schema's votes and safe_rate strict (JSON true and text refused), which also
refused ``np.int64`` votes ("field scores.0: input should be a valid integer"), as
``np.where(..., 1, 2)`` without ``.tolist()`` gives them; the lax schema before it took them.
numpy integers and floats count as their Python numbers; np.bool_ and text stay refused.
"""

from __future__ import annotations

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.safety.context import load_casebench
from trustlab.safety.context.synthetic import synthetic_casebench


def _records():
    return synthetic_casebench().records()[:2]


def test_numpy_votes_and_shares_load_as_their_numbers():
    records = _records()
    for record in records:
        record["scores"] = list(np.array(record["scores"], dtype=np.int64))
        record["safe_rate"] = np.float32(record["safe_rate"])
    records[1]["scores"] = list(np.full(21, 2, dtype=np.int32))
    records[1]["safe_rate"] = np.int64(0)
    data = load_casebench(records)
    assert data.safe_votes.tolist() == [int(_records()[0]["safe_rate"] * 21 + 0.5), 0]


@pytest.mark.parametrize("vote", [np.bool_(True), np.str_("1")])
def test_a_numpy_bool_or_text_vote_is_still_refused(vote):
    records = _records()
    records[0]["scores"] = [vote] + records[0]["scores"][1:]
    with pytest.raises(InputError, match=r"^path: record 0: field scores\.0: input should be"):
        load_casebench(records)
