"""``ProtocolState.from_dict`` on a malformed mapping (review 60): it raised Python's raw
TypeError ("__init__() got an unexpected keyword argument 'rounds'", "missing 1 required
positional argument: 'n_silos'", "argument after ** must be a mapping, not list")."""

from __future__ import annotations

import pytest

from trustlab.errors import InputError
from trustlab.federated.protocol import ProtocolState


@pytest.mark.parametrize(
    ("values", "got"),
    [
        ({"n_silos": 2, "rounds": 3}, "got unknown keys ['rounds']"),
        ({"round": 1}, "got no 'n_silos' (keys ['round'])"),
        ([1, 2], "got list [1, 2]"),
    ],
)
def test_a_malformed_state_mapping_is_an_input_error_naming_it(values, got):
    with pytest.raises(InputError, match=r"^values: expected ") as caught:
        ProtocolState.from_dict(values)
    assert str(caught.value).endswith(got)
    assert caught.value.argument == "values"


def test_to_dict_still_round_trips():
    state = ProtocolState(3, round=4, book_idx=[0, 1, 1], threshold=0.5, finished=True)
    assert ProtocolState.from_dict(state.to_dict()) == state
